//! How far a run has come, told to an observer that may stop it.
//!
//! A long run (a drive preconditioned, an hour of simulated I/O) takes minutes of wall clock.
//! [`crate::sim::run_observed`] calls an [`Observer`] with a [`Progress`] at the start of each
//! phase and then about every [`REPORT_INTERVAL`] of wall clock; the observer answers
//! [`Flow::Stop`] to end the run, which then returns [`SimError::Interrupted`].
//!
//! The clock is read only at check points (every [`CHECK_EVENTS`] events of the loop, every
//! [`CHECK_ISSUES`] I/Os a job issues in one event, every [`CHECK_WRITES`] writes of a
//! preconditioning), so a run without an observer pays one
//! comparison per event. An observer reads; it never changes what the run computes, so results
//! are the same with or without one.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::engine::Time;
use crate::error::SimError;

/// Events of the loop between two looks at the wall clock.
pub const CHECK_EVENTS: u64 = 1 << 14;
/// I/Os a job issues in one event (a queue of millions filled at its start) between two looks
/// at the wall clock.
pub const CHECK_ISSUES: u64 = 1 << 14;
/// Preconditioning writes between two looks at the wall clock.
pub const CHECK_WRITES: u64 = 1 << 14;
/// Wall-clock time between two reports.
pub const REPORT_INTERVAL: Duration = Duration::from_millis(100);

/// What the run is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// A drive is being brought to its used state (no simulated time passes).
    Precondition,
    /// The jobs run.
    Run,
    /// The jobs are done; the devices finish the work they still have under way.
    Drain,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Precondition => "precondition",
            Phase::Run => "run",
            Phase::Drain => "drain",
        }
    }
}

/// A drive's preconditioning: the sequential fill, then the random overwrite passes.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PreconditionProgress {
    /// The drive: its target's name (an array member: `array/member`).
    pub device: String,
    /// Fraction of the sequential fill done (0 to 1).
    pub fill: f64,
    /// Random overwrite passes done, and planned (0 for a sequential preconditioning).
    pub passes_done: f64,
    pub passes: f64,
    /// The drive's state was read back from a [`crate::device::ssd::StateCache`], not written.
    pub restored: bool,
}

/// A snapshot of the run, as the observer sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Progress {
    pub phase: Phase,
    /// Simulated time: where the run began, and now (ns).
    pub start_ns: Time,
    pub now_ns: Time,
    /// When the jobs end at the latest, if every job has a runtime.
    pub end_ns: Option<Time>,
    /// Bytes the jobs transfer at most, if every job is limited by size.
    pub planned_bytes: Option<u64>,
    /// Reads and writes completed, and their bytes, across all jobs.
    pub requests: u64,
    pub bytes: u64,
    /// Events handled so far.
    pub events: u64,
    /// A rebuild's bytes in sync and its target (an array rebuilding onto a spare).
    pub rebuild_bytes: Option<(u64, u64)>,
    /// The preconditioning under way (phase `Precondition`).
    pub precondition: Option<PreconditionProgress>,
    /// Fraction of the phase done, where it can be told (0 to 1): the preconditioning's
    /// writes; the run's simulated time or bytes, whichever is further (the rebuild's bytes
    /// for a run that ends with its rebuild).
    pub fraction: Option<f64>,
}

impl Progress {
    /// A progress of `phase` at `now_ns` with nothing done yet.
    pub fn at(phase: Phase, start_ns: Time, now_ns: Time) -> Progress {
        Progress {
            phase,
            start_ns,
            now_ns,
            end_ns: None,
            planned_bytes: None,
            requests: 0,
            bytes: 0,
            events: 0,
            rebuild_bytes: None,
            precondition: None,
            fraction: None,
        }
    }
}

/// The observer's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Told how a run progresses; may stop it.
pub trait Observer {
    fn observe(&mut self, progress: &Progress) -> Flow;
}

impl<F: FnMut(&Progress) -> Flow> Observer for F {
    fn observe(&mut self, progress: &Progress) -> Flow {
        self(progress)
    }
}

/// An observer (or none) with its wall clock: when it was last told.
pub struct Watch<'a> {
    observer: Option<&'a mut dyn Observer>,
    last: Instant,
    interval: Duration,
}

impl<'a> Watch<'a> {
    /// No observer: the checks cost nothing but their test.
    pub fn off() -> Watch<'static> {
        Watch { observer: None, last: Instant::now(), interval: REPORT_INTERVAL }
    }

    /// Tell `observer` about every [`REPORT_INTERVAL`].
    pub fn new(observer: &'a mut dyn Observer) -> Watch<'a> {
        Watch { observer: Some(observer), last: Instant::now(), interval: REPORT_INTERVAL }
    }

    /// Tell the observer about every `interval` instead (zero: at every check point).
    pub fn every(self, interval: Duration) -> Watch<'a> {
        Watch { interval, ..self }
    }

    pub fn is_on(&self) -> bool {
        self.observer.is_some()
    }

    /// At a check point: tell the observer if its interval has passed since it was last
    /// told. `progress` is only built then.
    #[inline]
    pub fn check(&mut self, progress: impl FnOnce() -> Progress) -> Result<(), SimError> {
        if self.observer.is_none() || self.last.elapsed() < self.interval {
            return Ok(());
        }
        self.tell(progress())
    }

    /// Tell the observer now (a phase begins or ends).
    pub fn tell(&mut self, progress: Progress) -> Result<(), SimError> {
        let Some(observer) = self.observer.as_deref_mut() else {
            return Ok(());
        };
        self.last = Instant::now();
        match observer.observe(&progress) {
            Flow::Continue => Ok(()),
            Flow::Stop => Err(SimError::Interrupted),
        }
    }
}

/// The larger of the fractions `done / total` that are known, clamped to [0, 1].
pub fn fraction_of(parts: &[Option<(f64, f64)>]) -> Option<f64> {
    parts
        .iter()
        .flatten()
        .filter(|(_, total)| *total > 0.0)
        .map(|(done, total)| (done / total).clamp(0.0, 1.0))
        .fold(None, |acc: Option<f64>, f| Some(acc.map_or(f, |a| a.max(f))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_known_fraction_counts() {
        assert_eq!(fraction_of(&[None, None]), None);
        assert_eq!(fraction_of(&[Some((1.0, 4.0)), None, Some((3.0, 4.0))]), Some(0.75));
        assert_eq!(fraction_of(&[Some((5.0, 4.0))]), Some(1.0));
        assert_eq!(fraction_of(&[Some((1.0, 0.0))]), None);
    }

    #[test]
    fn a_watch_tells_at_once_and_then_only_after_its_interval() {
        let mut told = 0;
        let mut count = |_: &Progress| {
            told += 1;
            Flow::Continue
        };
        let mut w = Watch::new(&mut count);
        let p = || Progress::at(Phase::Run, 0, 0);
        w.tell(p()).unwrap();
        w.check(p).unwrap(); // too soon
        w.last -= REPORT_INTERVAL;
        w.check(p).unwrap();
        let mut w = w.every(Duration::ZERO);
        w.check(p).unwrap();
        assert_eq!(told, 3);
        let mut stop = |_: &Progress| Flow::Stop;
        let mut w = Watch::new(&mut stop);
        assert!(matches!(w.tell(p()), Err(SimError::Interrupted)));
        assert!(Watch::off().tell(p()).is_ok());
    }
}
