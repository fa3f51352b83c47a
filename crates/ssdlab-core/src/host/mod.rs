//! The host: fio-like jobs that generate I/O on CPU threads, and a Linux-like block layer
//! with one queue per device (I/O scheduler, device queue depth, /proc/diskstats
//! accounting: see [`crate::block`]). Each job sends its I/O to one target device.
//!
//! Host software time is modelled explicitly: each submission occupies the job's thread for
//! a sampled per-I/O overhead (syscall, block layer, driver, completion handling). At queue
//! depth 1 that gap between a completion and the next submission is what keeps iostat's
//! %util below 100 %.

mod job;

use rand_distr::{Distribution as _, Gamma};
use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use crate::block::iosched::ArmedTimer;
use crate::block::{BlockQueue, HostTag, QueueLimits, SchedulerConfig};
use crate::device::{BlockDevice, DeviceCtx, DeviceReport, Op, Tag};
use crate::engine::{Scheduler, Time};
use crate::metrics::diskstats::DiskCounters;
use crate::metrics::JobStats;
use crate::workload::JobSpec;
use job::{JobRun, JobState};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    pub name: String,
    /// Mean CPU time per I/O on the submitting thread, ns.
    pub io_overhead_ns: u64,
    /// Coefficient of variation of that time (0 = constant; gamma-distributed otherwise).
    pub io_overhead_cv: f64,
    /// Kernel tick rate; iostat's %util has this resolution.
    pub hz: u32,
}

impl HostConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.io_overhead_cv >= 0.0 && self.io_overhead_cv.is_finite()) {
            return Err(format!("host.io_overhead_cv must be >= 0, got {}", self.io_overhead_cv));
        }
        if self.hz == 0 {
            return Err("host.hz must be positive".into());
        }
        Ok(())
    }
}

/// The most I/Os one submission sends without a plug: io_submit (AIO_PLUG_THRESHOLD) and
/// io_uring (`need_plug = max_ios > 2`) plug only larger batches.
const PLUG_THRESHOLD: usize = 2;

/// Events the host handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostEvent {
    /// A job's dependencies are done and its start delay has passed.
    JobStart(u32),
    /// Re-check a job that was waiting (rate limit, think time, deadline).
    JobWake(u32),
    /// A submitted host request reaches the block layer.
    Arrive(HostTag),
    /// The scheduler's code has run for a request: it enters the queue.
    Enter(HostTag),
    /// Take a time-series sample.
    Sample,
    /// An I/O scheduler's timer on device `dev`'s queue.
    SchedTimer { dev: u16, key: u16, token: u32 },
    /// A batch of I/O submitted under one plug reaches the block layer (`through`: the
    /// scheduler's code has run for it).
    Unplug { plug: u32, through: bool },
}

/// The engine's event type: the host's, or device `.0`'s own.
#[derive(Clone, Copy, Debug)]
pub enum Event<DE> {
    Host(HostEvent),
    Device(u16, DE),
}

/// Adapter through which device `dev` schedules its events and reports completions.
pub struct DevCtx<'a, DE> {
    pub sched: &'a mut Scheduler<Event<DE>>,
    pub done: &'a mut Vec<Tag>,
    pub dev: u16,
}

impl<DE: Copy> DeviceCtx<DE> for DevCtx<'_, DE> {
    #[inline]
    fn now(&self) -> Time {
        self.sched.now()
    }
    #[inline(always)]
    fn schedule(&mut self, at: Time, event: DE) {
        self.sched.schedule(at, Event::Device(self.dev, event));
    }
    #[inline]
    fn complete(&mut self, tag: Tag) {
        self.done.push(tag);
    }
}

/// A host request: one I/O of one job, on its way to a device and back.
#[derive(Clone, Copy, Debug, Default)]
struct HostReq {
    job: u32,
    target: u32,
    op: Option<Op>,
    offset: u64,
    len: u64,
    issued_at: Time,
    arrived_at: Time,
    /// Device requests still carrying part of it.
    parts: u32,
}

