//! The free-extent histogram as `e2freefrag` prints it (`misc/e2freefrag.c`): every run of
//! free blocks in the on-disk bitmap, across group boundaries, counted in power-of-two
//! buckets: a run of `n` blocks falls in bucket `floor(log2 n) + 1`, printed as the byte
//! range `[2^(i-1), 2^i)` blocks.

use super::space::Bits;
use serde::Serialize;

/// One line of the histogram.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FreeBucket {
    /// Bucket index as `e2freefrag` numbers it (`ul_log2(len) + 1`).
    pub index: u32,
    /// Range of extent sizes in bytes: `[start_bytes, end_bytes)`.
    pub start_bytes: u64,
    pub end_bytes: u64,
    pub extents: u64,
    pub blocks: u64,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FreeFrag {
    pub block_size: u32,
    pub total_blocks: u64,
    pub free_blocks: u64,
    pub free_extents: u64,
    /// Smallest, largest and mean free extent, in blocks (the mean rounded down).
    pub min_blocks: u64,
    pub max_blocks: u64,
    pub avg_blocks: u64,
    /// Non-empty buckets, smallest first.
    pub buckets: Vec<FreeBucket>,
}

/// `e2freefrag`'s offline scan of a block bitmap from `first_data_block`.
pub fn free_frag(bits: &Bits, first_data_block: u64, block_size: u32) -> FreeFrag {
    const MAX_HIST: usize = 32;
    let mut counts = [0u64; MAX_HIST];
    let mut blocks = [0u64; MAX_HIST];
    let (mut n, mut min, mut max, mut sum) = (0u64, u64::MAX, 0u64, 0u64);
    let end = bits.len();
    let mut b = first_data_block;
    while let Some(s) = bits.next_clear(b, end) {
        let e = bits.next_set(s, end);
        let len = e - s;
        let idx = ((63 - len.leading_zeros()) as usize + 1).min(MAX_HIST - 1);
        counts[idx] += 1;
        blocks[idx] += len;
        n += 1;
        min = min.min(len);
        max = max.max(len);
        sum += len;
        b = e;
    }
    let buckets = (0..MAX_HIST)
        .filter(|&i| counts[i] > 0)
        .map(|i| FreeBucket {
            index: i as u32,
            start_bytes: if i == 0 {
                0
            } else {
                (block_size as u64) << (i - 1)
            },
            end_bytes: (block_size as u64) << i,
            extents: counts[i],
            blocks: blocks[i],
        })
        .collect();
    FreeFrag {
        block_size,
        total_blocks: end,
        free_blocks: sum,
        free_extents: n,
        min_blocks: if n == 0 { 0 } else { min },
        max_blocks: max,
        avg_blocks: sum.checked_div(n).unwrap_or(0),
        buckets,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_as_e2freefrag_numbers_them() {
        let mut bits = Bits::new(64);
        bits.set_range(0, 64, true);
        bits.set_range(2, 1, false); // 1 block: bucket 1, [1K, 2K)
        bits.set_range(5, 3, false); // 3 blocks: bucket 2, [2K, 4K)
        bits.set_range(10, 4, false); // 4 blocks: bucket 3, [4K, 8K)
        let f = free_frag(&bits, 1, 1024);
        assert_eq!(
            (
                f.free_blocks,
                f.free_extents,
                f.min_blocks,
                f.max_blocks,
                f.avg_blocks
            ),
            (8, 3, 1, 4, 2)
        );
        let b: Vec<(u32, u64, u64, u64)> = f
            .buckets
            .iter()
            .map(|b| (b.index, b.start_bytes, b.extents, b.blocks))
            .collect();
        assert_eq!(b, vec![(1, 1024, 1, 1), (2, 2048, 1, 3), (3, 4096, 1, 4)]);
    }
}
