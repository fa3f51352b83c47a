//! A fluid simulation of transfers over the network: flows of so many bytes, each sent at its
//! max-min fair rate ([`super::maxmin`]) until it is done.
//!
//! Rates change only when the set of flows (or a resource's capacity) changes, so between two
//! such events every flow moves at a constant rate and its completion time is known. The
//! simulator keeps those times ordered and moves from one event to the next: its cost grows
//! with the number of active flows and of events, never with the bytes moved.
//!
//! Time is integer nanoseconds; bytes left are f64. A flow's completion time is its bytes left
//! over its rate, rounded **up** to the next whole nanosecond from the instant its rate was
//! set, so a completion never lands in the past; the sliver a flow would move in that last
//! part of a nanosecond is not sent (a completing flow moves exactly its bytes).

use crate::engine::{Time, NS_PER_S};
use crate::error::ConfigError;

use super::maxmin::{max_min_rates, LEVEL_TOLERANCE};

/// A resource's index in its [`FlowNet`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceId(pub usize);

/// A flow's name in its [`FlowNet`]: given in order, never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u64);

/// A share of load at or above this part of its capacity counts a resource as saturated
/// (floating-point sums of the flows' rates).
const SATURATED: f64 = 1.0 - 1e-9;

/// The shortcut of [`FlowNet::refresh`] holds when every shared resource's load stays under
/// this part of its capacity: far enough under that progressive filling never finds it the
/// tightest, whatever the rounding of its sums (a thousand times [`LEVEL_TOLERANCE`]'s margin
/// and a thousand times the error of a sum of a million rates).
const UNSATURATED: f64 = 1.0 - 2e-9;

/// Distinct own-bottleneck rates the shortcut keeps apart; with more, it recomputes in full
/// (assumed: a server's clients come in a few classes, so a handful of values).
const MAX_LEVELS: usize = 16;

/// The rate a TCP flow's window allows: at most a window of bytes per round trip
/// (min(rwnd, cwnd) / RTT), bytes per second. A zero RTT means no limit.
pub fn window_cap(window_bytes: u64, rtt_ns: Time) -> f64 {
    if rtt_ns == 0 {
        return f64::INFINITY;
    }
    window_bytes as f64 * NS_PER_S as f64 / rtt_ns as f64
}

#[derive(Clone, Debug)]
struct Resource {
    name: String,
    capacity: f64,
    /// Sum of the rates of the flows crossing it, as last computed.
    load: f64,
    /// Flows crossing it.
    users: u32,
    carried: f64,
    saturated_ns: Time,
}

#[derive(Clone, Debug)]
struct Flow {
    id: FlowId,
    path: Vec<usize>,
    bytes: u64,
    left: f64,
    cap: f64,
    rate: f64,
    done_at: Time,
    /// Bytes left at which the owner asked to hear of the flow ([`FlowNet::set_mark`]), and
    /// when that comes at the present rate.
    mark: Option<f64>,
    mark_at: Time,
}

impl Flow {
    /// When the flow next has something to say: its mark, else its completion.
    fn next_at(&self) -> Time {
        if self.mark.is_some() { self.mark_at.min(self.done_at) } else { self.done_at }
    }

    /// Its completion and mark times, from `now` at its present rate.
    fn time(&mut self, now: Time) {
        self.done_at = now.saturating_add(ns_to_move(self.left, self.rate));
        if let Some(m) = self.mark {
            self.mark_at = now.saturating_add(ns_to_move(self.left - m, self.rate));
        }
    }
}

/// Progressive filling's state over the resources two or more flows share: what each has
/// left, how many of its flows are not yet fixed, whether it is full at this round's level,
/// and the flows not yet fixed, in the flows' order.
#[derive(Clone, Debug, Default)]
struct Filling {
    shared: Vec<usize>,
    remaining: Vec<f64>,
    unfixed_on: Vec<u32>,
    saturated: Vec<bool>,
    pending: Vec<u32>,
}

