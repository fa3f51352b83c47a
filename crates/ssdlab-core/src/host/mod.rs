//! The host's job runner: fio-like jobs that generate I/O on CPU threads and submit it to the
//! layer below them (the block layer, [`crate::block::BlockLayer`], through
//! [`crate::block::Submit`]). Each job sends its I/O to one target device; it hears of its
//! I/O's completion through [`crate::block::Upper`]. It knows nothing of queues or devices.
//!
//! Host software time is modelled explicitly: each submission occupies the job's thread for
//! a sampled per-I/O overhead (syscall, block layer, driver, completion handling). At queue
//! depth 1 that gap between a completion and the next submission is what keeps iostat's
//! %util below 100 %.
//!
//! Latencies are stamped where fio stamps them (fio's io_u.c, ioengines.c, engines/libaio.c):
//! an I/O's start when its thread has prepared it (`get_io_u` sets `start_time`), its issue
//! when the submit call returns (`issue_time`, set after `io_submit` for its whole batch), and
//! its completion when its thread has reaped it (`io_getevents` returned). Of the thread's
//! time per I/O, `submit_ns` is the submit call (in slat) and `reap_ns` the way from the
//! device's completion to the reap (interrupt, wakeup, `io_getevents`: in clat); the rest
//! (fio's own work: the next offset, accounting) is spent between reaps, in no latency. A
//! completion that waits for a busy thread to reap it counts in clat, as in fio.

mod files;
mod job;

use rand_distr::{Distribution as _, Gamma};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::block::{Bio, BioDone, Submit, Upper};
use crate::file::{FileUpper, MemoryConfig};
use crate::engine::{EventQueue, Time};
use crate::error::{ConfigError, SimError};
use crate::io::{BioId, Fadvise, FileDone, FileIo, FileIoOp};
use crate::metrics::JobStats;
use crate::progress::CHECK_ISSUES;
use crate::workload::JobSpec;
use files::{FileJob, FileRequest};
use job::{JobRun, JobState};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    pub name: String,
    /// Mean CPU time per I/O on the submitting thread, ns.
    pub io_overhead_ns: u64,
    /// Coefficient of variation of that time (0 = constant; gamma-distributed otherwise).
    pub io_overhead_cv: f64,
    /// Of that time, the mean spent in the submit call (fio's slat: `io_submit` for libaio),
    /// ns; each I/O's share is in proportion to its drawn time. None: all of it.
    #[serde(default)]
    pub submit_ns: Option<u64>,
    /// Of that time, the mean from the device's completion to the thread's reap of it (in
    /// fio's clat), ns; in proportion as `submit_ns`. None: none.
    #[serde(default)]
    pub reap_ns: Option<u64>,
    /// Kernel tick rate; iostat's %util has this resolution.
    pub hz: u32,
    /// Its memory, kernel defaults and CPUs, for jobs that work on files (the page cache and
    /// file systems need them); None: a host that runs block jobs only.
    #[serde(default)]
    pub memory: Option<MemoryConfig>,
}

impl HostConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.io_overhead_cv >= 0.0 && self.io_overhead_cv.is_finite()) {
            return Err(ConfigError::new("host.io_overhead_cv", format!("must be >= 0, got {}", self.io_overhead_cv)));
        }
        if self.hz == 0 {
            return Err(ConfigError::new("host.hz", "must be positive".into()));
        }
        let (submit, reap) = (self.submit_ns.unwrap_or(0), self.reap_ns.unwrap_or(0));
        if submit.saturating_add(reap) > self.io_overhead_ns {
            let key = if submit > self.io_overhead_ns { "host.submit_ns" } else { "host.reap_ns" };
            return Err(ConfigError::new(
                key,
                format!(
                    "submit_ns and reap_ns are parts of io_overhead_ns ({} ns): together at most that, got {submit} + {reap}",
                    self.io_overhead_ns
                ),
            ));
        }
        Ok(())
    }

    /// A host with no software time, for tests that look only at the device.
    pub fn ideal() -> HostConfig {
        HostConfig { name: "ideal".into(), io_overhead_ns: 0, io_overhead_cv: 0.0, submit_ns: None, reap_ns: None, hz: 1000, memory: None }
    }
}

