//! Helpers shared by the integration tests: a device wrapper that audits the request
//! protocol, and small builders for drives, hosts and jobs.
#![allow(dead_code)]

use ssdlab_core::device::inplace::{InPlaceConfig, InPlaceMedia};
use ssdlab_core::device::ssd::{precondition, Precondition, Ssd, SsdConfig};
use ssdlab_core::device::{BlockDevice, DeviceCtx};
use ssdlab_core::report::DeviceReport;
use ssdlab_core::io::{DeviceRequest, Op, Tag};
use ssdlab_core::engine::Time;
use ssdlab_core::host::{Host, HostConfig};
use ssdlab_core::progress::Watch;
use ssdlab_core::sim::{simulate_with, RunOptions, Target};
use ssdlab_core::target::TargetDevice;
use ssdlab_core::report::SimResult;
use ssdlab_core::workload::JobSpec;

/// What the auditing wrapper saw crossing the device boundary.
#[derive(Clone, Debug, Default)]
pub struct Audit {
    pub submits: u64,
    pub completions: u64,
    /// Per op index (read, write, trim, flush): requests and bytes submitted / completed.
    pub submitted: [(u64, u64); 4],
    pub completed: [(u64, u64); 4],
    /// Protocol violations, described; empty when the device behaved.
    pub violations: Vec<String>,
    /// Intervals during which at least one request was inside the device, `(start, end)`.
    pub busy: Vec<(Time, Time)>,
    /// Σ over requests of (completion − submission), ns.
    pub latency_sum_ns: u128,
    /// Completion times, for checks on ordering.
    pub last_completion_ns: Time,
}

impl Audit {
    pub fn busy_ns(&self) -> Time {
        self.busy.iter().map(|(s, e)| e - s).sum()
    }

    /// What the kernel's io_ticks rule yields for these busy periods: the jiffy boundaries
    /// crossed while a request was in flight.
    pub fn busy_jiffies(&self, jiffy_ns: Time) -> u64 {
        self.busy.iter().map(|&(s, e)| e / jiffy_ns - s / jiffy_ns).sum()
    }
}

#[derive(Clone, Copy)]
struct Pending {
    op: Op,
    len: u64,
    submitted_at: Time,
}

/// A `BlockDevice` that forwards to `inner` and checks, per tag, that every submitted
/// request is completed exactly once, never synchronously inside `submit`, and that a tag is
/// not reused while in flight. It borrows the device, so the caller keeps it after the run.
pub struct Audited<'a, D: BlockDevice> {
    pub inner: &'a mut D,
    pub audit: &'a mut Audit,
    pending: Vec<Option<Pending>>,
    in_flight: u64,
    busy_since: Time,
    in_submit: bool,
    /// Device reports (one per time-series sample) since the device last did anything.
    idle_reports: std::cell::Cell<u64>,
}

/// Samples without any device activity after which a run counts as hung. A hang with
/// sampling on never ends by itself (each sample schedules the next), so the wrapper stops
/// it from `internal_report`, which the host calls at every sample.
pub const HANG_AFTER_IDLE_SAMPLES: u64 = 100_000;

impl<'a, D: BlockDevice> Audited<'a, D> {
    pub fn new(inner: &'a mut D, audit: &'a mut Audit) -> Self {
        Audited {
            inner,
            audit,
            pending: Vec::new(),
            in_flight: 0,
            busy_since: 0,
            in_submit: false,
            idle_reports: std::cell::Cell::new(0),
        }
    }
}

/// The wrapped context: forwards everything, and reports completions back to the audit.
struct AuditCtx<'c, C> {
    inner: &'c mut C,
    pending: &'c mut Vec<Option<Pending>>,
    audit: &'c mut Audit,
    in_flight: &'c mut u64,
    busy_since: Time,
    in_submit: bool,
}

impl<E, C: DeviceCtx<E>> DeviceCtx<E> for AuditCtx<'_, C> {
    fn now(&self) -> Time {
        self.inner.now()
    }

    fn schedule(&mut self, at: Time, event: E) {
        if at < self.inner.now() {
            self.audit.violations.push(format!("event scheduled in the past: {at} < {}", self.inner.now()));
        }
        self.inner.schedule(at, event);
    }

    fn complete(&mut self, tag: Tag) {
        let now = self.inner.now();
        if self.in_submit {
            self.audit.violations.push(format!("tag {tag} completed synchronously inside submit"));
        }
        match self.pending.get_mut(tag as usize).and_then(Option::take) {
            None => self.audit.violations.push(format!("tag {tag} completed but not in flight at {now}")),
            Some(p) => {
                self.audit.completions += 1;
                let d = &mut self.audit.completed[p.op.index()];
                d.0 += 1;
                d.1 += p.len;
                self.audit.latency_sum_ns += (now - p.submitted_at) as u128;
                self.audit.last_completion_ns = now;
                *self.in_flight -= 1;
                if *self.in_flight == 0 {
                    self.audit.busy.push((self.busy_since, now));
                }
            }
        }
        self.inner.complete(tag);
    }
}

