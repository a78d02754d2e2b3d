//! Rounding and number formatting shared by the results JSON and the table.
//!
//! JSON values are rounded once here so output is byte-stable and free of float noise: times in
//! milliseconds and per-second or per-event ratios to [`DP`] decimals, rates (fractions of runs)
//! to [`RATE_SIG`] significant digits and interval ends to [`CI_SIG`]. Rounding goes through
//! decimal formatting, so it is exact and identical on every platform.

/// Decimals kept for milliseconds, per-second rates and ratios.
pub const DP: usize = 3;
/// Significant digits kept for a fraction of runs.
pub const RATE_SIG: usize = 6;
/// Significant digits kept for the ends of a 95% interval.
pub const CI_SIG: usize = 4;

/// `x` rounded to `d` decimals (non-finite values pass through; -0 becomes 0).
pub fn round_dp(x: f64, d: usize) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let r: f64 = format!("{:.*}", d, x).parse().unwrap_or(x);
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

/// `x` rounded to `s` significant digits (`s >= 1`).
pub fn round_sig(x: f64, s: usize) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return if x == 0.0 { 0.0 } else { x };
    }
    format!("{:.*e}", s.max(1) - 1, x).parse().unwrap_or(x)
}

/// Milliseconds and ratios as the JSON reports them.
pub fn json_dp(x: f64) -> f64 {
    round_dp(x, DP)
}

/// A number for the table: about three significant digits, no trailing zeros
/// (`13.5`, `0.9`, `40.2`, `30012`, `2.25`, `0.012`).
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "-".to_string();
    }
    let a = x.abs();
    let d = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    trim(format!("{:.*}", d, x))
}

/// `n` and its noun, singular for one: `count(1, "seed-run")` is `1 seed-run`, `count(2, "run")`
/// is `2 runs` (every noun the outputs count takes an `s`).
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// An optional number for the table, `-` when absent.
pub fn fmt_opt(x: Option<f64>) -> String {
    x.map(fmt_num).unwrap_or_else(|| "-".to_string())
}

/// A fraction as a percentage with two significant digits: 0.037 → `3.7%`, 1.0 → `100%`,
/// 3.3e-5 → `0.0033%`.
pub fn fmt_pct(rate: f64) -> String {
    if rate == 0.0 {
        return "0%".to_string();
    }
    let p = round_sig(rate * 100.0, 2);
    // Display of f64 never uses exponents; trim the float noise of tiny values via formatting.
    let digits = if p >= 10.0 { 0 } else { (1.0 - libm::log10(p).floor()) as usize };
    format!("{}%", trim(format!("{:.*}", digits, p)))
}

fn trim(s: String) -> String {
    if s.contains('.') {
        let t = s.trim_end_matches('0').trim_end_matches('.');
        if t == "-0" {
            "0".to_string()
        } else {
            t.to_string()
        }
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_one_are_singular() {
        assert_eq!(count(1u64, "seed-run"), "1 seed-run");
        assert_eq!(count(0u64, "seed-run"), "0 seed-runs");
        assert_eq!(count(2usize as u64, "verdict"), "2 verdicts");
    }

    #[test]
    fn rounding() {
        assert_eq!(round_dp(2.123456, 3), 2.123);
        assert_eq!(round_dp(-0.0001, 3), 0.0);
        assert_eq!(round_sig(0.026958, 4), 0.02696);
        assert_eq!(round_sig(1.28034e-4, 3), 1.28e-4);
        assert_eq!(round_sig(0.0, 3), 0.0);
        assert_eq!(json_dp(1.0 / 3.0), 0.333);
    }

    #[test]
    fn table_numbers() {
        assert_eq!(fmt_num(13.5), "13.5");
        assert_eq!(fmt_num(0.9), "0.9");
        assert_eq!(fmt_num(30012.0), "30012");
        assert_eq!(fmt_num(2.254), "2.25");
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_opt(None), "-");
        assert_eq!(fmt_pct(0.037), "3.7%");
        assert_eq!(fmt_pct(1.0), "100%");
        assert_eq!(fmt_pct(1.0 / 30000.0), "0.0033%");
        assert_eq!(fmt_pct(0.5), "50%");
        assert_eq!(fmt_pct(0.02696), "2.7%");
    }
}
