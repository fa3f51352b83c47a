//! File-level work: the sets of files jobs work on, and what a job does with them — fio's
//! I/O pattern over its files, or a program of file operations (filebench's flowops, the
//! seed scenarios' procedures). The file layer (page cache and file system) turns them into
//! block I/O; a job without files goes to its device's block queue as before.

use rand::Rng as _;
use rand_distr::{Distribution as _, Gamma};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::rng::Rng;
use crate::engine::Time;
use crate::error::ConfigError;
use crate::io::Fadvise;
use crate::net::ClientRef;

/// How big each file of a set is.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum SizeSpec {
    /// Every file the same.
    Fixed { bytes: u64 },
    /// Uniform between the two (fio's `filesize=a-b`), in `align` steps.
    Uniform { min: u64, max: u64, align: u64 },
    /// Gamma-distributed around `mean` with shape `shape` (filebench's default for file sizes
    /// is a gamma distribution with shape 1.5), at most `max`.
    Gamma { mean: u64, shape: f64, max: u64 },
}

impl SizeSpec {
    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        let ok = match *self {
            SizeSpec::Fixed { .. } => true,
            SizeSpec::Uniform { min, max, align } => min <= max && align > 0,
            SizeSpec::Gamma { mean, shape, max } => mean > 0 && shape > 0.0 && shape.is_finite() && max >= mean,
        };
        if ok {
            Ok(())
        } else {
            Err(ConfigError::new(key, format!("{self:?}: not a size distribution")))
        }
    }

    /// A size drawn from it.
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        match *self {
            SizeSpec::Fixed { bytes } => bytes,
            SizeSpec::Uniform { min, max, align } => min + rng.gen_range(0..=(max - min) / align) * align,
            SizeSpec::Gamma { mean, shape, max } => {
                let g = Gamma::new(shape, mean as f64 / shape).expect("a validated shape and mean");
                (g.sample(rng).round() as u64).clamp(1, max)
            }
        }
    }

    /// The largest size it gives.
    pub fn max_bytes(&self) -> u64 {
        match *self {
            SizeSpec::Fixed { bytes } => bytes,
            SizeSpec::Uniform { max, .. } | SizeSpec::Gamma { max, .. } => max,
        }
    }
}

/// A set of files on one target's file system: fio's files of a job (`nrfiles` × `filesize`
/// under `directory`), a filebench fileset, a scenario's tree.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileSetSpec {
    /// Its name (fio's job name, filebench's fileset name), for reports and errors.
    pub name: String,
    /// The system's target whose file system holds it.
    #[serde(default)]
    pub target: u32,
    /// Its directory, from the file system's root (`"/"`: the root itself).
    pub dir: String,
    /// Files in the set (entries: a file may exist or not at a given time).
    pub entries: u64,
    pub size: SizeSpec,
    /// Files per subdirectory (filebench's `dirwidth`): the set's files are spread over
    /// subdirectories of `dir` that many to a directory; 0: all directly in `dir`.
    #[serde(default)]
    pub dir_width: u64,
    /// Share of the entries that exist, written whole, before the jobs start (fio lays its
    /// files out first; filebench's `prealloc`), in order of their number. 0..=1.
    #[serde(default)]
    pub prealloc: f64,
    /// Its entries are directories (fio's dircreate, dirstat and dirdelete work on these):
    /// laid out with mkdir, each empty.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dirs: bool,
    /// The set is its target's block device itself, opened without `O_DIRECT`
    /// (`filename=/dev/sdX`, `direct=0`): one file, the device, whose pages are the device's
    /// blocks in its own page cache (Linux's block-device inode: `blkdev_read_iter` and
    /// `blkdev_write_iter` in block/fops.c go through its mapping), no file system.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub block_device: bool,
    /// Its laid-out files hold no data yet: their blocks are allocated as `fallocate` leaves
    /// them (unwritten extents, read as zeros without I/O) until written. fio lays out a
    /// write-only job's files so (filesetup.c writes a file only for jobs that read it or
    /// with `overwrite=1`); only a write covering a block in part can tell the difference
    /// (it reads nothing there).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unwritten: bool,
    /// Its laid-out files' names and inodes are in the dentry and inode caches when the run
    /// starts, their data and metadata blocks not: a server that opened its files before
    /// (an index it loaded), or the copy that just made them. Their lookups read nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub names_cached: bool,
    /// Its laid-out files' mapping blocks (ext3's indirect blocks, ext4's extent-tree blocks)
    /// are in the cache when the run starts: fio lays its files out just before a job, so
    /// the blocks that mapped those writes are still cached (the data fio drops first). Else
    /// a read reaching a part of a file they map reads them first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub maps_cached: bool,
}