impl<D: BlockDevice> BlockDevice for Audited<'_, D> {
    type Event = D::Event;

    fn capacity(&self) -> u64 {
        self.inner.capacity()
    }

    fn queue_depth(&self) -> u32 {
        self.inner.queue_depth()
    }

    fn submit(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<Self::Event>) {
        let now = ctx.now();
        let i = req.tag as usize;
        if i >= self.pending.len() {
            self.pending.resize(i + 1, None);
        }
        if self.pending[i].is_some() {
            self.audit.violations.push(format!("tag {} submitted while still in flight", req.tag));
        }
        if self.in_flight as u32 >= self.inner.queue_depth() {
            self.audit.violations.push(format!("queue depth {} exceeded", self.inner.queue_depth()));
        }
        if req.op != Op::Flush && req.offset + req.len > self.inner.capacity() {
            self.audit.violations.push(format!("request {req:?} past the device end"));
        }
        self.pending[i] = Some(Pending { op: req.op, len: req.len, submitted_at: now });
        self.audit.submits += 1;
        let s = &mut self.audit.submitted[req.op.index()];
        s.0 += 1;
        s.1 += req.len;
        if self.in_flight == 0 {
            self.busy_since = now;
        }
        self.in_flight += 1;
        self.idle_reports.set(0);
        self.in_submit = true;
        let mut c = AuditCtx {
            inner: ctx,
            pending: &mut self.pending,
            audit: &mut *self.audit,
            in_flight: &mut self.in_flight,
            busy_since: self.busy_since,
            in_submit: true,
        };
        self.inner.submit(req, &mut c);
        self.in_submit = false;
    }

    fn handle(&mut self, event: Self::Event, ctx: &mut impl DeviceCtx<Self::Event>) {
        self.idle_reports.set(0);
        let mut c = AuditCtx {
            inner: ctx,
            pending: &mut self.pending,
            audit: &mut *self.audit,
            in_flight: &mut self.in_flight,
            busy_since: self.busy_since,
            in_submit: false,
        };
        self.inner.handle(event, &mut c);
    }

    fn internal_report(&self, at: Time) -> DeviceReport {
        let idle = self.idle_reports.get() + 1;
        self.idle_reports.set(idle);
        if idle > HANG_AFTER_IDLE_SAMPLES {
            panic!(
                "simulation hung: {idle} samples up to t={at} ns without device activity, \
                 {} requests in the device",
                self.in_flight
            );
        }
        self.inner.internal_report(at)
    }

    fn end_run(&mut self, now: Time) {
        self.inner.end_run(now)
    }

    fn has_internal_work(&self) -> bool {
        self.inner.has_internal_work()
    }

    fn begin_run(&mut self) -> Time {
        self.inner.begin_run()
    }

    fn volatile(&self) -> ssdlab_core::device::Volatile {
        self.inner.volatile()
    }

    fn lost_ranges(&self) -> Option<Vec<ssdlab_core::device::LostRange>> {
        self.inner.lost_ranges()
    }

    fn member_volatile(&self) -> Vec<(String, ssdlab_core::device::Volatile)> {
        self.inner.member_volatile()
    }
}

impl<D: TargetDevice> TargetDevice for Audited<'_, D> {
    fn data_lost(&self) -> Option<String> {
        self.inner.data_lost()
    }
}

impl<D: BlockDevice> Audited<'_, D> {
    /// Requests submitted and not yet completed.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }
}

/// Run `jobs` on `ssd` (borrowed) behind the auditing wrapper. Returns the result and audit.
pub fn run_audited(ssd: &mut Ssd, host: HostConfig, jobs: Vec<JobSpec>, seed: u64, interval: Option<Time>) -> (SimResult, Audit) {
    let name = ssd.config().name.clone();
    run_audited_device(ssd, &name, host, jobs, seed, interval)
}

