//! Simulated time: integer nanoseconds of true time, and conversions from the millisecond floats
//! that scenario files use.

/// Nanoseconds. True time (the simulator's) and node-local monotonic time share this unit.
pub type Nanos = u64;

/// Nanoseconds in a millisecond.
pub const NS_PER_MS: u64 = 1_000_000;
/// Nanoseconds in a second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// Milliseconds (possibly fractional, never negative) to nanoseconds, rounded to the nearest.
pub fn ms_to_ns(ms: f64) -> Nanos {
    if ms.is_nan() || ms <= 0.0 {
        0
    } else {
        (ms * NS_PER_MS as f64).round() as Nanos
    }
}

/// Signed milliseconds to signed nanoseconds (clock jumps may go backwards).
pub fn ms_to_ns_signed(ms: f64) -> i64 {
    (ms * NS_PER_MS as f64).round() as i64
}

/// Nanoseconds to milliseconds, for reports.
pub fn ns_to_ms(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_MS as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn conversions_round_trip() {
        assert_eq!(ms_to_ns(0.25), 250_000);
        assert_eq!(ms_to_ns(-3.0), 0);
        assert_eq!(ms_to_ns_signed(-1.5), -1_500_000);
        assert_eq!(ns_to_ms(2_500_000), 2.5);
    }
}
