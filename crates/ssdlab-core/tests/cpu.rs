//! The CPU model's accounting over random bursts and I/O waits: busy + iowait + idle is the
//! whole core-time, iowait never exceeds the idle part, busy time is exactly the bursts', and
//! no core runs two bursts at once.

use proptest::prelude::*;
use ssdlab_core::cpu::Cpus;

proptest! {
    #[test]
    fn accounting_adds_up(cores in 1u32..6, ops in prop::collection::vec((0u64..50, 0u64..40, 0u8..3), 1..80)) {
        let mut c = Cpus::new(cores, 0);
        let (mut now, mut waiting, mut burst_total, mut last_end) = (0u64, 0u32, 0u128, 0u64);
        let mut intervals = Vec::new();
        for (gap, len, kind) in ops {
            now += gap;
            match kind {
                0 => {
                    let end = c.run(now, len);
                    prop_assert!(end >= now + len);
                    burst_total += len as u128;
                    last_end = last_end.max(end);
                }
                1 => { c.io_wait(now); waiting += 1; }
                _ if waiting > 0 => { c.io_done(now); waiting -= 1; }
                _ => {}
            }
            if now % 7 == 0 {
                intervals.push(c.interval(now));
            }
        }
        let end = last_end.max(now) + 1;
        intervals.push(c.interval(end));
        for i in &intervals {
            prop_assert!((i.busy + i.iowait + i.idle - 1.0).abs() < 1e-9 || i.end_ns == i.start_ns, "{:?}", i);
            prop_assert!(i.busy <= 1.0 + 1e-9);
            prop_assert!(i.iowait <= 1.0 - i.busy + 1e-9);
        }
        let (busy, iowait) = c.totals();
        prop_assert_eq!(busy, burst_total, "busy core-time is the bursts'");
        prop_assert!(iowait + busy <= cores as u128 * end as u128);
    }
}
