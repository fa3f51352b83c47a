//! The CPU model's accounting over random bursts and I/O waits of random threads: on every
//! core busy + iowait + idle is the whole time, the cores' sums are the totals, iowait never
//! exceeds the idle part, busy time is exactly the bursts', and where a burst runs never
//! changes when it runs (a FIFO multi-server's times, whatever core it takes).

use proptest::prelude::*;
use ssdlab_core::cpu::{Cpus, Waker};
use ssdlab_core::engine::MultiServer;

proptest! {
    #[test]
    fn accounting_adds_up(cores in 1u32..6, affine in any::<bool>(), ops in prop::collection::vec((0u64..50, 0u64..40, 0u8..3, 0u32..9), 1..80)) {
        let mut c = Cpus::new(cores, 0, affine);
        let mut fifo = MultiServer::new(cores as usize);
        let (mut now, mut burst_total, mut last_end) = (0u64, 0u128, 0u64);
        let mut waiting = [0u32; 9];
        let mut intervals = Vec::new();
        for (gap, len, kind, thread) in ops {
            now += gap;
            match kind {
                0 => {
                    let end = c.run(now, thread, len);
                    prop_assert!(end >= now + len);
                    if len > 0 {
                        prop_assert_eq!(end, fifo.reserve(now, len), "a burst ends when a FIFO multi-server's would");
                    }
                    burst_total += len as u128;
                    last_end = last_end.max(end);
                }
                1 => { c.io_wait(now, thread); waiting[thread as usize] += 1; }
                _ if waiting[thread as usize] > 0 => { c.io_done(now, thread, Waker::Irq(gap as u32 % 7)); waiting[thread as usize] -= 1; }
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
        let per = c.core_totals();
        prop_assert_eq!(per.iter().map(|p| p.0).sum::<u128>(), busy);
        prop_assert_eq!(per.iter().map(|p| p.1).sum::<u128>(), iowait);
        for (core, share) in c.per_core(end).iter().enumerate() {
            prop_assert!((share.busy + share.iowait + share.idle - 1.0).abs() < 1e-9, "core {}: {:?}", core, share);
            prop_assert!(share.busy >= 0.0 && share.iowait >= 0.0 && share.idle >= 0.0);
        }
        for (core, &(b, w)) in per.iter().enumerate() {
            prop_assert!(b + w <= end as u128, "core {} has more busy and iowait time than wall time", core);
        }
    }
}
