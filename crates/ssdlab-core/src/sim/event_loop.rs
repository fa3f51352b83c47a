//! The event loop of one run: the job runner above, the block layer with its devices below,
//! each handling its own events; the time series taken beside them.

use crate::block::{BlockEvent, BlockLayer, DeviceEvent, QueueLimits, SchedulerConfig, TargetQueue};
use crate::file::{FileEvent, FileLayer, FileSystemSpec, Lower, MountTarget, Up};
use crate::engine::{EventQueue, Time};
use crate::error::{ConfigError, SimError};
use crate::host::{Host, JobEvent, Limits};
use crate::progress::{fraction_of, Phase, Progress, Watch, CHECK_EVENTS};
use crate::device::Volatile;
use crate::report::{DeviceResult, DeviceSample, FileCounters, FsPowerCut, PowerCutDevice, PowerCutReport, Sample, SimResult};
use crate::target::TargetDevice;
use crate::net::NetworkSpec;
use crate::workload::files::FileSetSpec;

use super::carry::Carry;
use super::Until;

/// Devices one system may hold (events name their device in 16 bits).
pub const MAX_TARGETS: usize = 1 << 16;

/// The error for a system of `n` targets, more than [`MAX_TARGETS`].
pub(super) fn too_many_targets(n: usize) -> ConfigError {
    ConfigError::new("targets", format!("{n} target devices; at most {MAX_TARGETS}"))
}

/// Events between checks that host requests still complete.
const STALL_CHECK_EVENTS: u64 = 1 << 22;
/// Simulated time with host requests in the devices and none completing that counts as a
/// stall (a model bug): events that recur on their own (a drive's temperature samples, the
/// time series) would otherwise keep such a run going for ever.
const STALL_AFTER_NS: Time = 3_600 * 1_000_000_000;

/// The run's events: the job runner's, the file layer's, the block layer's, a device's own,
/// and the time series' sample.
#[derive(Clone, Copy, Debug)]
pub enum Event<DE> {
    Job(JobEvent),
    File(FileEvent),
    Block(BlockEvent),
    Device(u16, DE),
    Sample,
}

impl<DE> From<FileEvent> for Event<DE> {
    #[inline(always)]
    fn from(e: FileEvent) -> Self {
        Event::File(e)
    }
}

impl<DE> From<JobEvent> for Event<DE> {
    #[inline(always)]
    fn from(e: JobEvent) -> Self {
        Event::Job(e)
    }
}

impl<DE> From<BlockEvent> for Event<DE> {
    #[inline(always)]
    fn from(e: BlockEvent) -> Self {
        Event::Block(e)
    }
}

impl<DE> From<DeviceEvent<DE>> for Event<DE> {
    #[inline(always)]
    fn from(e: DeviceEvent<DE>) -> Self {
        Event::Device(e.0, e.1)
    }
}

/// A device of the system with what the block layer (and a file layer) need to know of it.
pub struct Target<D> {
    pub name: String,
    pub scheduler: SchedulerConfig,
    pub queue: QueueLimits,
    /// The file system made on it, if jobs work on files there.
    pub filesystem: Option<FileSystemSpec>,
    /// The device's optimal I/O size (the queue's `io_opt`, bytes; 0: none), from its
    /// description: read-ahead on it is at least twice this.
    pub optimal_io_bytes: u64,
    pub device: D,
}

impl<D> Target<D> {
    /// A target behind blk-mq's `none` scheduler.
    pub fn new(name: impl Into<String>, device: D) -> Self {
        Target {
            name: name.into(),
            scheduler: SchedulerConfig::None,
            queue: QueueLimits::default(),
            filesystem: None,
            optimal_io_bytes: 0,
            device,
        }
    }

    /// The same target with its device transformed.
    pub fn map<E>(self, f: impl FnOnce(D) -> E) -> Target<E> {
        Target {
            name: self.name,
            scheduler: self.scheduler,
            queue: self.queue,
            filesystem: self.filesystem,
            optimal_io_bytes: self.optimal_io_bytes,
            device: f(self.device),
        }
    }
}