impl FileSetSpec {
    pub fn validate(&self, targets: usize) -> Result<(), ConfigError> {
        let key = |k: &str| format!("file_sets.{}.{k}", self.name);
        if self.target as usize >= targets {
            return Err(ConfigError::new(&key("target"), format!("device {} does not exist ({targets} devices)", self.target)));
        }
        if !self.dir.starts_with('/') {
            return Err(ConfigError::new(&key("dir"), format!("'{}': expected a path from the root, as /dir", self.dir)));
        }
        if self.entries == 0 {
            return Err(ConfigError::new(&key("entries"), "a file set needs at least one file".into()));
        }
        // The set's state numbers its entries in 32 bits (and ext4's inodes are 32-bit).
        if self.entries > u64::from(u32::MAX) {
            return Err(ConfigError::new(&key("entries"), format!("{}: at most {} files in a set", self.entries, u32::MAX)));
        }
        if !(0.0..=1.0).contains(&self.prealloc) {
            return Err(ConfigError::new(&key("prealloc"), format!("{}: expected a share from 0 to 1", self.prealloc)));
        }
        if self.block_device && (self.entries != 1 || self.dirs || self.dir_width != 0) {
            return Err(ConfigError::new(&key("block_device"), "a block device is one file: expected entries = 1, no directories".into()));
        }
        self.size.validate(&key("size"))
    }
}

/// Which file of a set an operation takes, among those in the state it needs (existing for
/// open, read, stat and delete; absent for create).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Pick {
    /// Uniformly at random.
    #[default]
    Random,
    /// The next entry in the state needed after the set's rotor, which every job of the set
    /// moves on, wrapping round (filebench's fileset_pick).
    Rotor,
    /// In order of their number, the job's own cursor, each entry once: the program ends at
    /// the set's end (a procedure's "create files 1 … N").
    Next,
    /// Entries `first`, `first + step`, … once each, the job's own cursor (the seed's "delete
    /// every even-numbered file": first 1, step 2, counting from 0).
    Every { first: u64, step: u64 },
    /// The file the program has open (filebench's `fd=`).
    Open,
    /// By popularity: entry `r - 1` with probability proportional to `1 / r^s` (Zipf's law
    /// over the set, its first entries the most popular, as downloads of a catalogue are).
    /// `scattered`: rank `r` is entry `r × P mod entries` instead (P a prime above any
    /// set's size), so the popular files lie spread over the set as it was laid out — when
    /// what is asked for has nothing to do with the order files were written in (a search
    /// index's posting lists); without it the most popular files are the first written.
    /// `ranks`: only the ranks in `[first, end)` (0 the most popular), each as likely as in
    /// the whole set's law — the requests that reach one tier of a site, e.g. the files a
    /// cache tier does not hold (drawn by rejection from the law over `end`).
    Zipf {
        s: f64,
        #[serde(default)]
        scattered: bool,
        #[serde(default)]
        ranks: Option<[u64; 2]>,
    },
}

/// Offsets picked by popularity: the open file taken as slots of the call's size, slot
/// `r - 1` with probability proportional to `1 / r^s` (fio's `random_distribution=zipf:s`
/// over a file's blocks), rank `r` at slot `r × P mod slots` when `scattered`, as a scattered
/// Zipf pick of files is. What it stands for: records of one large file asked for by
/// popularity, such as a search index's posting lists at their offsets in its index files.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZipfSlots {
    pub s: f64,
    #[serde(default)]
    pub scattered: bool,
}

/// The multiplier of a scattered Zipf pick's ranks: a prime (2^32 - 5), so every rank maps to
/// a distinct entry of any set smaller than it.
pub const SCATTER_PRIME: u64 = 4_294_967_291;

/// The entry a scattered Zipf pick takes for `rank` (0 the most popular) of a set of `entries`
/// (fewer than [`SCATTER_PRIME`]): `(rank + 1) × P mod entries`, a one-to-one map of ranks
/// onto entries (P is prime, so coprime with any smaller count) that puts consecutive ranks
/// P mod entries apart.
pub fn scattered_entry(rank: u64, entries: u64) -> u64 {
    debug_assert!(rank < entries && entries < SCATTER_PRIME);
    (((rank + 1) as u128 * SCATTER_PRIME as u128) % entries as u128) as u64
}

