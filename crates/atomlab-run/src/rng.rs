//! xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift
//! generators, scrambled", 2016): the instance shuffle and the fuzz tests'
//! random programs need speed and a replayable seed, not cryptography.
//! The tuner's draws from its beliefs ([`Rng::gamma`]) follow Marsaglia
//! and Tsang, "A simple method for generating gamma variables", ACM TOMS
//! 26(3), 2000, with normal deviates by Box and Muller (1958).

/// A xorshift64* generator.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator from `seed` (0 is replaced: xorshift has no zero state).
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n` > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// A number in `(0, 1)`: the top 53 bits, never 0 (the logarithms
    /// below take it).
    pub(crate) fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A standard normal deviate (Box-Muller; the second of the pair is
    /// not kept).
    pub(crate) fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// A draw from the gamma distribution of `shape` (at least 1) and
    /// scale 1 (Marsaglia and Tsang's squeeze method: a cubed normal
    /// deviate, accepted or drawn again; about 1.05 tries a draw).
    pub(crate) fn gamma(&mut self, shape: f64) -> f64 {
        let d = shape.max(1.0) - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = 1.0 + c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = self.unit();
            if u < 1.0 - 0.0331 * x.powi(4) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
                return d * v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    /// The gamma draws have the distribution's mean and variance (both
    /// the shape): 20,000 draws, within a few standard errors.
    #[test]
    fn gamma_draws_have_the_shapes_mean_and_variance() {
        let mut rng = Rng::new(7);
        for shape in [1.0, 2.5, 30.0] {
            let n = 20_000;
            let draws: Vec<f64> = (0..n).map(|_| rng.gamma(shape)).collect();
            assert!(draws.iter().all(|&x| x > 0.0));
            let mean = draws.iter().sum::<f64>() / n as f64;
            let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
            // The mean's standard error is sqrt(shape / n).
            let se = (shape / n as f64).sqrt();
            assert!(
                (mean - shape).abs() < 5.0 * se,
                "shape {shape}: mean {mean}"
            );
            assert!(
                (var / shape - 1.0).abs() < 0.1,
                "shape {shape}: variance {var}"
            );
        }
    }

    #[test]
    fn unit_draws_stay_inside_the_open_interval() {
        let mut rng = Rng::new(1);
        assert!((0..100_000).map(|_| rng.unit()).all(|u| u > 0.0 && u < 1.0));
    }
}