/// One device's counters at a sample (and its members', for an array).
#[derive(Clone, Debug, Serialize)]
pub struct DeviceSample {
    pub disk: DiskCounters,
    pub internal: DeviceReport,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<crate::sim::DeviceResult>,
}

/// One time-series sample: cumulative counters at `t_ns`, host-wide and per device.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub t_ns: Time,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub devices: Vec<DeviceSample>,
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

pub struct Host {
    cfg: HostConfig,
    overhead: Option<Gamma<f64>>,
    jobs: Vec<JobRun>,
    dependents: Vec<Vec<u32>>,
    reqs: Vec<HostReq>,
    free_tags: Vec<HostTag>,
    /// The block layer: one queue per target device, in the system's order.
    queues: Vec<BlockQueue>,
    /// Whether any queue's scheduler costs host CPU time (else bios enter without a check).
    sched_costs: bool,
    jobs_done: usize,
    done_buf: Vec<Tag>,
    hosts_buf: Vec<HostTag>,
    jobs_buf: Vec<u32>,
    armed_buf: Vec<ArmedTimer>,
    interval: Option<Time>,
    samples: Vec<Sample>,
    /// Bounds on what the run keeps (time-series samples, I/O log records), and why it
    /// stopped early if it passed one.
    limits: Limits,
    log_records: u64,
    limit_error: Option<String>,
    /// Completed bytes and I/Os per direction across all jobs (for samples).
    totals: [(u64, u64); 2],
    /// Batches of host requests on their way to the block layer under a plug, and the
    /// free slots among them.
    plugs: Vec<Vec<HostTag>>,
    free_plugs: Vec<u32>,
    plug_buf: Vec<crate::block::PluggedBio>,
    /// The batch the job being pumped is preparing.
    plug_tags: Vec<HostTag>,
}

