//! Large tables (the flash map of a big drive is hundreds of MB) accessed at random places:
//! backing them with huge pages removes most TLB misses, which otherwise cost as much as the
//! cache misses themselves. On Linux the kernel is asked (madvise) before the pages are
//! touched; elsewhere the pages are the usual ones.

const HUGE: usize = 2 << 20;

/// `n` copies of `value`, on huge pages where the OS grants them. A table of more than two
/// huge pages is allocated aligned to them, so that all of it can be backed by them: from
/// an allocation at an arbitrary address only the whole huge pages inside it could be (a
/// 6 MB map would keep a third or more of itself on small pages, and a random lookup there
/// misses the TLB).
pub struct HugeBuf<T: Copy> {
    ptr: std::ptr::NonNull<T>,
    len: usize,
    /// How it was allocated (None: nothing was, it is empty or of zero-sized values).
    layout: Option<std::alloc::Layout>,
    /// Mapped straight from the kernel, `layout`'s bytes long (see [`HugeBuf::zeroed`]).
    mapped: bool,
}

/// A zeroed table at least this large is mapped from the kernel on small pages, so that only
/// the pages written are ever resident (assumed: below 1 GiB the whole table costs less than
/// the TLB misses of small pages would on random lookups, and it keeps its huge pages).
pub const SPARSE_MIN: usize = 1 << 30;

// SAFETY: a HugeBuf owns its values alone, as a Vec does.
unsafe impl<T: Copy + Send> Send for HugeBuf<T> {}
unsafe impl<T: Copy + Sync> Sync for HugeBuf<T> {}

impl<T: Copy> HugeBuf<T> {
    pub fn new(n: usize, value: T) -> HugeBuf<T> {
        let bytes = n.checked_mul(std::mem::size_of::<T>()).expect("table size overflows");
        if bytes == 0 {
            return HugeBuf { ptr: std::ptr::NonNull::dangling(), len: n, layout: None, mapped: false };
        }
        let layout = if bytes >= 2 * HUGE {
            std::alloc::Layout::from_size_align(bytes.next_multiple_of(HUGE), HUGE.max(std::mem::align_of::<T>()))
        } else {
            std::alloc::Layout::array::<T>(n)
        }
        .expect("table layout");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) } as *mut T;
        let Some(ptr) = std::ptr::NonNull::new(raw) else { std::alloc::handle_alloc_error(layout) };
        advise_huge(raw as *mut u8, layout.size());
        for i in 0..n {
            // SAFETY: `i` < `n` values fit the allocation; writing initialises them.
            unsafe { raw.add(i).write(value) };
        }
        HugeBuf { ptr, len: n, layout: Some(layout), mapped: false }
    }
}

impl HugeBuf<u64> {
    /// `n` zeros. A table of [`SPARSE_MIN`] bytes or more is mapped anonymously (the kernel
    /// gives zeroed pages when first written; reads of unwritten ones share its zero page), so
    /// what stays zero costs no memory; a smaller one is [`HugeBuf::new`]'s.
    pub fn zeroed(n: usize) -> HugeBuf<u64> {
        let bytes = n.checked_mul(8).expect("table size overflows");
        match map_zeroed(bytes) {
            Some(raw) => HugeBuf {
                ptr: std::ptr::NonNull::new(raw as *mut u64).expect("mmap gives a non-null address"),
                len: n,
                layout: Some(std::alloc::Layout::from_size_align(bytes, 8).expect("table layout")),
                mapped: true,
            },
            None => HugeBuf::new(n, 0),
        }
    }

    /// Whether the table commits memory only where it is written (see [`HugeBuf::zeroed`]).
    pub fn is_sparse(&self) -> bool {
        self.mapped
    }
}

/// Anonymous zeroed pages, small ones, for `bytes` >= [`SPARSE_MIN`] (None: use the allocator).
#[cfg(target_os = "linux")]
fn map_zeroed(bytes: usize) -> Option<*mut u8> {
    if bytes < SPARSE_MIN {
        return None;
    }
    // SAFETY: a fresh private anonymous mapping; no existing memory is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        std::alloc::handle_alloc_error(std::alloc::Layout::from_size_align(bytes, 8).expect("table layout"));
    }
    // Huge pages would commit 2 MiB wherever one entry is written (with THP "always" even
    // unasked): small ones keep a random writer's cost to the pages it lands on.
    // SAFETY: advice on the mapping just made; it never changes its contents.
    unsafe { libc::madvise(p, bytes, libc::MADV_NOHUGEPAGE) };
    Some(p as *mut u8)
}

#[cfg(not(target_os = "linux"))]
fn map_zeroed(_bytes: usize) -> Option<*mut u8> {
    None
}

