//! Errors the core reports instead of panicking: bad configuration or an impossible workload.

use thiserror::Error;

/// A configuration value is wrong; `key` names it as the user wrote it (dotted path).
#[derive(Debug, Error, Clone, PartialEq)]
#[error("{key}: {message}")]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(key: &str, message: String) -> Self {
        ConfigError { key: key.to_string(), message }
    }
}

/// Bytes a data-verified array found other than the host wrote, or a plan it could not carry
/// out on them (a model bug if it is ever seen).
#[derive(Debug, Error, Clone, PartialEq)]
#[error("{0}")]
pub struct DataError(pub String);

/// Why a trace could not be read. `line` is 1-based; 0 means the error is not tied to a
/// line (the file could not be opened). `field` names the column (`"timestamp"`, `"type"`,
/// `"offset"`, `"size"`, ...), or `"file"`/`"io"` for I/O errors.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{file}:{line}: {field}: {message}")]
pub struct TraceError {
    pub file: String,
    pub line: u64,
    pub field: String,
    pub message: String,
}

/// Why a run could not start, or ended without a result. Every error about the input names
/// what the user gave (a key in the core's terms, a job, a trace's file and line), and is
/// said the same way: `what: key: message`.
#[derive(Debug, Error)]
pub enum SimError {
    /// A device's description: `key` is the path in it (`nand.read_ns`, `members.sdb.…`).
    #[error("invalid device configuration: {0}")]
    Device(ConfigError),
    /// A job's description: `key` is the job spec's field (`iodepth`, `region_size`, …).
    #[error("invalid job '{job}': {error}")]
    Job { job: String, error: ConfigError },
    /// The system as a whole: its host (`host.hz`), its targets (`targets`), the run's
    /// settings (`interval_ns`, `until`).
    #[error("invalid system: {0}")]
    System(ConfigError),
    /// Text that is not a run's input at all (JSON that does not parse as one).
    #[error("invalid simulation input: {0}")]
    Input(String),
    /// A trace a job replays could not be read or placed.
    #[error("job '{job}': {error}")]
    Trace { job: String, error: TraceError },
    /// The run passed one of its limits (`max_samples`, `max_log_records`) and stopped.
    #[error("run stopped at its limit: {0}")]
    Limit(String),
    /// A member failure would have lost an array's data: the run ends there.
    #[error("array {array}: {message}")]
    DataLost { array: String, message: String },
    /// The model hit a state it should never reach: a bug, reported instead of crashing.
    #[error("internal model error (a bug; please report it with the job and profile): {0}")]
    Internal(String),
    /// The run's observer asked it to stop (see [`crate::progress`]); no result.
    #[error("interrupted")]
    Interrupted,
}
