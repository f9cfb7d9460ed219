//! Seeded random draws: SplitMix64 and the distributions drawn from it,
//! for the bootstrap of [`crate::hodges_lehmann`]'s interval (Beta
//! variates) and for `atomlab run`'s tuner, which samples its beliefs about
//! each setting's rate (Gamma variates; Thompson sampling).

/// SplitMix64 (Steele, Lea & Flood 2014; Vigna's `splitmix64.c`): tiny,
/// fast, and its output is fixed forever, so seeded results reproduce.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An index in `0..n` by Lemire's multiply-shift (bias below `n / 2⁶⁴`).
    #[cfg(test)]
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// A uniform in the open interval (0, 1): 53 random bits, centred in
    /// their cell so that neither 0 nor 1 comes out (logs stay finite).
    pub fn open01(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal by Box–Muller (one of the pair).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.open01(), self.open01());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// A `Gamma(shape, 1)` variate for `shape >= 1` by Marsaglia & Tsang
    /// (2000), "A simple method for generating gamma variables", *ACM TOMS*
    /// 26(3): squeeze, then the log acceptance test.
    pub fn gamma(&mut self, shape: f64) -> f64 {
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let t = 1.0 + c * x;
            if t <= 0.0 {
                continue;
            }
            let v = t * t * t;
            let u = self.open01();
            if u < 1.0 - 0.0331 * x * x * x * x || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
                return d * v;
            }
        }
    }

    /// A `Beta(a, b)` variate for `a, b >= 1`: `X / (X + Y)` with `X` and
    /// `Y` Gamma variates of shapes `a` and `b`.
    pub fn beta(&mut self, a: f64, b: f64) -> f64 {
        let x = self.gamma(a);
        let y = self.gamma(b);
        x / (x + y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_outputs() {
        // Rosetta Code, "Pseudo-random numbers/Splitmix64": the first five
        // outputs for seed 1234567.
        let mut r = SplitMix64(1_234_567);
        let want = [
            6_457_827_717_110_365_317,
            3_203_168_211_198_807_973,
            9_817_491_932_198_370_423,
            4_593_380_528_125_082_431,
            16_408_922_859_458_223_821,
        ];
        for w in want {
            assert_eq!(r.next_u64(), w);
        }
    }

    /// The gamma draws have the distribution's mean and variance (both
    /// the shape): 20,000 draws, within a few standard errors.
    #[test]
    fn gamma_draws_have_the_shapes_mean_and_variance() {
        let mut rng = SplitMix64(7);
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
}