/// [`run_audited`] for any device.
pub fn run_audited_device<D: TargetDevice>(
    dev: &mut D,
    name: &str,
    host: HostConfig,
    jobs: Vec<JobSpec>,
    seed: u64,
    interval: Option<Time>,
) -> (SimResult, Audit) {
    for j in &jobs {
        j.validate(dev.capacity(), jobs.len()).unwrap_or_else(|e| panic!("job {}: {e}", j.name));
    }
    let mut audit = Audit::default();
    let host = Host::new(host, jobs, seed).expect("host");
    let result = {
        let dev = Audited::new(dev, &mut audit);
        let opts = RunOptions { interval_ns: interval, ..Default::default() };
        simulate_with(seed, host, vec![Target::new(name, dev)], opts, &mut Watch::off()).unwrap_or_else(|e| panic!("{e}"))
    };
    (result, audit)
}

/// A 2008 7200 rpm SATA disk of 1 TB (the core's generic disk, shaped after the Barracuda
/// 7200.11): 8 surfaces, 16 zones, 8.5 ms average seek, NCQ 32.
pub fn barracuda() -> ssdlab_core::device::hdd::HddConfig {
    ssdlab_core::device::hdd::HddConfig::generic()
}

/// A small 3D XPoint drive: in-place media, 4 KiB units on 7 channels x 4 dies, no buffer.
pub fn xpoint() -> InPlaceConfig {
    let generic = SsdConfig::generic(1);
    let cfg = InPlaceConfig {
        name: "xpoint-test".into(),
        capacity_bytes: generic.capacity_bytes,
        interface: generic.interface,
        queue_depth: generic.queue_depth,
        controller: generic.controller,
        media: InPlaceMedia {
            channels: 7,
            dies_per_channel: 4,
            unit_bytes: 4096,
            read_ns: 8_000,
            write_ns: 40_000,
            channel_bytes_per_s: generic.nand.channel_bytes_per_s,
        },
        thermal: None,
    };
    cfg.validate().expect("valid");
    cfg
}

pub fn fresh(cfg: SsdConfig, seed: u64) -> Ssd {
    Ssd::new(cfg, seed).expect("valid drive")
}

pub fn preconditioned(cfg: SsdConfig, p: Precondition, seed: u64) -> Ssd {
    let mut ssd = fresh(cfg, seed);
    precondition(&mut ssd, p, seed);
    ssd
}

/// A host with a fixed software overhead per I/O.
pub fn host_with_overhead(overhead_ns: u64, cv: f64, hz: u32) -> HostConfig {
    HostConfig { memory: None, name: "test".into(), io_overhead_ns: overhead_ns, io_overhead_cv: cv, submit_ns: None, reap_ns: None, hz }
}

/// Σ over all jobs and directions of measured bytes: [read, write, trim].
pub fn job_bytes(r: &SimResult) -> [u64; 3] {
    let mut b = [0; 3];
    for j in &r.jobs {
        b[0] += j.read.bytes;
        b[1] += j.write.bytes;
        b[2] += j.trim.bytes;
    }
    b
}

/// Σ of measured completion latencies (ns) over all jobs and all four directions.
pub fn job_clat_sum(r: &SimResult) -> f64 {
    r.jobs.iter().map(|j| j.read.clat.sum() as f64 + j.write.clat.sum() as f64 + j.trim.clat.sum() as f64 + j.sync.clat.sum() as f64).sum()
}

pub fn job_ios(r: &SimResult) -> u64 {
    r.jobs.iter().map(|j| j.read.ios + j.write.ios + j.trim.ios + j.sync.ios).sum()
}

/// Proptest settings for this crate's tests: `cases` cases from a fixed seed, so CI runs the
/// same cases every time (set PROPTEST_RNG_SEED to explore others, PROPTEST_CASES to run
/// more), and no regression files written next to the sources.
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    use proptest::test_runner::{Config, RngSeed};
    let mut c = Config { cases, max_shrink_iters: 1_000, failure_persistence: None, ..Config::default() };
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        c.rng_seed = RngSeed::Fixed(0x0055_D1AB);
    }
    if let Some(n) = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()) {
        c.cases = n;
    }
    c
}

/// A buffered job running file program `ops` on file set 0, `loops` times (None: until its
/// picks run out).
pub fn file_program(ops: Vec<ssdlab_core::workload::files::FileOp>, loops: Option<u64>) -> JobSpec {
    use ssdlab_core::workload::files::{FileAccess, FileProgram, FileService};
    let mut j = JobSpec::simple("p", ssdlab_core::workload::RwMode::Write, 4096, 1, 1 << 20);
    j.io_limit = u64::MAX;
    j.files = Some(FileAccess {
        set: 0,
        direct: false,
        service: FileService::Roundrobin,
        end_fsync: false,
        datasync: false,
        unlink: false,
        fadvise: None,
        program: Some(FileProgram { ops, loops, stop_on_error: false, producers: Vec::new(), idle_ns: 0, on_no_file: Default::default() }),
        engine: None,
        client: None,
    });
    j
}
