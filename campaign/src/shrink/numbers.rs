//! The numbers a shrink tries in place of a number: smaller ones (toward a floor) and rounder
//! ones (fewer significant digits). Every list is in a fixed order, smallest first, so a shrink
//! is deterministic.

/// Significant digits of `v` as written in shortest form (0 has none; 30 has 1; 27.5 has 3).
pub fn significant_digits(v: f64) -> u32 {
    if v == 0.0 || !v.is_finite() {
        return 0;
    }
    let text = format!("{:e}", v.abs());
    let mantissa = text.split('e').next().unwrap_or("");
    mantissa.chars().filter(|c| c.is_ascii_digit()).count() as u32
}

/// `v` rounded to `digits` significant digits (nearest).
pub fn round_sig(v: f64, digits: u32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(digits as i32 - 1 - libm::log10(v.abs()).floor() as i32);
    let r = (v * scale).round() / scale;
    // Tidy the binary noise of the division (0.30000000000000004).
    format!("{r:.12e}").parse().unwrap_or(r)
}

/// `v` rounded up to `digits` significant digits.
pub fn ceil_sig(v: f64, digits: u32) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(digits as i32 - 1 - libm::log10(v).floor() as i32);
    let r = (v * scale).ceil() / scale;
    format!("{r:.12e}").parse().unwrap_or(r)
}

/// Smaller values for a time that shrinks toward `floor` (0 for a start, 1 ms for a length):
/// the floor itself when `with_floor`, then a tenth, a quarter, a half and three quarters of the
/// way, each rounded to two significant digits and then to a whole millisecond (a shrink never
/// goes below 1 ms precision, or it would halve a length toward 0 for ever). Ascending, all
/// below `v`.
pub fn smaller(v: f64, floor: f64, with_floor: bool) -> Vec<f64> {
    if v.is_nan() || v <= floor {
        return Vec::new();
    }
    let mut out = Vec::new();
    if with_floor {
        out.push(floor);
    }
    for f in [0.1, 0.25, 0.5, 0.75] {
        let x = round_sig(floor + (v - floor) * f, 2).round();
        if x >= 1.0 && x > floor {
            out.push(x);
        }
    }
    tidy(out, v)
}

/// Smaller integers down to `min`: the minimum, half, and one less. Ascending, all below `n`.
pub fn smaller_int(n: i64, min: i64) -> Vec<i64> {
    let mut out: Vec<i64> = [min, n / 2, n - 1].into_iter().filter(|x| *x >= min && *x < n).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Rounder values of `v`: rounded toward zero to one, then two significant digits, only those
/// with fewer significant digits than `v` has. Never larger in size than `v`: a rounder length
/// or count must not undo a shrink (45 000 may become 40 000, never 50 000).
pub fn rounder(v: f64) -> Vec<f64> {
    let have = significant_digits(v);
    let mut out = Vec::new();
    for digits in 1..have.min(3) {
        let x = if v > 0.0 { floor_sig(v, digits) } else { -floor_sig(-v, digits) };
        if x != v && x != 0.0 && !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

fn floor_sig(v: f64, digits: u32) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(digits as i32 - 1 - libm::log10(v).floor() as i32);
    let r = (v * scale).floor() / scale;
    format!("{r:.12e}").parse().unwrap_or(r)
}

/// Sorted ascending, without repeats, all below `v`.
fn tidy(mut out: Vec<f64>, v: f64) -> Vec<f64> {
    out.retain(|x| *x < v);
    out.sort_by(f64::total_cmp);
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_and_rounding() {
        assert_eq!(significant_digits(30.0), 1);
        assert_eq!(significant_digits(27.5), 3);
        assert_eq!(significant_digits(0.0), 0);
        assert_eq!(round_sig(27.5, 1), 30.0);
        assert_eq!(round_sig(0.123, 2), 0.12);
        assert_eq!(ceil_sig(11_001.0, 2), 12_000.0);
    }

    #[test]
    fn smaller_values_are_below_and_ascending() {
        assert_eq!(smaller(60_000.0, 0.0, true), vec![0.0, 6_000.0, 15_000.0, 30_000.0, 45_000.0]);
        assert_eq!(smaller(10.0, 1.0, false), vec![2.0, 3.0, 6.0, 8.0]);
        assert_eq!(smaller(10.0, 1.0, true), vec![1.0, 2.0, 3.0, 6.0, 8.0]);
        assert_eq!(smaller(1.5, 0.0, true), vec![0.0, 1.0]);
        assert!(smaller(0.0, 0.0, true).is_empty());
        assert_eq!(smaller_int(10, 1), vec![1, 5, 9]);
        assert_eq!(smaller_int(2, 1), vec![1]);
        assert!(smaller_int(1, 1).is_empty());
    }

    #[test]
    fn rounder_values_have_fewer_digits() {
        assert_eq!(rounder(27.5), vec![20.0, 27.0]);
        assert_eq!(rounder(45_000.0), vec![40_000.0]);
        assert!(rounder(30.0).is_empty());
        assert_eq!(rounder(-15.0), vec![-10.0]);
    }
}