/// One operation of a file program. The operations on "the open file" work on the file the
/// last `Create` or `Open` opened (a program opens one file at a time).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum FileOp {
    /// Create a file of the set (an absent entry) and open it.
    Create { set: u32, #[serde(default)] pick: Pick },
    /// Open an existing file of the set.
    Open { set: u32, #[serde(default)] pick: Pick },
    /// Close the open file.
    Close,
    /// Write the open file from its start to its set's size for it, `io_bytes` a call.
    WriteWhole { io_bytes: u64 },
    /// Append `size` bytes to the open file, `io_bytes` a call.
    Append { size: SizeSpec, io_bytes: u64 },
    /// Read the open file whole, `io_bytes` a call.
    ReadWhole { io_bytes: u64 },
    /// One read or write of `io_bytes` at a random (aligned to it) or the next offset of the
    /// open file; with `zipf`, at an aligned offset picked by popularity (`ZipfSlots`).
    Read {
        io_bytes: u64,
        random: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        zipf: Option<ZipfSlots>,
    },
    Write {
        io_bytes: u64,
        random: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        zipf: Option<ZipfSlots>,
    },
    /// fsync (or fdatasync: `data_only`) of the open file.
    Fsync { #[serde(default)] data_only: bool },
    /// Delete a file of the set (closing it if open).
    Delete { set: u32, #[serde(default)] pick: Pick },
    /// stat a file of the set.
    Stat { set: u32, #[serde(default)] pick: Pick },
    /// List the set's directory (readdir over every entry).
    ListDir { set: u32 },
    /// sync(2): write every dirty page, wait for it, commit the journal of the set's file
    /// system (`cp -a ...; sync`).
    Sync { set: u32 },
    /// mke2fs of the set's file system, timed: what it writes (inode tables zeroed, bitmaps,
    /// group descriptors and their backups, the journal, root and lost+found) through the
    /// block device's page cache, written back in block order, then the device fsynced. The
    /// file system the run starts with is the one it makes; files created before it stay.
    Mkfs { set: u32 },
    /// The thread computes (or sleeps, `busy` false) for this long.
    Delay { ns: Time, #[serde(default)] busy: bool },
    /// Send the open file whole to the job's client over the network, `io_bytes` a call, as
    /// a web server's sendfile(2) does: each call reads its part through the page cache, then
    /// sends it, and returns once it is sent (the socket's buffer has taken it).
    /// `midway`: the thread's first send starts at a random point of its file (whole calls
    /// in), as a server watched from some moment finds each client part-way through a
    /// download; without it every client starts its first file at the start, in step.
    SendWhole {
        io_bytes: u64,
        #[serde(default)]
        midway: bool,
    },
}

/// A program of file operations run in a loop by each of a job's threads (its clones).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileProgram {
    pub ops: Vec<FileOp>,
    /// Times the thread runs the program; None: until the job's runtime ends, or its picks
    /// run out (a `Next` or `Every` pick past the set's end, an `Open` pick with no file
    /// open; and as `on_no_file` says, an operation that finds no file of the kind it needs).
    #[serde(default)]
    pub loops: Option<u64>,
    /// The thread stops at the first operation that fails (a procedure's "fill the file
    /// system": until a create or a write finds no space).
    #[serde(default)]
    pub stop_on_error: bool,
    /// The jobs a queue runner serves (their indices): while any of them runs, an operation
    /// that fails (a pick that finds the queue empty) makes the thread sleep `idle_ns` and
    /// start its program again, as a mail queue runner rescans; once they are all done, the
    /// failure ends the program. Empty: failures go on as `stop_on_error` says.
    #[serde(default)]
    pub producers: Vec<u32>,
    #[serde(default)]
    pub idle_ns: Time,
    /// What an operation that finds no file of the kind it needs does (a create with every
    /// file there, a delete with none left): by default it fails and the program goes on.
    #[serde(default)]
    pub on_no_file: NoFile,
}

/// What a file program does when an operation finds no file to work on.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NoFile {
    /// The operation fails (counted) and the program goes on.
    #[default]
    Fail,
    /// The thread is done (filebench's FILEBENCH_NORSC under `set mode quit alldone` or
    /// `firstdone`: flowop.c's `flowop_start` ends the thread).
    EndThread,
    /// The thread is done and the run stops (filebench under `set mode quit timeout`, its
    /// default: "Run stopped early: flowop ... could not obtain a file").
    EndRun,
}

/// How fio picks the file of each I/O among a job's files (`file_service_type`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileService {
    /// A different file for each I/O, in turn (fio's default, `roundrobin`).
    #[default]
    Roundrobin,
    /// Each file to the end before the next.
    Sequential,
    /// A file at random for each I/O.
    Random,
}

/// What a job does with files: its set, how its I/O reaches them, and either fio's pattern
/// (the job's `rw`, `bs`, … over its files, offsets within each file) or a program.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileAccess {
    /// The file set (index into the run's `file_sets`).
    pub set: u32,
    /// O_DIRECT: reads and writes bypass the page cache (the file system still maps them).
    #[serde(default)]
    pub direct: bool,
    /// fio's pattern: which file each I/O goes to.
    #[serde(default)]
    pub service: FileService,
    /// fio's `end_fsync`: fsync every file the job wrote when it is done.
    #[serde(default)]
    pub end_fsync: bool,
    /// fio's `fdatasync=N`: the job's flushes are fdatasyncs, not fsyncs.
    #[serde(default)]
    pub datasync: bool,
    /// fio's `unlink`: delete the job's files when it is done.
    #[serde(default)]
    pub unlink: bool,
    /// The `posix_fadvise` advice its reads carry (fio's `fadvise_hint`); None: none given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fadvise: Option<Fadvise>,
    /// A program instead of fio's pattern.
    #[serde(default)]
    pub program: Option<FileProgram>,
    /// fio's metadata engines: each of the job's I/Os is one file system call on the next
    /// file of its set instead of a read or a write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<FileEngine>,
    /// The client of the run's network this thread serves (a `SendWhole` sends to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientRef>,
}

/// fio's ioengines whose "I/O" is a call on a file or a directory (fio's engines/filecreate.c,
/// filestat.c, filedelete.c, dircreate.c, dirstat.c, dirdelete.c): fio times the call and
/// counts it as one I/O of the job's data direction.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileEngine {
    /// open(O_CREAT) and close.
    Filecreate,
    /// stat (fio's `stat_type`: stat, lstat or statx: the same path walk here).
    Filestat,
    /// unlink.
    Filedelete,
    Dircreate,
    Dirstat,
    Dirdelete,
}

