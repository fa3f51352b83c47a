//! The flow model's invariants over random networks and random arrivals (issue 30): no
//! resource over its capacity; every flow bottlenecked somewhere (at its own cap, or on a
//! saturated resource where no flow gets more); bytes sent = bytes received; completions never
//! in the past; the same inputs give the same results, bit for bit.

use proptest::prelude::*;
use ssdlab_core::net::{max_min_rates, FlowId, FlowNet, ResourceId};

const TOL: f64 = 1e-9;

/// A flow to start: after `gap` ns, over the resources whose bits are set in `mask`, of
/// `bytes`, capped at `cap` (0 for none); `abort` removes the oldest active flow instead.
#[derive(Clone, Debug)]
struct Op {
    gap: u64,
    mask: u8,
    bytes: u64,
    cap: f64,
    abort: bool,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        (0u64..3_000_000_000, 0u8..=255, 1u64..50_000_000, prop_oneof![Just(0.0), 1e3f64..5e7], prop::bool::weighted(0.1))
            .prop_map(|(gap, mask, bytes, cap, abort)| Op { gap, mask, bytes, cap, abort }),
        1..40,
    )
}

fn capacities() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(1e4f64..2e8, 1..7)
}

/// Check the allocation now: loads within capacities, every flow bottlenecked.
fn check_allocation(net: &mut FlowNet, capacity: &[f64]) -> Result<(), TestCaseError> {
    let flows = net.snapshot();
    same_as_reference(net, &flows)?;
    let mut load = vec![0.0; capacity.len()];
    let mut top = vec![0.0f64; capacity.len()];
    for (_, path, _, rate) in &flows {
        prop_assert!(*rate > 0.0);
        for &r in path {
            load[r] += rate;
            top[r] = top[r].max(*rate);
        }
    }
    for r in 0..capacity.len() {
        prop_assert!(load[r] <= capacity[r] * (1.0 + TOL), "resource {} carries {} over its {}", r, load[r], capacity[r]);
    }
    for (id, path, cap, rate) in &flows {
        let at_cap = *rate >= cap * (1.0 - TOL);
        let bottleneck = path.iter().any(|&r| load[r] >= capacity[r] * (1.0 - TOL) && *rate >= top[r] * (1.0 - TOL));
        prop_assert!(at_cap || bottleneck, "flow {:?} at {} (cap {}) has no bottleneck on {:?}", id, rate, cap, path);
    }
    Ok(())
}

/// The rates in use are progressive filling's from scratch, bit for bit, whether they came
/// from the shortcut or not.
fn same_as_reference(net: &FlowNet, flows: &[(FlowId, Vec<usize>, f64, f64)]) -> Result<(), TestCaseError> {
    let want = net.reference_rates();
    prop_assert_eq!(want.len(), flows.len());
    for (f, w) in flows.iter().zip(&want) {
        prop_assert!(f.3.to_bits() == w.to_bits(), "flow {:?} at {} where progressive filling gives {}", f.0, f.3, w);
    }
    Ok(())
}

/// Everything a run produced, for comparing two runs.
#[derive(Debug, PartialEq)]
struct Outcome {
    completions: Vec<(u64, FlowId)>,
    carried: Vec<(f64, u64)>,
    delivered: f64,
}

