//! Per-node clocks. Each node has a monotonic clock (drifts, never jumps) and a wall clock (the
//! monotonic clock plus an offset that `clock_jump` faults step). Timers run on the monotonic
//! clock, so a fast clock fires its timers early in true time; expiry that real systems compute
//! from the wall clock (Redis) reads `wall_ns` and so sees jumps.

use crate::time::Nanos;

/// The largest rate error either way, in ppm: the format's bound, which keeps a clock running
/// forward. A draw beyond it (a normal's tail) is clamped to it.
pub const MAX_DRIFT_PPM: f64 = 999_999.0;

/// A drawn rate error within [-[`MAX_DRIFT_PPM`], [`MAX_DRIFT_PPM`]] (NaN: 0). A rate at or
/// below zero would stop the clock or run it backwards, and a timer on it would never come due.
fn bounded_ppm(ppm: f64) -> f64 {
    if ppm.is_nan() {
        0.0
    } else {
        ppm.clamp(-MAX_DRIFT_PPM, MAX_DRIFT_PPM)
    }
}

/// A node's clock as a piecewise-linear function of true time.
///
/// Its arithmetic saturates: a monotonic reading beyond 64 bits stays at `Nanos::MAX` (a timer
/// due then never fires, as the run ends long before), and a wall clock stepped beyond `i64`
/// stays at its end instead of wrapping to the other side.
#[derive(Clone, Debug)]
pub struct NodeClock {
    /// True time at which the current rate segment began.
    anchor_true_ns: Nanos,
    /// Monotonic reading at `anchor_true_ns`.
    anchor_mono_ns: Nanos,
    /// Rate error in parts per million (positive: the clock runs fast).
    drift_ppm: f64,
    /// Wall clock minus monotonic clock: the initial offset plus every jump.
    wall_offset_ns: i64,
}

impl NodeClock {
    /// A clock that starts reading 0 (monotonic) at true time 0, with this rate error and wall offset.
    pub fn new(drift_ppm: f64, wall_offset_ns: i64) -> Self {
        NodeClock { anchor_true_ns: 0, anchor_mono_ns: 0, drift_ppm: bounded_ppm(drift_ppm), wall_offset_ns }
    }

    fn rate(&self) -> f64 {
        1.0 + self.drift_ppm / 1e6
    }

    /// The current rate error in parts per million (positive: the clock runs fast).
    pub fn drift_ppm(&self) -> f64 {
        self.drift_ppm
    }

    /// The monotonic reading at true time `true_ns` (which must not precede the last rate change).
    pub fn mono_ns(&self, true_ns: Nanos) -> Nanos {
        let elapsed = true_ns.saturating_sub(self.anchor_true_ns);
        if self.drift_ppm == 0.0 {
            return self.anchor_mono_ns.saturating_add(elapsed);
        }
        // The cast saturates too.
        self.anchor_mono_ns.saturating_add((elapsed as f64 * self.rate()).round() as Nanos)
    }

    /// The wall-clock reading at true time `true_ns`, in nanoseconds since the run's epoch (may be
    /// negative).
    pub fn wall_ns(&self, true_ns: Nanos) -> i64 {
        i64::try_from(self.mono_ns(true_ns)).unwrap_or(i64::MAX).saturating_add(self.wall_offset_ns)
    }

    /// The earliest true time, not before `now_true_ns`, at which the monotonic clock reads at
    /// least `mono_ns`; `Nanos::MAX` (never, in a run) when that is beyond 64 bits.
    pub fn true_time_of_mono(&self, mono_ns: Nanos, now_true_ns: Nanos) -> Nanos {
        if mono_ns <= self.anchor_mono_ns {
            return now_true_ns.max(self.anchor_true_ns);
        }
        let delta_local = mono_ns - self.anchor_mono_ns;
        if self.drift_ppm == 0.0 {
            // The clock runs at true rate: the reading is exact, no settling needed.
            return self.anchor_true_ns.saturating_add(delta_local).max(now_true_ns);
        }
        let delta_true = (delta_local as f64 / self.rate()).ceil() as Nanos;
        let mut t = self.anchor_true_ns.saturating_add(delta_true);
        // Rounding can leave the reading one off either way: settle on the first instant it is
        // reached (or on the end of time, where the reading saturates short of it).
        while t < Nanos::MAX && self.mono_ns(t) < mono_ns {
            t += 1;
        }
        while t > self.anchor_true_ns && self.mono_ns(t - 1) >= mono_ns {
            t -= 1;
        }
        t.max(now_true_ns)
    }

    /// Changes the rate from true time `now_true_ns` on; readings stay continuous.
    pub fn set_drift(&mut self, now_true_ns: Nanos, drift_ppm: f64) {
        self.anchor_mono_ns = self.mono_ns(now_true_ns);
        self.anchor_true_ns = now_true_ns;
        self.drift_ppm = bounded_ppm(drift_ppm);
    }

