//! Arithmetic in GF(2^8) with the polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11d) and
//! generator 2, as RAID 6's Q syndrome uses it (H. Peter Anvin, "The mathematics of RAID-6").

/// Log and antilog tables.
pub struct Gf {
    exp: [u8; 512],
    log: [u8; 256],
}

impl Gf {
    pub fn new() -> Gf {
        let mut exp = [0u8; 512];
        let mut log = [0u8; 256];
        let mut x: u16 = 1;
        for i in 0..255 {
            exp[i] = x as u8;
            log[x as usize] = i as u8;
            x <<= 1;
            if x & 0x100 != 0 {
                x ^= 0x11d;
            }
        }
        for i in 255..512 {
            exp[i] = exp[i - 255];
        }
        Gf { exp, log }
    }

    pub fn mul(&self, a: u8, b: u8) -> u8 {
        if a == 0 || b == 0 {
            return 0;
        }
        self.exp[self.log[a as usize] as usize + self.log[b as usize] as usize]
    }

    /// `a / b`; `b` must not be zero.
    pub fn div(&self, a: u8, b: u8) -> u8 {
        assert_ne!(b, 0, "division by zero in GF(2^8)");
        if a == 0 {
            return 0;
        }
        self.exp[self.log[a as usize] as usize + 255 - self.log[b as usize] as usize]
    }

    /// The generator to the power `i` (Q's coefficient of data chunk `i`).
    pub fn pow2(&self, i: u32) -> u8 {
        self.exp[(i % 255) as usize]
    }
}

impl Default for Gf {
    fn default() -> Self {
        Gf::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiplication_is_a_field() {
        let gf = Gf::new();
        assert_eq!(gf.mul(2, 0x80), 0x1d, "x · x^7 wraps through the polynomial");
        for a in 1..=255u8 {
            for b in 1..=255u8 {
                let p = gf.mul(a, b);
                assert_ne!(p, 0);
                assert_eq!(gf.div(p, b), a);
            }
        }
        // The generator has order 255.
        assert_eq!(gf.pow2(255), 1);
        assert!((1..255).all(|i| gf.pow2(i) != 1));
    }
}