/// How a run goes beside its jobs: when it ends, the time series, what it may keep, and the
/// file sets its file jobs work on.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub until: Until,
    /// Time-series sampling interval; none by default.
    pub interval_ns: Option<Time>,
    pub limits: Limits,
    pub file_sets: Vec<FileSetSpec>,
    /// The server's network, when its jobs send files to clients.
    pub network: Option<NetworkSpec>,
    /// Where the drives' states are kept for the next run, once the run has drained.
    pub carry: Option<Carry>,
}

/// Refuse a run whose planned end (from its start) takes more samples than allowed.
pub fn check_sample_plan(planned_end: Option<Time>, opts: &RunOptions) -> Result<(), SimError> {
    if let (Some(end), Some(iv)) = (planned_end, opts.interval_ns) {
        let n = end / iv + 1;
        if n > opts.limits.max_samples {
            return Err(SimError::Limit(format!(
                "the time series would take {n} samples at an interval of {iv} ns, more than the run's limit of {} \
                 (max_samples): a longer interval takes fewer",
                opts.limits.max_samples
            )));
        }
    }
    Ok(())
}

/// The time series: counters of the host and of every device at each interval.
struct Sampler {
    interval: Option<Time>,
    max: u64,
    samples: Vec<Sample>,
}

impl Sampler {
    /// Take a sample now and schedule the next (while jobs run); a run past its limit stops
    /// its jobs and fails.
    fn take<D: TargetDevice>(&mut self, host: &mut Host, block: &BlockLayer<D>, files: Option<&mut FileLayer>, events: &mut EventQueue<Event<D::Event>>) {
        let now = events.now();
        let (cpu, files, network) = match files {
            Some(f) => {
                let counters = FileCounters {
                    cache_hits: f.report.cache_hits,
                    cache_misses: f.report.cache_misses,
                    ops: host.file_op_counters(),
                };
                (Some(f.cpus_mut().interval(now)), Some(counters), f.network_counters(now))
            }
            None => (None, None, None),
        };
        let devices = block
            .devices()
            .enumerate()
            .map(|(i, d)| DeviceSample {
                disk: block.disk_counters(i, now),
                internal: d.internal_report(now),
                members: d.member_results(now),
            })
            .collect();
        if self.samples.len() as u64 >= self.max {
            let msg = format!(
                "the time series passed {} samples (the run's limit, max_samples) at an interval of {} ns: \
                 a longer interval takes fewer",
                self.max,
                self.interval.unwrap_or(0)
            );
            host.overflow(msg, events);
            return;
        }
        let [(read_bytes, read_ios), (write_bytes, write_ios)] = host.totals();
        self.samples.push(Sample { t_ns: now, read_bytes, write_bytes, read_ios, write_ios, devices, cpu, files, network });
        if !host.finished() {
            if let Some(iv) = self.interval {
                events.schedule(now + iv, Event::Sample);
            }
        }
    }
}

/// The event loop: pop the earliest event, hand it to its owner, until every job is done.
/// Then each device finishes the work it still has under way (results are taken first: the
/// run ends when the host is done), so that it can be used for another run.
///
/// A run whose events run out while jobs are unfinished is an internal model error: a model
/// that forgot to schedule something must not pass as a short run.
pub fn simulate<D: TargetDevice>(seed: u64, host: Host, targets: Vec<Target<D>>) -> Result<SimResult, SimError> {
    simulate_with(seed, host, targets, RunOptions::default(), &mut Watch::off())
}

