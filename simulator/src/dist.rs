//! Distributions accepted wherever the scenario format takes a number: constant, uniform,
//! exponential, log-normal fitted to a median and a p99, normal, and choice. Draws come from a
//! seeded stream, so they are part of the seed.

use rand::Rng;
use rand_distr::{Distribution, Exp, LogNormal, Normal};
use serde::Serialize;

/// z-score of the 99th percentile of the standard normal distribution.
const Z_P99: f64 = 2.326_347_874_040_841;

/// A number or a distribution of numbers, as written in a scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dist {
    Const(f64),
    Uniform(f64, f64),
    Exponential(f64),
    LogNormal { median: f64, p99: f64 },
    Normal { mean: f64, sd: f64 },
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
            Dist::Exponential(mean) => {
                if *mean <= 0.0 {
                    0.0
                } else {
                    Exp::new(1.0 / mean).map(|d| d.sample(rng)).unwrap_or(0.0)
                }
            }
            Dist::LogNormal { median, p99 } => {
                let mu = median.ln();
                let sigma = ((p99.ln() - mu) / Z_P99).max(0.0);
                LogNormal::new(mu, sigma).map(|d| d.sample(rng)).unwrap_or(*median)
            }
            Dist::Normal { mean, sd } => Normal::new(*mean, *sd).map(|d| d.sample(rng)).unwrap_or(*mean),
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
                let sigma = (p99.ln() - median.ln()) / Z_P99;
                median * (sigma * sigma / 2.0).exp()
            }
            Dist::Normal { mean, .. } => *mean,
            Dist::Choice(v) => v.iter().sum::<f64>() / v.len().max(1) as f64,
        }
    }

    pub fn is_const(&self) -> bool {
        matches!(self, Dist::Const(_))
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
    fn normal_is_clamped_for_times() {
        let mut rng = stream(3, "t", "dist");
        let d = Dist::Normal { mean: 0.0, sd: 10.0 };
        assert!((0..1000).all(|_| d.sample_non_negative(&mut rng) >= 0.0));
    }
}