/// Run the ops, then everything to completion, checking invariants at every event.
fn run(capacity: &[f64], ops: &[Op], check: bool) -> Result<Outcome, TestCaseError> {
    let mut net = FlowNet::new();
    let res: Vec<ResourceId> = capacity.iter().enumerate().map(|(i, &c)| net.add_resource(&format!("r{i}"), c).unwrap()).collect();
    let mut bytes_of = std::collections::BTreeMap::new();
    let mut paths = std::collections::BTreeMap::new();
    let mut completions = Vec::new();
    let mut removed_moved = 0.0;
    let mut removed: Vec<(Vec<usize>, f64)> = Vec::new();
    // The integral of the flows' rates over time, kept outside the simulator, and the most
    // its rounding of completions up to the nanosecond can add to it.
    let (mut rate_integral, mut rounding) = (0.0, 0.0);
    let step = |net: &mut FlowNet, to: u64, completions: &mut Vec<(u64, FlowId)>, rate_integral: &mut f64, rounding: &mut f64| -> Result<(), TestCaseError> {
        loop {
            if check {
                check_allocation(net, capacity)?;
            }
            let now = net.now();
            let next = net.next_completion();
            if let Some(n) = next {
                prop_assert!(n >= now, "a completion at {} before the present {}", n, now);
            }
            let until = next.map_or(to, |n| n.min(to));
            let rates: f64 = net.snapshot().iter().map(|f| f.3).sum();
            *rate_integral += rates * (until - now) as f64 / 1e9;
            let done = net.advance_to(until);
            for id in done {
                *rounding += net_rate_bound(capacity) / 1e9;
                completions.push((until, id));
            }
            if until == to {
                return Ok(());
            }
        }
    };
    let mut t = 0;
    for op in ops {
        t += op.gap;
        step(&mut net, t, &mut completions, &mut rate_integral, &mut rounding)?;
        if op.abort {
            if let Some((id, path, _, _)) = net.snapshot().first().cloned() {
                let left = net.remove_flow(id).unwrap();
                removed_moved += bytes_of[&id] as f64 - left;
                removed.push((path, bytes_of[&id] as f64 - left));
                bytes_of.remove(&id);
            }
            continue;
        }
        let path: Vec<ResourceId> = res.iter().enumerate().filter(|(i, _)| op.mask >> i & 1 == 1).map(|(_, &r)| r).collect();
        let cap = if op.cap > 0.0 { op.cap } else if path.is_empty() { 1e6 } else { f64::INFINITY };
        let id = net.add_flow(&path, op.bytes, cap).unwrap();
        bytes_of.insert(id, op.bytes);
        paths.insert(id, path.iter().map(|r| r.0).collect::<Vec<_>>());
    }
    // Run to the end.
    while let Some(n) = net.next_completion() {
        step(&mut net, n, &mut completions, &mut rate_integral, &mut rounding)?;
    }
    prop_assert_eq!(net.active(), 0);
    // Bytes sent = bytes received: every completed flow's bytes, plus what aborted flows moved,
    // is what the simulator delivered, is the integral of the rates (up to its rounding).
    let completed: f64 = completions.iter().map(|(_, id)| bytes_of[id] as f64).sum();
    prop_assert_eq!(net.completed_bytes() as f64, completed);
    let sent = completed + removed_moved;
    prop_assert!((net.delivered_bytes() - sent).abs() <= 1e-9 * sent + 1e-6, "delivered {} of {} sent", net.delivered_bytes(), sent);
    prop_assert!(rate_integral >= sent * (1.0 - 1e-9) - 1e-6 && rate_integral <= sent * (1.0 + 1e-9) + rounding + 1e-6, "rates integrate to {}, flows sent {} (rounding up to {})", rate_integral, sent, rounding);
    // Each resource carried exactly the bytes of the flows that crossed it.
    let usage = net.usage();
    for (r, u) in usage.iter().enumerate() {
        let crossing: f64 = completions.iter().filter(|(_, id)| paths[id].contains(&r)).map(|(_, id)| bytes_of[id] as f64).sum::<f64>()
            + removed.iter().filter(|(p, _)| p.contains(&r)).map(|(_, m)| m).sum::<f64>();
        prop_assert!((u.bytes - crossing).abs() <= 1e-9 * crossing + 1e-6, "resource {} carried {} of {}", r, u.bytes, crossing);
        prop_assert!(u.bytes <= capacity[r] * net.now() as f64 / 1e9 * (1.0 + 1e-9) + 1e-6);
        prop_assert!(u.saturated_ns <= net.now());
    }
    Ok(Outcome { completions, carried: usage.iter().map(|u| (u.bytes, u.saturated_ns)).collect(), delivered: net.delivered_bytes() })
}