/// [`simulate`] as `opts` says, under `watch` (an observer and how often it is told).
pub fn simulate_with<D: TargetDevice>(
    seed: u64,
    mut host: Host,
    targets: Vec<Target<D>>,
    opts: RunOptions,
    watch: &mut Watch,
) -> Result<SimResult, SimError> {
    if targets.len() > MAX_TARGETS {
        return Err(SimError::System(too_many_targets(targets.len())));
    }
    host.check_targets(targets.len())?;
    host.set_limits(opts.limits);
    let mut names = Vec::with_capacity(targets.len());
    let mut file_systems = Vec::with_capacity(targets.len());
    let queues = targets
        .into_iter()
        .map(|t| {
            names.push(t.name);
            file_systems.push(MountTarget {
                filesystem: t.filesystem,
                capacity: t.device.capacity(),
                read_ahead_kb: t.queue.read_ahead_kb,
                optimal_io_bytes: t.optimal_io_bytes,
                max_bio_bytes: (t.queue.max_sectors_kb as u64 * 1024).min(t.queue.max_segments as u64 * 4096),
            });
            TargetQueue { device: t.device, scheduler: t.scheduler, limits: t.queue }
        })
        .collect();
    let mut block = BlockLayer::new(queues, host.config().hz);
    let start = block.devices_mut().map(|d| d.begin_run()).max().unwrap_or(0);
    // A file layer when jobs work on files: it sits between them and the block layer.
    let mut files = match host.has_file_jobs() {
        false => None,
        true => {
            let memory = host.config().memory.clone().ok_or_else(|| {
                SimError::System(ConfigError::new("host.memory", "jobs work on files, but the host has no memory described".into()))
            })?;
            let entries: Vec<u64> = opts.file_sets.iter().map(|s| s.entries).collect();
            host.set_file_sets(&entries, seed);
            let mut layer = FileLayer::new(&memory, &file_systems, &opts.file_sets, host.jobs(), seed, start, host.config().hz).map_err(SimError::System)?;
            // The files laid out before the run are on the devices (written, not timed).
            for (device, runs) in block.devices_mut().zip(layer.take_laid_out()) {
                device.lay_out(&runs);
            }
            if let Some(net) = &opts.network {
                layer.attach_network(net, host.clients(), seed, start).map_err(SimError::System)?;
            }
            Some(Box::new(layer))
        }
    };
    let mut events: EventQueue<Event<D::Event>> = EventQueue::starting_at(start);
    block.with_each_device(&mut events, |d, ctx| d.start_run(ctx));
    host.start(&mut events);
    let mut sampler = Sampler { interval: opts.interval_ns, max: opts.limits.max_samples, samples: Vec::new() };
    if opts.interval_ns.is_some() {
        events.schedule(start, Event::Sample);
    }
    let (planned_end, planned_bytes) = host.plan();
    let plan = RunPlan { start, end_ns: planned_end.map(|e| start.saturating_add(e)), planned_bytes, until: opts.until };
    watch.tell(plan.progress(Phase::Run, &host, &block, &events))?;
    // The wall clock is looked at every CHECK_EVENTS events, and only with an observer.
    let mut next_check = if watch.is_on() { CHECK_EVENTS } else { u64::MAX };
    let mut watch_rebuild = opts.until == Until::RebuildDone;
    let mut next_stall_check = STALL_CHECK_EVENTS;
    let mut next_either = next_stall_check.min(next_check);
    let mut last_progress = (host.completed_totals().0, events.now());
    let stalled = |host: &Host, block: &BlockLayer<D>| {
        format!("jobs {:?} are unfinished with {} requests in the devices", host.unfinished(), block.in_devices())
    };
    let power_cut = match opts.until {
        Until::PowerCut { at_ns } => Some(start.saturating_add(at_ns)),
        _ => None,
    };
    let mut cut = false;
    loop {
        if let Some(at) = power_cut {
            // The power fails: nothing after it happens. Jobs done sooner leave the devices
            // to their own work (a buffer draining, GC) until then.
            if events.peek_time().is_none_or(|t| t > at) {
                events.advance_to(at);
                host.cut_power(at);
                cut = true;
                break;
            }
        }
        if watch_rebuild {
            // Checked after every event, so that the run ends when the rebuild does.
            if rebuilds_done(&block) {
                watch_rebuild = false;
                host.stop_jobs(&mut events);
            }
        } else if host.finished() && power_cut.is_none() {
            break;
        }
        let Some((_, ev)) = events.pop() else {
            if watch_rebuild && rebuilds_done(&block) {
                watch_rebuild = false;
                host.stop_jobs(&mut events);
                continue;
            }
            return Err(SimError::Internal(format!(
                "the simulation stalled at {} ns: no event is pending but {}",
                events.now(),
                stalled(&host, &block)
            )));
        };
        match (ev, files.as_deref_mut()) {
            (Event::Device(d, e), None) => block.device_event(d, e, &mut events, &mut host),
            (Event::Device(d, e), Some(f)) => block.device_event(d, e, &mut events, &mut Up { files: f, host: &mut host }),
            (Event::Block(e), None) => block.handle(e, &mut events, &mut host),
            (Event::Block(e), Some(f)) => block.handle(e, &mut events, &mut Up { files: f, host: &mut host }),
            // A job that fills a deep queue pauses every CHECK_ISSUES I/Os, so that a stop
            // is heard; it goes on before any other event.
            (Event::Job(e), None) => {
                host.handle(e, &mut block, &mut events);
                while host.paused() {
                    watch.check(|| plan.progress(Phase::Run, &host, &block, &events))?;
                    host.go_on(&mut block, &mut events);
                }
            }
            (Event::Job(e), Some(f)) => {
                host.handle(e, &mut Lower { files: &mut *f, block: &mut block }, &mut events);
                while host.paused() {
                    watch.check(|| plan.progress(Phase::Run, &host, &block, &events))?;
                    host.go_on(&mut Lower { files: &mut *f, block: &mut block }, &mut events);
                }
            }
            (Event::File(e), Some(f)) => f.handle(e, &mut block, &mut events, &mut host),
            (Event::File(_), None) => unreachable!("a file event without a file layer"),
            (Event::Sample, f) => sampler.take(&mut host, &block, f, &mut events),
        }
        // One comparison an event for both checks below (most events reach neither).
        if events.dispatched() < next_either {
            continue;
        }
        if events.dispatched() >= next_stall_check {
            next_stall_check = events.dispatched() + STALL_CHECK_EVENTS;
            data_lost(&names, &block)?;
            let done = host.completed_totals().0;
            if done != last_progress.0 || host.outstanding() == 0 {
                last_progress = (done, events.now());
            } else if events.now() - last_progress.1 > STALL_AFTER_NS {
                return Err(SimError::Internal(format!(
                    "the simulation stalled at {} ns: no host request completed for {} s of simulated time, and {}",
                    events.now(),
                    STALL_AFTER_NS / 1_000_000_000,
                    stalled(&host, &block)
                )));
            }
        }
        if events.dispatched() >= next_check {
            next_check = events.dispatched() + CHECK_EVENTS;
            watch.check(|| plan.progress(Phase::Run, &host, &block, &events))?;
        }
        next_either = next_stall_check.min(next_check);
    }
    data_lost(&names, &block)?;
    if let Some(e) = host.job_error() {
        return Err(e);
    }
    if let Some(e) = host.limit_error() {
        return Err(SimError::Limit(e.to_string()));
    }
    watch.tell(plan.progress(Phase::Run, &host, &block, &events))?;
    let end = events.now();
    let mut devices = Vec::with_capacity(block.len());
    for (i, (d, name)) in block.devices().zip(names.iter_mut()).enumerate() {
        let internal = d.internal_report(end);
        devices.push(DeviceResult {
            name: std::mem::take(name),
            capacity_bytes: d.capacity(),
            scheduler: block.scheduler(i),
            disk: block.disk_counters(i, end),
            internal,
            members: d.member_results(end),
        });
    }
    let power_cut = cut.then(|| power_cut_report(end, &block, &devices, files.as_deref()));
    for d in block.devices_mut() {
        d.end_run(end);
    }
    watch.tell(plan.progress(Phase::Drain, &host, &block, &events))?;
    // After a power cut nothing drains: the devices lost what they held.
    while !cut && block.devices().any(|d| d.has_internal_work()) {
        match events.pop() {
            Some((_, Event::Device(d, e))) => match files.as_deref_mut() {
                None => block.device_event(d, e, &mut events, &mut host),
                Some(f) => block.device_event(d, e, &mut events, &mut Up { files: f, host: &mut host }),
            },
            // The jobs are done: their timers, and the block layer's, no longer matter.
            Some(_) => {}
            None => {
                return Err(SimError::Internal("a device reports work under way but has no event to carry it".into()))
            }
        }
        if events.dispatched() >= next_check {
            next_check = events.dispatched() + CHECK_EVENTS;
            watch.check(|| plan.progress(Phase::Drain, &host, &block, &events))?;
        }
    }
    let drained = if cut { end } else { events.now() };
    if let Some(carry) = &opts.carry {
        for (d, r) in block.devices().zip(&devices) {
            carry.save(&r.name, d)?;
        }
    }
    let network = files.as_mut().and_then(|f| f.network_report(end));
    let files = files.map(|mut f| f.finish(end));
    let jobs = host.into_results(|process| block.sched_cpu_ns(process));
    Ok(SimResult {
        power_cut,
        files,
        network,
        seed,
        start_ns: start,
        end_ns: end,
        drained_ns: drained,
        events: events.dispatched(),
        jobs,
        devices,
        samples: sampler.samples,
    })
}

