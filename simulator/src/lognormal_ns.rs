//! A log-normal time drawn in whole nanoseconds by inverse transform from a table of its
//! quantiles: the network's latency and the workload's times ([`crate::dist::Sampler::sample_ns`]).
//!
//! The network draws one latency per message. The exact draw (a ziggurat normal, `exp`, the
//! rounding to nanoseconds) is a chain of about 25 dependent floating-point operations whose result
//! the event queue waits for: 13% of a whole `failover.toml` run. This draw is a few integer
//! operations and two loads from a table worked out when the sampler is built:
//! - the top [`STEP_BITS`] bits of one 64-bit random word pick one of [`STEPS`] equally likely
//!   steps of probability; the next 32 bits place the draw inside the step, linearly between the
//!   step's two quantiles (in whole nanoseconds, by integer arithmetic);
//! - the lowest and the highest step (each 1/[`STEPS`] of the probability) are drawn exactly
//!   instead, from the normal's tails beyond the step's edge (Marsaglia's tail method), then
//!   `exp` and rounded as [`crate::time::ms_to_ns`] does; so the upper tail stays unbounded up
//!   to the largest time, [`crate::time::MAX_TIME_MS`], where `ms_to_ns` clamps it.
//!
//! The distribution is the log-normal's exactly at every 1/[`STEPS`] of probability (the median
//! and the 99th percentile among them) and linear in between; the quantiles come from
//! [`portable::normal_quantile`], so the table and every draw are the same on every platform.

use std::sync::OnceLock;

use rand::Rng;

use crate::portable;
use crate::time::Nanos;

/// Bits of the random word that pick the step.
pub const STEP_BITS: u32 = 10;
/// Equally likely steps of probability.
pub const STEPS: usize = 1 << STEP_BITS;

/// The standard normal's quantiles at `i / STEPS`, for `i` in `1..STEPS` (index 0 unused): the
/// same for every log-normal, so worked out once per process.
fn standard_quantiles() -> &'static [f64; STEPS] {
    static Z: OnceLock<[f64; STEPS]> = OnceLock::new();
    Z.get_or_init(|| {
        let mut z = [0.0; STEPS];
        for (i, zi) in z.iter_mut().enumerate().skip(1) {
            *zi = portable::normal_quantile(i as f64 / STEPS as f64);
        }
        z
    })
}

/// `exp(mu + sigma * z)` milliseconds as whole nanoseconds.
fn quantile_ns(mu: f64, sigma: f64, z: f64) -> Nanos {
    crate::time::ms_to_ns(portable::exp(mu + sigma * z))
}

/// A log-normal in milliseconds (`exp(mu + sigma * z)`, `z` standard normal), drawn in
/// nanoseconds from its quantile table.
#[derive(Clone)]
pub struct LogNormalNs {
    mu: f64,
    sigma: f64,
    /// `edges_ns[i]`: the quantile at probability `i / STEPS`, for `i` in `1..STEPS`; the two
    /// outer entries are unused (their steps are drawn exactly).
    edges_ns: Box<[Nanos; STEPS + 1]>,
    /// The standard normal's quantiles at `1 / STEPS` and `1 - 1 / STEPS`: where the exact tails
    /// start.
    z_low: f64,
    z_high: f64,
}

/// The parameters, not the 1 025 table entries.
impl std::fmt::Debug for LogNormalNs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogNormalNs").field("mu", &self.mu).field("sigma", &self.sigma).finish_non_exhaustive()
    }
}

impl LogNormalNs {
    /// The table for `exp(mu + sigma * z)` milliseconds.
    pub fn new(mu: f64, sigma: f64) -> LogNormalNs {
        let z = standard_quantiles();
        let mut edges_ns = Box::new([0; STEPS + 1]);
        for i in 1..STEPS {
            // Never below the previous edge, so a step's width is never negative.
            edges_ns[i] = quantile_ns(mu, sigma, z[i]).max(edges_ns[i - 1]);
        }
        edges_ns[STEPS] = edges_ns[STEPS - 1];
        LogNormalNs { mu, sigma, edges_ns, z_low: z[1], z_high: z[STEPS - 1] }
    }

    /// The log of the median, in milliseconds.
    pub fn mu(&self) -> f64 {
        self.mu
    }