    /// Steps the wall clock by `by_ns` (negative: backwards). The monotonic clock does not move.
    /// Steps add up saturating: a wall clock stepped beyond `i64` either way stays at its end.
    pub fn jump(&mut self, by_ns: i64) {
        self.wall_offset_ns = self.wall_offset_ns.saturating_add(by_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_makes_a_fast_clock_read_ahead() {
        let c = NodeClock::new(100.0, 0); // 100 ppm fast
        assert_eq!(c.mono_ns(1_000_000_000), 1_000_100_000);
        let slow = NodeClock::new(-250.0, 0);
        assert_eq!(slow.mono_ns(2_000_000_000), 1_999_500_000);
    }

    #[test]
    fn timer_deadline_maps_back_to_true_time() {
        let c = NodeClock::new(1000.0, 0); // 0.1% fast: 10 s local arrive 10 ms early
        let t = c.true_time_of_mono(10_000_000_000, 0);
        assert!(c.mono_ns(t) >= 10_000_000_000);
        assert!(c.mono_ns(t - 1) < 10_000_000_000);
        assert_eq!((10_000_000_000 - t) / 1_000_000, 9); // ~9.99 ms early
    }

    /// The drift-free shortcut gives what the general search gives.
    #[test]
    fn true_time_of_a_drift_free_clock_is_exact() {
        let mut c = NodeClock::new(0.0, 7);
        c.set_drift(500, 0.0);
        for (mono, now) in [(0, 0), (499, 0), (500, 0), (501, 0), (10_000, 0), (10_000, 20_000), (1 << 40, 3)] {
            let t = c.true_time_of_mono(mono, now);
            let want = if mono <= 500 { now.max(500) } else { (500 + mono - 500).max(now) };
            assert_eq!(t, want, "mono {mono} now {now}");
            if mono > 500 && t > now {
                assert!(c.mono_ns(t) >= mono && c.mono_ns(t - 1) < mono);
            }
        }
    }

    #[test]
    fn jumps_move_wall_not_monotonic() {
        let mut c = NodeClock::new(0.0, 5_000_000);
        assert_eq!(c.wall_ns(1_000), 5_001_000);
        c.jump(-10_000_000);
        assert_eq!(c.mono_ns(1_000), 1_000);
        assert_eq!(c.wall_ns(1_000), -4_999_000);
    }

    /// Steps and readings at the ends of 64 bits saturate instead of wrapping (a wall clock
    /// stepped forward by 1e13 ms once read about -9.2e15 ms) or panicking.
    #[test]
    fn extreme_steps_and_readings_saturate() {
        let max_ns = crate::time::MAX_TIME_NS as i64;
        let mut c = NodeClock::new(0.0, max_ns);
        for _ in 0..20 {
            c.jump(max_ns);
        }
        assert_eq!(c.wall_ns(5), i64::MAX);
        for _ in 0..40 {
            c.jump(-max_ns);
        }
        assert_eq!(c.wall_ns(0), i64::MIN);
        let fast = NodeClock::new(999_999.0, 0);
        assert_eq!(fast.mono_ns(Nanos::MAX), Nanos::MAX);
        assert!(fast.wall_ns(Nanos::MAX) == i64::MAX);
        // A deadline no true time reaches is never.
        let slow = NodeClock::new(-999_999.0, 0);
        assert_eq!(slow.true_time_of_mono(Nanos::MAX - 1, 0), Nanos::MAX);
        assert_eq!(NodeClock::new(0.0, 0).true_time_of_mono(Nanos::MAX, 7), Nanos::MAX);
    }

    /// A rate error drawn beyond the bound (a normal's tail) keeps the clock running forward,
    /// so a timer on it comes due.
    #[test]
    fn drift_beyond_the_bound_is_clamped() {
        let mut c = NodeClock::new(-5e6, 0);
        assert_eq!(c.drift_ppm(), -MAX_DRIFT_PPM);
        assert!(c.mono_ns(2_000_000) > c.mono_ns(1_000_000));
        c.set_drift(1_000, f64::NAN);
        assert_eq!(c.drift_ppm(), 0.0);
        c.set_drift(1_000, 3e6);
        assert_eq!(c.drift_ppm(), MAX_DRIFT_PPM);
        let t = c.true_time_of_mono(1_000_000, 0);
        assert!(c.mono_ns(t) >= 1_000_000);
    }

    #[test]
    fn drift_change_keeps_reading_continuous() {
        let mut c = NodeClock::new(0.0, 0);
        c.set_drift(1_000_000_000, 500.0);
        assert_eq!(c.mono_ns(1_000_000_000), 1_000_000_000);
        assert_eq!(c.mono_ns(2_000_000_000), 2_000_500_000);
    }
}
