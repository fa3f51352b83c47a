//! One fio job clone at run time: when it may issue, what it issues, when it stops.

use rand::Rng as _;
use rand::SeedableRng;

use crate::io::Op;
use crate::engine::rng::{derive_seed, Rng};
use crate::engine::{transfer_ns, Time, NS_PER_S};
use crate::error::{SimError, TraceError};
use crate::io::{FileDone, FileIoOp};
use crate::metrics::{IoLogger, JobStats, RateSampler};
use super::files::{FileJob, FileRequest, Next as ProgramNext};
use crate::workload::replay::{Next, Replayer};
use crate::workload::{Generator, Io, JobSpec, RateProcess};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobState {
    Waiting,
    Running,
    /// Stopped issuing; waiting for its requests in flight.
    Draining,
    Done,
}

/// What a job wants to do now.
pub enum Action {
    Issue(Io),
    /// A file operation of its program.
    IssueFile(FileRequest),
    /// Nothing until this time (rate limit, think time).
    WakeAt(Time),
    /// Nothing until one of its requests completes.
    Wait,
    Finished,
}

pub struct JobRun {
    pub spec: JobSpec,
    generator: Generator,
    rng: Rng,
    pub state: JobState,
    pub deps_left: u32,
    pub inflight: u64,
    thread_free: Time,
    measure_start: Time,
    pub deadline: Option<Time>,
    byte_limit: u64,
    issued_bytes: u64,
    issued_ios: u64,
    next_io: Option<Io>,
    rate_next: [Time; 3],
    /// Whether a `rate` or `rate_iops` limit applies in any direction.
    rated: bool,
    writes_since_sync: u64,
    sync_pending: bool,
    since_think: u64,
    thinking_until: Time,
    pub wake_at: Option<Time>,
    pending_wake: Option<Time>,
    /// A program's `Delay` ends then.
    delay_until: Option<Time>,
    pub stats: JobStats,
    /// A trace the job replays instead of generating I/O.
    replay: Option<Box<Replayer>>,
    /// fio's bandwidth and IOPS sampling, and the I/O log if the job keeps one (observation
    /// only: nothing here changes what the job does).
    bw: RateSampler,
    iops: RateSampler,
    logger: Option<Box<IoLogger>>,
    /// The job's file work (None: it addresses its device directly).
    pub files: Option<Box<FileJob>>,
    /// The earliest time a window of these ends (checked on each completion), and whether
    /// each completion is a sample (a per-I/O log) or goes to the logger.
    next_window: Time,
    observe_each: bool,
    /// Log records already counted against the run's limit.
    pub log_counted: usize,
}

impl JobRun {
    pub fn new(spec: JobSpec, master_seed: u64, index: u64) -> Result<JobRun, SimError> {
        let generator = Generator::new(&spec).map_err(|error| SimError::Job { job: spec.name.clone(), error })?;
        let replay = match &spec.replay {
            Some(r) => {
                let trace = Replayer::open(r, spec.region_offset, spec.region_size);
                Some(Box::new(trace.map_err(|error| SimError::Trace { job: spec.name.clone(), error })?))
            }
            None => None,
        };
        let rng = Rng::seed_from_u64(derive_seed(master_seed ^ spec.seed, "host-thread", index));
        let stats = JobStats { name: spec.name.clone(), clone: spec.clone, group_id: spec.group_id, ..JobStats::default() };
        Ok(JobRun {
            deps_left: spec.start_after.len() as u32,
            byte_limit: spec.io_limit.saturating_mul(spec.loops.max(1)),
            generator,
            rng,
            state: JobState::Waiting,
            inflight: 0,
            thread_free: 0,
            measure_start: 0,
            deadline: None,
            issued_bytes: 0,
            issued_ios: 0,
            next_io: None,
            rate_next: [0; 3],
            rated: spec.rate_bytes.iter().chain(&spec.rate_iops).any(|&r| r > 0),
            writes_since_sync: 0,
            sync_pending: false,
            since_think: 0,
            thinking_until: 0,
            wake_at: None,
            pending_wake: None,
            delay_until: None,
            stats,
            replay,
            bw: RateSampler::new(spec.bw_window_ns, true),
            iops: RateSampler::new(spec.iops_window_ns, false),
            logger: spec.log_window_ns.map(|w| Box::new(IoLogger::new(w))),
            files: None,
            next_window: Time::MAX,
            observe_each: spec.log_window_ns.is_some() || spec.bw_window_ns == 0 || spec.iops_window_ns == 0,
            log_counted: 0,
            spec,
        })
    }

