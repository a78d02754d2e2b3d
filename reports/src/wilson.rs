//! 95% confidence for "k of n runs showed it": the Wilson score interval, and for k = 0 the bound
//! a clean set of runs rules out.
//!
//! The Wilson interval behaves at the edges (k = 0, k = n, small n) where the normal
//! approximation collapses to a zero-width interval. With k = 0 a one-sided statement says more:
//! the rule of three, "below 3/n at 95%" (the exact one-sided bound is 1 − 0.05^(1/n), always just
//! under 3/n). That is the one figure every output gives for a class no run showed: the table's
//! "< 1e-4 at 95%", the results JSON's `rules_out`, and the dotted bound of the violations chart. (The
//! Wilson interval's upper end for 0 of n, z² / (n + z²) ≈ 3.84 / n, is a two-sided 95% bound,
//! i.e. one-sided 97.5%, and would overstate what the runs leave open.)

/// The two-sided 95% standard normal quantile.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The 95% Wilson score interval `(low, high)` for `k` successes in `n` trials; `None` when
/// `n == 0`. `k` above `n` is clamped to `n`. The ends are exact at the edges: `low == 0` when
/// `k == 0` and `high == 1` when `k == n`.
pub fn wilson95(k: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let k = k.min(n);
    let nf = n as f64;
    let p = k as f64 / nf;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / nf;
    let center = (p + z2 / (2.0 * nf)) / denom;
    let half = Z95 / denom * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt();
    let low = if k == 0 { 0.0 } else { (center - half).max(0.0) };
    let high = if k == n { 1.0 } else { (center + half).min(1.0) };
    Some((low, high))
}

/// What n clean runs rule out at 95% (one-sided): the rule of three, 3/`n`, capped at 1
/// (0 of 30 000 gives 1e-4; 3 runs or fewer rule nothing out and give 1). `None` when `n == 0`.
pub fn rules_out(n: u64) -> Option<f64> {
    rule_of_three(n).map(|b| b.min(1.0))
}

/// The rule of three: with 0 of `n`, the rate is below 3/n at 95% (one-sided). `None` when
/// `n == 0`; can be 1 or more for `n <= 3`, where nothing is ruled out.
pub fn rule_of_three(n: u64) -> Option<f64> {
    if n == 0 {
        None
    } else {
        Some(3.0 / n as f64)
    }
}

/// The table's text for a class no run showed: `"< 1e-4 at 95%"` for 30 000 runs (the rule of
/// three, rounded up to two significant digits so the claim never gets stronger),
/// `"nothing ruled out"` for 3 runs or fewer, `"no runs"` for none.
pub fn rules_out_text(n: u64) -> String {
    match rule_of_three(n) {
        None => "no runs".to_string(),
        Some(b) if b >= 1.0 => "nothing ruled out".to_string(),
        Some(b) => format!("< {} at 95%", sci_up(b)),
    }
}

/// `x` (positive, below 1) in scientific notation with at most two significant digits, rounded
/// up: 1e-4 → "1e-4", 4.2857e-3 → "4.3e-3", 0.15 → "1.5e-1".
pub(crate) fn sci_up(x: f64) -> String {
    if x.is_nan() || x <= 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let mut exp = libm::log10(x).floor() as i32;
    let mut mant = x / 10f64.powi(exp);
    // log10 can land one off for values at a power of ten.
    if mant >= 10.0 - 1e-12 {
        mant /= 10.0;
        exp += 1;
    } else if mant < 1.0 {
        mant *= 10.0;
        exp -= 1;
    }
    // Tenths, rounded up, ignoring float noise below 1e-9.
    let mut tenths = (mant * 10.0 - 1e-9).ceil() as i64;
    if tenths >= 100 {
        tenths = 10;
        exp += 1;
    }
    if tenths % 10 == 0 {
        format!("{}e{}", tenths / 10, exp)
    } else {
        format!("{}.{}e{}", tenths / 10, tenths % 10, exp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn zero_of_30000_rules_out_1e_4_one_sided() {
        // The rule of three, just above the exact one-sided bound 1 - 0.05^(1/n).
        let b = rules_out(30_000).unwrap();
        assert!(close(b, 1e-4, 1e-12), "{b}");
        let exact = 1.0 - libm::pow(0.05, 1.0 / 30_000.0);
        assert!(exact < b && b - exact < 1e-6, "{exact} vs {b}");
        // The two-sided Wilson upper end is larger: it is not what the runs rule out at 95%.
        let (lo, hi) = wilson95(0, 30_000).unwrap();
        assert_eq!(lo, 0.0);
        assert!(close(hi, 1.2803e-4, 1e-7), "{hi}");
        // Few runs rule nothing out.
        assert_eq!(rules_out(3), Some(1.0));
        assert_eq!(rules_out(200), Some(0.015));
    }

    #[test]
    fn thirty_seven_of_1000() {
        let (lo, hi) = wilson95(37, 1000).unwrap();
        assert!(close(lo, 0.027, 0.0005), "{lo}");
        assert!(close(hi, 0.051, 0.0005), "{hi}");
        // Reference values (R: prop.test(37, 1000, correct = FALSE)$conf.int ≈ 0.02696, 0.05058).
        assert!(close(lo, 0.02696, 5e-5), "{lo}");
        assert!(close(hi, 0.05058, 5e-5), "{hi}");
    }

    #[test]
    fn edges_and_symmetry() {
        assert_eq!(wilson95(0, 0), None);
        assert_eq!(rules_out(0), None);
        let (lo, hi) = wilson95(10, 10).unwrap();
        assert_eq!(hi, 1.0);
        let (lo0, hi0) = wilson95(0, 10).unwrap();
        assert!(close(lo, 1.0 - hi0, 1e-12) && lo0 == 0.0);
        // 0 of 10: z²/(n+z²) = 3.8415/13.8415.
        assert!(close(hi0, 0.27753, 1e-4), "{hi0}");
        // 5 of 10 is symmetric around 0.5: [0.2366, 0.7634].
        let (l, h) = wilson95(5, 10).unwrap();
        assert!(close(l, 0.2366, 1e-4) && close(h, 0.7634, 1e-4), "{l} {h}");
        // k above n is clamped.
        assert_eq!(wilson95(12, 10), wilson95(10, 10));
    }

    #[test]
    fn rule_of_three_text() {
        assert_eq!(rules_out_text(30_000), "< 1e-4 at 95%");
        assert_eq!(rules_out_text(1000), "< 3e-3 at 95%");
        assert_eq!(rules_out_text(700), "< 4.3e-3 at 95%");
        assert_eq!(rules_out_text(20), "< 1.5e-1 at 95%");
        assert_eq!(rules_out_text(3), "nothing ruled out");
        assert_eq!(rules_out_text(0), "no runs");
        assert_eq!(sci_up(0.001), "1e-3");
        assert_eq!(sci_up(9.96e-3), "1e-2");
    }
}
