//! The clock every process of a live run shares: the machine's monotonic clock (and its real-time
//! clock for wall readings), both measured from the run's start, which `sim live` fixes and hands
//! to each client process. A stopped process (SIGSTOP) finds the clock moved on when it resumes,
//! as a paused program does.

use locksim_simulator::realtime::Readings;
use nix::time::{clock_gettime, ClockId};
use serde::{Deserialize, Serialize};

fn read_ns(id: ClockId) -> i128 {
    // clock_gettime on CLOCK_MONOTONIC and CLOCK_REALTIME cannot fail on Linux.
    let ts = clock_gettime(id).expect("clock_gettime");
    ts.tv_sec() as i128 * 1_000_000_000 + ts.tv_nsec() as i128
}

/// The run's time origin, in the machine's clocks.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Epoch {
    /// CLOCK_MONOTONIC at the run's start, nanoseconds.
    pub mono_ns: i128,
    /// CLOCK_REALTIME at the run's start, nanoseconds.
    pub wall_ns: i128,
}

impl Epoch {
    /// Now is the run's start.
    pub fn now() -> Self {
        Epoch { mono_ns: read_ns(ClockId::CLOCK_MONOTONIC), wall_ns: read_ns(ClockId::CLOCK_REALTIME) }
    }

    /// Both clocks, as nanoseconds since the run's start (0 before it).
    pub fn readings(&self) -> Readings {
        let mono = read_ns(ClockId::CLOCK_MONOTONIC) - self.mono_ns;
        let wall = read_ns(ClockId::CLOCK_REALTIME) - self.wall_ns;
        Readings { mono_ns: mono.max(0) as u64, wall_ns: wall as i64 }
    }

    /// The monotonic clock since the run's start, nanoseconds.
    pub fn mono_ns(&self) -> u64 {
        self.readings().mono_ns
    }
}
