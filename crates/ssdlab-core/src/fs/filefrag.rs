//! Extents per file as `filefrag` counts them (e2fsprogs `misc/filefrag.c`,
//! `filefrag_fiemap`): it walks the runs FIEMAP returns, in logical order, and starts a new
//! extent at a run that is not at logical 0 and whose physical start is neither where the
//! previous run ends (`expected_dense`) nor where the previous run would put this logical
//! block (`expected`). So a file is one extent per physically contiguous stretch; for an
//! ext3 block-mapped file an indirect block between two data runs breaks them, as
//! `filefrag -v` shows.

use super::inode::Extent;

/// `filefrag`'s count of a file's extents from its runs, sorted by logical block.
pub fn filefrag_extents(runs: &[Extent]) -> u64 {
    let mut n = 0u64;
    let mut last: Option<Extent> = None;
    for &e in runs {
        let (dense, expected) = match last {
            Some(l) => (
                l.phys_end(),
                (l.phys + e.logical as u64).wrapping_sub(l.logical as u64),
            ),
            // filefrag starts from a zeroed extent
            None => (0, e.logical as u64),
        };
        if e.logical != 0 && e.phys != expected && e.phys != dense {
            n += 1;
        } else if n == 0 {
            n = 1;
        }
        last = Some(e);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(logical: u32, phys: u64, len: u32) -> Extent {
        Extent { logical, len, phys }
    }

    #[test]
    fn physically_contiguous_runs_are_one_extent() {
        assert_eq!(filefrag_extents(&[]), 0);
        assert_eq!(filefrag_extents(&[ex(0, 100, 4)]), 1);
        // ext4 splits a long extent; filefrag joins the pieces
        assert_eq!(filefrag_extents(&[ex(0, 100, 4), ex(4, 104, 4)]), 1);
        // a hole in the file with the blocks where they would be: still one
        assert_eq!(filefrag_extents(&[ex(0, 100, 4), ex(8, 108, 4)]), 1);
        // an indirect block at 112 between direct block 11 and block 12 (1 KiB blocks)
        assert_eq!(filefrag_extents(&[ex(0, 100, 12), ex(12, 113, 4)]), 2);
        assert_eq!(
            filefrag_extents(&[ex(0, 100, 2), ex(2, 50, 2), ex(4, 90, 3)]),
            3
        );
    }
}