    /// I/Os it submits at once (fio: 0 or more than `iodepth` mean `iodepth`).
    pub fn batch(&self) -> u64 {
        match self.spec.iodepth_batch_submit {
            0 => self.spec.iodepth,
            b => b.min(self.spec.iodepth),
        }
    }

    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    pub fn begin(&mut self, now: Time) {
        self.state = JobState::Running;
        self.stats.start_ns = now;
        self.measure_start = now + self.spec.ramp_time_ns;
        self.stats.measure_start_ns = self.measure_start;
        self.bw.begin(self.measure_start);
        self.iops.begin(self.measure_start);
        if let Some(l) = &mut self.logger {
            l.begin(self.measure_start);
        }
        self.next_window = self.bw.next.min(self.iops.next);
        self.deadline = self.spec.runtime_ns.map(|r| self.measure_start + r);
        self.thread_free = now;
        self.rate_next = [now; 3];
        if let Some(r) = &mut self.replay {
            r.begin(now);
        }
    }

    /// Why the job's trace could not be replayed to its end (file, line, field).
    pub fn error(&self) -> Option<&TraceError> {
        self.replay.as_ref().and_then(|r| r.error())
    }

    pub fn finish(&mut self, now: Time) {
        if let Some(f) = &self.files {
            self.stats.file_ops = f.summary.clone();
            self.stats.no_file_op = f.no_file_op();
        }
        if self.state != JobState::Waiting {
            // fio's last samples: the windows complete at the end; a log's partial window.
            self.close_windows(now);
            if let Some(l) = &mut self.logger {
                l.flush(now, &mut self.stats.log);
            }
        }
        self.state = JobState::Done;
        self.stats.end_ns = now;
    }

    /// Rate samples of the windows that ended at or before `now`.
    fn close_windows(&mut self, now: Time) {
        let (bytes, ios) = self.stats.counts();
        self.bw.close(now, bytes, &mut self.stats.bw_samples);
        self.iops.close(now, ios, &mut self.stats.iops_samples);
        self.next_window = self.bw.next.min(self.iops.next);
    }

    /// Per-I/O samples (fio takes them for a log written per I/O) and the I/O log, whose
    /// entry is stamped when the thread reaped the I/O (`reaped`), as fio stamps it.
    #[cold]
    fn observe(&mut self, reaped: Time, op: Op, len: u64, offset: u64, slat: Time, clat: Time) {
        let d = op.index();
        if self.spec.bw_window_ns == 0 {
            // fio's add_bw_sample: the I/O's bytes over its completion latency
            let rate = (len * 1_000_000).checked_div(clat).unwrap_or(0);
            self.stats.bw_samples[d].record(rate);
        }
        if self.spec.iops_window_ns == 0 {
            self.stats.iops_samples[d].record(1);
        }
        if let Some(l) = &mut self.logger {
            l.record(reaped, d, len, offset, slat, clat, &mut self.stats.log);
        }
    }

    /// Whether the job keeps an I/O log.
    pub fn logs(&self) -> bool {
        self.logger.is_some()
    }

    /// The submitting thread spends `overhead` on the I/O; returns when it reaches the block layer.
    pub fn thread_submit(&mut self, now: Time, overhead: Time) -> Time {
        self.stats.cpu_ns += overhead;
        self.thread_free = self.thread_free.max(now) + overhead;
        self.thread_free
    }