impl<T: Copy> std::ops::Deref for HugeBuf<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised values at `ptr` (or a dangling pointer for none).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> std::ops::DerefMut for HugeBuf<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`, and `&mut self` is the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Drop for HugeBuf<T> {
    fn drop(&mut self) {
        match self.layout {
            #[cfg(target_os = "linux")]
            // SAFETY: mapped with this length in `map_zeroed`; values are Copy.
            Some(layout) if self.mapped => unsafe {
                libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, layout.size());
            },
            // SAFETY: allocated with this layout in `new`; values are Copy (nothing to drop).
            Some(layout) => unsafe { std::alloc::dealloc(self.ptr.as_ptr() as *mut u8, layout) },
            None => {}
        }
    }
}

impl<T: Copy> Clone for HugeBuf<T> {
    fn clone(&self) -> Self {
        if self.mapped {
            return self.clone_sparse();
        }
        match self.first() {
            None => HugeBuf { ptr: std::ptr::NonNull::dangling(), len: self.len, layout: None, mapped: false },
            Some(&v) => {
                let mut c = HugeBuf::new(self.len, v);
                c.copy_from_slice(self);
                c
            }
        }
    }
}

impl<T: Copy> HugeBuf<T> {
    /// A copy of a mapped table that writes only its pages holding anything but zeros, so
    /// the copy commits no more memory than the original.
    fn clone_sparse(&self) -> Self {
        let bytes = self.len * std::mem::size_of::<T>();
        let raw = map_zeroed(bytes).expect("a mapped table maps again");
        let (src, dst) = (self.ptr.as_ptr() as *const u8, raw);
        for at in (0..bytes).step_by(PAGE) {
            let n = PAGE.min(bytes - at);
            // SAFETY: both mappings are `bytes` long; `at + n` <= `bytes`.
            let page = unsafe { std::slice::from_raw_parts(src.add(at), n) };
            if page.iter().any(|&b| b != 0) {
                // SAFETY: as above; the two mappings are distinct.
                unsafe { std::ptr::copy_nonoverlapping(src.add(at), dst.add(at), n) };
            }
        }
        HugeBuf {
            ptr: std::ptr::NonNull::new(raw as *mut T).expect("mmap gives a non-null address"),
            len: self.len,
            layout: self.layout,
            mapped: true,
        }
    }
}

/// The kernel's small page: the unit in which a sparse table commits memory.
pub const PAGE: usize = 4096;

/// Equal when their values are (how they were allocated does not matter).
impl<T: Copy + PartialEq> PartialEq for HugeBuf<T> {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for HugeBuf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HugeBuf({} values)", self.len)
    }
}

#[cfg(target_os = "linux")]
fn advise_huge(ptr: *mut u8, bytes: usize) {
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
    use super::{HugeBuf, HUGE};

    #[test]
    fn huge_buf_is_filled_and_a_large_one_aligned_to_huge_pages() {
        let mut v = HugeBuf::new(5 << 20, 7u32);
        assert_eq!(v.len(), 5 << 20);
        assert!(v.iter().all(|&x| x == 7));
        assert_eq!(v.as_ptr() as usize % HUGE, 0, "a table of more than two huge pages starts on one");
        v[123] = 9;
        let c = v.clone();
        assert_eq!((c.len(), c[123], c[124]), (5 << 20, 9, 7));
        let small = HugeBuf::new(3, 1u64);
        assert_eq!(&small[..], &[1, 1, 1]);
        assert!(HugeBuf::new(0, 0u64).is_empty());
    }
}

/// Fixed-width unsigned integers packed end to end: a flash map needs only as many bits per
/// entry as it has places to name (25 bits for a 64 GiB drive at 4 KiB), not 32. The all-ones
/// value of the width is free for the caller to use as a sentinel.
#[derive(Clone, Debug, PartialEq)]
pub struct PackedArray {
    words: HugeBuf<u64>,
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
        let mut a = PackedArray { words: HugeBuf::new(words_needed, fill), bits, mask, len };
        if value != 0 && value as u64 != mask {
            for i in 0..len {
                a.set(i, value);
            }
        }
        a
    }

    /// `len` entries of `bits` bits, all zero; a large array commits memory only where it is
    /// written something else (see [`HugeBuf::zeroed`]).
    pub fn zeroed(len: usize, bits: u32) -> PackedArray {
        assert!((1..=32).contains(&bits), "PackedArray width must be 1..=32 bits");
        let words_needed = (len * bits as usize).div_ceil(64) + 1;
        PackedArray { words: HugeBuf::zeroed(words_needed), bits, mask: (1u64 << bits) - 1, len }
    }

    /// Whether only the pages written are resident (a large [`PackedArray::zeroed`]).
    pub fn is_sparse(&self) -> bool {
        self.words.is_sparse()
    }

    /// Pages of [`PAGE`] bytes that hold anything but zeros: of a sparse array, the memory
    /// that must be resident (read whole: for tests and reports, not a hot path).
    pub fn nonzero_pages(&self) -> usize {
        self.words.chunks(PAGE / 8).filter(|c| c.iter().any(|&w| w != 0)).count()
    }

    /// Bits needed to hold values `0..=max`.
    /// The packed words themselves (with the spare word at the end), to save and restore an
    /// array as it is.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// Bits per entry.
    pub fn width(&self) -> u32 {
        self.bits
    }

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

    /// The eight bytes starting at the byte that holds entry `i`'s first bit, and that bit's
    /// place in them. An entry is at most 32 bits and starts at most 7 bits into its first
    /// byte, so it lies whole in them: one unaligned load, no branch on whether the entry
    /// straddles two words (that branch is taken at random, a mispredict a third of the
    /// time at 25 bits).
    #[cfg(target_endian = "little")]
    #[inline(always)]
    fn window(&self, i: usize) -> (usize, u32) {
        // A real check (not a debug one): the unchecked access below relies on it, and one
        // predictable compare costs less than the slice's two bounds checks it replaces.
        assert!(i < self.len, "PackedArray index {i} out of range {}", self.len);
        let bit = i * self.bits as usize;
        // bit / 8 + 8 <= len * bits / 8 + 8 <= the words' bytes, as `new` allocates one
        // spare word past the last entry's.
        (bit / 8, (bit % 8) as u32)
    }

    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        #[cfg(target_endian = "little")]
        {
            let (b, o) = self.window(i);
            // SAFETY: `window` gives the start of eight bytes inside `words`; read_unaligned
            // needs no alignment.
            let w = unsafe { (self.words.as_ptr() as *const u8).add(b).cast::<u64>().read_unaligned() };
            ((w >> o) & self.mask) as u32
        }
        #[cfg(not(target_endian = "little"))]
        {
            self.get_by_words(i)
        }
    }

    #[inline]
    pub fn set(&mut self, i: usize, value: u32) {
        debug_assert!(value as u64 <= self.mask);
        #[cfg(target_endian = "little")]
        {
            let (b, o) = self.window(i);
            let mask = self.mask;
            // SAFETY: `window` gives the start of eight bytes inside `words`, which `&mut self`
            // owns alone; the bits outside the entry are written back as they were read.
            unsafe {
                let p = (self.words.as_mut_ptr() as *mut u8).add(b).cast::<u64>();
                let w = p.read_unaligned();
                p.write_unaligned((w & !(mask << o)) | ((value as u64) << o));
            }
        }
        #[cfg(not(target_endian = "little"))]
        self.set_by_words(i, value)
    }

    /// [`PackedArray::get`] word by word: the straightforward version, for big-endian
    /// targets and to test the fast one against.
    #[inline]
    pub fn get_by_words(&self, i: usize) -> u32 {
        debug_assert!(i < self.len);
        let (w, o) = self.locate(i);
        if o + self.bits <= 64 {
            return ((self.words[w] >> o) & self.mask) as u32;
        }
        let pair = self.words[w] as u128 | (self.words[w + 1] as u128) << 64;
        ((pair >> o) as u64 & self.mask) as u32
    }

    /// [`PackedArray::set`] word by word (see [`PackedArray::get_by_words`]).
    #[inline]
    pub fn set_by_words(&mut self, i: usize, value: u32) {
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

        /// The one-load get/set agree with the word-by-word ones, entry for entry and word
        /// for word (so neighbours and the spare word are left alone), up to the last entry.
        #[test]
        fn fast_access_matches_word_by_word(bits in 1u32..=32, len in 1usize..200, ops in prop::collection::vec((any::<prop::sample::Index>(), any::<u32>(), any::<bool>()), 1..300)) {
            let fill = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            let (mut fast, mut slow) = (PackedArray::new(len, bits, fill), PackedArray::new(len, bits, fill));
            for (i, x, last) in ops {
                let i = if last { len - 1 } else { i.index(len) };
                let x = x & fill;
                fast.set(i, x);
                slow.set_by_words(i, x);
                prop_assert_eq!(fast.words(), slow.words());
                prop_assert_eq!(fast.get(i), slow.get_by_words(i));
            }
            for i in 0..len {
                prop_assert_eq!(fast.get(i), slow.get_by_words(i));
            }
        }
    }

    /// A zeroed array of a GiB or more is mapped sparse: zero to start with, written pages
    /// counted, and its copy equal to it and as sparse (only the written pages copied).
    #[test]
    fn a_large_zeroed_array_is_sparse_and_copies_so() {
        let len = (super::SPARSE_MIN / 4) + 1000;
        let mut a = PackedArray::zeroed(len, 32);
        assert_eq!((a.is_sparse(), a.get(0), a.get(len - 1), a.nonzero_pages()), (true, 0, 0, 0));
        a.set(5, 7);
        a.set(len - 1, 9);
        let c = a.clone();
        assert!(c.is_sparse());
        assert_eq!((c.get(5), c.get(6), c.get(len - 1), c.nonzero_pages()), (7, 0, 9, 2));
        let small = PackedArray::zeroed(1000, 25);
        assert!(!small.is_sparse() && small.get(999) == 0);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn an_index_past_the_end_panics() {
        let a = PackedArray::new(10, 25, 0);
        a.get(10);
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