/// What a run's progress is measured against.
struct RunPlan {
    start: Time,
    end_ns: Option<Time>,
    planned_bytes: Option<u64>,
    until: Until,
}

impl RunPlan {
    fn progress<D: TargetDevice, E>(&self, phase: Phase, host: &Host, block: &BlockLayer<D>, events: &EventQueue<E>) -> Progress {
        let now = events.now();
        let (requests, bytes) = host.completed_totals();
        let rebuild = block.devices().filter_map(|d| d.rebuild_progress()).reduce(|(a, b), (c, d)| (a + c, b + d));
        let fraction = match (phase, self.until) {
            (Phase::Run, Until::RebuildDone) => rebuild.and_then(|(done, of)| fraction_of(&[Some((done as f64, of as f64))])),
            (Phase::Run, Until::PowerCut { at_ns }) => fraction_of(&[Some(((now - self.start) as f64, at_ns as f64))]),
            (Phase::Run, Until::JobsDone) => fraction_of(&[
                self.end_ns.map(|e| ((now - self.start) as f64, e.saturating_sub(self.start) as f64)),
                self.planned_bytes.map(|b| (bytes as f64, b as f64)),
            ]),
            _ => None,
        };
        Progress {
            end_ns: self.end_ns,
            planned_bytes: self.planned_bytes,
            requests,
            bytes,
            events: events.dispatched(),
            rebuild_bytes: rebuild,
            fraction,
            ..Progress::at(phase, self.start, now)
        }
    }
}

