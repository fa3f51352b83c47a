//! A job's file work: which file each of fio's I/Os goes to, or the program of file operations
//! a thread runs (filebench's flowops, the seed scenarios), one operation at a time.

use rand::{Rng as _, SeedableRng};
use rand_distr::{Distribution as _, Zipf};

use crate::engine::rng::{derive_seed, Rng};
use crate::engine::Time;
use crate::io::{FileDone, FileIoOp, ROTOR_PICK};
use crate::metrics::OpSummary;
use crate::io::Op;
use crate::workload::files::{FileAccess, FileEngine, FileOp, FileService, NoFile, Pick, scattered_entry};
use crate::workload::{FileRandomMap, Generator, Io};

/// One file operation a job is to issue: what, on which entry (None: picked by the file
/// layer at random), and the byte range of a read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileRequest {
    pub op: FileIoOp,
    pub set: u32,
    pub entry: Option<u64>,
    pub offset: u64,
    pub len: u64,
}

/// Where a program is: the operation, and what it has done of it.
#[derive(Clone, Copy, Debug, Default)]
struct Step {
    index: usize,
    /// Bytes of the operation done and to do (reads and writes of whole files, appends).
    done: u64,
    total: u64,
    /// When the operation began (its latency is from there to its last call's end).
    began: Time,
}

/// The file a program has open: its entry and size, and where its next sequential I/O goes.
#[derive(Clone, Copy, Debug)]
struct Open {
    set: u32,
    entry: u64,
    size: u64,
    pos: u64,
}

pub struct FileJob {
    pub access: FileAccess,
    /// Entries in each of the run's file sets (the job's own for fio's file service).
    set_entries: Vec<u64>,
    entries: u64,
    rng: Rng,
    /// fio's pattern: the file the next I/O goes to, and the last written (fsync=N syncs it).
    next_file: u64,
    last_written: u64,
    /// fio's sequential service: bytes sent to the current file, and a file's size.
    seq_bytes: u64,
    file_bytes: u64,
    /// fio's offset of each file, per direction (fio's `last_pos[ddir]`), and the file the
    /// I/O just generated goes to.
    file_pos: Vec<[u64; 3]>,
    /// fio's random map of each file (`f->io_axmap`): each file's blocks once a pass (empty
    /// when the job keeps no random map).
    file_maps: Vec<FileRandomMap>,
    chosen: Option<u64>,
    /// fio's end_fsync and unlink once the I/O is done: the next file of each to go.
    tail: (u64, u64),
    /// A program's state; per operation, the cursor of its `Next`/`Every` pick.
    step: Step,
    open: Option<Open>,
    cursors: Vec<u64>,
    loops_done: u64,
    /// A queue runner found nothing: it sleeps this long, then starts its program again.
    idle: Option<Time>,
    idling: bool,
    /// A program ran out of files for a pick, or its loops: it is done.
    exhausted: bool,
    /// The operation (its index) that found no file and so ended the program, as
    /// `on_no_file` says.
    no_file_op: Option<u32>,
    pub summary: Vec<OpSummary>,
}

impl FileJob {
    pub fn new(access: FileAccess, set_entries: Vec<u64>, file_bytes: u64, seed: u64) -> FileJob {
        let ops = access.program.as_ref().map_or(0, |p| p.ops.len());
        let entries = set_entries.get(access.set as usize).copied().unwrap_or(1).max(1);
        FileJob {
            access,
            set_entries,
            entries,
            rng: Rng::seed_from_u64(derive_seed(seed, "file-job", 0)),
            next_file: 0,
            last_written: 0,
            seq_bytes: 0,
            file_bytes: file_bytes.max(1),
            file_pos: Vec::new(),
            file_maps: Vec::new(),
            chosen: None,
            tail: (0, 0),
            step: Step::default(),
            open: None,
            cursors: vec![0; ops],
            loops_done: 0,
            idle: None,
            idling: false,
            exhausted: false,
            no_file_op: None,
            summary: vec![OpSummary::default(); ops],
        }
    }

