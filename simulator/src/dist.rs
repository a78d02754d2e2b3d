//! Distributions accepted wherever the scenario format takes a number: constant, uniform,
//! exponential, log-normal fitted to a median and a p99, normal, and choice. Draws come from a
//! seeded stream, so they are part of the seed.

use rand::distributions::Distribution;
use rand::Rng;
use serde::Serialize;

use crate::lognormal_ns::LogNormalNs;
use crate::portable;

use crate::time::{ms_to_ns, Nanos};

/// z-score of the 99th percentile of the standard normal distribution.
const Z_P99: f64 = 2.326_347_874_040_841;

/// A number or a distribution of numbers, as written in a scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dist {
    /// A plain number: always this value.
    Const(f64),
    /// `{ uniform = [a, b] }`: uniform over `a..=b`, both ends included.
    Uniform(f64, f64),
    /// `{ exponential = mean }`: exponential with this mean (a mean of 0 or less always gives 0).
    Exponential(f64),
    /// `{ lognormal = { median, p99 } }`: the log-normal with this median and 99th percentile
    /// (the format requires `0 < median < p99`).
    LogNormal {
        /// The median (50th percentile).
        median: f64,
        /// The 99th percentile; one at or below `median` draws the median every time.
        p99: f64,
    },
    /// `{ normal = { mean, sd } }`: normal, unbounded both ways (times clamp draws at 0 through
    /// [`Dist::sample_non_negative`]).
    Normal {
        /// The mean.
        mean: f64,
        /// The standard deviation (the format requires `sd >= 0`); a non-finite one draws `mean`
        /// every time.
        sd: f64,
    },
    /// `{ choice = [a, b, …] }`: one of the values, each equally likely (the format requires at
    /// least one; an empty list draws 0).
    Choice(Vec<f64>),
}

impl Dist {
    /// One draw. Constants draw nothing from the stream, so adding a constant never shifts a seed.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match self {
            Dist::Const(v) => *v,
            Dist::Uniform(a, b) => {
                if a == b {
                    *a
                } else {
                    rng.gen_range(*a..=*b)
                }
            }
            Dist::Exponential(mean) => draw_exponential(*mean, rng),
            Dist::LogNormal { median, p99 } => match lognormal_params(*median, *p99) {
                Some((mu, sigma)) => draw_lognormal(mu, sigma, rng),
                None => *median,
            },
            Dist::Normal { mean, sd } => match normal_sd(*sd) {
                Some(sd) => draw_normal(*mean, sd, rng),
                None => *mean,
            },
            Dist::Choice(values) => {
                if values.is_empty() {
                    0.0
                } else {
                    values[rng.gen_range(0..values.len())]
                }
            }
        }
    }

    /// A draw for a time or other non-negative quantity: normal draws are clamped at 0.
    pub fn sample_non_negative<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        self.sample(rng).max(0.0)
    }

    /// The smallest value the distribution can give (for validation), if bounded.
    pub fn min_value(&self) -> f64 {
        match self {
            Dist::Const(v) => *v,
            Dist::Uniform(a, b) => a.min(*b),
            Dist::Exponential(_) | Dist::LogNormal { .. } => 0.0,
            Dist::Normal { .. } => f64::NEG_INFINITY,
            Dist::Choice(v) => v.iter().cloned().fold(f64::INFINITY, f64::min),
        }
    }

    /// The largest value the distribution can give, if bounded.
    pub fn max_value(&self) -> f64 {
        match self {
            Dist::Const(v) => *v,
            Dist::Uniform(a, b) => a.max(*b),
            Dist::Exponential(_) | Dist::LogNormal { .. } | Dist::Normal { .. } => f64::INFINITY,
            Dist::Choice(v) => v.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        }
    }

    /// The mean, for reports and defaults.
    pub fn mean(&self) -> f64 {
        match self {
            Dist::Const(v) => *v,
            Dist::Uniform(a, b) => (a + b) / 2.0,
            Dist::Exponential(m) => *m,
            Dist::LogNormal { median, p99 } => {
                let sigma = (portable::ln(*p99) - portable::ln(*median)) / Z_P99;
                median * portable::exp(sigma * sigma / 2.0)
            }
            Dist::Normal { mean, .. } => *mean,
            Dist::Choice(v) => v.iter().sum::<f64>() / v.len().max(1) as f64,
        }
    }
}

/// A [`Dist`] prepared for many draws: its parameters (logarithms, reciprocals, ranges) worked out
/// once. [`Sampler::sample`]'s draws are the same as [`Dist::sample`]'s, bit for bit and draw for
/// draw, from the same stream; so are [`Sampler::sample_ns`]'s, except a log-normal's, which come
/// from its quantile table ([`LogNormalNs`]). Hot paths (network latency, workload draws) use it.
#[derive(Clone, Debug)]
pub struct Sampler(Prepared);

