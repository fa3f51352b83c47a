//! The ids and request types every layer shares: what a device is asked to do (`Op`,
//! [`DeviceRequest`]) and the numbers requests travel under. Nothing here knows of hosts,
//! queues, devices or arrays, so every one of them can use it.

use serde::Serialize;

/// A device request's number, as the block layer gave it (an NCQ tag, an NVMe command id);
/// unique among the device's requests in flight.
pub type Tag = u32;

/// The number of a bio, the unit the block layer takes from the layer above it (the host's
/// job runner, or an array for its members): unique among that layer's bios in flight. A
/// device request carries one or more bios; a bio rides in one or more device requests.
pub type BioId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    Trim,
    Flush,
}

impl Op {
    /// Index used for per-direction tables: read 0, write 1, trim 2, flush 3.
    pub fn index(self) -> usize {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
            Op::Flush => 3,
        }
    }
}

/// What a device is asked to do: one request of its block queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceRequest {
    pub tag: Tag,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    /// The process whose I/O it is (an array passes it on to its members' schedulers).
    pub process: u32,
    /// REQ_SYNC, as the bios it carries were sent (an array passes it on too).
    pub sync: bool,
}

/// A file operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileIoOp {
    /// Create the file (an absent entry) and open it.
    Create,
    /// Open an existing file.
    Open,
    Close,
    Read,
    Write,
    /// fsync, or fdatasync (`data_only`: the file's data and only the metadata needed to
    /// read it back).
    Fsync { data_only: bool },
    Delete,
    Stat,
    /// readdir over the set's directory.
    ListDir,
    /// open(O_CREAT) then close (fio's filecreate engine): the file made if absent, opened
    /// if it exists, and closed at once.
    CreateClose,
    /// mkdir and rmdir of an entry that is a directory (fio's dircreate and dirdelete).
    Mkdir,
    Rmdir,
    /// sync(2): every dirty page written and waited for, then the set's file system's
    /// journal committed.
    Sync,
    /// mke2fs of the set's file system: its writes, then the device fsynced.
    Mkfs,
    /// sendfile(2) of a range of the open file to the job's client: read through the page
    /// cache, then sent over the network.
    Send,
    /// Work in user space for `ns` of CPU (filebench's `hog`, a scenario's busy `delay`):
    /// no system call and no file; the thread runs it on the host's cores, waiting for one
    /// when all are taken.
    Compute { ns: u64 },
}

impl FileIoOp {
    /// Operations on a file that must exist (all but the creates, listing, sync, mkfs and
    /// computing).
    pub fn needs_existing(self) -> bool {
        !matches!(
            self,
            FileIoOp::Create | FileIoOp::CreateClose | FileIoOp::Mkdir | FileIoOp::ListDir | FileIoOp::Sync | FileIoOp::Mkfs | FileIoOp::Compute { .. }
        )
    }
}

/// The `entry` that asks the file layer for the next entry after its set's rotor (filebench's
/// pick), rather than a given one or one at random.
pub const ROTOR_PICK: u64 = u64::MAX;

/// A file operation a job asks for: on file `entry` of file set `set` (None: one the file
/// layer picks at random among the set's files in the state the operation needs;
/// [`ROTOR_PICK`]: the next after the set's rotor).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileIo {
    /// The job runner's request number (the same numbers as its bios).
    pub id: BioId,
    /// The submitting job.
    pub process: u32,
    pub set: u32,
    pub entry: Option<u64>,
    pub op: FileIoOp,
    /// Byte range of a read or write.
    pub offset: u64,
    pub len: u64,
    /// O_DIRECT: a read or write bypasses the page cache.
    pub direct: bool,
    /// The advice the opener gave for the file (`posix_fadvise`), None: none given.
    pub fadvise: Option<Fadvise>,
    /// A pick that finds every file of the kind it needs claimed by other threads waits for
    /// one of them (filebench's `fileset_pick`); without it the call fails (a queue runner's:
    /// it found nothing to take).
    pub wait_pick: bool,
}

/// `posix_fadvise`'s access advice, as it sets the open file's read-ahead (`mm/fadvise.c`,
/// `generic_fadvise`; the same rules in 2.6.2x's `sys_fadvise64_64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Fadvise {
    /// `POSIX_FADV_NORMAL`: the device's `read_ahead_kb` again.
    Normal,
    /// `POSIX_FADV_SEQUENTIAL`: twice the device's `read_ahead_kb` (fio asks for it for a
    /// sequential job: its `fadvise_hint`, on by default).
    Sequential,
    /// `POSIX_FADV_RANDOM`: no read-ahead, a read fetches its own pages (fio's random jobs).
    Random,
}

/// How a file operation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileDone {
    /// The file it worked on (the one picked, for a picked operation).
    pub entry: u64,
    /// The file's size after it (for a create: the size its set gives the file, to be
    /// written; the file itself is empty).
    pub size: u64,
    /// False: it could not be done (no file in the state needed; a read past the end).
    pub ok: bool,
    /// Why not, as Linux's errno (ENOENT, EEXIST, ENOTEMPTY, ENOSPC, …); 0 when ok or when the
    /// failure has no system call's error (a pick that found no file).
    pub errno: u16,
    /// It failed because its set holds no file of the kind its pick needs (every file
    /// there, for a create; none, for the rest), not because the files were all claimed.
    pub no_file: bool,
}