    /// Whether its picks wait for a file other threads hold (a program's, as filebench's
    /// threads do), rather than fail: a queue runner's find nothing to take.
    pub fn waits_for_picks(&self) -> bool {
        self.access.program.as_ref().is_some_and(|p| p.producers.is_empty())
    }

    pub fn is_program(&self) -> bool {
        self.access.program.is_some()
    }

    /// fio's pattern done: what it does then, one at a time — fsync each of its files
    /// (`end_fsync`), then delete each (`unlink`); None when nothing is left.
    pub fn tail_next(&mut self) -> Option<FileRequest> {
        let set = self.access.set;
        let req = |op, entry| FileRequest { op, set, entry: Some(entry), offset: 0, len: 0 };
        if self.access.end_fsync && self.tail.0 < self.entries {
            self.tail.0 += 1;
            return Some(req(FileIoOp::Fsync { data_only: false }, self.tail.0 - 1));
        }
        if self.access.unlink && self.tail.1 < self.entries {
            self.tail.1 += 1;
            return Some(req(FileIoOp::Delete, self.tail.1 - 1));
        }
        None
    }

    /// fio's pattern: the job's next I/O from `generator`, on the file its service picks, at
    /// that file's own next offset (fio keeps an offset per file and direction: with
    /// roundrobin each I/O goes to the next file, where that file's stream left off) and,
    /// for random I/O, from that file's own random map.
    pub fn next_io(&mut self, generator: &mut Generator) -> Io {
        let e = match self.access.service {
            // A metadata engine takes each file in turn, once a loop.
            _ if self.access.engine.is_some() => self.next_file,
            FileService::Roundrobin | FileService::Sequential => self.next_file,
            FileService::Random => self.rng.gen_range(0..self.entries),
        };
        if self.file_pos.is_empty() {
            self.file_pos = vec![[0; 3]; self.entries as usize];
            // Only a job that keeps a random map needs one per file.
            if generator.keeps_random_map() {
                self.file_maps = vec![FileRandomMap::default(); self.entries as usize];
            }
        }
        generator.set_positions(self.file_pos[e as usize]);
        let maps = !self.file_maps.is_empty();
        if maps {
            generator.swap_random_map(&mut self.file_maps[e as usize]);
        }
        let io = generator.next_io();
        if maps {
            generator.swap_random_map(&mut self.file_maps[e as usize]);
        }
        self.file_pos[e as usize] = generator.positions();
        if self.access.service == FileService::Sequential && self.access.engine.is_none() {
            // Each file to its end before the next: a file's worth of bytes, then on.
            self.seq_bytes += io.len;
            if self.seq_bytes >= self.file_bytes {
                self.seq_bytes = 0;
                self.next_file = (self.next_file + 1) % self.entries;
            }
        } else {
            self.next_file = (self.next_file + 1) % self.entries;
        }
        self.chosen = Some(e);
        io
    }

    /// fio's pattern: the file and offset of I/O `io` (its offset is within one file): the
    /// file [`FileJob::next_io`] chose for it.
    pub fn place(&mut self, io: &Io) -> FileRequest {
        let set = self.access.set;
        let entry = match io.op {
            // fsync=N syncs the file last written.
            Op::Flush => self.last_written,
            _ => self.chosen.take().expect("an I/O generated by FileJob::next_io"),
        };
        if io.op == Op::Write {
            self.last_written = entry;
        }
        let op = match (self.access.engine, io.op) {
            (_, Op::Flush) => FileIoOp::Fsync { data_only: self.access.datasync },
            (Some(e), _) => engine_op(e),
            (None, Op::Read) => FileIoOp::Read,
            (None, Op::Write) => FileIoOp::Write,
            // fio's trim on a file is a hole punch: not modelled; refused when the job is built.
            (None, Op::Trim) => FileIoOp::Write,
        };
        FileRequest { op, set, entry: Some(entry), offset: io.offset, len: io.len }
    }