#[derive(Clone, Debug)]
enum Prepared {
    /// Draws nothing from the stream.
    Const(f64),
    Uniform(rand::distributions::Uniform<f64>),
    /// Exponential with this mean.
    Exp(f64),
    /// `exp(mu + sigma * z)`, `z` standard normal (the table keeps `mu` and `sigma`); in
    /// nanoseconds from its quantile table.
    LogNormal(LogNormalNs),
    /// `mean + sd * z`.
    Normal {
        mean: f64,
        sd: f64,
    },
    Choice(Vec<f64>),
    /// Anything `Dist::sample` would reject at draw time (a reversed or infinite range): left to
    /// it, so the failure happens where it always did.
    Unprepared(Dist),
}

impl Sampler {
    /// Prepares `d` for drawing.
    pub fn new(d: &Dist) -> Sampler {
        Sampler(match d {
            Dist::Const(v) => Prepared::Const(*v),
            Dist::Uniform(a, b) if a == b => Prepared::Const(*a),
            // `gen_range(a..=b)` builds exactly this sampler on every call.
            Dist::Uniform(a, b) if a.is_finite() && b.is_finite() && a < b && (b - a).is_finite() => {
                Prepared::Uniform(rand::distributions::Uniform::new_inclusive(*a, *b))
            }
            Dist::Uniform(..) => Prepared::Unprepared(d.clone()),
            Dist::Exponential(mean) if *mean <= 0.0 => Prepared::Const(0.0),
            Dist::Exponential(mean) => Prepared::Exp(*mean),
            Dist::LogNormal { median, p99 } => match lognormal_params(*median, *p99) {
                Some((mu, sigma)) => Prepared::LogNormal(LogNormalNs::new(mu, sigma)),
                None => Prepared::Const(*median),
            },
            Dist::Normal { mean, sd } => match normal_sd(*sd) {
                Some(sd) => Prepared::Normal { mean: *mean, sd },
                None => Prepared::Const(*mean),
            },
            Dist::Choice(values) if values.is_empty() => Prepared::Const(0.0),
            Dist::Choice(values) => Prepared::Choice(values.clone()),
        })
    }

    /// One draw, as [`Dist::sample`].
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match &self.0 {
            Prepared::Const(v) => *v,
            Prepared::Uniform(u) => u.sample(rng),
            Prepared::Exp(mean) => draw_exponential(*mean, rng),
            Prepared::LogNormal(table) => draw_lognormal(table.mu(), table.sigma(), rng),
            Prepared::Normal { mean, sd } => draw_normal(*mean, *sd, rng),
            Prepared::Choice(values) => values[rng.gen_range(0..values.len())],
            Prepared::Unprepared(d) => d.sample(rng),
        }
    }

    /// A draw for a time or other non-negative quantity, as [`Dist::sample_non_negative`].
    #[inline]
    pub fn sample_non_negative<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        self.sample(rng).max(0.0)
    }

    /// A draw in milliseconds as nanoseconds: `ms_to_ns(self.sample_non_negative(rng))`, except
    /// for a log-normal, which draws from its quantile table ([`LogNormalNs`]: the same
    /// distribution, exact at every 1/1024 of probability and linear between, and one integer
    /// interpolation instead of a chain of floating-point functions). Either way a draw beyond
    /// [`crate::time::MAX_TIME_MS`] (a tail) comes out as [`crate::time::MAX_TIME_NS`]: every
    /// time in nanoseconds goes through [`ms_to_ns`], which clamps there.
    #[inline]
    pub fn sample_ns<R: Rng + ?Sized>(&self, rng: &mut R) -> Nanos {
        match &self.0 {
            Prepared::LogNormal(table) => table.sample_ns(rng),
            _ => ms_to_ns(self.sample_non_negative(rng)),
        }
    }
}

/// The log-normal's `mu` and `sigma` for a median and a p99 (`sigma` 0 when `p99 <= median`);
/// `None` when they are not finite (the draw is then the median).
fn lognormal_params(median: f64, p99: f64) -> Option<(f64, f64)> {
    let mu = portable::ln(median);
    let sigma = ((portable::ln(p99) - mu) / Z_P99).max(0.0);
    (sigma.is_finite() && !mu.is_nan()).then_some((mu, sigma))
}

/// A normal's standard deviation if it can be drawn with (finite); a negative one draws as its
/// magnitude would (the format rejects it before a run).
fn normal_sd(sd: f64) -> Option<f64> {
    sd.is_finite().then_some(sd)
}

#[inline]
fn draw_exponential<R: Rng + ?Sized>(mean: f64, rng: &mut R) -> f64 {
    if mean <= 0.0 {
        0.0
    } else {
        mean * portable::standard_exponential(rng)
    }
}

#[inline]
fn draw_lognormal<R: Rng + ?Sized>(mu: f64, sigma: f64, rng: &mut R) -> f64 {
    portable::exp(mu + sigma * portable::standard_normal(rng))
}

