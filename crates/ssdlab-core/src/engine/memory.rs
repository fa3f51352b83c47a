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