/// The fastest any flow can go: no flow is faster than the largest capacity or the caps drawn.
fn net_rate_bound(capacity: &[f64]) -> f64 {
    capacity.iter().cloned().fold(5e7, f64::max)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_at_every_event(capacity in capacities(), ops in ops()) {
        run(&capacity, &ops, true)?;
    }

    #[test]
    fn the_same_inputs_give_the_same_results(capacity in capacities(), ops in ops()) {
        let a = run(&capacity, &ops, false)?;
        let b = run(&capacity, &ops, false)?;
        prop_assert_eq!(a, b);
    }

    /// The allocation alone: max-min fair means no flow can gain without a flow of no larger
    /// rate losing; checked as the bottleneck property above, on bare paths and caps.
    #[test]
    fn max_min_rates_are_feasible_and_bottlenecked(
        capacity in capacities(),
        flows in prop::collection::vec((0u8..=255, prop_oneof![Just(f64::INFINITY), 1e3f64..5e7]), 1..30),
    ) {
        let paths: Vec<Vec<usize>> = flows.iter().map(|(m, _)| (0..capacity.len()).filter(|i| m >> i & 1 == 1).collect()).collect();
        let caps: Vec<f64> = flows.iter().zip(&paths).map(|((_, c), p)| if p.is_empty() && c.is_infinite() { 1e6 } else { *c }).collect();
        let rates = max_min_rates(&capacity, &paths, &caps);
        let mut load = vec![0.0; capacity.len()];
        let mut top = vec![0.0f64; capacity.len()];
        for (f, (p, &x)) in paths.iter().zip(&rates).enumerate() {
            prop_assert!(x > 0.0 && x <= caps[f] * (1.0 + TOL));
            for &r in p {
                load[r] += x;
                top[r] = top[r].max(x);
            }
        }
        for r in 0..capacity.len() {
            prop_assert!(load[r] <= capacity[r] * (1.0 + TOL));
        }
        for (f, p) in paths.iter().enumerate() {
            let at_cap = rates[f] >= caps[f] * (1.0 - TOL);
            prop_assert!(at_cap || p.iter().any(|&r| load[r] >= capacity[r] * (1.0 - TOL) && rates[f] >= top[r] * (1.0 - TOL)), "flow {} unbottlenecked: {:?}", f, rates);
        }
    }
}