#[inline]
fn draw_normal<R: Rng + ?Sized>(mean: f64, sd: f64, rng: &mut R) -> f64 {
    mean + sd * portable::standard_normal(rng)
}

impl From<&Dist> for Sampler {
    fn from(d: &Dist) -> Sampler {
        Sampler::new(d)
    }
}

impl std::fmt::Display for Dist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dist::Const(v) => write!(f, "{v}"),
            Dist::Uniform(a, b) => write!(f, "{{ uniform = [{a}, {b}] }}"),
            Dist::Exponential(m) => write!(f, "{{ exponential = {m} }}"),
            Dist::LogNormal { median, p99 } => {
                write!(f, "{{ lognormal = {{ median = {median}, p99 = {p99} }} }}")
            }
            Dist::Normal { mean, sd } => write!(f, "{{ normal = {{ mean = {mean}, sd = {sd} }} }}"),
            Dist::Choice(v) => {
                let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                write!(f, "{{ choice = [{}] }}", items.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    #[test]
    fn lognormal_matches_its_median_and_p99() {
        let d = Dist::LogNormal { median: 0.25, p99: 1.0 };
        let mut rng = stream(1, "t", "dist");
        let mut xs: Vec<f64> = (0..100_000).map(|_| d.sample(&mut rng)).collect();
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let median = xs[50_000];
        let p99 = xs[99_000];
        assert!((median - 0.25).abs() < 0.01, "median {median}");
        assert!((p99 - 1.0).abs() < 0.06, "p99 {p99}");
    }

    #[test]
    fn uniform_stays_in_range_and_constants_draw_nothing() {
        let mut rng = stream(1, "t", "dist");
        for _ in 0..1000 {
            let x = Dist::Uniform(5.0, 50.0).sample(&mut rng);
            assert!((5.0..=50.0).contains(&x));
        }
        let mut a = stream(2, "t", "dist");
        let mut b = stream(2, "t", "dist");
        Dist::Const(3.0).sample(&mut a);
        assert_eq!(Dist::Uniform(0.0, 1.0).sample(&mut a), Dist::Uniform(0.0, 1.0).sample(&mut b));
    }

    #[test]
    fn sampler_draws_exactly_what_dist_draws() {
        let dists = [
            Dist::Const(3.0),
            Dist::Uniform(5.0, 50.0),
            Dist::Uniform(2.0, 2.0),
            Dist::Uniform(0.0, 1e-300),
            Dist::Exponential(4.0),
            Dist::Exponential(0.0),
            Dist::LogNormal { median: 0.25, p99: 1.0 },
            Dist::LogNormal { median: 1.0, p99: 0.5 },
            Dist::LogNormal { median: -1.0, p99: 1.0 },
            Dist::Normal { mean: 10.0, sd: 3.0 },
            Dist::Normal { mean: 10.0, sd: -1.0 },
            Dist::Choice(vec![1.0, 2.5, 7.0]),
            Dist::Choice(vec![]),
        ];
        for (i, d) in dists.iter().enumerate() {
            let s = Sampler::new(d);
            let mut a = stream(i as u64, "t", "sampler");
            let mut b = stream(i as u64, "t", "sampler");
            for _ in 0..2000 {
                let (x, y) = (d.sample(&mut a), s.sample(&mut b));
                assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()), "{d:?}: {x} vs {y}");
            }
            // Same number of draws taken from the stream.
            assert_eq!(rand::RngCore::next_u64(&mut a), rand::RngCore::next_u64(&mut b), "{d:?}");
        }
    }

    /// Tails beyond the largest time are clamped to it, whichever way they are drawn (the
    /// log-normal's table, its exact tails, a normal, an exponential).
    #[test]
    fn draws_beyond_the_largest_time_are_clamped() {
        use crate::time::MAX_TIME_NS;
        let dists = [
            Dist::LogNormal { median: 1e11, p99: 1e12 },
            Dist::Normal { mean: 1.0, sd: 1e12 },
            Dist::Exponential(1e12),
            Dist::Const(5e12),
        ];
        for d in &dists {
            let s = Sampler::new(d);
            let mut rng = stream(4, "t", "clamp");
            let draws: Vec<Nanos> = (0..20_000).map(|_| s.sample_ns(&mut rng)).collect();
            assert!(draws.iter().all(|&ns| ns <= MAX_TIME_NS), "{d:?}");
            assert!(draws.contains(&MAX_TIME_NS), "{d:?}: no draw reached the bound");
        }
    }

    #[test]
    fn normal_is_clamped_for_times() {
        let mut rng = stream(3, "t", "dist");
        let d = Dist::Normal { mean: 0.0, sd: 10.0 };
        assert!((0..1000).all(|_| d.sample_non_negative(&mut rng) >= 0.0));
    }
}