/// What one resource carried over the run so far.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceUsage {
    pub name: String,
    /// Capacity at the end, bytes per second.
    pub capacity_bytes_per_s: f64,
    /// Bytes that crossed it.
    pub bytes: f64,
    /// Time it was saturated (its flows' rates summed to its capacity), ns.
    pub saturated_ns: Time,
    /// Bytes carried over what its capacity could have carried in the elapsed time.
    pub utilisation: f64,
}

/// Resources, the flows over them and the fluid simulation's clock.
#[derive(Clone, Debug, Default)]
pub struct FlowNet {
    resources: Vec<Resource>,
    /// Active flows in id order (ids only grow, so a new flow goes last): every per-flow sum
    /// runs in this order, the order of the floating-point results.
    flows: Vec<Flow>,
    now: Time,
    next_id: u64,
    /// The flow set or a capacity changed since rates were last computed.
    dirty: bool,
    /// The earliest completion of the active flows, as of the last refresh.
    earliest: Option<Time>,
    /// Refreshes that ran progressive filling in full (the rest took the shortcut).
    full_refreshes: u64,
    /// Flows whose mark was reached, not yet taken ([`FlowNet::take_marks`]).
    marked: Vec<FlowId>,
    /// The shortcut's distinct rates (reused, not allocated per refresh).
    levels: Vec<f64>,
    /// Each flow's own bottleneck, as of the last refresh, in the flows' order (reused).
    own: Vec<f64>,
    /// Progressive filling's working state (reused, not allocated per refresh).
    filling: Filling,
    delivered: f64,
    completed_bytes: u128,
}

impl FlowNet {
    pub fn new() -> Self {
        Self::default()
    }

    /// The simulation's present, ns.
    pub fn now(&self) -> Time {
        self.now
    }

    /// A resource of `bytes_per_s` (a NIC link's goodput, a client's line, a disk-side cap).
    pub fn add_resource(&mut self, name: &str, bytes_per_s: f64) -> Result<ResourceId, ConfigError> {
        check_capacity(name, bytes_per_s)?;
        self.resources.push(Resource { name: name.to_string(), capacity: bytes_per_s, load: 0.0, users: 0, carried: 0.0, saturated_ns: 0 });
        Ok(ResourceId(self.resources.len() - 1))
    }

    /// Change a resource's capacity from now on (a disk-side cap that moved).
    pub fn set_capacity(&mut self, r: ResourceId, bytes_per_s: f64) -> Result<(), ConfigError> {
        let res = self.resources.get(r.0).ok_or_else(|| ConfigError::new("resource", format!("no resource {}", r.0)))?;
        check_capacity(&res.name, bytes_per_s)?;
        self.resources[r.0].capacity = bytes_per_s;
        self.dirty = true;
        Ok(())
    }

    pub fn capacity(&self, r: ResourceId) -> f64 {
        self.resources[r.0].capacity
    }

    /// Start a flow of `bytes` now over `resources` (repeats count once), at most `cap` bytes
    /// per second (infinite for no cap of its own; see [`window_cap`]).
    pub fn add_flow(&mut self, resources: &[ResourceId], bytes: u64, cap: f64) -> Result<FlowId, ConfigError> {
        if cap.is_nan() || cap <= 0.0 {
            return Err(ConfigError::new("flow.cap", format!("must be a positive rate in bytes per second (infinite for none), got {cap}")));
        }
        let mut path: Vec<usize> = Vec::with_capacity(resources.len());
        for r in resources {
            if r.0 >= self.resources.len() {
                return Err(ConfigError::new("flow.resources", format!("no resource {} (the network has {})", r.0, self.resources.len())));
            }
            if !path.contains(&r.0) {
                path.push(r.0);
            }
        }
        if path.is_empty() && cap.is_infinite() {
            return Err(ConfigError::new("flow.cap", "a flow that crosses no resource needs a finite cap".into()));
        }
        for &r in &path {
            self.resources[r].users += 1;
        }
        let id = FlowId(self.next_id);
        self.next_id += 1;
        self.flows.push(Flow { id, path, bytes, left: bytes as f64, cap, rate: 0.0, done_at: self.now, mark: None, mark_at: 0 });
        self.dirty = true;
        Ok(id)
    }

