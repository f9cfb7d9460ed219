//! A tiny seeded generator for jitter and payloads: xorshift64* (S. Vigna,
//! "An experimental exploration of Marsaglia's xorshift generators,
//! scrambled", ACM TOMS 42(4), 2016). Quality is ample for timing noise;
//! it is not a cryptographic generator.

/// xorshift64*: 64 bits of state, never zero.
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator for `seed` and stream `stream` (one per thread); the state
    /// is mixed with splitmix64 so neighbouring seeds diverge at once.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut z = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        XorShift(if z == 0 { 0x2545_F491_4F6C_DD1D } else { z })
    }

    /// The next 64 random bits.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// A seed from the clock, for runs that were not given `--seed`.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    XorShift::new(nanos, u64::from(std::process::id())).next_u64() >> 1
}

/// `--jitter`: a random short busy-wait (0 to 255 iterations of an empty
/// loop the compiler cannot remove, tens of nanoseconds) that shifts the
/// threads' relative timing and so widens or narrows race windows.
#[inline(always)]
pub fn jitter(rng: &mut XorShift, on: bool) {
    if on {
        for i in 0..(rng.next_u64() >> 56) {
            std::hint::black_box(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_per_seed_and_stream() {
        let a: Vec<u64> = (0..4).map(|_| XorShift::new(7, 0).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = XorShift::new(7, 0);
        let mut y = XorShift::new(7, 1);
        assert_ne!(x.next_u64(), y.next_u64());
        assert_ne!(XorShift::new(0, 0).next_u64(), 0);
    }
}