impl Host {
    pub fn new(cfg: HostConfig, specs: Vec<JobSpec>, seed: u64, interval: Option<Time>) -> Result<Host, String> {
        cfg.validate()?;
        let overhead = if cfg.io_overhead_cv > 0.0 && cfg.io_overhead_ns > 0 {
            let shape = 1.0 / (cfg.io_overhead_cv * cfg.io_overhead_cv);
            let scale = cfg.io_overhead_ns as f64 / shape;
            Some(Gamma::new(shape, scale).map_err(|e| format!("host overhead: {e}"))?)
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
            reqs: Vec::new(),
            free_tags: Vec::new(),
            queues: Vec::new(),
            sched_costs: false,
            jobs_done: 0,
            done_buf: Vec::new(),
            hosts_buf: Vec::new(),
            jobs_buf: Vec::new(),
            armed_buf: Vec::new(),
            interval,
            samples: Vec::new(),
            limits: Limits::default(),
            log_records: 0,
            limit_error: None,
            totals: [(0, 0); 2],
            plugs: Vec::new(),
            free_plugs: Vec::new(),
            plug_buf: Vec::new(),
            plug_tags: Vec::new(),
        })
    }

    /// Bound what the run keeps; a run whose planned length already takes more samples than
    /// allowed is refused here, before it runs.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Refuse a run whose planned end (from its start) takes more samples than allowed.
    pub fn check_plan(&self, planned_end: Option<Time>) -> Result<(), String> {
        if let (Some(end), Some(iv)) = (planned_end, self.interval) {
            let n = end / iv + 1;
            if n > self.limits.max_samples {
                return Err(format!(
                    "the time series would take {n} samples at an interval of {iv} ns, more than the run's limit of {} \
                     (max_samples): a longer interval takes fewer",
                    self.limits.max_samples
                ));
            }
        }
        Ok(())
    }

    /// Why the run stopped early: a limit it passed.
    pub fn limit_error(&self) -> Option<&str> {
        self.limit_error.as_deref()
    }

    #[cold]
    fn overflow<DE: Copy>(&mut self, message: String, sched: &mut Scheduler<Event<DE>>) {
        if self.limit_error.is_none() {
            self.limit_error = Some(message);
            self.stop_jobs(sched);
        }
    }

    /// Give the host a block queue for each target device (their queue depths, whether they
    /// spin, their I/O schedulers and queue settings, in the system's order). Every job's
    /// target must be among them.
    pub fn attach(&mut self, devices: &[(u32, bool, SchedulerConfig, QueueLimits)]) -> Result<(), String> {
        let hz = self.cfg.hz;
        self.queues = devices
            .iter()
            .map(|&(depth, rotational, sched, limits)| BlockQueue::with_limits(depth, hz, sched.build(hz, rotational), limits))
            .collect();
        self.sched_costs = self.queues.iter().any(|q| q.sched_cpu_ns() > 0);
        match self.jobs.iter().find(|j| j.spec.target as usize >= devices.len()) {
            Some(j) => Err(format!("job '{}' targets device {}, but the system has {}", j.spec.name, j.spec.target, devices.len())),
            None => Ok(()),
        }
    }

    /// Schedule the jobs that wait for nobody, and the first sample, from the clock's start.
    pub fn start<DE: Copy>(&mut self, sched: &mut Scheduler<Event<DE>>) {
        let origin = sched.now();
        for (i, j) in self.jobs.iter().enumerate() {
            if j.deps_left == 0 {
                sched.schedule(origin + j.spec.start_delay_ns, Event::Host(HostEvent::JobStart(i as u32)));
            }
        }
        if self.interval.is_some() {
            sched.schedule(origin, Event::Host(HostEvent::Sample));
        }
    }

    /// Which jobs have not finished, and their requests in flight (for a stalled run's error).
    pub fn unfinished(&self) -> String {
        let names: Vec<&str> =
            self.jobs.iter().filter(|j| j.state != JobState::Done).map(|j| j.spec.name.as_str()).collect();
        let in_devices: u32 = self.queues.iter().map(|q| q.in_device()).sum();
        format!("jobs {names:?} are unfinished with {in_devices} requests in the devices")
    }

    /// The first job that could not go on (a trace record it could not read or place).
    pub fn job_error(&self) -> Option<String> {
        self.jobs.iter().find_map(|j| j.error().map(|e| format!("job '{}': {e}", j.spec.name)))
    }

    pub fn finished(&self) -> bool {
        self.jobs_done == self.jobs.len()
    }

    pub fn handle<D: BlockDevice>(&mut self, ev: HostEvent, devs: &mut [D], sched: &mut Scheduler<Event<D::Event>>) {
        match ev {
            HostEvent::JobStart(j) => {
                if self.jobs[j as usize].state == JobState::Done {
                    return; // stopped before it started
                }
                self.jobs[j as usize].begin(sched.now());
                if let Some(deadline) = self.jobs[j as usize].deadline {
                    sched.schedule(deadline, Event::Host(HostEvent::JobWake(j)));
                }
                self.pump(j, devs, sched);
            }
            HostEvent::JobWake(j) => {
                let job = &mut self.jobs[j as usize];
                if job.wake_at.is_some_and(|t| t <= sched.now()) {
                    job.wake_at = None;
                }
                self.pump(j, devs, sched);
            }
            HostEvent::Arrive(tag) => {
                debug_assert_eq!(self.reqs[tag as usize].arrived_at, sched.now());
                if let Some(target) = self.arrive(tag, sched) {
                    self.feed_device(target, devs, sched);
                }
            }
            HostEvent::Enter(tag) => {
                let target = self.enter(tag, sched.now());
                self.feed_device(target, devs, sched);
            }
            HostEvent::Sample => {
                let now = sched.now();
                let devices = self
                    .queues
                    .iter()
                    .zip(devs.iter())
                    .map(|(q, d)| DeviceSample {
                        disk: q.disk().snapshot(now),
                        internal: d.internal_report(now),
                        members: d.member_results(now),
                    })
                    .collect();
                if self.samples.len() as u64 >= self.limits.max_samples {
                    let msg = format!(
                        "the time series passed {} samples (the run's limit, max_samples) at an interval of {} ns: \
                         a longer interval takes fewer",
                        self.limits.max_samples,
                        self.interval.unwrap_or(0)
                    );
                    self.overflow(msg, sched);
                    return;
                }
                self.samples.push(Sample {
                    t_ns: now,
                    read_bytes: self.totals[0].0,
                    write_bytes: self.totals[1].0,
                    read_ios: self.totals[0].1,
                    write_ios: self.totals[1].1,
                    devices,
                });
                if !self.finished() {
                    if let Some(iv) = self.interval {
                        sched.schedule(now + iv, Event::Host(HostEvent::Sample));
                    }
                }
            }
            HostEvent::SchedTimer { dev, key, token } => {
                self.queues[dev as usize].timer(key, token, sched.now());
                self.schedule_timers(dev as u32, sched);
                self.feed_device(dev as u32, devs, sched);
            }
            HostEvent::Unplug { plug, through } => {
                if let Some(target) = self.unplug(plug, through, sched) {
                    self.feed_device(target, devs, sched);
                }
            }
        }
    }

    /// Batch `plug` reaches its device's block layer at now. The scheduler's code runs for
    /// each of its bios in turn under the queue's lock; then (`through`) they enter the queue
    /// together. Returns the device if they entered now.
    fn unplug<DE: Copy>(&mut self, plug: u32, through: bool, sched: &mut Scheduler<Event<DE>>) -> Option<u32> {
        let now = sched.now();
        let tags = &self.plugs[plug as usize];
        let target = self.reqs[tags[0] as usize].target;
        let queue = &mut self.queues[target as usize];
        if !through && queue.sched_cpu_ns() > 0 {
            let mut ready = now;
            for _ in 0..tags.len() {
                ready = queue.through_scheduler(now);
            }
            let job = self.reqs[tags[0] as usize].job;
            self.jobs[job as usize].stats.sched_cpu_ns += queue.sched_cpu_ns() * tags.len() as u64;
            if ready > now {
                sched.schedule(ready, Event::Host(HostEvent::Unplug { plug, through: true }));
                return None;
            }
        }
        if tags.len() <= PLUG_THRESHOLD {
            // Too few to plug: each goes in as a lone bio.
            for &t in tags {
                let r = self.reqs[t as usize];
                let parts = queue.submit(t, r.op.expect("batched request"), r.offset, r.len, r.job, now);
                self.reqs[t as usize].parts = parts;
            }
            self.plugs[plug as usize].clear();
            self.free_plugs.push(plug);
            return Some(target);
        }
        let mut bios = std::mem::take(&mut self.plug_buf);
        bios.clear();
        for &t in tags {
            let r = &mut self.reqs[t as usize];
            r.parts = 1;
            bios.push(crate::block::PluggedBio {
                host: t,
                op: r.op.expect("plugged request"),
                offset: r.offset,
                len: r.len,
                process: r.job,
            });
        }
        queue.submit_plugged(&bios, now);
        self.plug_buf = bios;
        self.plugs[plug as usize].clear();
        self.free_plugs.push(plug);
        Some(target)
    }

    /// Host request `tag`, ready at `arrive`, joins the batch its job is preparing; a full
    /// batch goes. Returns whether requests entered a block queue now.
    #[cold]
    fn add_to_plug<DE: Copy>(&mut self, tag: HostTag, arrive: Time, batch: u64, sched: &mut Scheduler<Event<DE>>) -> bool {
        self.plug_tags.push(tag);
        self.plug_tags.len() as u64 >= batch && self.commit_plug(arrive, sched).is_some()
    }

    /// The batch being prepared leaves its thread at `at` under one plug.
    fn commit_plug<DE: Copy>(&mut self, at: Time, sched: &mut Scheduler<Event<DE>>) -> Option<u32> {
        let plug = match self.free_plugs.pop() {
            Some(p) => p,
            None => {
                self.plugs.push(Vec::new());
                (self.plugs.len() - 1) as u32
            }
        };
        std::mem::swap(&mut self.plugs[plug as usize], &mut self.plug_tags);
        if at == sched.now() {
            return self.unplug(plug, false, sched);
        }
        sched.schedule(at, Event::Host(HostEvent::Unplug { plug, through: false }));
        None
    }

    /// Host request `tag` reaches its device's block layer at now: it enters the queue once
    /// the scheduler's code has run for it (at once under `none`; else an event then).
    /// Returns the device if it entered now.
    #[inline]
    fn arrive<DE: Copy>(&mut self, tag: HostTag, sched: &mut Scheduler<Event<DE>>) -> Option<u32> {
        let now = sched.now();
        if !self.sched_costs {
            return Some(self.enter(tag, now));
        }
        let HostReq { target, job, .. } = self.reqs[tag as usize];
        let ready = self.queues[target as usize].through_scheduler(now);
        self.jobs[job as usize].stats.sched_cpu_ns += self.queues[target as usize].sched_cpu_ns();
        if ready > now {
            sched.schedule(ready, Event::Host(HostEvent::Enter(tag)));
            return None;
        }
        Some(self.enter(tag, now))
    }

    /// Host request `tag` enters its device's block queue; returns the device.
    #[inline]
    fn enter(&mut self, tag: HostTag, now: Time) -> u32 {
        let r = self.reqs[tag as usize];
        let op = r.op.expect("entering request");
        let parts = self.queues[r.target as usize].submit(tag, op, r.offset, r.len, r.job, now);
        self.reqs[tag as usize].parts = parts;
        r.target
    }

    /// Timers the scheduler of device `dev` armed, into the event queue.
    #[inline]
    fn schedule_timers<DE: Copy>(&mut self, dev: u32, sched: &mut Scheduler<Event<DE>>) {
        // Checked on every request; `none` never arms a timer.
        if self.queues[dev as usize].has_armed() {
            self.schedule_armed(dev, sched);
        }
    }

    #[cold]
    #[inline(never)]
    fn schedule_armed<DE: Copy>(&mut self, dev: u32, sched: &mut Scheduler<Event<DE>>) {
        self.queues[dev as usize].take_armed(&mut self.armed_buf);
        for t in self.armed_buf.drain(..) {
            let ev = HostEvent::SchedTimer { dev: dev as u16, key: t.key, token: t.token };
            sched.schedule(t.at, Event::Host(ev));
        }
    }

    /// Device `dev` handles one of its events; completions it reports are handled after it.
    #[inline(always)]
    pub fn device_event<D: BlockDevice>(
        &mut self,
        dev: u32,
        ev: D::Event,
        devs: &mut [D],
        sched: &mut Scheduler<Event<D::Event>>,
    ) {
        devs[dev as usize].handle(ev, &mut DevCtx { sched, done: &mut self.done_buf, dev: dev as u16 });
        self.complete_reported(dev, devs, sched);
    }

    /// Handle the completions device `dev` reported into `done_buf` (most events report
    /// none). The buffer is taken while they are handled: handling one may feed a device.
    #[inline(always)]
    fn complete_reported<D: BlockDevice>(&mut self, dev: u32, devs: &mut [D], sched: &mut Scheduler<Event<D::Event>>) {
        if self.done_buf.is_empty() {
            return;
        }
        let mut done = std::mem::take(&mut self.done_buf);
        for tag in done.drain(..) {
            self.complete(dev, tag, devs, sched);
        }
        self.done_buf = done;
    }

    /// Send requests from device `dev`'s block queue while the device has free slots.
    fn feed_device<D: BlockDevice>(&mut self, dev: u32, devs: &mut [D], sched: &mut Scheduler<Event<D::Event>>) {
        let queue = &mut self.queues[dev as usize];
        if queue.dispatches_nothing() {
            // Nothing to send, no timer armed; completions reported earlier are handled.
            self.complete_reported(dev, devs, sched);
            return;
        }
        let device = &mut devs[dev as usize];
        while let Some(req) = queue.next_for_device(sched.now()) {
            device.submit(req, &mut DevCtx { sched: &mut *sched, done: &mut self.done_buf, dev: dev as u16 });
            if queue.dispatches_nothing() {
                break; // the pass that would find nothing is not made
            }
        }
        self.schedule_timers(dev, sched);
        self.complete_reported(dev, devs, sched);
    }

    /// Device `dev` completed its request `tag`: the host requests it carried are done once
    /// all their parts are.
    fn complete<D: BlockDevice>(&mut self, dev: u32, tag: Tag, devs: &mut [D], sched: &mut Scheduler<Event<D::Event>>) {
        let now = sched.now();
        let rq = self.queues[dev as usize].complete(tag, now);
        self.schedule_timers(dev, sched);
        if !rq.is_merged() {
            // One bio, one host request: the common case, without the lists below.
            let job = self.part_done(rq.host, now, sched);
            self.feed_device(dev, devs, sched);
            if let Some(j) = job {
                self.pump(j, devs, sched);
            }
            return;
        }
        let mut hosts = std::mem::take(&mut self.hosts_buf);
        hosts.push(rq.host);
        self.queues[dev as usize].take_merged(&rq, &mut hosts);
        let mut woken = std::mem::take(&mut self.jobs_buf);
        for &h in &hosts {
            if let Some(j) = self.part_done(h, now, sched) {
                if !woken.contains(&j) {
                    woken.push(j);
                }
            }
        }
        hosts.clear();
        self.hosts_buf = hosts;
        self.feed_device(dev, devs, sched);
        // Jobs whose I/O finished may issue more.
        for &j in &woken {
            self.pump(j, devs, sched);
        }
        woken.clear();
        self.jobs_buf = woken;
    }

    /// A device request carrying part of host request `h` completed; when it was the last
    /// part, the job hears of it. Returns that job.
    #[inline]
    fn part_done<DE: Copy>(&mut self, h: HostTag, now: Time, sched: &mut Scheduler<Event<DE>>) -> Option<u32> {
        let r = &mut self.reqs[h as usize];
        r.parts -= 1;
        if r.parts > 0 {
            return None;
        }
        let r = *r;
        let op = r.op.expect("completed request");
        self.reqs[h as usize].op = None;
        self.free_tags.push(h);
        if op.index() < 2 {
            self.totals[op.index()].0 += r.len;
            self.totals[op.index()].1 += 1;
        }
        let job = &mut self.jobs[r.job as usize];
        job.on_complete(now, op, r.len, r.offset, r.arrived_at - r.issued_at, now - r.arrived_at);
        if job.logs() {
            let n = job.stats.log.len();
            self.log_records += (n - job.log_counted) as u64;
            job.log_counted = n;
            if self.log_records > self.limits.max_log_records {
                let name = job.spec.name.clone();
                self.overflow(
                    format!(
                        "job '{name}': the I/O logs passed {} records (the run's limit, max_log_records): \
                         log window averages (log_avg_msec) or log a shorter run",
                        self.limits.max_log_records
                    ),
                    sched,
                );
            }
        }
        let job = &mut self.jobs[r.job as usize];
        if let Some(at) = job.take_wake_request() {
            sched.schedule(at, Event::Host(HostEvent::JobWake(r.job)));
        }
        Some(r.job)
    }

    /// Let job `j` issue as much as its limits allow right now. A job that submits in
    /// batches sends each batch under one plug once its thread has prepared all of it (or
    /// when it can issue no more for now).
    fn pump<D: BlockDevice>(&mut self, j: u32, devs: &mut [D], sched: &mut Scheduler<Event<D::Event>>) {
        let now = sched.now();
        let mut entered = false;
        let target = self.jobs[j as usize].spec.target;
        let batch = self.jobs[j as usize].batch();
        loop {
            let job = &mut self.jobs[j as usize];
            match job.next_action(now) {
                job::Action::Issue(io) => {
                    let tag = match self.free_tags.pop() {
                        Some(t) => t,
                        None => {
                            self.reqs.push(HostReq::default());
                            (self.reqs.len() - 1) as HostTag
                        }
                    };
                    let overhead = match &self.overhead {
                        Some(g) => g.sample(job.rng()) as Time,
                        None => self.cfg.io_overhead_ns,
                    };
                    let arrive = job.thread_submit(now, overhead);
                    self.reqs[tag as usize] = HostReq {
                        job: j,
                        target,
                        op: Some(io.op),
                        offset: io.offset,
                        len: io.len,
                        issued_at: now,
                        arrived_at: arrive,
                        parts: 0,
                    };
                    if batch > 1 {
                        entered |= self.add_to_plug(tag, arrive, batch, sched);
                    } else if arrive == now {
                        // No host time to wait for: enter the block layer without an event.
                        entered |= self.arrive(tag, sched).is_some();
                    } else {
                        sched.schedule(arrive, Event::Host(HostEvent::Arrive(tag)));
                    }
                }
                job::Action::WakeAt(at) => {
                    sched.schedule(at, Event::Host(HostEvent::JobWake(j)));
                    break;
                }
                job::Action::Wait => break,
                job::Action::Finished => {
                    self.finish_job(j, sched);
                    break;
                }
            }
        }
        if batch > 1 && !self.plug_tags.is_empty() {
            let at = self.reqs[*self.plug_tags.last().expect("a plugged request") as usize].arrived_at;
            entered |= self.commit_plug(at, sched).is_some();
        }
        if entered {
            self.feed_device(target, devs, sched);
        }
    }

    fn finish_job<DE: Copy>(&mut self, j: u32, sched: &mut Scheduler<Event<DE>>) {
        let now = sched.now();
        self.jobs[j as usize].finish(now);
        self.jobs_done += 1;
        for k in std::mem::take(&mut self.dependents[j as usize]) {
            let dep = &mut self.jobs[k as usize];
            dep.deps_left -= 1;
            if dep.deps_left == 0 {
                sched.schedule(now + dep.spec.start_delay_ns, Event::Host(HostEvent::JobStart(k)));
            }
        }
    }

    /// End every job now, as fio does at its runtime: running jobs issue nothing more and
    /// finish once their requests in flight are done; jobs not yet started never start.
    pub fn stop_jobs<DE: Copy>(&mut self, sched: &mut Scheduler<Event<DE>>) {
        let now = sched.now();
        for j in 0..self.jobs.len() {
            match self.jobs[j].state {
                JobState::Running => {
                    self.jobs[j].deadline = Some(now);
                    sched.schedule(now, Event::Host(HostEvent::JobWake(j as u32)));
                }
                JobState::Waiting => {
                    self.jobs[j].finish(now);
                    self.jobs_done += 1;
                }
                JobState::Draining | JobState::Done => {}
            }
        }
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

    /// Device `dev`'s /proc/diskstats counters at `now`.
    pub fn disk_counters(&self, dev: usize, now: Time) -> DiskCounters {
        self.queues[dev].disk().snapshot(now)
    }

    /// The I/O scheduler of device `dev`'s queue.
    pub fn scheduler(&self, dev: usize) -> &'static str {
        self.queues[dev].scheduler()
    }

    pub fn into_results(self) -> (Vec<JobStats>, Vec<Sample>) {
        let stats = self
            .jobs
            .into_iter()
            .map(|mut j| {
                j.stats.finish();
                debug_assert!(j.state == JobState::Done);
                j.stats
            })
            .collect();
        (stats, self.samples)
    }
}

impl HostConfig {
    /// A host with no software time, for tests that look only at the device.
    pub fn ideal() -> HostConfig {
        HostConfig { name: "ideal".into(), io_overhead_ns: 0, io_overhead_cv: 0.0, hz: 1000 }
    }
}
