//! Division by a number fixed when a model is built (a drive's IUs per block, its channels):
//! the read path divides by several of them for every request, and a hardware division
//! costs tens of cycles where a multiplication or a shift costs a few. The results are the
//! exact integer quotients and remainders, so nothing a model computes changes.

/// Divides 32-bit numbers by a fixed `d` >= 1: a shift when `d` is a power of two, else a
/// multiplication by `ceil(2^64 / d)` keeping the high 64 bits of the product, which is
/// exact for every 32-bit numerator (Lemire, Kaser and Kurz, "Faster remainder by direct
/// computation", Software: Practice and Experience 49(6), 2019).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Div32 {
    d: u32,
    /// `ceil(2^64 / d)`, or 0 for a power of two (then `shift` divides).
    m: u64,
    shift: u32,
}

// `div` and `rem` take the numerator by value: not the operator traits, whose receiver is
// the numerator.
#[allow(clippy::should_implement_trait)]
impl Div32 {
    pub fn new(d: u32) -> Div32 {
        assert!(d > 0, "division by zero");
        if d.is_power_of_two() {
            Div32 { d, m: 0, shift: d.trailing_zeros() }
        } else {
            Div32 { d, m: u64::MAX / d as u64 + 1, shift: 0 }
        }
    }

    /// The divisor.
    #[inline(always)]
    pub fn get(self) -> u32 {
        self.d
    }

    /// `n / d`.
    #[inline(always)]
    pub fn div(self, n: u32) -> u32 {
        if self.m == 0 {
            n >> self.shift
        } else {
            ((self.m as u128 * n as u128) >> 64) as u32
        }
    }

    /// `n % d`.
    #[inline(always)]
    pub fn rem(self, n: u32) -> u32 {
        n - self.div(n) * self.d
    }
}

/// Divides 64-bit numbers by a fixed `d` >= 1: a shift when `d` is a power of two (a byte
/// offset by the IU size, always one in practice), else the hardware division.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Div64 {
    d: u64,
    /// Shift that divides, or `u32::MAX` when `d` is not a power of two.
    shift: u32,
}

#[allow(clippy::should_implement_trait)]
impl Div64 {
    pub fn new(d: u64) -> Div64 {
        assert!(d > 0, "division by zero");
        Div64 { d, shift: if d.is_power_of_two() { d.trailing_zeros() } else { u32::MAX } }
    }

    #[inline(always)]
    pub fn get(self) -> u64 {
        self.d
    }

    /// `n / d`.
    #[inline(always)]
    pub fn div(self, n: u64) -> u64 {
        if self.shift != u32::MAX {
            n >> self.shift
        } else {
            n / self.d
        }
    }

    /// `n.div_ceil(d)`.
    #[inline(always)]
    pub fn div_ceil(self, n: u64) -> u64 {
        if self.shift != u32::MAX {
            (n >> self.shift) + (n & (self.d - 1) != 0) as u64
        } else {
            n.div_ceil(self.d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check32(d: u32, n: u32) {
        let f = Div32::new(d);
        assert_eq!(f.div(n), n / d, "{n} / {d}");
        assert_eq!(f.rem(n), n % d, "{n} % {d}");
    }

    #[test]
    fn div32_is_exact_at_the_edges() {
        let ds = [1, 2, 3, 5, 6, 7, 10, 641, 1000, 1024, 1031, 65_535, 65_537, 1 << 31, (1 << 31) + 1, u32::MAX - 1, u32::MAX];
        for d in ds {
            for n in [0, 1, d - 1, d, d.wrapping_add(1), u32::MAX - 1, u32::MAX, u32::MAX / d * d, (u32::MAX / d * d).wrapping_sub(1)] {
                check32(d, n);
            }
        }
    }

    #[test]
    fn div64_is_exact_at_the_edges() {
        for d in [1, 2, 3, 512, 4096, 4097, 1 << 40, u64::MAX] {
            let f = Div64::new(d);
            for n in [0, 1, d - 1, d, d.wrapping_add(1), u64::MAX - 1, u64::MAX] {
                assert_eq!(f.div(n), n / d, "{n} / {d}");
                assert_eq!(f.div_ceil(n), n.div_ceil(d), "{n} div_ceil {d}");
            }
        }
    }

    proptest! {
        #[test]
        fn div32_matches_the_hardware_division(d in 1u32.., n in any::<u32>(), small in 1u32..5000) {
            check32(d, n);
            check32(small, n);
        }

        #[test]
        fn div64_matches_the_hardware_division(d in 1u64.., n in any::<u64>(), bits in 0u32..64) {
            for d in [d, 1u64 << bits] {
                let f = Div64::new(d);
                prop_assert_eq!(f.div(n), n / d);
                prop_assert_eq!(f.div_ceil(n), n.div_ceil(d));
            }
        }
    }
}
