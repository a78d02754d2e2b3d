//! The hazelcast model's `lock = "ilock"` mode (Hazelcast 3.8's `ILock`): exclusive while the
//! members see each other; under a cut between members each side removes the other after the
//! heartbeat timeout, the far side's clients' locks are released ten seconds later, and from then
//! on both sides grant the lock (Jepsen's Hazelcast 3.8.3 analysis). Without that release (a
//! client disconnection delay longer than the run) the side without the holder stays blocked.

use crate::common;
use common::*;

fn known(file: &str) -> String {
    std::fs::read_to_string(format!("{}/../scenarios/known/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

const FILE: &str = "27-hazelcast-ilock-partition.toml";

/// The cut at 2 s, heartbeats every 1 s, removal after more than 5 s of silence: each member
/// removes the far side at its 8 s round; the far side's clients are released at 18 s; the first
/// two holders at once come right after.
#[test]
fn partition_gives_each_side_its_own_holder() {
    let out = run(&known(FILE), "hazelcast", 0);
    let removed = notes(&out, "removed: no heartbeat for the timeout");
    // server-0 removes two members, server-1 and server-2 remove server-0.
    assert_eq!(removed.len(), 4, "{removed:?}");
    assert!(removed.iter().all(|r| r.0 >= 7_000.0 && r.0 <= 8_100.0), "{removed:?}");
    let released = notes(&out, "disconnected (its member left)");
    assert!(!released.is_empty(), "the holder at the cut loses the lock on the far side");
    assert!(released.iter().all(|r| r.0 >= 17_000.0 && r.0 <= 18_100.0), "{released:?}");
    let g = grants(&out);
    // Before the release every grant follows a release: one holder at a time.
    assert!(out.metrics.overlap_events > 0);
    let before: Vec<_> = g.iter().filter(|x| x.0 < released[0].0).collect();
    assert!(before.len() > 3, "{before:?}");
    assert!(g.iter().all(|x| x.2.is_none()), "ILock has no token");
}

/// The same cut with the disconnection delay past the run's end: each side keeps the holder's
/// lock as it was (the promoted backup still names the far client), so only the holder's side
/// ever grants again. No faults at all: exclusive.
#[test]
fn without_the_client_cleanup_or_the_cut_there_is_one_holder() {
    let text = known(FILE).replace(
        "max_no_heartbeat_ms = 5_000",
        "max_no_heartbeat_ms = 5_000\nclient_endpoint_remove_delay_ms = 100_000",
    );
    let out = run(&text, "hazelcast", 0);
    assert!(notes(&out, "disconnected (its member left)").is_empty());
    assert_eq!(out.metrics.overlap_events, 0);
    let no_cut =
        known(FILE).replace("at_ms = 2_000", "at_ms = 59_999").replace("duration_ms = 58_000", "duration_ms = 1");
    let out = run(&no_cut, "hazelcast", 0);
    assert!(grants(&out).len() > 100);
    assert_eq!(out.metrics.overlap_events, 0);
    assert_eq!(out.metrics.lost_updates, 0);
}