    /// The direction fio counts request `req` in: a metadata engine's call counts as an I/O
    /// of the job's data direction (fio's engines record its time as a completion latency in
    /// the direction of `rw`), with the size fio gives it (the job's block size).
    pub fn counts_as(&self, req: &FileRequest, rw_dir: Op) -> Option<Op> {
        let e = self.access.engine?;
        (req.op == engine_op(e)).then_some(rw_dir)
    }


    /// The program's next request at `now`; None when it is done (loops run, or a pick found
    /// no file), or when the current operation needs no request (a sleep: `Delay` is returned
    /// for the caller to wait).
    pub fn next(&mut self, now: Time) -> Next {
        let Some(program) = self.access.program.as_ref() else { return Next::Done };
        if self.exhausted {
            return Next::Done;
        }
        if let Some(ns) = self.idle.take() {
            self.idling = true;
            return Next::Delay { ns };
        }
        if self.step.index >= program.ops.len() {
            self.loops_done += 1;
            if program.loops.is_some_and(|l| self.loops_done >= l) {
                self.exhausted = true;
                return Next::Done;
            }
            self.step = Step::default();
        }
        let i = self.step.index;
        if self.step.done == 0 && self.step.total == 0 {
            self.step.began = now;
        }
        let io_req = |op, set, entry: Option<u64>, offset, len| Next::Issue(FileRequest { op, set, entry, offset, len });
        match program.ops[i] {
            FileOp::Create { set, pick } => match self.pick(i, pick) {
                Ok(entry) => io_req(FileIoOp::Create, set, entry, 0, 0),
                Err(()) => self.run_out(),
            },
            FileOp::Open { set, pick } => match self.pick(i, pick) {
                Ok(entry) => io_req(FileIoOp::Open, set, entry, 0, 0),
                Err(()) => self.run_out(),
            },
            FileOp::Delete { set, pick } => match self.pick(i, pick) {
                Ok(entry) => io_req(FileIoOp::Delete, set, entry, 0, 0),
                Err(()) => self.run_out(),
            },
            FileOp::Stat { set, pick } => match self.pick(i, pick) {
                Ok(entry) => io_req(FileIoOp::Stat, set, entry, 0, 0),
                Err(()) => self.run_out(),
            },
            FileOp::ListDir { set } => io_req(FileIoOp::ListDir, set, None, 0, 0),
            FileOp::Sync { set } => io_req(FileIoOp::Sync, set, None, 0, 0),
            FileOp::Mkfs { set } => io_req(FileIoOp::Mkfs, set, None, 0, 0),
            FileOp::Close => match self.open {
                Some(o) => io_req(FileIoOp::Close, o.set, Some(o.entry), 0, 0),
                None => self.skip(),
            },
            FileOp::Fsync { data_only } => match self.open {
                Some(o) => io_req(FileIoOp::Fsync { data_only }, o.set, Some(o.entry), 0, 0),
                None => self.skip(),
            },
            FileOp::WriteWhole { io_bytes } | FileOp::ReadWhole { io_bytes } | FileOp::SendWhole { io_bytes, .. } => {
                let Some(o) = self.open else { return self.skip() };
                let write = matches!(program.ops[i], FileOp::WriteWhole { .. });
                let send = matches!(program.ops[i], FileOp::SendWhole { .. });
                if self.step.total == 0 && self.step.done == 0 {
                    self.step.total = o.size;
                    if o.size == 0 {
                        // An empty file: one operation of no bytes, as filebench counts it.
                        self.finish_step(now);
                        return Next::Again;
                    }
                    if matches!(program.ops[i], FileOp::SendWhole { midway: true, .. }) && self.loops_done == 0 {
                        self.step.done = self.rng.gen_range(0..o.size.div_ceil(io_bytes)) * io_bytes;
                    }
                }
                let len = io_bytes.min(self.step.total - self.step.done);
                let op = if send {
                    FileIoOp::Send
                } else if write {
                    FileIoOp::Write
                } else {
                    FileIoOp::Read
                };
                io_req(op, o.set, Some(o.entry), self.step.done, len)
            }
            FileOp::Append { size, io_bytes } => {
                let Some(o) = self.open else { return self.skip() };
                if self.step.total == 0 && self.step.done == 0 {
                    self.step.total = size.draw(&mut self.rng).max(1);
                }
                let len = io_bytes.min(self.step.total - self.step.done);
                io_req(FileIoOp::Write, o.set, Some(o.entry), o.size + self.step.done, len)
            }
            FileOp::Read { io_bytes, random, zipf } | FileOp::Write { io_bytes, random, zipf } => {
                let Some(o) = self.open else { return self.skip() };
                let write = matches!(program.ops[i], FileOp::Write { .. });
                let span = o.size.max(io_bytes);
                let offset = if let Some(z) = zipf {
                    // Validated: s > 0; scattered, fewer slots than the prime.
                    let slots = span.div_ceil(io_bytes).max(1);
                    let law = Zipf::new(slots, z.s).expect("a validated Zipf exponent");
                    let rank = law.sample(&mut self.rng) as u64 - 1;
                    (if z.scattered { scattered_entry(rank, slots) } else { rank }) * io_bytes
                } else if random {
                    self.rng.gen_range(0..span.div_ceil(io_bytes).max(1)) * io_bytes
                } else if o.pos + io_bytes > span {
                    0
                } else {
                    o.pos
                };
                let op = if write { FileIoOp::Write } else { FileIoOp::Read };
                io_req(op, o.set, Some(o.entry), offset, io_bytes.min(span - offset).max(1))
            }
            // Computing takes a core of the host's (the file layer keeps them); sleeping
            // takes none.
            FileOp::Delay { ns, busy: true } => io_req(FileIoOp::Compute { ns }, 0, None, 0, 0),
            FileOp::Delay { ns, busy: false } => Next::Delay { ns },
        }
    }

