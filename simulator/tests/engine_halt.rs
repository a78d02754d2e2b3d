//! How a run ends early: a zero-time loop is stopped with [`Halt::Stuck`] instead of running (and
//! growing) forever, a raised stop flag ends a long run within a bounded wall time, and a flag
//! that is never raised changes nothing.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use locksim_simulator::engine::World;
use locksim_simulator::outcome::{Halt, STUCK_EVENTS};
use locksim_simulator::process::{Ctx, Process, Protocol, TimerId};

const MS: u64 = 1_000_000;

/// A node that arms a timer `first_ms` after its start, then re-arms it `every_ms` after each
/// firing: with `every_ms` 0, simulated time never moves past `first_ms`.
#[derive(Clone, Debug)]
struct Ticker {
    first_ms: u64,
    every_ms: u64,
}

struct Ticks;
impl Protocol for Ticks {
    type Msg = ();
    type Timer = ();
}

locksim_simulator::durable_whole!(Ticker);
impl Process<Ticks> for Ticker {
    fn on_start(&mut self, ctx: &mut Ctx<Ticks>) {
        ctx.set_timer(self.first_ms * MS, ());
    }
    fn on_message(&mut self, _ctx: &mut Ctx<Ticks>, _from: usize, _msg: ()) {}
    fn on_timer(&mut self, ctx: &mut Ctx<Ticks>, _timer: TimerId, _tag: ()) {
        ctx.note(|| "tick".to_string());
        ctx.set_timer(self.every_ms * MS, ());
    }
}

fn world(ticker: Ticker, end_ms: u64, tracing: bool) -> World<Ticks> {
    common::service_world(vec![Box::new(ticker)], 1.0, false, end_ms, tracing)
}

/// A timer re-armed with no delay keeps time at 5 ms forever: the run stops once time has
/// stood still for STUCK_EVENTS events, naming the instant, instead of never returning.
#[test]
fn a_zero_time_loop_is_stopped_and_named() {
    let mut w = world(Ticker { first_ms: 5, every_ms: 0 }, 60_000, false);
    match w.run_until(None) {
        Err(Halt::Stuck(stuck)) => {
            assert_eq!(stuck.at_ns, 5 * MS);
            assert!(stuck.events >= STUCK_EVENTS, "{stuck:?}");
            let text = stuck.to_string();
            assert!(text.contains("simulated time stuck at 5 ms for") && text.contains("zero-time loop"), "{text}");
        }
        other => panic!("expected a stuck run, got {other:?}"),
    }
}

/// A run that would take minutes of wall time (a tick every simulated microsecond for a
/// simulated year) ends within a bounded time once its stop flag is raised.
#[test]
// Real time and a second thread are the point: the flag is raised from outside the run, as the
// signal handler does, and the test times how soon the run notices.
#[allow(clippy::disallowed_methods)]
fn a_raised_stop_flag_ends_a_long_run_promptly() {
    let stop = Arc::new(AtomicBool::new(false));
    let raiser = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            stop.store(true, Ordering::Relaxed);
            Instant::now()
        })
    };
    let mut w = world(Ticker { first_ms: 1, every_ms: 1 }, 365 * 24 * 3_600_000, false);
    let ended = w.run_until(Some(&stop));
    let after_stop = raiser.join().expect("raiser").elapsed();
    assert_eq!(ended, Err(Halt::Stopped));
    assert!(after_stop < Duration::from_millis(100), "stopped {after_stop:?} after the flag was raised");
}

/// A stop flag that stays down changes nothing: the same trace as a run without one.
#[test]
fn a_lowered_stop_flag_changes_nothing() {
    let run = |stop: Option<&AtomicBool>| {
        let mut w = world(Ticker { first_ms: 1, every_ms: 3 }, 100_000, true);
        assert_eq!(w.run_until(stop), Ok(()));
        let r = w.finish();
        (r.events_processed, r.trace.expect("traced").hash())
    };
    let down = AtomicBool::new(false);
    let (events, hash) = run(None);
    assert!(events > 30_000, "{events}");
    assert_eq!(run(Some(&down)), (events, hash));
}