/// A server's shape: two shared ports, client lines of a few classes (a flow alone on its
/// line, now and then two), caps of a few values; flows start and stop at random. At every
/// step the rates in use equal a recomputation from scratch bit for bit, no resource is over
/// its capacity and every flow is bottlenecked.
fn server_ops() -> impl Strategy<Value = (Vec<f64>, Vec<(u8, u8, bool)>)> {
    (
        prop::collection::vec(prop_oneof![Just(7.5e4), Just(7.5e5), Just(7.5e6), 1e4f64..1e7], 3),
        prop::collection::vec((0u8..40, 0u8..6, prop::bool::weighted(0.4)), 1..300),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn incremental_rates_equal_a_full_recompute(
        (line_rates, steps) in server_ops(),
        port in prop_oneof![Just(1.177e8), 1e6f64..2e8],
    ) {
        let mut net = FlowNet::new();
        let ports = [net.add_resource("port 0", port).unwrap(), net.add_resource("port 1", port).unwrap()];
        let lines: Vec<ResourceId> = (0..40).map(|i| net.add_resource(&format!("line {i}"), line_rates[i % 3]).unwrap()).collect();
        let caps = [f64::INFINITY, 2.18e6, 6.55e6, 7.5e5 * (1.0 + 1e-13), 7.5e4, 3e5];
        let mut capacity = vec![port, port];
        capacity.extend((0..40).map(|i| line_rates[i % 3]));
        for (client, cap, stop) in steps {
            if stop && net.active() > 0 {
                let flows = net.snapshot();
                let id = flows[client as usize % flows.len()].0;
                net.remove_flow(id).unwrap();
            } else {
                let c = client as usize;
                net.add_flow(&[ports[c % 2], lines[c]], 1 << 16, caps[cap as usize]).unwrap();
            }
            check_allocation(&mut net, &capacity)?;
        }
    }
}

/// The shortcut is what runs while the ports have room: a hundred flows on lines of their
/// own, starting and stopping, and no full recomputation; once a port fills, progressive
/// filling runs in full.
#[test]
fn unsaturated_ports_take_the_shortcut() {
    let mut net = FlowNet::new();
    let port = net.add_resource("port", 1e8).unwrap();
    let lines: Vec<ResourceId> = (0..100).map(|i| net.add_resource(&format!("line {i}"), 7.5e4 * (1 + i % 3) as f64).unwrap()).collect();
    for (i, &l) in lines.iter().enumerate() {
        net.add_flow(&[port, l], 1_000 * (1 + i as u64), if i % 2 == 0 { f64::INFINITY } else { 1e5 }).unwrap();
    }
    let mut restarts = 0;
    while let Some(t) = net.next_completion() {
        for f in net.advance_to(t) {
            if f.0 < 100 && f.0 % 3 == 0 {
                restarts += 1;
                net.add_flow(&[port, lines[f.0 as usize % 100]], 5_000, f64::INFINITY).unwrap();
            }
        }
    }
    assert_eq!(restarts, 34);
    assert_eq!(net.full_refreshes(), 0);
    let fast: Vec<ResourceId> = (0..2).map(|i| net.add_resource(&format!("fast line {i}"), 1e9).unwrap()).collect();
    let f = net.add_flow(&[port, fast[0]], 1_000_000, f64::INFINITY).unwrap();
    assert_eq!(net.rate(f), Some(1e8));
    assert_eq!(net.full_refreshes(), 0);
    net.add_flow(&[port, fast[1]], 1_000_000, f64::INFINITY).unwrap();
    assert_eq!(net.rate(f), Some(5e7));
    assert_eq!(net.full_refreshes(), 1);
}

/// Which resource bounds a run: a client line slower than its share of the NIC is saturated
/// the whole time; the NIC only while the fast flows share it.
#[test]
fn the_bottleneck_is_the_resource_saturated_longest() {
    let mut net = FlowNet::new();
    let nic = net.add_resource("nic", 100.0).unwrap();
    let slow = net.add_resource("slow line", 10.0).unwrap();
    let fast = net.add_resource("fast line", 1000.0).unwrap();
    net.add_flow(&[nic, slow], 100, f64::INFINITY).unwrap();
    net.add_flow(&[nic, fast], 180, f64::INFINITY).unwrap();
    // Slow: 10/s for 10 s. Fast: 90/s, done at 2 s; the NIC is saturated for those 2 s only.
    assert_eq!(net.next_completion(), Some(2_000_000_000));
    net.advance_to(20_000_000_000);
    let u = net.usage();
    assert_eq!(u[0].saturated_ns, 2_000_000_000);
    assert_eq!(u[1].saturated_ns, 10_000_000_000);
    assert_eq!(net.bottleneck().unwrap().name, "slow line");
    assert!((u[0].utilisation - 280.0 / 2000.0).abs() < 1e-12);
}

/// A window-limited flow: 64 KiB per 100 ms round trip is 655 360 B/s however fast the line.
#[test]
fn a_window_caps_a_flow_on_a_fast_line() {
    let mut net = FlowNet::new();
    let line = net.add_resource("10 GbE", 1.25e9).unwrap();
    let f = net.add_flow(&[line], 655_360, ssdlab_core::net::window_cap(65_536, 100_000_000)).unwrap();
    assert_eq!(net.rate(f), Some(655_360.0));
    assert_eq!(net.next_completion(), Some(1_000_000_000));
}

/// A capacity changed from outside (a disk-side cap) takes effect from now.
#[test]
fn a_capacity_change_reshapes_the_rates() {
    let mut net = FlowNet::new();
    let disk = net.add_resource("disk", 100.0).unwrap();
    let f = net.add_flow(&[disk], 300, f64::INFINITY).unwrap();
    net.advance_to(1_000_000_000);
    assert_eq!(net.bytes_left(f), Some(200.0));
    net.set_capacity(disk, 50.0).unwrap();
    assert_eq!(net.next_completion(), Some(5_000_000_000));
    assert!(net.set_capacity(disk, 0.0).is_err());
}

/// Thousands of flows and events: the simulator's work is per event, not per byte (a
/// terabyte-sized transfer costs what a kilobyte one does).
#[test]
fn cost_does_not_grow_with_bytes() {
    for bytes in [1_000u64, 1_000_000_000_000] {
        let mut net = FlowNet::new();
        let nic = net.add_resource("nic", 1.25e8).unwrap();
        let lines: Vec<ResourceId> = (0..100).map(|i| net.add_resource(&format!("line {i}"), 1e6 * (1 + i % 7) as f64).unwrap()).collect();
        for (i, &l) in lines.iter().enumerate() {
            net.add_flow(&[nic, l], bytes * (1 + i as u64 % 5), f64::INFINITY).unwrap();
        }
        let mut events = 0;
        while let Some(t) = net.next_completion() {
            events += 1;
            net.advance_to(t);
        }
        assert!(events <= 100, "{events} events for 100 flows");
        assert_eq!(net.completed_bytes(), lines.len() as u128 / 5 * 15 * bytes as u128);
    }
}