    /// A `Delay` is over: the program goes on.
    pub fn delay_done(&mut self, now: Time) {
        if std::mem::take(&mut self.idling) {
            self.step = Step::default();
        } else {
            self.finish_step(now);
        }
    }

    /// The operation that found no file and so ended the program, if one did.
    pub fn no_file_op(&self) -> Option<u32> {
        self.no_file_op
    }

    /// The program ended for want of a file and that ends the run (`NoFile::EndRun`).
    pub fn stops_run(&self) -> bool {
        self.no_file_op.is_some() && self.access.program.as_ref().is_some_and(|p| p.on_no_file == NoFile::EndRun)
    }

    /// The jobs this one serves as a queue runner.
    pub fn producers(&self) -> &[u32] {
        self.access.program.as_ref().map_or(&[], |p| &p.producers)
    }

    /// Request `req`, issued for the current operation, ended at `now` as `done` says;
    /// `producers_running`: whether a job this one serves as a queue runner still runs.
    pub fn done(&mut self, now: Time, req: &FileRequest, done: &FileDone, producers_running: bool) {
        let Some(program) = self.access.program.as_ref() else {
            return;
        };
        let i = self.step.index;
        let op = program.ops[i];
        if !done.ok && !program.producers.is_empty() {
            // A queue runner found the queue empty: it rescans later, or is done.
            self.summary[i].errors += 1;
            if producers_running {
                self.idle = Some(program.idle_ns);
            } else {
                self.exhausted = true;
            }
            self.open = None;
            self.finish_step(now);
            return;
        }
        if !done.ok && done.no_file && program.on_no_file != NoFile::Fail {
            // filebench's FILEBENCH_NORSC: the thread is done. The call is not one of the
            // flowop's operations (filebench returns before flowop_beginop).
            self.summary[i].errors += 1;
            self.exhausted = true;
            self.no_file_op = Some(i as u32);
            self.advance();
            return;
        }
        if !done.ok {
            self.summary[i].errors += 1;
            if program.stop_on_error {
                self.exhausted = true;
                self.finish_step(now);
                return;
            }
        }
        match req.op {
            FileIoOp::Create | FileIoOp::Open if done.ok => {
                self.open = Some(Open { set: req.set, entry: done.entry, size: done.size, pos: 0 });
            }
            FileIoOp::Close => self.open = None,
            FileIoOp::Delete if self.open.is_some_and(|o| o.set == req.set && o.entry == done.entry) => self.open = None,
            FileIoOp::Read | FileIoOp::Write | FileIoOp::Send => {
                self.summary[i].bytes += req.len;
                if let Some(o) = &mut self.open {
                    o.pos = req.offset + req.len;
                    // An append's calls go at its start size plus what it has written, so
                    // the size it started from holds until it is done (below).
                    if req.op == FileIoOp::Write && !matches!(op, FileOp::Append { .. }) {
                        o.size = o.size.max(req.offset + req.len);
                    }
                }
                if matches!(op, FileOp::WriteWhole { .. } | FileOp::ReadWhole { .. } | FileOp::SendWhole { .. } | FileOp::Append { .. }) {
                    self.step.done += req.len;
                    if self.step.done < self.step.total && done.ok {
                        return; // the operation goes on with its next call
                    }
                    if let (FileOp::Append { .. }, Some(o)) = (op, &mut self.open) {
                        o.size = o.size.max(req.offset + req.len);
                    }
                }
            }
            _ => {}
        }
        self.finish_step(now);
    }