/// An array's failure that would have lost its data ends the run (looked at now and then,
/// and at the end: the array keeps running meanwhile, with the member that would have failed).
fn data_lost<D: TargetDevice>(names: &[String], block: &BlockLayer<D>) -> Result<(), SimError> {
    match block.devices().zip(names).find_map(|(d, name)| d.data_lost().map(|e| (e, name))) {
        Some((message, name)) => Err(SimError::DataLost { array: name.clone(), message }),
        None => Ok(()),
    }
}

/// Every rebuild that started is done, and one did.
fn rebuilds_done<D: TargetDevice>(block: &BlockLayer<D>) -> bool {
    block.devices().all(|d| d.rebuild_done() != Some(false)) && block.devices().any(|d| d.rebuild_done().is_some())
}

/// What each target, and each device it is made of, held only in volatile memory when the
/// power failed at `at`.
fn power_cut_report<D: TargetDevice>(at: Time, block: &BlockLayer<D>, devices: &[DeviceResult], files: Option<&FileLayer>) -> PowerCutReport {
    let entry = |name: String, v: Volatile, members: Vec<PowerCutDevice>| PowerCutDevice {
        name,
        volatile_bytes: v.bytes,
        promised_bytes: v.promised_bytes,
        broken_flushes: v.broken_flushes,
        members,
    };
    let devices: Vec<PowerCutDevice> = block
        .devices()
        .zip(devices)
        .map(|(d, r)| {
            let members = d.member_volatile().into_iter().map(|(n, v)| entry(n, v, Vec::new())).collect();
            entry(r.name.clone(), d.volatile(), members)
        })
        .collect();
    let file_systems = files.map_or_else(Vec::new, |f| {
        let lost: Vec<_> = block.devices().map(|d| d.lost_ranges()).collect();
        f.power_cut(&lost).into_iter().map(|(t, r)| FsPowerCut { target: devices[t as usize].name.clone(), ..r }).collect()
    });
    PowerCutReport { at_ns: at, devices, page_cache_dirty_bytes: files.map(FileLayer::dirty_bytes), file_systems }
}