    /// When the thread turns to a completion that came at `now`: once it is done with the
    /// I/Os it is preparing (fio reaps between submissions; a completion waits for it).
    pub fn free_at(&self, now: Time) -> Time {
        self.thread_free.max(now)
    }

    fn limits_reached(&self, now: Time) -> bool {
        self.deadline.is_some_and(|d| now >= d)
            || (!self.spec.time_based && self.issued_bytes >= self.byte_limit)
            || self.spec.number_ios.is_some_and(|n| self.issued_ios >= n)
    }

    fn wake(&mut self, at: Time) -> Action {
        if self.wake_at.is_some_and(|w| w <= at) {
            return Action::Wait;
        }
        self.wake_at = Some(at);
        Action::WakeAt(at)
    }

    /// What the job does now. A job at its queue depth is asked after every issue; running
    /// on a device with its limits not reached, it waits, which the full checks would answer
    /// too: that answer comes without their call.
    #[inline]
    pub fn next_action(&mut self, now: Time) -> Action {
        if self.state == JobState::Running
            && self.files.is_none()
            && self.inflight >= self.spec.iodepth
            && !self.limits_reached(now)
        {
            return Action::Wait;
        }
        self.next_action_in_full(now)
    }

    #[inline(never)]
    fn next_action_in_full(&mut self, now: Time) -> Action {
        match self.state {
            JobState::Waiting | JobState::Done => return Action::Wait,
            JobState::Draining => {
                return if self.inflight == 0 { Action::Finished } else { Action::Wait };
            }
            JobState::Running => {}
        }
        if self.files.as_ref().is_some_and(|f| f.is_program()) {
            return self.next_program_action(now);
        }
        if self.limits_reached(now) {
            if let Some(f) = self.files.as_mut() {
                // end_fsync and unlink, once the job's I/O has completed.
                if self.inflight > 0 {
                    return Action::Wait;
                }
                if let Some(req) = f.tail_next() {
                    self.inflight += 1;
                    self.stats.issued += 1;
                    return Action::IssueFile(req);
                }
            }
            self.state = JobState::Draining;
            return if self.inflight == 0 { Action::Finished } else { Action::Wait };
        }
        if self.sync_pending || self.inflight >= self.spec.iodepth {
            return Action::Wait;
        }
        if now < self.thinking_until {
            return self.wake(self.thinking_until);
        }
        if self.spec.fsync_every > 0 && self.writes_since_sync >= self.spec.fsync_every {
            if self.inflight > 0 {
                return Action::Wait; // fio syncs once the writes before it have completed
            }
            self.sync_pending = true;
            self.writes_since_sync = 0;
            return self.issue(Io { op: Op::Flush, offset: 0, len: 0 });
        }
        let io = match self.next_io.take() {
            Some(io) => io,
            None => match &mut self.replay {
                None => match self.files.as_mut() {
                    // On files: the file first, then the I/O at that file's own offset.
                    Some(f) => f.next_io(&mut self.generator),
                    None => self.generator.next_io(),
                },
                Some(r) => match r.next(now) {
                    Next::Issue(io) => io,
                    Next::At(t) => return self.wake(t),
                    Next::End => {
                        self.state = JobState::Draining;
                        return if self.inflight == 0 { Action::Finished } else { Action::Wait };
                    }
                },
            },
        };
        let d = io.op.index();
        // Unrated, `rate_next` stays at the job's start and no gap is drawn.
        if d < 3 && self.rated {
            if self.rate_next[d] > now {
                self.next_io = Some(io);
                return self.wake(self.rate_next[d]);
            }
            if let Some(gap) = self.rate_gap(d, io.len) {
                self.rate_next[d] = self.rate_next[d].max(now.saturating_sub(NS_PER_S)) + gap;
            }
        }
        if io.op == Op::Write {
            self.writes_since_sync += 1;
        }
        self.issue(io)
    }