    /// The current operation is done at `now`: counted, with its latency.
    fn finish_step(&mut self, now: Time) {
        let s = &mut self.summary[self.step.index];
        let lat = now - self.step.began;
        s.min_latency_ns = if s.ops == 0 { lat } else { s.min_latency_ns.min(lat) };
        s.ops += 1;
        s.latency_ns += lat;
        s.max_latency_ns = s.max_latency_ns.max(lat);
        self.advance();
    }

    fn advance(&mut self) {
        self.step = Step { index: self.step.index + 1, ..Step::default() };
    }

    /// An operation that has nothing to work on (no file open): it is passed over.
    fn skip(&mut self) -> Next {
        let i = self.step.index;
        self.summary[i].errors += 1;
        self.advance();
        Next::Again
    }

    /// A pick found no file: the program ends.
    fn run_out(&mut self) -> Next {
        self.exhausted = true;
        Next::Done
    }

    /// The entry `pick` names for operation `i` (None: at random, the file layer's choice);
    /// Err when an `Every` or `Next` pick has passed the set's end.
    fn pick(&mut self, i: usize, pick: Pick) -> Result<Option<u64>, ()> {
        let set_entries = self.set_entries(i);
        match pick {
            Pick::Random => Ok(None),
            Pick::Rotor => Ok(Some(ROTOR_PICK)),
            Pick::Open => self.open.map(|o| Some(o.entry)).ok_or(()),
            Pick::Next => {
                let c = &mut self.cursors[i];
                if *c >= set_entries {
                    return Err(());
                }
                *c += 1;
                Ok(Some(*c - 1))
            }
            Pick::Zipf { s, scattered, ranks } => {
                // Validated: s > 0, the set has entries (fewer than the prime when scattered),
                // the ranks a non-empty range within them.
                let n = set_entries.max(1);
                let [first, end] = ranks.unwrap_or([0, n]);
                let z = Zipf::new(end.min(n), s).expect("a validated Zipf exponent");
                let rank = loop {
                    let r = z.sample(&mut self.rng) as u64 - 1;
                    if r >= first {
                        break r;
                    }
                };
                Ok(Some(if scattered { scattered_entry(rank, n) } else { rank }))
            }
            Pick::Every { first, step } => {
                let c = &mut self.cursors[i];
                let entry = first + *c * step;
                if entry >= set_entries {
                    return Err(());
                }
                *c += 1;
                Ok(Some(entry))
            }
        }
    }