    /// Stop a flow now (an aborted transfer); its bytes left, if it was active.
    pub fn remove_flow(&mut self, id: FlowId) -> Option<f64> {
        let i = self.position(id)?;
        let f = self.flows.remove(i);
        for &r in &f.path {
            self.resources[r].users -= 1;
        }
        self.dirty = true;
        Some(f.left)
    }

    /// Give an active flow `bytes` more to move (a socket's sender queueing more behind what it
    /// is sending): its rate stays, its completion moves. False if the flow is not active.
    pub fn extend(&mut self, id: FlowId, bytes: u64) -> bool {
        let Some(i) = self.position(id) else { return false };
        let f = &mut self.flows[i];
        f.bytes += bytes;
        f.left += bytes as f64;
        self.retime(i);
        true
    }

    /// Ask to hear of flow `id` when it has `left` bytes or fewer still to move (a blocked
    /// sender's socket buffer with room again): it is named by [`FlowNet::take_marks`] once
    /// the clock passes that point, and the mark is then gone. Nothing is asked if the flow
    /// has no more than that left already; false then, or if the flow is not active.
    pub fn set_mark(&mut self, id: FlowId, left: f64) -> bool {
        let Some(i) = self.position(id) else { return false };
        if self.flows[i].left <= left {
            return false;
        }
        self.flows[i].mark = Some(left);
        self.retime(i);
        true
    }

    /// Whether marks were reached that are not yet taken.
    pub fn marks_pending(&self) -> bool {
        !self.marked.is_empty()
    }

    /// The flows whose marks were reached, in the order they were.
    pub fn take_marks(&mut self) -> Vec<FlowId> {
        std::mem::take(&mut self.marked)
    }

    /// Flow `i`'s bytes or mark changed, not its rate: only its own times move (unless the
    /// rates are to be computed again anyway).
    fn retime(&mut self, i: usize) {
        if self.dirty {
            return;
        }
        let now = self.now;
        self.flows[i].time(now);
        self.earliest = self.flows.iter().map(Flow::next_at).min();
    }

    fn position(&self, id: FlowId) -> Option<usize> {
        self.flows.binary_search_by_key(&id, |f| f.id).ok()
    }

    /// Flows under way.
    pub fn active(&self) -> usize {
        self.flows.len()
    }

    /// A flow's current rate, bytes per second.
    pub fn rate(&mut self, id: FlowId) -> Option<f64> {
        self.refresh();
        self.position(id).map(|i| self.flows[i].rate)
    }

    /// A flow's bytes still to move, as of now.
    pub fn bytes_left(&self, id: FlowId) -> Option<f64> {
        self.position(id).map(|i| self.flows[i].left)
    }

    /// Active flows' ids, paths (resource indices), caps and current rates, in id order.
    pub fn snapshot(&mut self) -> Vec<(FlowId, Vec<usize>, f64, f64)> {
        self.refresh();
        self.flows.iter().map(|f| (f.id, f.path.clone(), f.cap, f.rate)).collect()
    }

    /// The active flows' rates as progressive filling from scratch gives them
    /// ([`max_min_rates`]), in id order: the reference the rates in use must equal.
    pub fn reference_rates(&self) -> Vec<f64> {
        let capacity: Vec<f64> = self.resources.iter().map(|r| r.capacity).collect();
        let paths: Vec<&[usize]> = self.flows.iter().map(|f| f.path.as_slice()).collect();
        let caps: Vec<f64> = self.flows.iter().map(|f| f.cap).collect();
        max_min_rates(&capacity, &paths, &caps)
    }

    /// How many rate computations ran progressive filling in full so far (the others found
    /// every flow at its own bottleneck; see [`FlowNet::refresh`]).
    pub fn full_refreshes(&self) -> u64 {
        self.full_refreshes
    }

