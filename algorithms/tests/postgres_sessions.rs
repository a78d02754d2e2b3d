//! When the server ends a session, and so frees its advisory locks: a killed client's reset at
//! once; a client that vanished silently only when the TCP keepalive gives up (idle, then count
//! probes interval apart); an idle timeout even under a client that still works.

use crate::postgres_common;
use locksim_algorithms::postgres::protocol::PgMsg;
use postgres_common::*;

/// Two clients both ask at 0 (at the server at 1 ms: one is granted at 2, the other waits in
/// the lock queue); the holder holds 100 s; at 100 ms something happens to it.
fn holder_hit_at_100ms(variant: &str, fault: &str, duration_ms: u64) -> SeedOutcomeSummary {
    let rest =
        format!("[workload]\nclients = 2\nthink_ms = 0\nhold_ms = 100_000\nacquisitions_per_client = 1\n\n{fault}");
    let out = run(&scenario(duration_ms, variant, &rest), "pg", 1);
    let g = grants(&out);
    SeedOutcomeSummary {
        first: g[0],
        second: g.get(1).copied(),
        probes: probes_to(&out, g[0].client),
        overlap: out.metrics.overlap_events,
    }
}

/// When the server probed client `index`'s connection (its ids are `(index + 1) << 32 | r`).
fn probes_to(out: &locksim_simulator::run::SeedOutcome, index: usize) -> Vec<f64> {
    sent::<PgMsg>(out)
        .into_iter()
        .filter(|s| matches!(s.msg, PgMsg::Probe { conn } if conn >> 32 == index as u64 + 1))
        .map(|s| s.at_ms())
        .collect()
}

struct SeedOutcomeSummary {
    first: Grant,
    second: Option<Grant>,
    probes: Vec<f64>,
    overlap: u64,
}

const MACHINE_CRASH: &str = "[[faults]]\nkind = \"crash\"\nmode = \"machine\"\ntarget = \"holder\"\nat_ms = 100\n";

#[test]
fn a_killed_holders_lock_is_freed_at_its_reset() {
    let fault = "[[faults]]\nkind = \"crash\"\ntarget = \"holder\"\nat_ms = 100\n";
    let s = holder_hit_at_100ms("", fault, 10_000);
    assert_eq!(s.first.at_ms, 2.0);
    // The reset reaches the server at 101: the session ends, the waiter is granted, and the
    // answer reaches it at 102.
    assert_eq!(s.second.map(|g| (g.client, g.at_ms)), Some((1 - s.first.client, 102.0)));
}

#[test]
fn a_silently_lost_holder_keeps_the_lock_until_the_tuned_keepalive_gives_up() {
    // Last packet from the holder: its lock call, at the server at 1 ms. Probes at 1 + 10 000,
    // + 5 000, + 5 000; no answer to the third by 1 + 10 000 + 3 × 5 000 = 25 001: the session
    // ends and the waiter's answer arrives at 25 002.
    let variant = "tcp_keepalives_idle_s = 10\ntcp_keepalives_interval_s = 5\ntcp_keepalives_count = 3";
    let s = holder_hit_at_100ms(variant, MACHINE_CRASH, 40_000);
    assert_eq!(s.probes, vec![10_001.0, 15_001.0, 20_001.0]);
    assert_eq!(s.second.map(|g| (g.client, g.at_ms)), Some((1 - s.first.client, 25_002.0)));
}

#[test]
fn with_the_default_keepalive_the_lock_outlives_the_holder_by_two_hours_eleven_minutes() {
    // 1 + 7 200 000 + 9 × 75 000 = 7 875 001 ms at the server; at the waiter 1 ms later.
    let s = holder_hit_at_100ms("", MACHINE_CRASH, 7_900_000);
    let expected: Vec<f64> = (0..9).map(|k| 7_200_001.0 + 75_000.0 * k as f64).collect();
    assert_eq!(s.probes, expected);
    assert_eq!(s.second.map(|g| g.at_ms), Some(7_875_002.0));
}

#[test]
fn idle_session_timeout_ends_a_working_holders_session_and_lets_a_second_holder_in() {
    // The grant's answer leaves the server at 1 ms and arms idle_session_timeout (500 ms): the
    // server terminates the holder's session at 501 while the holder works on (it holds for
    // 100 s and sends nothing); the waiter is granted at 502: overlap.
    let s = holder_hit_at_100ms("idle_session_timeout_ms = 500", "", 5_000);
    assert_eq!(s.second.map(|g| g.at_ms), Some(502.0));
    assert_eq!(s.overlap, 1);
}

#[test]
fn idle_in_transaction_timeout_does_the_same_to_an_xact_lock() {
    let variant = "scope = \"transaction\"\nidle_in_transaction_session_timeout_ms = 500";
    let s = holder_hit_at_100ms(variant, "", 5_000);
    assert_eq!(s.second.map(|g| g.at_ms), Some(502.0));
    assert_eq!(s.overlap, 1);
    // idle_session_timeout does not apply inside a transaction.
    let s = holder_hit_at_100ms("scope = \"transaction\"\nidle_session_timeout_ms = 500", "", 5_000);
    assert_eq!(s.second, None);
}