    /// A program's next operation: one at a time, until its loops or its runtime end.
    fn next_program_action(&mut self, now: Time) -> Action {
        if self.deadline.is_some_and(|d| now >= d) {
            self.state = JobState::Draining;
            return if self.inflight == 0 { Action::Finished } else { Action::Wait };
        }
        if self.inflight > 0 {
            return Action::Wait;
        }
        if let Some(until) = self.delay_until {
            if now < until {
                return self.wake(until);
            }
            self.delay_until = None;
            self.files.as_mut().expect("a file job").delay_done(now);
        }
        loop {
            match self.files.as_mut().expect("a file job").next(now) {
                ProgramNext::Issue(req) => {
                    self.inflight += 1;
                    self.stats.issued += 1;
                    self.stats.record_depth(self.inflight);
                    return Action::IssueFile(req);
                }
                ProgramNext::Delay { ns } => {
                    self.delay_until = Some(now + ns);
                    return self.wake(now + ns);
                }
                ProgramNext::Again => continue,
                ProgramNext::Done => {
                    self.state = JobState::Draining;
                    return if self.inflight == 0 { Action::Finished } else { Action::Wait };
                }
            }
        }
    }

    /// A file operation the job issued is done at `now`: its slat and clat, and `call`, the
    /// time from its issue to `now` (a metadata engine times its call itself, no reap in it).
    /// `producers_running`: whether a job this one serves as a queue runner still runs.
    pub fn on_file_done(
        &mut self,
        now: Time,
        req: &FileRequest,
        done: &FileDone,
        (slat, clat): (Time, Time),
        call: Time,
        producers_running: bool,
    ) {
        let engine_dir = self.files.as_ref().and_then(|f| f.counts_as(req, self.rw_dir()));
        let op = match req.op {
            _ if engine_dir.is_some() => engine_dir,
            FileIoOp::Read | FileIoOp::Send => Some(Op::Read),
            FileIoOp::Write => Some(Op::Write),
            FileIoOp::Fsync { .. } => Some(Op::Flush),
            _ => None,
        };
        if !done.ok && engine_dir.is_some() {
            // fio stops a job whose call fails (td_verror) and reports the error; the call
            // is not an I/O done.
            self.inflight -= 1;
            self.stats.completed += 1;
            self.stats.errors += 1;
            if self.stats.error == 0 {
                self.stats.error = done.errno.max(1);
            }
            self.state = JobState::Draining;
            return;
        }
        match op {
            // A metadata engine's call: its time is the clat, as fio records it.
            Some(op) if engine_dir.is_some() => self.complete(now, now, op, req.len, req.offset, slat, call, true),
            // Reads, writes and fsyncs count as fio counts them, in their directions.
            Some(op) => self.on_complete(now, now, op, req.len, req.offset, slat, clat),
            None => {
                self.inflight -= 1;
                self.stats.completed += 1;
            }
        }
        if let Some(f) = self.files.as_mut() {
            f.done(now, req, done, producers_running);
        }
    }

    /// The direction fio's metadata engines count their calls in: read when the job reads
    /// (fio's `td_read`), else write when it writes, else read (engines/filecreate.c's init).
    fn rw_dir(&self) -> Op {
        use crate::workload::RwMode as M;
        match self.spec.rw {
            M::Write | M::Randwrite | M::Trimwrite | M::Randtrimwrite => Op::Write,
            _ => Op::Read,
        }
    }

    fn issue(&mut self, io: Io) -> Action {
        self.inflight += 1;
        self.stats.issued += 1;
        self.stats.record_depth(self.inflight);
        if io.op != Op::Flush {
            self.issued_ios += 1;
            self.issued_bytes += io.len;
        }
        Action::Issue(io)
    }

