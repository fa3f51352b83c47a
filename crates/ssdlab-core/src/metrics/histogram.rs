//! Latency histogram with fio's bucket layout (log-linear, 64 buckets per power of two above
//! 128 ns, 1856 buckets), so percentiles come out the way fio computes them and histograms of
//! several jobs can be merged for group reporting.

use serde::Serialize;

const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;
const PLAT_GROUP_NR: usize = 29;
pub const PLAT_NR: usize = PLAT_GROUP_NR * PLAT_VAL as usize;

/// Bucket index of a latency in ns.
#[inline]
pub fn bucket_of(ns: u64) -> usize {
    if ns == 0 {
        return 0;
    }
    let msb = 63 - ns.leading_zeros();
    if msb <= PLAT_BITS {
        return ns as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as usize) << PLAT_BITS;
    let offset = ((ns >> error_bits) & (PLAT_VAL - 1)) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// Representative value (ns) of a bucket: its midpoint, as fio reports.
pub fn bucket_value(idx: usize) -> u64 {
    if idx < (PLAT_VAL << 1) as usize {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    let k = (idx as u64) % PLAT_VAL;
    base + ((k as f64 + 0.5) * (1u64 << error_bits) as f64) as u64
}

/// Its buckets are allocated at the first sample: a job keeps several histograms per
/// direction (slat, clat, lat), most of them never used.
#[derive(Clone, Debug, Default)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
}

impl LatencyHistogram {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.add(bucket_of(ns));
    }

    /// One sample in bucket `b` (of [`bucket_of`]).
    #[inline]
    pub fn add(&mut self, b: usize) {
        if self.counts.is_empty() {
            self.counts = vec![0; PLAT_NR];
        }
        self.counts[b] += 1;
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Non-empty buckets as `(index, count)`, compact for reporting and merging.
    pub fn sparse(&self) -> Vec<(u32, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (i as u32, c))
            .collect()
    }

    /// fio's percentile rule: the first bucket where the running count reaches p% of all.
    pub fn percentile(&self, p: f64) -> u64 {
        let total = self.total();
        if total == 0 {
            return 0;
        }
        let want = p / 100.0 * total as f64;
        let mut sum = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            sum += c;
            if sum as f64 >= want {
                return bucket_value(i);
            }
        }
        bucket_value(PLAT_NR - 1)
    }
}

/// Serialised as `[[bucket_value_ns, count], …]` over non-empty buckets: keyed by value so
/// that readers can merge and take percentiles without knowing the bucket layout.
impl Serialize for LatencyHistogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let pairs: Vec<(u64, u64)> =
            self.sparse().into_iter().map(|(i, c)| (bucket_value(i as usize), c)).collect();
        pairs.serialize(s)
    }
}

/// Serialised as its non-empty buckets, `[[value ns, count], …]`.
impl schemars::JsonSchema for LatencyHistogram {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "LatencyHistogram".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Vec<(u64, u64)>>::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact_and_large_ones_within_bucket_error() {
        for v in 0..128 {
            assert_eq!(bucket_value(bucket_of(v)), v);
        }
        for v in [1_000u64, 53_073, 1_000_000, 4_011_272, 123_456_789] {
            let back = bucket_value(bucket_of(v)) as f64;
            assert!((back - v as f64).abs() / v as f64 <= 1.0 / 64.0, "{v} -> {back}");
        }
    }

    #[test]
    fn bucket_index_is_monotonic() {
        let mut last = 0;
        for v in (0..10_000_000u64).step_by(997) {
            let b = bucket_of(v);
            assert!(b >= last);
            last = b;
        }
    }

    #[test]
    fn percentiles_follow_counts() {
        let mut h = LatencyHistogram::default();
        for v in 1..=100u64 {
            h.record(v);
        }
        assert_eq!(h.percentile(50.0), 50);
        assert_eq!(h.percentile(99.0), 99);
    }
}