    /// When the next active flow completes, if any.
    pub fn next_completion(&mut self) -> Option<Time> {
        self.refresh();
        self.earliest
    }

    /// Move the clock to `t` (not before now), completing every flow due by then in time
    /// order; the flows completed, in the order they completed.
    pub fn advance_to(&mut self, t: Time) -> Vec<FlowId> {
        debug_assert!(t >= self.now, "the flow network's clock goes back from {} to {t}", self.now);
        let t = t.max(self.now);
        let mut done = Vec::new();
        loop {
            self.refresh();
            let Some(at) = self.earliest else { break };
            if at > t {
                break;
            }
            self.integrate(at);
            // Marks reached now, in id order: heard of, and gone; the rates stay.
            let mut marks = false;
            for f in &mut self.flows {
                if f.mark.is_some() && f.mark_at == at && f.done_at > at {
                    f.mark = None;
                    self.marked.push(f.id);
                    marks = true;
                }
            }
            if marks && self.flows.iter().all(|f| f.done_at != at) {
                self.earliest = self.flows.iter().map(Flow::next_at).min();
                continue;
            }
            // Ties complete in id order (the flows' order); the rest keep theirs.
            let mut kept = 0;
            for i in 0..self.flows.len() {
                if self.flows[i].done_at == at {
                    let f = &self.flows[i];
                    // The rounding up of its completion leaves at most a sliver: it moves now.
                    for &r in &f.path {
                        let res = &mut self.resources[r];
                        res.carried += f.left;
                        res.users -= 1;
                    }
                    self.delivered += f.left;
                    self.completed_bytes += f.bytes as u128;
                    done.push(f.id);
                } else {
                    self.flows.swap(kept, i);
                    kept += 1;
                }
            }
            self.flows.truncate(kept);
            self.dirty = true;
        }
        self.integrate(t);
        done
    }

    /// Bytes moved by all flows so far (completed or not).
    pub fn delivered_bytes(&self) -> f64 {
        self.delivered
    }

    /// Bytes of the flows completed so far.
    pub fn completed_bytes(&self) -> u128 {
        self.completed_bytes
    }

    /// Each resource's carried bytes, saturated time and utilisation over `[0, now]`.
    pub fn usage(&self) -> Vec<ResourceUsage> {
        let elapsed = self.now as f64 / NS_PER_S as f64;
        self.resources
            .iter()
            .map(|r| ResourceUsage {
                name: r.name.clone(),
                capacity_bytes_per_s: r.capacity,
                bytes: r.carried,
                saturated_ns: r.saturated_ns,
                utilisation: if elapsed > 0.0 { r.carried / (r.capacity * elapsed) } else { 0.0 },
            })
            .collect()
    }

    /// The resource saturated longest so far (the first such on ties), if any was ever saturated:
    /// what bounded the run.
    pub fn bottleneck(&self) -> Option<ResourceUsage> {
        let u = self.usage();
        let best = u.iter().enumerate().filter(|(_, r)| r.saturated_ns > 0).max_by(|a, b| a.1.saturated_ns.cmp(&b.1.saturated_ns).then(b.0.cmp(&a.0)))?;
        Some(best.1.clone())
    }

    /// Move every flow on at its rate from now to `to`.
    fn integrate(&mut self, to: Time) {
        if to <= self.now {
            return;
        }
        let dt_ns = to - self.now;
        let dt = dt_ns as f64 / NS_PER_S as f64;
        let resources = &mut self.resources;
        let mut delivered = 0.0;
        for f in &mut self.flows {
            let moved = (f.rate * dt).min(f.left);
            f.left -= moved;
            for &r in &f.path {
                resources[r].carried += moved;
            }
            delivered += moved;
        }
        self.delivered += delivered;
        for r in &mut self.resources {
            if r.load >= r.capacity * SATURATED {
                r.saturated_ns += dt_ns;
            }
        }
        self.now = to;
    }