impl FileEngine {
    /// Whether its entries are directories.
    pub fn on_dirs(self) -> bool {
        matches!(self, FileEngine::Dircreate | FileEngine::Dirstat | FileEngine::Dirdelete)
    }
}

impl FileAccess {
    /// Checked against the run's file sets and its number of jobs.
    pub fn validate(&self, sets: &[FileSetSpec], jobs: usize) -> Result<(), ConfigError> {
        let n = sets.len() as u32;
        let check_set = |key: &str, set: u32| {
            if set >= n {
                Err(ConfigError::new(key, format!("file set {set} does not exist ({n} sets)")))
            } else {
                Ok(())
            }
        };
        check_set("files.set", self.set)?;
        if sets[self.set as usize].block_device && (self.engine.is_some() || self.program.is_some() || self.unlink) {
            return Err(ConfigError::new(
                "files.set",
                format!("set {} is a block device: only reads, writes and fsyncs of it run there (no engine, program or unlink)", self.set),
            ));
        }
        if let Some(e) = self.engine {
            if self.program.is_some() {
                return Err(ConfigError::new("files.engine", "an engine runs fio's pattern, not a program".into()));
            }
            if sets[self.set as usize].dirs != e.on_dirs() {
                let what = if e.on_dirs() { "directories" } else { "files" };
                return Err(ConfigError::new("files.engine", format!("{e:?} works on {what}: set {} is not a set of them", self.set)));
            }
            if self.unlink && !matches!(e, FileEngine::Filecreate | FileEngine::Filestat) {
                return Err(ConfigError::new("files.unlink", format!("{e:?}: its job leaves no files of its own to delete at its end")));
            }
        }
        let Some(p) = &self.program else { return Ok(()) };
        if p.ops.is_empty() {
            return Err(ConfigError::new("files.program.ops", "a program needs at least one operation".into()));
        }
        for (i, op) in p.ops.iter().enumerate() {
            let key = format!("files.program.ops.{i}");
            match *op {
                FileOp::Create { set, pick } | FileOp::Open { set, pick } | FileOp::Delete { set, pick } | FileOp::Stat { set, pick } => {
                    check_set(&key, set)?;
                    if let Pick::Every { step: 0, .. } = pick {
                        return Err(ConfigError::new(&key, "an Every pick needs a step of at least 1".into()));
                    }
                    if let Pick::Zipf { s, scattered, ranks } = pick {
                        if !(s > 0.0 && s.is_finite()) {
                            return Err(ConfigError::new(&key, format!("a Zipf pick needs an exponent above 0, got {s}")));
                        }
                        if let Some([first, end]) = ranks {
                            let entries = sets[set as usize].entries;
                            if first >= end || end > entries {
                                return Err(ConfigError::new(&key, format!("a Zipf pick's ranks [{first}, {end}) must be a non-empty range within the set's {entries} entries")));
                            }
                        }
                        if scattered && sets[set as usize].entries >= SCATTER_PRIME {
                            return Err(ConfigError::new(&key, format!("a scattered Zipf pick works on sets of fewer than {SCATTER_PRIME} entries")));
                        }
                    }
                }
                FileOp::ListDir { set } | FileOp::Sync { set } | FileOp::Mkfs { set } => check_set(&key, set)?,
                FileOp::SendWhole { io_bytes, .. } => {
                    if io_bytes == 0 {
                        return Err(ConfigError::new(&key, "io_bytes must be positive".into()));
                    }
                    if self.client.is_none() {
                        return Err(ConfigError::new(&key, "send_whole sends to the thread's client: the thread names none".into()));
                    }
                }
                FileOp::WriteWhole { io_bytes } | FileOp::ReadWhole { io_bytes } | FileOp::Read { io_bytes, .. } | FileOp::Write { io_bytes, .. } => {
                    if io_bytes == 0 {
                        return Err(ConfigError::new(&key, "io_bytes must be positive".into()));
                    }
                    if let FileOp::Read { zipf: Some(z), .. } | FileOp::Write { zipf: Some(z), .. } = *op {
                        if !(z.s > 0.0 && z.s.is_finite()) {
                            return Err(ConfigError::new(&key, format!("Zipf offsets need an exponent above 0, got {}", z.s)));
                        }
                        if z.scattered && sets.iter().any(|s| s.size.max_bytes().div_ceil(io_bytes) >= SCATTER_PRIME) {
                            return Err(ConfigError::new(&key, format!("scattered Zipf offsets work on files of fewer than {SCATTER_PRIME} slots of {io_bytes} bytes")));
                        }
                    }
                }
                FileOp::Append { size, io_bytes } => {
                    size.validate(&key)?;
                    if io_bytes == 0 {
                        return Err(ConfigError::new(&key, "io_bytes must be positive".into()));
                    }
                }
                FileOp::Close | FileOp::Fsync { .. } | FileOp::Delay { .. } => {}
            }
        }
        if let Some(&j) = p.producers.iter().find(|&&j| j as usize >= jobs) {
            return Err(ConfigError::new("files.program.producers", format!("names job {j}, which does not exist ({jobs} jobs)")));
        }
        if !p.producers.is_empty() && p.idle_ns == 0 {
            return Err(ConfigError::new("files.program.idle_ns", "a queue runner needs a positive idle time between rescans".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scattering_maps_the_ranks_one_to_one_onto_the_set() {
        for n in [1u64, 2, 7, 1000, 4096, 250_000] {
            let mut seen = vec![false; n as usize];
            for rank in 0..n {
                let e = scattered_entry(rank, n);
                assert!(e < n && !seen[e as usize], "rank {rank} of {n}: entry {e} out of the set or taken twice");
                seen[e as usize] = true;
            }
        }
    }

    #[test]
    fn the_most_popular_ranks_lie_spread_over_the_set() {
        let n = 250_000;
        let mut top: Vec<u64> = (0..100).map(|r| scattered_entry(r, n)).collect();
        top.sort_unstable();
        // Not one cluster: the hundred hottest files span most of the set, and none of the
        // gaps between them holds more than a tenth of it.
        assert!(top[99] - top[0] > n / 2, "{top:?}");
        assert!(top.windows(2).all(|w| w[1] - w[0] < n / 10), "{top:?}");
    }

    /// A set's entries are numbered in 32 bits: one more than that is refused, not wrapped.
    #[test]
    fn a_set_of_more_entries_than_32_bits_number_is_refused() {
        let mut set = FileSetSpec { name: "big".into(), target: 0, dir: "/big".into(), entries: u64::from(u32::MAX), size: SizeSpec::Fixed { bytes: 4096 }, dir_width: 0, prealloc: 0.0, dirs: false, block_device: false, unwritten: false, names_cached: false, maps_cached: false };
        assert!(set.validate(1).is_ok());
        set.entries += 1;
        assert_eq!(set.validate(1).unwrap_err().key, "file_sets.big.entries");
    }
}