/// The job runner's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobEvent {
    /// A job's dependencies are done and its start delay has passed.
    Start(u32),
    /// Re-check a job that was waiting (rate limit, think time, deadline).
    Wake(u32),
    /// A null-engine job's I/O (its number) is done: it never went below the host.
    NullDone(BioId),
}

/// What a run may keep, so that no input makes it allocate without bound: time-series
/// samples and I/O log records. A run that passes one stops its jobs and fails, naming it.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    #[serde(default = "default_max_samples")]
    pub max_samples: u64,
    #[serde(default = "default_max_log_records")]
    pub max_log_records: u64,
}

/// About 1.25 GB of samples of one drive in the core.
fn default_max_samples() -> u64 {
    1_000_000
}

/// About 0.5 GB of records in the core.
fn default_max_log_records() -> u64 {
    10_000_000
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_samples: default_max_samples(), max_log_records: default_max_log_records() }
    }
}

/// One I/O of one job from its submission until its completion, in fio's stamps: when its
/// thread had prepared it (`start_time`) and when its submit call returned (`issue_time`),
/// and how long its thread takes to reap it once free. What it asked the block layer comes
/// back with it.
#[derive(Clone, Copy, Debug, Default)]
struct InFlight {
    prepared_at: Time,
    issued_at: Time,
    reap: Time,
}

impl InFlight {
    /// fio's slat and clat of the I/O whose thread turns to its completion at `free`.
    fn latencies(&self, free: Time) -> (Time, Time) {
        (self.issued_at - self.prepared_at, free + self.reap - self.issued_at)
    }
}

pub struct Host {
    cfg: HostConfig,
    overhead: Option<Gamma<f64>>,
    jobs: Vec<JobRun>,
    dependents: Vec<Vec<u32>>,
    ios: Vec<InFlight>,
    free_ids: Vec<BioId>,
    jobs_done: usize,
    /// The most I/O log records the run keeps, those kept, and why the run stopped early if
    /// it passed a limit.
    max_log_records: u64,
    log_records: u64,
    limit_error: Option<String>,
    /// Completed bytes and I/Os per direction across all jobs (for samples).
    totals: [(u64, u64); 2],
    /// When the last I/O of the batch being prepared leaves its thread, and the batch's I/Os
    /// (issued, as fio stamps them, when the batch's submit call returns).
    plug_ready: Option<Time>,
    plugged: Vec<BioId>,
    /// Null-engine I/Os submitted and not yet reaped, at their number (a queue of millions
    /// reaps each without a search).
    null_bios: Vec<Option<Bio>>,
    /// I/Os a job issues for one job event before it pauses, so that the run can look at its
    /// observer (a job filling a queue of millions would otherwise hold it for seconds), and
    /// the job paused: it goes on where it stopped before any other event, so that results
    /// do not depend on it.
    pause_every: u64,
    paused: Option<u32>,
}