    /// Recompute the rates, loads and completion times if the flows or capacities changed.
    ///
    /// The shortcut, exact: give each flow its own bottleneck's rate (the least of its cap and
    /// the capacities of the resources it alone crosses). When every resource two or more
    /// flows share stays clearly under its capacity at those rates, and no two distinct such
    /// rates are within progressive filling's tolerance of each other, progressive filling
    /// fixes every flow at exactly that rate (each round's level is the least rate left, the
    /// shared resources are never the tightest), and the loads are the same sums in the same
    /// order: the result is [`max_min_rates`]'s bit for bit. Otherwise it runs in full.
    fn refresh(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        for r in &mut self.resources {
            r.load = 0.0;
        }
        self.levels.clear();
        self.own.clear();
        let mut fits = true;
        for f in &mut self.flows {
            let mut own = f.cap;
            for &r in &f.path {
                let res = &self.resources[r];
                if res.users == 1 {
                    own = own.min(res.capacity);
                }
            }
            self.own.push(own);
            f.rate = own;
            for &r in &f.path {
                self.resources[r].load += own;
            }
            if fits && !self.levels.contains(&own) {
                fits = self.levels.len() < MAX_LEVELS;
                self.levels.push(own);
            }
        }
        fits = fits && self.resources.iter().all(|r| r.users < 2 || r.load <= r.capacity * UNSATURATED);
        if fits {
            self.levels.sort_unstable_by(f64::total_cmp);
            fits = self.levels.iter().all(|l| l.is_finite()) && self.levels.windows(2).all(|w| w[1] > w[0] * (1.0 + 4.0 * LEVEL_TOLERANCE));
        }
        if !fits {
            self.full_refreshes += 1;
            self.fill();
            for r in &mut self.resources {
                r.load = 0.0;
            }
            for f in &self.flows {
                for &r in &f.path {
                    self.resources[r].load += f.rate;
                }
            }
        }
        let mut earliest = None;
        let now = self.now;
        for f in &mut self.flows {
            f.time(now);
            let at = f.next_at();
            earliest = Some(earliest.map_or(at, |e: Time| e.min(at)));
        }
        self.earliest = earliest;
    }

    /// Progressive filling ([`max_min_rates`]) over the resources two or more flows share,
    /// each flow capped at its own bottleneck (`self.own`: its cap and the resources it alone
    /// crosses). The same rates bit for bit: a resource of one flow offers that flow its whole
    /// capacity at every round until the flow is fixed, which is what the own bottleneck
    /// stands for; its sums touch no other flow. A round then costs the flows not yet fixed
    /// and the shared resources, not every resource of the network (a server's clients' lines).
    fn fill(&mut self) {
        let Filling { shared, remaining, unfixed_on, saturated, pending } = &mut self.filling;
        let resources = &self.resources;
        shared.clear();
        shared.extend((0..resources.len()).filter(|&r| resources[r].users >= 2));
        remaining.clear();
        remaining.extend(resources.iter().map(|r| r.capacity));
        unfixed_on.clear();
        unfixed_on.extend(resources.iter().map(|r| r.users));
        saturated.clear();
        saturated.resize(resources.len(), false);
        pending.clear();
        pending.extend(0..self.flows.len() as u32);
        let (flows, own) = (&mut self.flows, &self.own);
        while !pending.is_empty() {
            let mut level = f64::INFINITY;
            for &r in shared.iter() {
                if unfixed_on[r] > 0 {
                    level = level.min(remaining[r].max(0.0) / unfixed_on[r] as f64);
                }
            }
            for &f in pending.iter() {
                level = level.min(own[f as usize]);
            }
            debug_assert!(level.is_finite(), "a flow with no resource and no cap");
            let near = level * (1.0 + LEVEL_TOLERANCE);
            for &r in shared.iter() {
                saturated[r] = unfixed_on[r] > 0 && remaining[r].max(0.0) / unfixed_on[r] as f64 <= near;
            }
            // Fixed this round: the flows at their own bottleneck and those crossing a shared
            // resource now full; should rounding leave none, all the rest (as progressive
            // filling does). The test reads only what the round began with.
            let at_level = |flows: &[Flow], f: u32| own[f as usize] <= near || flows[f as usize].path.iter().any(|&r| saturated[r]);
            let any = pending.iter().any(|&f| at_level(flows, f));
            let mut kept = 0;
            for i in 0..pending.len() {
                let f = pending[i];
                if any && !at_level(flows, f) {
                    pending[kept] = f;
                    kept += 1;
                    continue;
                }
                // Every flow not yet fixed has its own bottleneck at or above the level.
                let x = level;
                let flow = &mut flows[f as usize];
                flow.rate = x;
                for &r in &flow.path {
                    if resources[r].users >= 2 {
                        remaining[r] -= x;
                        unfixed_on[r] -= 1;
                    }
                }
            }
            pending.truncate(kept);
        }
    }
}

