//! A job whose I/O comes from a block trace instead of the generator: fio's `read_iolog`,
//! and `ssdlab replay`. The trace is read as the job goes (one record ahead), so memory stays
//! flat however long it is.
//!
//! Timing: `recorded` issues each record at its trace time after the job starts (as long as
//! the job's `iodepth` allows: give it a deep one for an open loop); `scaled` divides the
//! trace's times by a speed factor; `closed` ignores them and keeps `iodepth` records
//! outstanding (fio's `replay_no_stall`).

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use super::trace::{TimeUnit, TraceFormat, TraceOptions, TraceReader};
use super::Io;
use crate::io::Op;
use crate::engine::Time;
use crate::error::{ConfigError, TraceError};

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ReplayTiming {
    /// At the trace's own times.
    #[default]
    Recorded,
    /// At the trace's times divided by `speed` (2: twice as fast).
    Scaled { speed: f64 },
    /// As fast as the job's queue depth allows.
    Closed,
}

/// Where a job's records come from.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaySpec {
    pub path: String,
    pub format: TraceFormat,
    pub timing: ReplayTiming,
    /// Only the records of this device (or file) of the trace; None: all of them.
    pub device: Option<u32>,
    /// A record past the end of the job's region wraps around into it (offset modulo the
    /// region, moved back to fit if it would run off the end, 512-byte aligned) instead of
    /// being an error: for traces of larger disks.
    pub wrap: bool,
    /// DiskSim's arrival-time unit (MQSim's traces: ns; classic DiskSim: ms).
    pub disksim_time_unit: TimeUnit,
}

impl ReplaySpec {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let ReplayTiming::Scaled { speed } = self.timing {
            if !(speed > 0.0 && speed.is_finite()) {
                return Err(ConfigError::new("replay.timing.speed", format!("{speed}: expected a positive factor")));
            }
        }
        if !Path::new(&self.path).is_file() {
            return Err(ConfigError::new("replay.path", format!("{}: no such trace file", self.path)));
        }
        Ok(())
    }
}

/// The latest time a record may be due, in ns of the simulated clock: 2^63 ns (about 292
/// years). The clock is a `u64` and the event queue keeps its largest value for "never", so
/// a later time (a trace's, or one `scaled` makes later) could not be scheduled; the
/// devices' own times after a record need room above it too.
pub const MAX_DUE_NS: Time = 1 << 63;

/// What a replaying job does next.
pub enum Next {
    Issue(Io),
    /// The next record is due at this time.
    At(Time),
    /// The trace is over (or unreadable: see [`Replayer::error`]).
    End,
}

pub struct Replayer {
    spec: ReplaySpec,
    reader: TraceReader<BufReader<File>>,
    base: u64,
    size: u64,
    start: Time,
    /// the next record: its I/O, its trace time and its line
    pending: Option<(Io, u64, u64)>,
    error: Option<TraceError>,
    /// Records issued, and records of other devices passed over.
    pub issued: u64,
    pub skipped: u64,
}

impl Replayer {
    /// Open the trace for a job over `[base, base + size)` of its device.
    pub fn open(spec: &ReplaySpec, base: u64, size: u64) -> Result<Replayer, TraceError> {
        let opts = TraceOptions { disksim_time_unit: spec.disksim_time_unit, ..TraceOptions::default() };
        let reader = TraceReader::open(Path::new(&spec.path), spec.format, opts)?;
        Ok(Replayer { spec: spec.clone(), reader, base, size, start: 0, pending: None, error: None, issued: 0, skipped: 0 })
    }

    /// The job starts at `now`: the trace's time 0.
    pub fn begin(&mut self, now: Time) {
        self.start = now;
    }

    /// Why the trace stopped early, naming file, line and field.
    pub fn error(&self) -> Option<&TraceError> {
        self.error.as_ref()
    }

    /// The next record as an I/O on the job's region, with its trace time and line.
    fn read(&mut self) -> Option<(Io, u64, u64)> {
        loop {
            let rec = match self.reader.next()? {
                Ok(r) => r,
                Err(e) => {
                    self.error = Some(e);
                    return None;
                }
            };
            if self.spec.device.is_some_and(|d| d != rec.device) {
                self.skipped += 1;
                continue;
            }
            let mut offset = rec.offset;
            if rec.op != Op::Flush && offset + rec.len > self.size {
                if !self.spec.wrap || rec.len > self.size {
                    self.error = Some(TraceError {
                        file: self.reader.file().to_string(),
                        line: self.reader.line(),
                        field: "offset".into(),
                        message: format!(
                            "{}+{} bytes is past the end of the device's {} bytes (--wrap folds a larger trace onto the device)",
                            rec.offset, rec.len, self.size
                        ),
                    });
                    return None;
                }
                // Offset modulo the region, kept inside it and 512-byte aligned: the same trace
                // offset lands in the same place whatever the length.
                offset = (offset % self.size).min(self.size - rec.len) / 512 * 512;
            }
            let base = if rec.op == Op::Flush { 0 } else { self.base };
            return Some((Io { op: rec.op, offset: base + offset, len: rec.len }, rec.time_ns, self.reader.line()));
        }
    }

    /// The error of a record whose time (`t` ns after the first record, at the job's timing)
    /// would be due past [`MAX_DUE_NS`].
    fn past_the_clock(&self, t: u64, line: u64) -> TraceError {
        let scaled = match self.spec.timing {
            ReplayTiming::Scaled { speed } => format!(", at scaled:{speed} {:.4e} ns,", t as f64 / speed),
            _ => String::new(),
        };
        TraceError {
            file: self.reader.file().to_string(),
            line,
            field: "timestamp".into(),
            message: format!(
                "{t} ns after the first record{scaled} is past the end of the simulated clock \
                 ({MAX_DUE_NS} ns, about 292 years); the trace's times may be in another unit \
                 (--disksim-unit), or use --timing closed:QD to ignore them"
            ),
        }
    }

    /// What to do at `now`.
    pub fn next(&mut self, now: Time) -> Next {
        if self.pending.is_none() {
            self.pending = self.read();
        }
        let Some((io, t, line)) = self.pending else { return Next::End };
        let due = match self.spec.timing {
            ReplayTiming::Recorded => self.start.checked_add(t),
            ReplayTiming::Scaled { speed } => {
                let scaled = t as f64 / speed;
                (scaled < MAX_DUE_NS as f64).then(|| self.start.checked_add(scaled as Time)).flatten()
            }
            ReplayTiming::Closed => Some(now),
        };
        let Some(due) = due.filter(|&d| d < MAX_DUE_NS) else {
            self.pending = None;
            self.error = Some(self.past_the_clock(t, line));
            return Next::End;
        };
        if due > now {
            return Next::At(due);
        }
        self.pending = None;
        self.issued += 1;
        Next::Issue(io)
    }
}
