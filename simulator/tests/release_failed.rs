//! A failed release through the real workload driver: a tiny fake lock library whose every
//! release call times out (`LockEvent::ReleaseFailed`, 100 ms after the call) and whose server,
//! never told, keeps naming the client as the holder, so each acquisition re-enters the same
//! lock with the same token. The workload records the failure, the holder interval ends at the
//! release call as the application stopped using the lock there, and the loop carries on (think,
//! acquire again) rather than waiting for an answer that came as an error.

use crate::common;

use common::{run_row, Fake};
use locksim_simulator::checker::intervals::EndCause;
use locksim_simulator::checker::Timeline;
use locksim_simulator::history::{FailReason, HistoryEvent, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::model::DynModel;
use locksim_simulator::process::{Ctx, NodeId, Protocol, TimerId};
use locksim_simulator::time::NS_PER_MS;

/// How long the fake release call takes to fail.
const RELEASE_TIMEOUT_NS: u64 = 100 * NS_PER_MS;

/// The fake's protocol: no messages; a timer per release call, tagged with its key.
struct Leaky;
impl Protocol for Leaky {
    type Msg = ();
    type Timer = LockKey;
}

/// Grants at once with token 7 (the lock it never managed to release); every release fails.
#[derive(Clone, Debug)]
struct LeakyClient;

locksim_simulator::durable_whole!(LeakyClient);
impl LockClient<Leaky> for LeakyClient {
    fn on_start(&mut self, _: &mut Ctx<Leaky>, _: &mut LockEvents) {}
    fn acquire(&mut self, _: &mut Ctx<Leaky>, out: &mut LockEvents, key: LockKey, _: LockMode) {
        out.push(LockEvent::Granted { key, token: Some(7) });
    }
    fn release(&mut self, ctx: &mut Ctx<Leaky>, _: &mut LockEvents, key: LockKey) {
        ctx.set_timer(RELEASE_TIMEOUT_NS, key);
    }
    fn cancel(&mut self, _: &mut Ctx<Leaky>, _: &mut LockEvents, _: LockKey) {}
    fn on_message(&mut self, _: &mut Ctx<Leaky>, _: &mut LockEvents, _: NodeId, _: ()) {}
    fn on_timer(&mut self, _: &mut Ctx<Leaky>, out: &mut LockEvents, _: TimerId, key: LockKey) {
        out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Timeout });
    }
}

/// The leaky library as a model: no server.
static LEAKY: Fake<Leaky> = Fake { name: "leaky", library: || Box::new(LeakyClient), server: None, fenced: true };

#[test]
fn a_failed_release_is_recorded_ends_the_hold_at_the_call_and_the_loop_goes_on() {
    let models: Vec<&'static dyn DynModel> = vec![&LEAKY];
    let text = "name = \"t\"\nduration_ms = 2000\nalgorithms = [\"leaky\"]\n\n[workload]\nclients = 1\n\
                hold_ms = 10\nthink_ms = 5\n";
    let out = run_row(&models, text, 3, true);
    let events = &out.history.events;

    let released: Vec<u64> = events
        .iter()
        .filter(|e| matches!(e.event, HistoryEvent::Released { nested: false, .. }))
        .map(|e| e.at_ns)
        .collect();
    let failed: Vec<u64> = events
        .iter()
        .filter(|e| matches!(e.event, HistoryEvent::ReleaseFailed { key: 0, reason: FailReason::Timeout }))
        .map(|e| e.at_ns)
        .collect();
    assert!(failed.len() >= 5, "the loop went on after each failure: {} failed releases", failed.len());
    // Each failure is recorded when the call failed, after the release call that ended the hold.
    for (r, f) in released.iter().zip(&failed) {
        assert_eq!(f - r, RELEASE_TIMEOUT_NS, "release at {r} ns failed at {f} ns");
    }

    // Every hold ended at its release call, not at the failure 100 ms later.
    let timeline = Timeline::from_history(&out.history);
    let ended: Vec<u64> = timeline.intervals().filter(|iv| iv.end == EndCause::Released).map(|iv| iv.end_ns).collect();
    assert_eq!(ended, released);

    let m = &out.metrics;
    assert_eq!(m.failed_releases, failed.len() as u64);
    assert_eq!(m.completed_sections, released.len() as u64);
    // One client re-entering its own unreleased lock with the same token: leaked, not regressed.
    assert_eq!(m.token_regressions, 0);
    assert_eq!(m.leaked_regrants, m.acquisitions - 1);
    assert!(!m.has_violation());

    // The trace describes it: the history event and the workload's note.
    let trace = out.trace.expect("traced");
    assert!(trace.entries.iter().any(|e| e.detail.starts_with("ReleaseFailed { key: 0, reason: Timeout }")));
    assert!(trace.entries.iter().any(|e| e.detail.contains("release of key 0 failed (Timeout)")));
}