/// Whole nanoseconds to move `left` bytes at `rate`, rounded up (0 for nothing left).
fn ns_to_move(left: f64, rate: f64) -> Time {
    if left <= 0.0 {
        return 0;
    }
    let ns = left / rate * NS_PER_S as f64;
    if ns >= Time::MAX as f64 {
        return Time::MAX;
    }
    // The ceiling by hand: `f64::ceil` is a call into libm on the baseline x86-64 target, once
    // per flow at every change of the flow set. The truncation is exact below 2^53 and every
    // larger f64 is whole, so this is the ceiling bit for bit.
    let whole = ns as Time;
    let up = if (whole as f64) < ns { whole + 1 } else { whole };
    up.max(1)
}

fn check_capacity(name: &str, bytes_per_s: f64) -> Result<(), ConfigError> {
    if bytes_per_s.is_finite() && bytes_per_s > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::new(name, format!("capacity must be a positive, finite rate in bytes per second, got {bytes_per_s}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-made ceiling is `f64::ceil`'s, bit for bit, over rates and sizes from a byte
    /// at 100 Gb/s to a terabyte at a byte a second, and at the edges.
    #[test]
    fn ns_to_move_is_the_ceiling() {
        let reference = |left: f64, rate: f64| -> Time {
            if left <= 0.0 {
                return 0;
            }
            let ns = (left / rate * NS_PER_S as f64).ceil();
            if ns >= Time::MAX as f64 {
                Time::MAX
            } else {
                (ns as Time).max(1)
            }
        };
        let mut x = 7u64;
        for _ in 0..200_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let left = 2f64.powf((x >> 40) as f64 / (1u64 << 24) as f64 * 40.0) * (1.0 + (x & 0xFFFF) as f64 / 65536.0);
            let rate = 2f64.powf((x >> 16 & 0xFFFFFF) as f64 / (1u64 << 24) as f64 * 34.0);
            assert_eq!(ns_to_move(left, rate), reference(left, rate), "left {left}, rate {rate}");
        }
        for (left, rate) in [(1.0, f64::INFINITY), (1e30, 1e-30), (0.5, 1e9), (1.0, 1e9), (4096.0, 3.0), (0.0, 1.0), (-1.0, 1.0)] {
            assert_eq!(ns_to_move(left, rate), reference(left, rate), "left {left}, rate {rate}");
        }
    }

    /// One flow alone on a resource: done at bytes / capacity, rounded up to the nanosecond.
    #[test]
    fn one_flow_takes_its_bytes_over_the_capacity() {
        let mut net = FlowNet::new();
        let r = net.add_resource("link", 3.0).unwrap();
        let f = net.add_flow(&[r], 1, f64::INFINITY).unwrap();
        assert_eq!(net.next_completion(), Some(333_333_334));
        assert!(net.advance_to(333_333_333).is_empty());
        assert_eq!(net.advance_to(333_333_334), vec![f]);
        assert_eq!(net.delivered_bytes(), 1.0);
        assert_eq!(net.usage()[0].bytes, 1.0);
    }

    /// Two flows share a link; when the short one ends, the long one speeds up.
    #[test]
    fn a_completion_frees_capacity() {
        let mut net = FlowNet::new();
        let r = net.add_resource("link", 100.0).unwrap();
        let a = net.add_flow(&[r], 50, f64::INFINITY).unwrap();
        let b = net.add_flow(&[r], 150, f64::INFINITY).unwrap();
        // 50 each per second: a is done at 1 s, with b's 100 left at 100/s: done at 2 s.
        assert_eq!(net.next_completion(), Some(NS_PER_S));
        assert_eq!(net.advance_to(NS_PER_S), vec![a]);
        assert_eq!(net.rate(b), Some(100.0));
        assert_eq!(net.advance_to(5 * NS_PER_S), vec![b]);
        assert_eq!(net.usage()[0].saturated_ns, 2 * NS_PER_S);
        assert!((net.usage()[0].utilisation - 200.0 / 500.0).abs() < 1e-12);
    }

    /// A mark is heard when the flow has that much left, at its rate, and the flow goes on;
    /// bytes added later move its end by themselves over the rate. One flow on a link of
    /// 1,000 B/s with 1,000 bytes, marked at 400 left: heard at 0.6 s; 500 more bytes then
    /// end it at 0.6 + 900 / 1,000 s.
    #[test]
    fn a_mark_is_heard_at_its_bytes_and_more_bytes_move_the_end() {
        let mut net = FlowNet::new();
        let r = net.add_resource("link", 1_000.0).unwrap();
        let f = net.add_flow(&[r], 1_000, f64::INFINITY).unwrap();
        assert!(!net.set_mark(f, 1_000.0), "nothing to wait for: it has no more than that left");
        assert!(net.set_mark(f, 400.0));
        assert_eq!(net.next_completion(), Some(600_000_000));
        assert!(net.advance_to(600_000_000).is_empty());
        assert_eq!(net.take_marks(), vec![f]);
        assert!(net.take_marks().is_empty(), "a mark is heard once");
        assert!(net.extend(f, 500));
        assert_eq!(net.next_completion(), Some(1_500_000_000));
        assert_eq!(net.advance_to(2 * NS_PER_S), vec![f]);
        assert_eq!(net.delivered_bytes(), 1_500.0);
        assert_eq!(net.completed_bytes(), 1_500);
        assert!(!net.extend(f, 1), "a flow done takes no more");
    }

    /// A mark on one of two flows sharing a link is timed at the rate of the moment, and
    /// moves when the other flow ends and its rate doubles.
    #[test]
    fn a_mark_follows_its_flows_rate() {
        let mut net = FlowNet::new();
        let r = net.add_resource("link", 100.0).unwrap();
        let short = net.add_flow(&[r], 50, f64::INFINITY).unwrap();
        let long = net.add_flow(&[r], 300, f64::INFINITY).unwrap();
        // 50 B/s each: the short one ends at 1 s with the long one at 250 left; then 100 B/s,
        // so its mark at 100 left comes 1.5 s later.
        assert!(net.set_mark(long, 100.0));
        assert_eq!(net.advance_to(NS_PER_S), vec![short]);
        assert_eq!(net.next_completion(), Some(2_500_000_000));
        net.advance_to(2_500_000_000);
        assert_eq!(net.take_marks(), vec![long]);
        assert_eq!(net.bytes_left(long), Some(100.0));
    }

    #[test]
    fn bad_flows_and_resources_are_refused() {
        let mut net = FlowNet::new();
        assert!(net.add_resource("line", 0.0).is_err());
        assert!(net.add_resource("line", f64::INFINITY).is_err());
        let r = net.add_resource("line", 1.0).unwrap();
        assert_eq!(net.add_flow(&[ResourceId(7)], 1, 1.0).unwrap_err().key, "flow.resources");
        assert_eq!(net.add_flow(&[r], 1, 0.0).unwrap_err().key, "flow.cap");
        assert_eq!(net.add_flow(&[], 1, f64::INFINITY).unwrap_err().key, "flow.cap");
        assert_eq!(window_cap(65_535, 100_000_000), 655_350.0);
    }
}
