//! Max-min fair rates of flows over shared resources, by progressive filling.
//!
//! Every flow crosses a set of resources (links, access lines, a disk-side cap), each with a
//! capacity, and has a cap of its own (its TCP window over its round-trip time). All flows'
//! rates rise together from zero; when a resource fills, the flows crossing it stop at its fair
//! share, and when a flow reaches its own cap it stops there; the others go on rising over what
//! is left. The result is the max-min fair allocation: no flow's rate can grow without taking
//! from a flow whose rate is no larger (Bertsekas and Gallager, "Data Networks", 2nd ed., §6.5.2,
//! the bottleneck / water-filling algorithm). Flow-level models of this kind, with a per-flow
//! window/RTT bound, are what SimGrid validated against packet-level TCP for bulk transfers
//! (Velho, Schnorr, Casanova and Legrand, "On the validity of flow-level TCP network models for
//! grid and cloud simulations", ACM TOMACS 23(4), 2013).
//!
//! Each round fixes at least one flow, so the cost is at most (flows) × (resources + the sum of
//! the flows' path lengths), and usually a handful of rounds: one per distinct bottleneck level.

/// Relative tolerance under which two fill levels are the same (floating-point sums of shares).
pub const LEVEL_TOLERANCE: f64 = 1e-12;

/// The max-min fair rate of each flow. `capacity[r]` is resource `r`'s capacity (positive,
/// finite); `paths[f]` lists the distinct resources flow `f` crosses; `caps[f]` is its own cap
/// (positive; infinite for none). A flow that crosses nothing must have a finite cap. Rates are
/// in the capacities' unit; the order of flows and resources decides nothing but the order of
/// the floating-point sums, which is fixed.
pub fn max_min_rates<P: AsRef<[usize]>>(capacity: &[f64], paths: &[P], caps: &[f64]) -> Vec<f64> {
    let n = paths.len();
    debug_assert_eq!(caps.len(), n);
    let mut rate = vec![0.0; n];
    let mut fixed = vec![false; n];
    let mut remaining = capacity.to_vec();
    let mut unfixed_on = vec![0usize; capacity.len()];
    for p in paths {
        for &r in p.as_ref() {
            unfixed_on[r] += 1;
        }
    }
    let mut left = n;
    let mut saturated = vec![false; capacity.len()];
    while left > 0 {
        // The level every unfixed flow reaches next: the smallest fair share of what a
        // resource has left, or the smallest own cap.
        let mut level = f64::INFINITY;
        for r in 0..capacity.len() {
            if unfixed_on[r] > 0 {
                level = level.min(remaining[r].max(0.0) / unfixed_on[r] as f64);
            }
        }
        for f in 0..n {
            if !fixed[f] {
                level = level.min(caps[f]);
            }
        }
        debug_assert!(level.is_finite(), "a flow with no resource and no cap");
        let near = level * (1.0 + LEVEL_TOLERANCE);
        for r in 0..capacity.len() {
            saturated[r] = unfixed_on[r] > 0 && remaining[r].max(0.0) / unfixed_on[r] as f64 <= near;
        }
        // Fix the flows at the level: those at their own cap and those crossing a resource that
        // is now full. The flow that set the level is always among them; should rounding ever
        // leave none, the rest are fixed at the level rather than looping.
        let at_level = |f: usize| caps[f] <= near || paths[f].as_ref().iter().any(|&r| saturated[r]);
        let any = (0..n).any(|f| !fixed[f] && at_level(f));
        for f in 0..n {
            if fixed[f] || (any && !at_level(f)) {
                continue;
            }
            let x = level.min(caps[f]);
            rate[f] = x;
            fixed[f] = true;
            left -= 1;
            for &r in paths[f].as_ref() {
                remaining[r] -= x;
                unfixed_on[r] -= 1;
            }
        }
    }
    rate
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bertsekas and Gallager's kind of example: two links of 1; flow 0 crosses both, flow 1
    /// the first, flows 2 and 3 the second. Link 1 is shared three ways (1/3 each); flow 1
    /// then gets the first link's remaining 2/3.
    #[test]
    fn the_textbook_case() {
        let r = max_min_rates(&[1.0, 1.0], &[vec![0, 1], vec![0], vec![1], vec![1]], &[f64::INFINITY; 4]);
        let want = [1.0 / 3.0, 2.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0];
        for (a, b) in r.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{r:?}");
        }
    }

    /// A capped flow leaves its unused share to the others.
    #[test]
    fn a_capped_flow_leaves_room() {
        let r = max_min_rates(&[10.0], &[vec![0], vec![0], vec![]], &[1.0, f64::INFINITY, 4.0]);
        assert_eq!(r, vec![1.0, 9.0, 4.0]);
    }
}
