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

#[derive(Debug, Error)]
pub enum SimError {
    #[error("invalid device configuration: {0}")]
    Device(ConfigError),
    #[error("invalid job '{job}': {message}")]
    Job { job: String, message: String },
    #[error("invalid simulation input: {0}")]
    Input(String),
    /// The model hit a state it should never reach: a bug, reported instead of crashing.
    #[error("internal model error (a bug; please report it with the job and profile): {0}")]
    Internal(String),
    /// The run's observer asked it to stop (see [`crate::progress`]); no result.
    #[error("interrupted")]
    Interrupted,
}
