//! Simulated time: integer nanoseconds of true time, and conversions from the millisecond floats
//! that scenario files use.

/// Nanoseconds. True time (the simulator's) and node-local monotonic time share this unit.
pub type Nanos = u64;

/// Nanoseconds in a millisecond.
pub const NS_PER_MS: u64 = 1_000_000;
/// Nanoseconds in a second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// The largest time a scenario may write, in milliseconds (about 31.7 years): every time,
/// duration, distribution parameter and clock step the parser accepts is within it (either way
/// for the signed ones). In nanoseconds it is 1e18, so a sum of a few such times, and a wall
/// clock stepped by a few of them, still fits in 64 bits; the engine's own sums saturate beyond.
pub const MAX_TIME_MS: f64 = 1e12;
/// [`MAX_TIME_MS`] in nanoseconds: what [`ms_to_ns`] clamps a longer time to (a log-normal's
/// tail can draw beyond any bound).
pub const MAX_TIME_NS: Nanos = 1_000_000_000_000_000_000;

/// Milliseconds (possibly fractional, never negative) to nanoseconds, rounded to the nearest (half
/// away from zero, as `f64::round`; NaN and anything at or below 0 give 0; anything above
/// [`MAX_TIME_MS`] gives [`MAX_TIME_NS`]).
///
/// The rounding is done by hand and inline: `f64::round` is a library call on the default x86-64
/// target, and this runs for every message's latency and every server's service time. The
/// result is `((ms * 1e6).round() as Nanos).min(MAX_TIME_NS)` for every input (a test compares
/// the two).
#[inline]
pub fn ms_to_ns(ms: f64) -> Nanos {
    if ms.is_nan() || ms <= 0.0 {
        return 0;
    }
    let x = ms * NS_PER_MS as f64;
    // From 2^52 on every double is a whole number: nothing to round; the clamp is the bound
    // (below 2^52 nanoseconds, about 52 days, no value reaches it).
    if x >= 4_503_599_627_370_496.0 {
        return (x as Nanos).min(MAX_TIME_NS);
    }
    // Below 2^52 the truncation and the fraction `x - t` are exact, so comparing the fraction
    // with one half is exactly round-half-away-from-zero. (Signed conversions: one instruction
    // each way, where unsigned ones take several.)
    let t = x as i64;
    (t + (x - t as f64 >= 0.5) as i64) as Nanos
}

/// Signed milliseconds to signed nanoseconds (clock jumps may go backwards), clamped to
/// [`MAX_TIME_NS`] either way; NaN gives 0.
pub fn ms_to_ns_signed(ms: f64) -> i64 {
    let bound = MAX_TIME_NS as i64;
    ((ms * NS_PER_MS as f64).round() as i64).clamp(-bound, bound)
}

/// Nanoseconds to milliseconds, for reports.
pub fn ns_to_ms(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_MS as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn conversions_round_trip() {
        assert_eq!(ms_to_ns(0.25), 250_000);
        assert_eq!(ms_to_ns(-3.0), 0);
        assert_eq!(ms_to_ns_signed(-1.5), -1_500_000);
        assert_eq!(ns_to_ms(2_500_000), 2.5);
    }

    /// Times beyond the bound (a log-normal's tail, a distribution's far end) come out as the
    /// bound, not as a value that wraps when added to the time now.
    #[test]
    fn times_beyond_the_bound_are_clamped_to_it() {
        assert_eq!(ms_to_ns(MAX_TIME_MS), MAX_TIME_NS);
        assert_eq!(ms_to_ns(2e13), MAX_TIME_NS);
        assert_eq!(ms_to_ns(1e14), MAX_TIME_NS);
        assert_eq!(ms_to_ns(f64::INFINITY), MAX_TIME_NS);
        assert_eq!(ms_to_ns_signed(1e13), MAX_TIME_NS as i64);
        assert_eq!(ms_to_ns_signed(-1e13), -(MAX_TIME_NS as i64));
        assert_eq!(ms_to_ns_signed(-1e300), -(MAX_TIME_NS as i64));
        assert_eq!(ms_to_ns_signed(f64::NAN), 0);
        // Two of them still add up within 64 bits.
        assert!(MAX_TIME_NS.checked_mul(4).is_some());
        assert!((MAX_TIME_NS as i64).checked_mul(4).is_some());
    }

    #[test]
    fn ms_to_ns_rounds_as_f64_round() {
        let mut rng = crate::rng::stream(9, "t", "round");
        let mut cases = vec![
            0.0,
            -0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            1e-7,
            4e-7,
            5e-7,
            6e-7,
            0.25,
            1.5,
            2.5e-6,
            0.0000015,
            1e7,
            1e12,
            4.503_599_627_370_495e9,
            4.503599627370496e9,
            1.844_674_407_370_955e13,
            1e300,
        ];
        cases.extend((0..20_000).map(|i| {
            let x: f64 = rng.gen::<f64>() * 10f64.powi(i % 12 - 4);
            if i % 3 == 0 {
                // Exactly half-way nanosecond values.
                ((x * 1e6).floor() + 0.5) / 1e6
            } else {
                x
            }
        }));
        for ms in cases {
            // The definition: round half away from zero, then the saturating cast.
            let reference =
                if ms.is_nan() || ms <= 0.0 { 0 } else { ((ms * NS_PER_MS as f64).round() as Nanos).min(MAX_TIME_NS) };
            assert_eq!(ms_to_ns(ms), reference, "{ms:e}");
        }
    }
}