    /// The standard deviation of the log.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// One draw, in nanoseconds.
    #[inline]
    pub fn sample_ns<R: Rng + ?Sized>(&self, rng: &mut R) -> Nanos {
        let bits = rng.next_u64();
        let step = (bits >> (64 - STEP_BITS)) as usize;
        if step == 0 || step == STEPS - 1 {
            return self.tail_ns(rng, step == 0);
        }
        let within = (bits >> (64 - STEP_BITS - 32)) & 0xffff_ffff;
        let low_ns = self.edges_ns[step];
        let width_ns = self.edges_ns[step + 1] - low_ns;
        low_ns + ((width_ns as u128 * within as u128) >> 32) as Nanos
    }

    /// A draw from the lowest or the highest step: the normal beyond the step's edge, exactly.
    #[cold]
    #[inline(never)]
    fn tail_ns<R: Rng + ?Sized>(&self, rng: &mut R, low: bool) -> Nanos {
        let z =
            if low { -portable::normal_beyond(rng, -self.z_low) } else { portable::normal_beyond(rng, self.z_high) };
        quantile_ns(self.mu, self.sigma, z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;
    use crate::time::NS_PER_MS;

    const NS_PER_MS_F: f64 = NS_PER_MS as f64;

    fn lognormal(median_ms: f64, p99_ms: f64) -> LogNormalNs {
        let mu = portable::ln(median_ms);
        LogNormalNs::new(mu, (portable::ln(p99_ms) - mu) / 2.326_347_874_040_841)
    }

    /// The table's edges are the log-normal's quantiles: the median at step STEPS/2 and the
    /// 99th percentile between its neighbours.
    #[test]
    fn edges_are_the_quantiles() {
        let d = lognormal(0.25, 1.0);
        assert_eq!(d.edges_ns[STEPS / 2], 250_000);
        // 0.99 * 1024 = 1013.76: the p99 lies between edges 1013 and 1014.
        assert!(d.edges_ns[1013] < 1_000_000 && 1_000_000 < d.edges_ns[1014], "{:?}", &d.edges_ns[1012..1016]);
        assert!(d.edges_ns.windows(2).take(STEPS - 1).skip(1).all(|w| w[0] <= w[1]));
    }

    /// Draws follow the distribution: the empirical quantiles match the log-normal's, the upper
    /// tail reaches past the table, and the mean is the log-normal's.
    #[test]
    fn draws_have_the_median_p99_tail_and_mean() {
        let d = lognormal(0.25, 1.0);
        let mut rng = stream(7, "t", "lognormal_ns");
        let n = 400_000;
        let mut xs: Vec<Nanos> = (0..n).map(|_| d.sample_ns(&mut rng)).collect();
        let mean_ms = xs.iter().map(|x| *x as f64).sum::<f64>() / n as f64 / NS_PER_MS_F;
        xs.sort_unstable();
        let q = |p: f64| xs[(p * n as f64) as usize] as f64 / NS_PER_MS_F;
        assert!((q(0.5) - 0.25).abs() < 0.003, "median {}", q(0.5));
        assert!((q(0.99) - 1.0).abs() < 0.03, "p99 {}", q(0.99));
        // sigma = ln 4 / 2.326; the 99.99th percentile is exp(mu + 3.719 sigma) = 2.30 ms.
        assert!((q(0.9999) - 2.30).abs() < 0.25, "p99.99 {}", q(0.9999));
        assert!(*xs.last().unwrap() > d.edges_ns[STEPS - 1], "the upper tail is drawn past the table");
        assert!(xs[0] < d.edges_ns[1], "the lower tail is drawn below the table");
        // Mean exp(mu + sigma^2 / 2) = 0.25 * exp(0.5 * 0.5959^2) = 0.2988 ms.
        assert!((mean_ms - 0.2988).abs() < 0.002, "mean {mean_ms}");
    }

    /// A degenerate log-normal (sigma 0) draws its median every time.
    #[test]
    fn sigma_zero_draws_the_median() {
        let d = LogNormalNs::new(portable::ln(2.0), 0.0);
        let mut rng = stream(1, "t", "lognormal_ns");
        assert!((0..10_000).all(|_| d.sample_ns(&mut rng) == 2_000_000));
    }

    /// The same seed draws the same nanoseconds: pinned, so a change of the method or the table
    /// (which would move every latency of every run) shows here first.
    #[test]
    fn draws_are_pinned() {
        let d = lognormal(0.25, 1.0);
        let mut rng = stream(3, "t", "lognormal_ns");
        let first: Vec<Nanos> = (0..6).map(|_| d.sample_ns(&mut rng)).collect();
        assert_eq!(first, vec![153_599, 185_695, 381_227, 123_075, 272_444, 148_188]);
    }
}
