//! Bring a drive to a used state without simulating time: the same FTL code places data and
//! collects garbage, but no events run. A full sequential fill of a 64 GiB drive takes well
//! under a second this way, and random overwrites reach the GC steady state that a timed
//! run would reach (checked by tests against a simulated fill).

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use super::Ssd;
use crate::engine::rng::stream;

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Precondition {
    /// Fresh drive: nothing mapped.
    #[default]
    None,
    /// Every logical IU written once, in order.
    Sequential,
    /// A sequential fill, then `passes` × capacity of uniformly random IU overwrites.
    Random { passes: f64 },
}

/// Apply `p` to `ssd`. Counters of host and NAND traffic start again from zero afterwards;
/// wear (per-block erase counts) is kept, as on a real used drive.
pub fn precondition(ssd: &mut Ssd, p: Precondition, seed: u64) {
    if p == Precondition::None {
        return;
    }
    let ftl = ssd.ftl_mut();
    let logical = ftl.logical_ius() as u32;
    let per_unit = ftl.ius_per_pu as usize;
    let dies = ftl.dies;
    let mut die = 0u32;
    let mut unit: Vec<u32> = Vec::with_capacity(per_unit);
    let mut place = |ftl: &mut super::ftl::Ftl, unit: &mut Vec<u32>| {
        // Round-robin over the dies that can take data, as striping on an idle drive does.
        for _ in 0..dies {
            let d = die;
            die = (die + 1) % dies;
            if ftl.accepts_host_data(d) {
                let placed = ftl.place_host_unit(d, unit);
                // No time passes here, so GC work (if any) has no one to charge.
                let _ = ftl.mark_programmed(placed.block, ftl.ius_per_pu);
                break;
            }
        }
        unit.clear();
    };
    for lpn in 0..logical {
        unit.push(lpn);
        if unit.len() == per_unit {
            place(ftl, &mut unit);
        }
    }
    if !unit.is_empty() {
        place(ftl, &mut unit);
    }
    if let Precondition::Random { passes } = p {
        let mut rng = stream(seed, "precondition", 0);
        let writes = (passes.max(0.0) * logical as f64) as u64;
        for _ in 0..writes {
            unit.push(rng.gen_range(0..logical));
            if unit.len() == per_unit {
                place(ftl, &mut unit);
            }
        }
        if !unit.is_empty() {
            place(ftl, &mut unit);
        }
    }
    ftl.counters = Default::default();
}
