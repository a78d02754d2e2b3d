//! A session-level advisory lock through PgBouncer in transaction pooling: the lock stays on the
//! server connection that ran the call, the next client handed that connection (LIFO) is granted
//! it at once, and an unlock run on another connection returns false. An xact lock, or session
//! pooling, keeps the lock with its client.

use crate::postgres_common;
use postgres_common::*;

/// Two clients, one acquisition each; client-1 is 10 ms from everything, so its lock call
/// reaches PgBouncer at 10 ms, after client-0's call (granted at the server at 2 ms) has given
/// its server connection back (at 3 ms).
const STAGGERED: &str = "[workload]\nclients = 2\nthink_ms = 0\nhold_ms = 1000\nacquisitions_per_client = 1\n\n[[network.links]]\nfrom = \"client-1\"\nto = \"*\"\nlatency_ms = 10\n";

fn grant_times(variant: &str) -> (Vec<(usize, f64)>, u64) {
    let out = run(&scenario(3_000, variant, STAGGERED), "pg", 1);
    (grants(&out).iter().map(|g| (g.client, g.at_ms)).collect(), out.metrics.overlap_events)
}

#[test]
fn transaction_pooling_grants_the_held_session_lock_to_the_next_client_on_its_connection() {
    // client-0: PgBouncer at 1, server 2 (granted), PgBouncer 3 (connection idle again), 4.
    // client-1: PgBouncer at 10, handed that same connection (LIFO), server 11: the session
    // holds the lock, so the call succeeds at once; back at 12, client-1 at 22.
    let (g, overlap) = grant_times("pgbouncer = \"transaction\"");
    assert_eq!(g, vec![(0, 4.0), (1, 22.0)]);
    assert_eq!(overlap, 1);
}

#[test]
fn xact_lock_through_transaction_pooling_waits_for_the_commit() {
    // client-0's transaction pins its server connection until COMMIT (its hold ends at 1004,
    // its write to the resource is answered at 1006, the COMMIT reaches the server at 1008);
    // client-1 got a second connection at 10 and waits in the lock queue from 11; granted at
    // 1008, back through PgBouncer at 1009, at client-1 at 1019.
    let (g, overlap) = grant_times("pgbouncer = \"transaction\"\nscope = \"transaction\"");
    assert_eq!(g, vec![(0, 4.0), (1, 1019.0)]);
    assert_eq!(overlap, 0);
}

#[test]
fn session_pooling_keeps_the_connection_with_its_client() {
    // The unlock goes on client-0's own server connection (server at 1008): client-1, waiting
    // on the second connection, is granted then.
    let (g, overlap) = grant_times("pgbouncer = \"session\"");
    assert_eq!(g, vec![(0, 4.0), (1, 1019.0)]);
    assert_eq!(overlap, 0);
}

const BUSY: &str = "[workload]\nclients = 3\nhold_ms = { uniform = [5, 50] }\n";

fn overlapping_seeds(variant: &str) -> usize {
    let toml = scenario(10_000, variant, BUSY);
    (1..=20).filter(|&seed| run_with(&toml, "pg", seed, false).metrics.overlap_events > 0).count()
}

#[test]
fn with_three_busy_clients_transaction_pooling_overlaps_in_most_seeds_and_unlocks_miss() {
    assert!(overlapping_seeds("pgbouncer = \"transaction\"") >= 15);
    assert!(overlapping_seeds("pgbouncer = \"transaction\"\nacquire = \"try\"") >= 15);
    let out = run(&scenario(10_000, "pgbouncer = \"transaction\"", BUSY), "pg", 1);
    let misses = notes(&out, "returned false: this session did not hold it");
    let warnings = notes(&out, "WARNING: you don't own a lock");
    assert!(!misses.is_empty(), "some unlock ran on a connection without the lock");
    assert_eq!(warnings.len(), misses.len(), "every false unlock is the server's warning");
}

#[test]
fn xact_lock_or_session_pooling_or_no_pooler_never_overlaps() {
    for variant in [
        "pgbouncer = \"transaction\"\nscope = \"transaction\"",
        "pgbouncer = \"transaction\"\nscope = \"transaction\"\nacquire = \"try\"",
        "pgbouncer = \"session\"",
        "pgbouncer = \"none\"",
        "pgbouncer = \"none\"\nacquire = \"try\"",
    ] {
        assert_eq!(overlapping_seeds(variant), 0, "{variant}");
    }
}