    /// Entries of the set operation `i` works on.
    fn set_entries(&self, i: usize) -> u64 {
        let set = match self.access.program.as_ref().map(|p| p.ops[i]) {
            Some(FileOp::Create { set, .. } | FileOp::Open { set, .. } | FileOp::Delete { set, .. } | FileOp::Stat { set, .. }) => set,
            _ => self.access.set,
        };
        self.set_entries.get(set as usize).copied().unwrap_or(0)
    }
}

/// The call each of a metadata engine's I/Os makes.
fn engine_op(e: FileEngine) -> FileIoOp {
    match e {
        FileEngine::Filecreate => FileIoOp::CreateClose,
        FileEngine::Filestat | FileEngine::Dirstat => FileIoOp::Stat,
        FileEngine::Filedelete => FileIoOp::Delete,
        FileEngine::Dircreate => FileIoOp::Mkdir,
        FileEngine::Dirdelete => FileIoOp::Rmdir,
    }
}

/// What a program does next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    Issue(FileRequest),
    /// Sleep this long, then go on.
    Delay { ns: Time },
    /// Nothing to issue for this operation: ask again.
    Again,
    Done,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::files::{FileProgram, SizeSpec, ZipfSlots};

    /// A job whose one operation opens a file of a set of `entries` by `pick`.
    fn opener(pick: Pick, entries: u64) -> FileJob {
        let program = FileProgram { ops: vec![FileOp::Open { set: 0, pick }], loops: None, stop_on_error: false, producers: Vec::new(), idle_ns: 0, on_no_file: Default::default() };
        let access = FileAccess { set: 0, direct: false, service: FileService::Roundrobin, end_fsync: false, datasync: false, unlink: false, fadvise: None, program: Some(program), engine: None, client: None };
        FileJob::new(access, vec![entries], 4096, 7)
    }

    fn counts(pick: Pick, entries: u64, draws: usize) -> Vec<u64> {
        let mut job = opener(pick, entries);
        let mut n = vec![0u64; entries as usize];
        for _ in 0..draws {
            n[job.pick(0, pick).expect("a Zipf pick always finds a file").expect("an entry") as usize] += 1;
        }
        n
    }

    #[test]
    fn a_zipf_pick_over_a_rank_window_keeps_the_whole_law_within_it() {
        let (s, entries, draws) = (0.8, 100, 200_000);
        let window = counts(Pick::Zipf { s, scattered: false, ranks: Some([10, 40]) }, entries, draws);
        assert!(window[..10].iter().chain(&window[40..]).all(|&c| c == 0), "a rank outside [10, 40) was drawn");
        // Within it, each rank as likely as the law over the whole set says: rank r against
        // rank 10 in the ratio (11 / (r + 1))^s.
        for r in [15usize, 25, 39] {
            let expected = (11.0 / (r as f64 + 1.0)).powf(s);
            let got = window[r] as f64 / window[10] as f64;
            assert!((got / expected - 1.0).abs() < 0.08, "rank {r}: {got:.3} of rank 10's, expected {expected:.3}");
        }
    }

    /// Slots of 4 KiB of a 100-slot file that `draws` reads with Zipf offsets hit.
    fn slot_counts(zipf: ZipfSlots, draws: usize) -> Vec<u64> {
        let read = FileOp::Read { io_bytes: 4096, random: false, zipf: Some(zipf) };
        let program = FileProgram { ops: vec![read], loops: None, stop_on_error: false, producers: Vec::new(), idle_ns: 0, on_no_file: Default::default() };
        let access = FileAccess { set: 0, direct: false, service: FileService::Roundrobin, end_fsync: false, datasync: false, unlink: false, fadvise: None, program: Some(program), engine: None, client: None };
        let mut job = FileJob::new(access, vec![1], 4096, 7);
        job.open = Some(Open { set: 0, entry: 0, size: 100 * 4096, pos: 0 });
        let mut n = vec![0u64; 100];
        for _ in 0..draws {
            let Next::Issue(req) = job.next(0) else { panic!("a read of the open file") };
            assert_eq!((req.offset % 4096, req.len), (0, 4096));
            n[(req.offset / 4096) as usize] += 1;
        }
        n
    }

    #[test]
    fn zipf_offsets_follow_the_law_over_the_files_slots_scattered_or_from_its_start() {
        let (s, draws) = (0.8, 200_000);
        let plain = slot_counts(ZipfSlots { s, scattered: false }, draws);
        for r in [1usize, 9, 49, 99] {
            let expected = (1.0 / (r as f64 + 1.0)).powf(s);
            let got = plain[r] as f64 / plain[0] as f64;
            assert!((got / expected - 1.0).abs() < 0.1, "slot {r}: {got:.3} of slot 0's, expected {expected:.3}");
        }
        // Scattered: rank r's count lands on slot scattered_entry(r), the same law.
        let spread = slot_counts(ZipfSlots { s, scattered: true }, draws);
        let top = scattered_entry(0, 100) as usize;
        assert_ne!(top, 0);
        for r in [1u64, 9, 49] {
            let got = spread[scattered_entry(r, 100) as usize] as f64 / spread[top] as f64;
            let expected = (1.0 / (r as f64 + 1.0)).powf(s);
            assert!((got / expected - 1.0).abs() < 0.1, "rank {r}: {got:.3}, expected {expected:.3}");
        }
    }

    #[test]
    fn an_append_writes_its_calls_one_after_the_other_from_the_files_end() {
        // 10 KB in 4 KiB calls onto a file of 1000 bytes: 1000, 5096, 9192 (until 1 Dec
        // 2026 each call's offset counted the calls before it twice: 1000, 9192, 21480).
        let append = FileOp::Append { size: SizeSpec::Fixed { bytes: 10_000 }, io_bytes: 4096 };
        let program = FileProgram { ops: vec![append], loops: Some(2), stop_on_error: false, producers: Vec::new(), idle_ns: 0, on_no_file: Default::default() };
        let access = FileAccess { set: 0, direct: false, service: FileService::Roundrobin, end_fsync: false, datasync: false, unlink: false, fadvise: None, program: Some(program), engine: None, client: None };
        let mut job = FileJob::new(access, vec![1], 4096, 7);
        job.open = Some(Open { set: 0, entry: 0, size: 1000, pos: 0 });
        let mut calls = Vec::new();
        for _ in 0..6 {
            let Next::Issue(req) = job.next(0) else { panic!("an append's call") };
            calls.push((req.offset, req.len));
            job.done(0, &req, &FileDone { ok: true, entry: 0, size: 0, errno: 0, no_file: false }, false);
        }
        assert_eq!(calls, [(1000, 4096), (5096, 4096), (9192, 1808), (11_000, 4096), (15_096, 4096), (19_192, 1808)]);
        assert_eq!(job.open.expect("still open").size, 21_000);
    }

    #[test]
    fn a_scattered_pick_over_a_window_scatters_the_same_ranks() {
        let entries = 100;
        let plain = counts(Pick::Zipf { s: 0.8, scattered: false, ranks: Some([0, 5]) }, entries, 2_000);
        let spread = counts(Pick::Zipf { s: 0.8, scattered: true, ranks: Some([0, 5]) }, entries, 2_000);
        let on = |c: &[u64]| c.iter().enumerate().filter(|(_, &n)| n > 0).map(|(e, _)| e as u64).collect::<Vec<_>>();
        assert_eq!(on(&plain), vec![0, 1, 2, 3, 4]);
        let mut want: Vec<u64> = (0..5).map(|r| scattered_entry(r, entries)).collect();
        want.sort_unstable();
        assert_eq!(on(&spread), want);
    }
}
