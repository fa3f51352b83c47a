//! Large tables (the flash map of a big drive is hundreds of MB) accessed at random places:
//! backing them with huge pages removes most TLB misses, which otherwise cost as much as the
//! cache misses themselves. On Linux the kernel is asked (madvise) before the pages are
//! touched; elsewhere this is a plain vector.

/// A vector of `n` copies of `value`, on huge pages where the OS grants them.
pub fn huge_vec<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    advise_huge(v.as_mut_ptr() as *mut u8, n * std::mem::size_of::<T>());
    v.resize(n, value);
    v
}

#[cfg(target_os = "linux")]
fn advise_huge(ptr: *mut u8, bytes: usize) {
    const HUGE: usize = 2 << 20;
    if bytes < 2 * HUGE {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE);
    let end = (ptr as usize + bytes) / HUGE * HUGE;
    if end > start {
        // SAFETY: the range lies inside an allocation we own and have not touched yet;
        // MADV_HUGEPAGE only changes how the kernel backs it, never its contents.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_ptr: *mut u8, _bytes: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn huge_vec_is_filled() {
        let v = super::huge_vec(5 << 20, 7u32);
        assert_eq!(v.len(), 5 << 20);
        assert!(v.iter().all(|&x| x == 7));
    }
}

/// Fixed-width unsigned integers packed end to end: a flash map needs only as many bits per
/// entry as it has places to name (25 bits for a 64 GiB drive at 4 KiB), not 32. The all-ones
/// value of the width is free for the caller to use as a sentinel.
#[derive(Clone, Debug, PartialEq)]
pub struct PackedArray {
    words: Vec<u64>,
    bits: u32,
    mask: u64,
    len: usize,
}

impl PackedArray {
    /// `len` entries of `bits` bits (1..=32), all set to `value`.
    pub fn new(len: usize, bits: u32, value: u32) -> PackedArray {
        assert!((1..=32).contains(&bits), "PackedArray width must be 1..=32 bits");
        let mask = (1u64 << bits) - 1;
        assert!(value as u64 <= mask, "initial value does not fit the width");
        // One spare word so that reading two words at the last entry stays in bounds.
        let words_needed = (len * bits as usize).div_ceil(64) + 1;
        // All ones (the usual sentinel) or zero fill whole words at once.
        let fill = if value as u64 == mask { u64::MAX } else { 0 };
        let mut a = PackedArray { words: huge_vec(words_needed, fill), bits, mask, len };
        if value != 0 && value as u64 != mask {
            for i in 0..len {
                a.set(i, value);
            }
        }
        a
    }

    /// Bits needed to hold values `0..=max`.
    pub fn bits_for(max: u64) -> u32 {
        (64 - max.leading_zeros()).max(1)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The all-ones value of this width.
    pub fn max_value(&self) -> u32 {
        self.mask as u32
    }

    pub fn bytes(&self) -> usize {
        self.words.len() * 8
    }

    #[inline]
    fn locate(&self, i: usize) -> (usize, u32) {
        let bit = i * self.bits as usize;
        (bit / 64, (bit % 64) as u32)
    }

    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        debug_assert!(i < self.len);
        let (w, o) = self.locate(i);
        if o + self.bits <= 64 {
            return ((self.words[w] >> o) & self.mask) as u32;
        }
        let pair = self.words[w] as u128 | (self.words[w + 1] as u128) << 64;
        ((pair >> o) as u64 & self.mask) as u32
    }

    #[inline]
    pub fn set(&mut self, i: usize, value: u32) {
        debug_assert!(i < self.len);
        debug_assert!(value as u64 <= self.mask);
        let (w, o) = self.locate(i);
        if o + self.bits <= 64 {
            let word = &mut self.words[w];
            *word = (*word & !(self.mask << o)) | ((value as u64) << o);
            return;
        }
        let mut pair = self.words[w] as u128 | (self.words[w + 1] as u128) << 64;
        pair &= !((self.mask as u128) << o);
        pair |= (value as u128) << o;
        self.words[w] = pair as u64;
        self.words[w + 1] = (pair >> 64) as u64;
    }

    /// Address of the word holding entry `i`, for prefetching.
    #[inline]
    pub fn word_ptr(&self, i: usize) -> Option<*const u64> {
        (i < self.len).then(|| &self.words[self.locate(i).0] as *const u64)
    }
}

#[cfg(test)]
mod packed_tests {
    use super::PackedArray;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn behaves_like_a_vector(bits in 1u32..=32, ops in prop::collection::vec((0usize..300, any::<u32>()), 1..400)) {
            let len = 300;
            let mut a = PackedArray::new(len, bits, 0);
            let mut v = vec![0u32; len];
            let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            for (i, x) in ops {
                let x = x & mask;
                a.set(i, x);
                v[i] = x;
                prop_assert_eq!(a.get(i), x);
            }
            for (i, &x) in v.iter().enumerate() {
                prop_assert_eq!(a.get(i), x);
            }
        }
    }

    #[test]
    fn initial_value_and_widths() {
        let a = PackedArray::new(1000, 25, (1 << 25) - 1);
        assert!((0..1000).all(|i| a.get(i) == (1 << 25) - 1));
        assert_eq!(PackedArray::bits_for(16_777_216), 25);
        assert_eq!(PackedArray::bits_for(16_777_215), 24);
        assert_eq!(PackedArray::bits_for(0), 1);
    }
}