impl Host {
    pub fn new(cfg: HostConfig, specs: Vec<JobSpec>, seed: u64) -> Result<Host, SimError> {
        cfg.validate().map_err(SimError::System)?;
        let overhead = if cfg.io_overhead_cv > 0.0 && cfg.io_overhead_ns > 0 {
            let shape = 1.0 / (cfg.io_overhead_cv * cfg.io_overhead_cv);
            let scale = cfg.io_overhead_ns as f64 / shape;
            let gamma = Gamma::new(shape, scale);
            Some(gamma.map_err(|e| SimError::System(ConfigError::new("host.io_overhead_ns", e.to_string())))?)
        } else {
            None
        };
        let mut dependents = vec![Vec::new(); specs.len()];
        for (i, s) in specs.iter().enumerate() {
            for &d in &s.start_after {
                dependents[d as usize].push(i as u32);
            }
        }
        let jobs = specs
            .into_iter()
            .enumerate()
            .map(|(i, s)| JobRun::new(s, seed, i as u64))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Host {
            cfg,
            overhead,
            jobs,
            dependents,
            ios: Vec::new(),
            free_ids: Vec::new(),
            jobs_done: 0,
            max_log_records: Limits::default().max_log_records,
            log_records: 0,
            limit_error: None,
            totals: [(0, 0); 2],
            plug_ready: None,
            plugged: Vec::new(),
            null_bios: Vec::new(),
            pause_every: CHECK_ISSUES,
            paused: None,
        })
    }

    pub fn config(&self) -> &HostConfig {
        &self.cfg
    }

    /// The run's file sets have these many entries each: jobs that work on files get their
    /// file work (a job's own random streams stay as they were).
    pub fn set_file_sets(&mut self, entries: &[u64], seed: u64) {
        for (i, j) in self.jobs.iter_mut().enumerate() {
            if let Some(access) = &j.spec.files {
                let s = crate::engine::rng::derive_seed(seed ^ j.spec.seed, "files", i as u64);
                j.files = Some(Box::new(FileJob::new(access.clone(), entries.to_vec(), j.spec.region_size, s)));
            }
        }
    }

    /// The client each job serves over the network, by job.
    pub fn clients(&self) -> Vec<Option<crate::net::ClientRef>> {
        self.jobs.iter().map(|j| j.spec.files.as_ref().and_then(|f| f.client)).collect()
    }

    /// Jobs in the run.
    pub fn jobs(&self) -> usize {
        self.jobs.len()
    }

    /// Whether any job works on files (the run then needs a file layer).
    pub fn has_file_jobs(&self) -> bool {
        self.jobs.iter().any(|j| j.spec.files.is_some())
    }

    /// Let a job issue at most `issues` I/Os for one job event before it pauses (at least 1;
    /// [`CHECK_ISSUES`] by default). The result is the same whatever it is.
    pub fn set_pause_every(&mut self, issues: u64) {
        self.pause_every = issues.max(1);
    }

    /// A job paused in the middle of a job event ([`Host::go_on`] resumes it).
    #[inline]
    pub fn paused(&self) -> bool {
        self.paused.is_some()
    }

    /// The paused job goes on issuing where it stopped (it may pause again).
    pub fn go_on<E: From<JobEvent> + Copy, L: Submit<E>>(&mut self, lower: &mut L, events: &mut EventQueue<E>) {
        if let Some(j) = self.paused.take() {
            self.pump_event(j, lower, events);
        }
    }

    /// Bound the I/O log records the run keeps.
    pub fn set_limits(&mut self, limits: Limits) {
        self.max_log_records = limits.max_log_records;
    }

    /// Why the run stopped early: a limit it passed.
    pub fn limit_error(&self) -> Option<&str> {
        self.limit_error.as_deref()
    }

    /// The run passed one of its limits: it stops its jobs and ends with `message`.
    #[cold]
    pub fn overflow<E: From<JobEvent> + Copy>(&mut self, message: String, events: &mut EventQueue<E>) {
        if self.limit_error.is_none() {
            self.limit_error = Some(message);
            self.stop_jobs(events);
        }
    }

    /// Every job's target is among the system's `targets` devices.
    pub fn check_targets(&self, targets: usize) -> Result<(), SimError> {
        match self.jobs.iter().find(|j| j.spec.target as usize >= targets) {
            Some(j) => Err(SimError::Job {
                job: j.spec.name.clone(),
                error: ConfigError::new("target", format!("device {} does not exist ({targets} devices)", j.spec.target)),
            }),
            None => Ok(()),
        }
    }

    /// Schedule the jobs that wait for nobody from the clock's start.
    pub fn start<E: From<JobEvent> + Copy>(&mut self, events: &mut EventQueue<E>) {
        let origin = events.now();
        for (i, j) in self.jobs.iter().enumerate() {
            if j.deps_left == 0 {
                events.schedule(origin + j.spec.start_delay_ns, E::from(JobEvent::Start(i as u32)));
            }
        }
    }

    /// The jobs that have not finished, by name (for a stalled run's error).
    pub fn unfinished(&self) -> Vec<&str> {
        self.jobs.iter().filter(|j| j.state != JobState::Done).map(|j| j.spec.name.as_str()).collect()
    }

    /// The first job that could not go on (a trace record it could not read or place).
    pub fn job_error(&self) -> Option<SimError> {
        self.jobs.iter().find_map(|j| j.error().map(|e| SimError::Trace { job: j.spec.name.clone(), error: e.clone() }))
    }

    pub fn finished(&self) -> bool {
        self.jobs_done == self.jobs.len()
    }

    pub fn handle<E: From<JobEvent> + Copy, L: Submit<E>>(&mut self, ev: JobEvent, lower: &mut L, events: &mut EventQueue<E>) {
        match ev {
            JobEvent::Start(j) => {
                if self.jobs[j as usize].state == JobState::Done {
                    return; // stopped before it started
                }
                self.jobs[j as usize].begin(events.now());
                if let Some(deadline) = self.jobs[j as usize].deadline {
                    events.schedule(deadline, E::from(JobEvent::Wake(j)));
                }
                self.pump_event(j, lower, events);
            }
            JobEvent::Wake(j) => {
                let job = &mut self.jobs[j as usize];
                if job.wake_at.is_some_and(|t| t <= events.now()) {
                    job.wake_at = None;
                }
                self.pump_event(j, lower, events);
            }
            JobEvent::NullDone(id) => {
                let bio = self.null_bios[id as usize].take().expect("a null I/O in flight");
                if let Some(j) = self.bio_done(&bio, events) {
                    self.pump_event(j, lower, events);
                }
            }
        }
    }

    /// Job `j` issues a request at `now`: its number, and when its thread has prepared and
    /// submitted it (the per-I/O host time, drawn or fixed) and it reaches the layer below.
    fn submitted(&mut self, j: u32, now: Time) -> (BioId, Time) {
        let id = self.new_id();
        let job = &mut self.jobs[j as usize];
        let overhead = match &self.overhead {
            Some(g) => g.sample(job.rng()) as Time,
            None => self.cfg.io_overhead_ns,
        };
        let arrive = job.thread_submit(now, overhead);
        let submit = self.cfg.submit_ns.map_or(overhead, |s| self.share(overhead, s));
        let reap = self.cfg.reap_ns.map_or(0, |r| self.share(overhead, r));
        let prepared_at = arrive - submit;
        // A synchronous engine's issue is stamped before its call: the call is all clat.
        let issued_at = if self.jobs[j as usize].spec.sync_engine { prepared_at } else { arrive };
        self.ios[id as usize] = InFlight { prepared_at, issued_at, reap };
        (id, arrive)
    }

    /// Job `j` turns to a computation at `now` (its thread's next free moment): a number
    /// for it, and when it begins; no system call, so none of the I/O's host time.
    fn computing(&mut self, j: u32, now: Time) -> (BioId, Time) {
        let id = self.new_id();
        let at = self.jobs[j as usize].thread_submit(now, 0);
        self.ios[id as usize] = InFlight { prepared_at: at, issued_at: at, reap: 0 };
        (id, at)
    }

    /// The part of an I/O's drawn host time `overhead` that is `part` of the mean: a longer
    /// draw has a longer submit call and reap in proportion.
    fn share(&self, overhead: Time, part: u64) -> Time {
        match self.cfg.io_overhead_ns {
            0 => 0,
            mean => (overhead as u128 * part as u128 / mean as u128) as Time,
        }
    }

    /// The batch under the plug goes down at `at`: its submit call returns then (fio's
    /// libaio stamps every I/O of an `io_submit` with the time it returned).
    fn unplug<E: From<JobEvent> + Copy, L: Submit<E>>(&mut self, at: Time, lower: &mut L, events: &mut EventQueue<E>) {
        for id in self.plugged.drain(..) {
            self.ios[id as usize].issued_at = at;
        }
        lower.unplug(at, events);
    }

    /// [`Host::pump`] for a job event: paused after `pause_every` I/Os (the run resumes it).
    /// Kept out of line: inlined into the event loop it made the compiler stop inlining the
    /// block layer's submit into a completion's pump (+21 instructions a request, randread).
    #[inline(never)]
    fn pump_event<E: From<JobEvent> + Copy, L: Submit<E>>(&mut self, j: u32, lower: &mut L, events: &mut EventQueue<E>) {
        self.pump_some::<true, E, L>(j, lower, events, self.pause_every);
    }

    /// Let job `j` issue as much as its limits allow right now. A job that submits in
    /// batches sends each batch under one plug once its thread has prepared all of it (or
    /// when it can issue no more for now).
    fn pump<E: From<JobEvent> + Copy, L: Submit<E>>(&mut self, j: u32, lower: &mut L, events: &mut EventQueue<E>) {
        self.pump_some::<false, E, L>(j, lower, events, 0);
    }

    /// [`Host::pump`], `PAUSING`: the job pauses (`paused`) before its next step once it has
    /// issued `most` I/Os, its batch under way not sent yet; called again at the same time,
    /// it goes on exactly as if it had not stopped. (A completion's pump, not pausing, pays
    /// nothing for the count.)
    fn pump_some<const PAUSING: bool, E: From<JobEvent> + Copy, L: Submit<E>>(
        &mut self,
        j: u32,
        lower: &mut L,
        events: &mut EventQueue<E>,
        most: u64,
    ) {
        let now = events.now();
        let target = self.jobs[j as usize].spec.target;
        let batch = self.jobs[j as usize].batch();
        let mut left = most;
        loop {
            if PAUSING {
                if left == 0 {
                    self.paused = Some(j);
                    return;
                }
                left -= 1;
            }
            let job = &mut self.jobs[j as usize];
            match job.next_action(now) {
                job::Action::Issue(io) => {
                    let (id, arrive) = self.submitted(j, now);
                    let job = &mut self.jobs[j as usize];
                    if let Some(f) = job.files.as_mut() {
                        // fio's pattern over files: the I/O goes to one of them.
                        let req = f.place(&io);
                        lower.submit_file(file_io(id, j, &req, f.access.direct, f.access.fadvise, false), arrive, events);
                        continue;
                    }
                    // The bio names its job as its process: its completion comes back with it.
                    let bio = Bio { id, target, op: io.op, offset: io.offset, len: io.len, process: j, sync: true };
                    if job.spec.null_engine {
                        // Done once submitted (fio's null engine queues nothing anywhere).
                        if self.null_bios.len() <= id as usize {
                            self.null_bios.resize(id as usize + 1, None);
                        }
                        self.null_bios[id as usize] = Some(bio);
                        events.schedule(arrive, E::from(JobEvent::NullDone(id)));
                        continue;
                    }
                    if batch > 1 {
                        self.plug_ready = Some(arrive);
                        self.plugged.push(id);
                        if lower.plug(bio) as u64 >= batch {
                            self.plug_ready = None;
                            self.unplug(arrive, lower, events);
                        }
                    } else {
                        lower.submit(bio, arrive, events);
                    }
                }
                job::Action::IssueFile(req) => {
                    let (id, arrive) = match req.op {
                        FileIoOp::Compute { .. } => self.computing(j, now),
                        _ => self.submitted(j, now),
                    };
                    let access = self.jobs[j as usize].files.as_ref().map(|f| (f.access.direct, f.access.fadvise, f.waits_for_picks()));
                    let (direct, fadvise, wait_pick) = access.unwrap_or((false, None, false));
                    lower.submit_file(file_io(id, j, &req, direct, fadvise, wait_pick), arrive, events);
                }
                job::Action::WakeAt(at) => {
                    events.schedule(at, E::from(JobEvent::Wake(j)));
                    break;
                }
                job::Action::Wait => break,
                job::Action::Finished => {
                    self.finish_job(j, events);
                    break;
                }
            }
        }
        if let Some(at) = self.plug_ready.take() {
            self.unplug(at, lower, events);
        }
        lower.flush(events);
    }

    /// A free request number.
    fn new_id(&mut self) -> BioId {
        match self.free_ids.pop() {
            Some(t) => t,
            None => {
                self.ios.push(InFlight::default());
                (self.ios.len() - 1) as BioId
            }
        }
    }

    fn finish_job<E: From<JobEvent> + Copy>(&mut self, j: u32, events: &mut EventQueue<E>) {
        let now = events.now();
        self.jobs[j as usize].finish(now);
        self.jobs_done += 1;
        for k in std::mem::take(&mut self.dependents[j as usize]) {
            let dep = &mut self.jobs[k as usize];
            dep.deps_left -= 1;
            if dep.deps_left == 0 {
                events.schedule(now + dep.spec.start_delay_ns, E::from(JobEvent::Start(k)));
            }
        }
    }

    /// End every job now, as fio does at its runtime: running jobs issue nothing more and
    /// finish once their requests in flight are done; jobs not yet started never start.
    pub fn stop_jobs<E: From<JobEvent> + Copy>(&mut self, events: &mut EventQueue<E>) {
        let now = events.now();
        for j in 0..self.jobs.len() {
            match self.jobs[j].state {
                JobState::Running => {
                    self.jobs[j].deadline = Some(now);
                    events.schedule(now, E::from(JobEvent::Wake(j as u32)));
                }
                JobState::Waiting => {
                    self.jobs[j].finish(now);
                    self.jobs_done += 1;
                }
                JobState::Draining | JobState::Done => {}
            }
        }
    }

    /// The power fails at `now`: every job ends there, its requests in flight never done.
    pub fn cut_power(&mut self, now: Time) {
        for j in &mut self.jobs {
            if j.state != JobState::Done {
                j.finish(now);
                self.jobs_done += 1;
            }
        }
    }

    /// Bytes and I/Os completed so far, per direction (read, write), across all jobs.
    pub fn totals(&self) -> [(u64, u64); 2] {
        self.totals
    }

    /// Per job name (clones summed, names in order of first appearance), per operation of
    /// its file program: operations completed so far and their latency summed, ns.
    pub fn file_op_counters(&self) -> Vec<Vec<[u64; 2]>> {
        let mut names: Vec<&str> = Vec::new();
        let mut out: Vec<Vec<[u64; 2]>> = Vec::new();
        for j in &self.jobs {
            let Some(f) = j.files.as_ref().filter(|f| f.is_program()) else { continue };
            let k = match names.iter().position(|n| *n == j.spec.name) {
                Some(k) => k,
                None => {
                    names.push(&j.spec.name);
                    out.push(vec![[0; 2]; f.summary.len()]);
                    names.len() - 1
                }
            };
            for (acc, s) in out[k].iter_mut().zip(&f.summary) {
                acc[0] += s.ops;
                acc[1] += s.latency_ns;
            }
        }
        out
    }

    /// Reads and writes completed across all jobs, and their bytes (for progress reports).
    pub fn completed_totals(&self) -> (u64, u64) {
        (self.totals[0].1 + self.totals[1].1, self.totals[0].0 + self.totals[1].0)
    }

    /// What the jobs plan, for progress reports: when the last ends at the latest, counted
    /// from the start of the run (if every job has a runtime), and the bytes they transfer
    /// at most (if every job is limited by size). None where a job has no such bound.
    pub fn plan(&self) -> (Option<Time>, Option<u64>) {
        if self.jobs.is_empty() {
            return (None, None);
        }
        // A job's latest end: after its dependencies', its delay, ramp and runtime. Known
        // once its dependencies' are; a pass per level of dependency (a cycle stays unknown).
        let mut ends: Vec<Option<Time>> = vec![None; self.jobs.len()];
        for _ in 0..self.jobs.len() {
            let mut changed = false;
            for (j, job) in self.jobs.iter().enumerate() {
                let (spec, Some(runtime)) = (&job.spec, job.spec.runtime_ns) else { continue };
                if ends[j].is_some() {
                    continue;
                }
                let deps: Option<Vec<Time>> = spec.start_after.iter().map(|&d| ends[d as usize]).collect();
                if let Some(deps) = deps {
                    let begin = deps.into_iter().max().unwrap_or(0);
                    ends[j] = Some(begin.saturating_add(spec.start_delay_ns + spec.ramp_time_ns).saturating_add(runtime));
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let end = ends.into_iter().collect::<Option<Vec<_>>>().and_then(|e| e.into_iter().max());
        let bytes = self
            .jobs
            .iter()
            .map(|j| {
                let limit = j.spec.io_limit.saturating_mul(j.spec.loops.max(1));
                // A replayed trace runs to its end: its size is not known here.
                (!j.spec.time_based && j.spec.replay.is_none() && limit < 1 << 62).then_some(limit)
            })
            .try_fold(0u64, |sum, limit| limit.map(|l| sum.saturating_add(l)));
        (end, bytes)
    }

    /// Requests issued but not yet completed, across all jobs (for conservation checks).
    pub fn outstanding(&self) -> u64 {
        self.jobs.iter().map(|j| j.inflight).sum()
    }

    /// Every job's statistics; `sched_cpu_ns(j)` gives the I/O schedulers' CPU time for job
    /// `j`'s bios (the block layer keeps it).
    pub fn into_results(self, sched_cpu_ns: impl Fn(u32) -> u64) -> Vec<JobStats> {
        self.jobs
            .into_iter()
            .enumerate()
            .map(|(i, mut j)| {
                j.stats.sched_cpu_ns = sched_cpu_ns(i as u32);
                j.stats.finish();
                debug_assert!(j.state == JobState::Done);
                j.stats
            })
            .collect()
    }
}

impl<E: From<JobEvent> + Copy> BioDone<E> for Host {
    /// An I/O is done: its job hears of it; returns the job.
    #[inline]
    fn bio_done(&mut self, bio: &Bio, events: &mut EventQueue<E>) -> Option<u32> {
        let now = events.now();
        let r = self.ios[bio.id as usize];
        self.free_ids.push(bio.id);
        let (op, job_index) = (bio.op, bio.process);
        if op.index() < 2 {
            self.totals[op.index()].0 += bio.len;
            self.totals[op.index()].1 += 1;
        }
        let job = &mut self.jobs[job_index as usize];
        let (slat, clat) = r.latencies(job.free_at(now));
        job.on_complete(now, r.issued_at + clat, op, bio.len, bio.offset, slat, clat);
        if job.logs() {
            let n = job.stats.log.len();
            self.log_records += (n - job.log_counted) as u64;
            job.log_counted = n;
            if self.log_records > self.max_log_records {
                let name = job.spec.name.clone();
                self.overflow(
                    format!(
                        "job '{name}': the I/O logs passed {} records (the run's limit, max_log_records): \
                         log window averages (log_avg_msec) or log a shorter run",
                        self.max_log_records
                    ),
                    events,
                );
            }
        }
        let job = &mut self.jobs[job_index as usize];
        if let Some(at) = job.take_wake_request() {
            events.schedule(at, E::from(JobEvent::Wake(job_index)));
        }
        Some(job_index)
    }

}

impl<L: Submit<E>, E: From<JobEvent> + Copy> Upper<L, E> for Host {
    /// A job whose I/O finished may issue more.
    #[inline]
    fn resume(&mut self, job: u32, lower: &mut L, events: &mut EventQueue<E>) {
        self.pump(job, lower, events);
    }
}

impl<E: From<JobEvent> + Copy> FileUpper<E> for Host {
    /// A file operation is done: its job hears of it; returns the job.
    fn file_done(&mut self, io: &FileIo, done: FileDone, events: &mut EventQueue<E>) -> Option<u32> {
        let now = events.now();
        let r = self.ios[io.id as usize];
        self.free_ids.push(io.id);
        let req = FileRequest { op: io.op, set: io.set, entry: io.entry, offset: io.offset, len: io.len };
        let dir = match io.op {
            FileIoOp::Read | FileIoOp::Send => Some(0),
            FileIoOp::Write => Some(1),
            _ => None,
        };
        if let Some(d) = dir {
            self.totals[d].0 += io.len;
            self.totals[d].1 += 1;
        }
        let producers_running = match &self.jobs[io.process as usize].files {
            Some(f) => f.producers().iter().any(|&p| self.jobs[p as usize].state != JobState::Done),
            None => false,
        };
        let job = &mut self.jobs[io.process as usize];
        job.on_file_done(now, &req, &done, r.latencies(job.free_at(now)), now - r.issued_at, producers_running);
        if let Some(at) = job.take_wake_request() {
            events.schedule(at, E::from(JobEvent::Wake(io.process)));
        }
        if !done.ok && job.files.as_ref().is_some_and(|f| f.stops_run()) {
            // filebench's timeout mode: a thread that could not obtain a file stops the run.
            self.stop_jobs(events);
        }
        Some(io.process)
    }
}

/// Job `job`'s request `req` as the file layer takes it, under number `id`.
fn file_io(id: BioId, job: u32, req: &FileRequest, direct: bool, fadvise: Option<Fadvise>, wait_pick: bool) -> FileIo {
    FileIo { id, process: job, set: req.set, entry: req.entry, op: req.op, offset: req.offset, len: req.len, direct, fadvise, wait_pick }
}