    /// Gap before the next I/O of direction `d` under `rate`/`rate_iops` (the stricter wins).
    fn rate_gap(&mut self, d: usize, len: u64) -> Option<Time> {
        let by_bytes = (self.spec.rate_bytes[d] > 0).then(|| transfer_ns(len, self.spec.rate_bytes[d]));
        let by_iops = (self.spec.rate_iops[d] > 0).then(|| NS_PER_S / self.spec.rate_iops[d]);
        let mean = by_bytes.max(by_iops)?;
        Some(match self.spec.rate_process {
            RateProcess::Linear => mean,
            RateProcess::Poisson => {
                let u: f64 = self.rng.gen();
                (-(1.0 - u).ln() * mean as f64) as Time
            }
        })
    }

    /// An I/O done at `now`, which its thread reaped at `reaped` (its clat ends there).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn on_complete(&mut self, now: Time, reaped: Time, op: Op, len: u64, offset: u64, slat: Time, clat: Time) {
        self.complete(now, reaped, op, len, offset, slat, clat, false);
    }

    /// An I/O done; `clat_only`: fio records only its completion latency.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn complete(&mut self, now: Time, reaped: Time, op: Op, len: u64, offset: u64, slat: Time, clat: Time, clat_only: bool) {
        self.inflight -= 1;
        self.stats.completed += 1;
        if now >= self.measure_start {
            if now >= self.next_window {
                self.close_windows(now);
            }
            if clat_only {
                self.stats.dir_mut(op).record_clat(len, clat);
            } else {
                self.stats.dir_mut(op).record(len, slat, clat);
            }
            if self.observe_each && op != Op::Flush {
                self.observe(reaped, op, len, offset, slat, clat);
            }
        }
        if op == Op::Flush {
            self.sync_pending = false;
            return;
        }
        if self.spec.thinktime_ns > 0 {
            self.since_think += 1;
            if self.since_think >= self.spec.thinktime_blocks.max(1) {
                self.since_think = 0;
                self.thinking_until = now + self.spec.thinktime_ns;
                self.pending_wake = Some(self.thinking_until);
            }
        }
    }

    /// A wake-up the last completion asked for (think time), to be scheduled by the host.
    pub fn take_wake_request(&mut self) -> Option<Time> {
        let at = self.pending_wake.take()?;
        if self.wake_at.is_some_and(|w| w <= at) {
            return None;
        }
        self.wake_at = Some(at);
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::RwMode;

    /// Issue until the job stops issuing; the actions seen.
    fn pump(job: &mut JobRun) -> Vec<&'static str> {
        let mut seen = Vec::new();
        loop {
            let a = job.next_action(0);
            seen.push(match a {
                Action::Issue(_) => "issue",
                Action::Wait => "wait",
                Action::Finished => "finished",
                _ => "other",
            });
            if !matches!(a, Action::Issue(_)) {
                return seen;
            }
        }
    }

    #[test]
    fn a_job_at_its_depth_waits_and_one_past_its_limit_drains_at_once() {
        let mut spec = JobSpec::simple("j", RwMode::Randread, 4096, 2, 4096 * 100);
        spec.number_ios = Some(3);
        let mut job = JobRun::new(spec, 1, 0).unwrap();
        job.begin(0);
        assert_eq!(pump(&mut job), ["issue", "issue", "wait"]);
        assert_eq!(job.state, JobState::Running);
        job.on_complete(10, 10, Op::Read, 4096, 0, 0, 10);
        // Its last I/O fills its queue again: it has reached its limit and drains now, at
        // its depth (the order of the checks decides it; a stop then schedules no wake-up).
        assert_eq!(pump(&mut job), ["issue", "wait"]);
        assert_eq!(job.state, JobState::Draining);
        job.on_complete(20, 20, Op::Read, 4096, 0, 0, 10);
        job.on_complete(30, 30, Op::Read, 4096, 0, 0, 10);
        assert_eq!(pump(&mut job), ["finished"]);
    }
}
