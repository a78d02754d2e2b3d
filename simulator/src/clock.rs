//! Per-node clocks. Each node has a monotonic clock (drifts, never jumps) and a wall clock (the
//! monotonic clock plus an offset that `clock_jump` faults step). Timers run on the monotonic
//! clock, so a fast clock fires its timers early in true time; expiry that real systems compute
//! from the wall clock (Redis) reads `wall_ns` and so sees jumps.

use crate::time::Nanos;

/// A node's clock as a piecewise-linear function of true time.
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
        NodeClock { anchor_true_ns: 0, anchor_mono_ns: 0, drift_ppm, wall_offset_ns }
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
            return self.anchor_mono_ns + elapsed;
        }
        self.anchor_mono_ns + (elapsed as f64 * self.rate()).round() as Nanos
    }

    /// The wall-clock reading at true time `true_ns`, in nanoseconds since the run's epoch (may be
    /// negative).
    pub fn wall_ns(&self, true_ns: Nanos) -> i64 {
        self.mono_ns(true_ns) as i64 + self.wall_offset_ns
    }

    /// The earliest true time, not before `now_true_ns`, at which the monotonic clock reads at
    /// least `mono_ns`.
    pub fn true_time_of_mono(&self, mono_ns: Nanos, now_true_ns: Nanos) -> Nanos {
        if mono_ns <= self.anchor_mono_ns {
            return now_true_ns.max(self.anchor_true_ns);
        }
        let delta_local = mono_ns - self.anchor_mono_ns;
        if self.drift_ppm == 0.0 {
            // The clock runs at true rate: the reading is exact, no settling needed.
            return (self.anchor_true_ns + delta_local).max(now_true_ns);
        }
        let delta_true = (delta_local as f64 / self.rate()).ceil() as Nanos;
        let mut t = self.anchor_true_ns + delta_true;
        // Rounding can leave the reading one off either way: settle on the first instant it is reached.
        while self.mono_ns(t) < mono_ns {
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
        self.drift_ppm = drift_ppm;
    }

    /// Steps the wall clock by `by_ns` (negative: backwards). The monotonic clock does not move.
    pub fn jump(&mut self, by_ns: i64) {
        self.wall_offset_ns += by_ns;
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

    #[test]
    fn drift_change_keeps_reading_continuous() {
        let mut c = NodeClock::new(0.0, 0);
        c.set_drift(1_000_000_000, 500.0);
        assert_eq!(c.mono_ns(1_000_000_000), 1_000_000_000);
        assert_eq!(c.mono_ns(2_000_000_000), 2_000_500_000);
    }
}
