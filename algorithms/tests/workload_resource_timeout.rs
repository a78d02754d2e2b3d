//! The workload's resource time-out (simulator/src/workload.rs, `RESOURCE_TIMEOUT_NS`; the
//! scenario format: "a read or write the resource does not answer within 1 s is given up and the
//! section releases without writing"), driven by cutting the link to `resource` with a partition.
//! The model is redis on one instance (any model would do: the driver is shared).

use crate::common;

use common::*;
use locksim_algorithms::redis::protocol::{Command, RedisMsg};
use locksim_simulator::history::HistoryEvent;
use locksim_simulator::wire::ResourceMsg;

/// The time-out the workload documents.
const RESOURCE_TIMEOUT_MS: f64 = 1000.0;
const LATENCY_MS: f64 = 0.25;
const HOLD_MS: f64 = 100.0;

/// client-0 takes the lock at once (SET at 0.25 ms, granted at 0.55 ms), reads the resource
/// (answered at 1.05 ms) and holds `HOLD_MS`; the resource is cut off at `cut_ms`, for good.
fn cut_resource(cut_ms: f64) -> String {
    format!(
        r#"
name = "resource-timeout"
duration_ms = 5000
algorithms = ["redis"]
[network]
latency_ms = {LATENCY_MS}
[workload]
clients = 1
think_ms = 0
hold_ms = {HOLD_MS}
acquisitions_per_client = 1
[[faults]]
kind = "partition"
groups = [["resource"], ["client-*", "server-*"]]
at_ms = {cut_ms}
"#
    )
}

fn at_ms(s: &locksim_simulator::history::Stamped) -> f64 {
    s.at_ns as f64 / 1e6
}

/// The messages to the resource that `is`, dropped at their sender (a cut link).
fn dropped_to_resource(
    out: &locksim_simulator::run::SeedOutcome,
    is: impl Fn(&ResourceMsg) -> bool,
) -> Vec<locksim_simulator::trace::MessageLine<'_, ResourceMsg>> {
    dropped::<ResourceMsg>(out).into_iter().filter(|d| d.peer == "resource" && is(d.msg)).collect()
}

#[test]
fn a_write_the_resource_never_answers_is_given_up_after_one_second_and_the_section_releases() {
    // Cut after the read was answered (1.05 ms) and before the write (0.55 + 100 ms).
    let text = cut_resource(50.0);
    for seed in 0..3 {
        let out = run(&text, "redis", seed);
        let granted = events(&out, |e| matches!(e, HistoryEvent::Granted { nested: false, .. }));
        assert_eq!(granted.len(), 1, "seed {seed}");
        let grant_ms = at_ms(granted[0]);
        assert!((grant_ms - (2.0 * LATENCY_MS + 0.05)).abs() < 1e-6, "seed {seed}: granted at {grant_ms}");
        assert_eq!(events(&out, |e| matches!(e, HistoryEvent::ResourceRead { .. })).len(), 1, "seed {seed}");
        // The write goes out when the hold ends, and the cut link drops it.
        let writes_sent = dropped_to_resource(&out, |m| matches!(m, ResourceMsg::Write { .. }));
        assert_eq!(writes_sent.len(), 1, "seed {seed}: {writes_sent:?}");
        let (write_ms, writer) = (writes_sent[0].at_ms(), writes_sent[0].node);
        assert_eq!(writer, "client-0");
        assert!((write_ms - (grant_ms + HOLD_MS)).abs() < 1e-6, "seed {seed}: write sent at {write_ms}");
        // The resource records no write.
        assert!(events(&out, |e| matches!(e, HistoryEvent::ResourceWrite { .. })).is_empty(), "seed {seed}");
        // The section ends exactly one time-out after the write went out, and releases.
        let released = events(&out, |e| matches!(e, HistoryEvent::Released { nested: false, .. }));
        assert_eq!(released.len(), 1, "seed {seed}");
        let release_ms = at_ms(released[0]);
        assert!(
            (release_ms - (write_ms + RESOURCE_TIMEOUT_MS)).abs() < 1e-6,
            "seed {seed}: write sent at {write_ms} ms, released at {release_ms} ms"
        );
        let gave_up = notes(&out, "resource did not answer");
        assert_eq!(gave_up.len(), 1, "seed {seed}");
        assert!((gave_up[0].0 - release_ms).abs() < 1e-9);
        // The lock is really released: the unlock reaches the server one latency later.
        let unlock = delivered::<RedisMsg>(&out)
            .into_iter()
            .filter(|d| d.node == "server-0" && d.peer == "client-0" && d.at_ms() > write_ms)
            .filter(|d| matches!(d.msg, RedisMsg::Request(r) if !matches!(r.cmd, Command::SetNxPx { .. })))
            .map(|d| d.at_ms())
            .next()
            .expect("the unlock");
        assert!((unlock - (release_ms + LATENCY_MS)).abs() < 1e-6, "seed {seed}: unlock at {unlock}");
        // A resource time-out is not a lost lock: the section is released, not abandoned.
        assert!(events(&out, |e| matches!(e, HistoryEvent::Abandoned { .. })).is_empty());
    }
    // Without the cut the write is answered and the section releases one round trip after it.
    let out = run(&cut_resource(4000.0), "redis", 0);
    let w = events(&out, |e| matches!(e, HistoryEvent::ResourceWrite { .. }));
    assert_eq!(w.len(), 1);
    let released = at_ms(events(&out, |e| matches!(e, HistoryEvent::Released { nested: false, .. }))[0]);
    assert!((released - (at_ms(w[0]) + LATENCY_MS)).abs() < 1e-6, "released at {released}");
}

#[test]
fn a_read_the_resource_never_answers_ends_the_section_one_second_after_the_hold_without_writing() {
    // Cut before the grant: the read is dropped; the hold ends at grant + HOLD_MS and the
    // section waits one time-out for the read's answer, then releases without writing.
    let text = cut_resource(0.1);
    for seed in 0..3 {
        let out = run(&text, "redis", seed);
        let grant_ms = at_ms(events(&out, |e| matches!(e, HistoryEvent::Granted { nested: false, .. }))[0]);
        assert_eq!(dropped_to_resource(&out, |m| matches!(m, ResourceMsg::Read { .. })).len(), 1, "seed {seed}");
        let writes = dropped_to_resource(&out, |m| matches!(m, ResourceMsg::Write { .. }));
        assert!(writes.is_empty(), "seed {seed}: no write is even sent");
        assert!(events(&out, |e| matches!(e, HistoryEvent::ResourceRead { .. })).is_empty());
        assert!(events(&out, |e| matches!(e, HistoryEvent::ResourceWrite { .. })).is_empty());
        let release_ms = at_ms(events(&out, |e| matches!(e, HistoryEvent::Released { nested: false, .. }))[0]);
        assert!(
            (release_ms - (grant_ms + HOLD_MS + RESOURCE_TIMEOUT_MS)).abs() < 1e-6,
            "seed {seed}: granted at {grant_ms} ms, released at {release_ms} ms"
        );
    }
}
