//! What a write-remapping layer did, beyond what its drive reports.

use schemars::JsonSchema;
use serde::Serialize;

/// A write-remapping layer's buffer, log and cleaner.
#[derive(Clone, Debug, Default, Serialize, JsonSchema, PartialEq)]
pub struct RemapReport {
    pub buffer_bytes: u64,
    pub segment_bytes: u64,
    pub honor_flush: bool,
    /// Host bytes written and read.
    pub host_write_bytes: u64,
    pub host_read_bytes: u64,
    /// Host bytes that replaced data still in the buffer (never written to the drive).
    pub absorbed_bytes: u64,
    /// Host bytes read from the buffer, not the drive.
    pub buffer_read_bytes: u64,
    /// Reads of the drive made for host reads (one host read may need several where its
    /// blocks are scattered over the log), and the host reads that needed the drive.
    pub drive_reads: u64,
    pub host_reads_from_drive: u64,
    /// Writes of the log to the drive and their bytes (host data and the cleaner's).
    pub log_writes: u64,
    pub log_write_bytes: u64,
    /// Bytes the cleaner read and wrote again, and the segments it cleaned.
    pub cleaned_bytes: u64,
    pub cleaned_segments: u64,
    /// Host writes that waited for room in the buffer.
    pub write_waits: u64,
    /// Cache flushes acknowledged without being carried out, and those carried out.
    pub flushes_ignored: u64,
    pub flushes_done: u64,
    /// Host data acknowledged and still only in the buffer when the report was taken.
    pub buffered_bytes: u64,
}
