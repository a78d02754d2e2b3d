//! A failover drops every advisory lock: they live in the primary's memory and never reach the
//! WAL. The standby promotes itself after `failover_after_ms` without the primary, and a waiter
//! is granted there while the old holder still works. A generation row, committed and
//! replicated, still orders the two holders, unless the bump had not reached the standby or was
//! never committed.

use crate::postgres_common;
use postgres_common::*;

/// Two clients ask at 0; the holder (granted at 2 ms, generation bumped by 4 ms) holds 100 s;
/// the primary's process is killed at 100 ms and stays down.
fn failover(variant: &str) -> (Vec<Grant>, Vec<f64>, u64) {
    let rest = "[workload]\nclients = 2\nthink_ms = 0\nhold_ms = 100_000\nacquisitions_per_client = 1\n\n[[faults]]\nkind = \"crash\"\ntarget = \"server-0\"\nat_ms = 100\n";
    let out = run(&scenario(60_000, &format!("standby = true\n{variant}"), rest), "pg", 1);
    let promoted = notes(&out, "promoted: primary silent").iter().map(|t| t.0).collect();
    (grants(&out), promoted, out.metrics.overlap_events)
}

#[test]
fn the_standby_promotes_after_30s_of_silence_and_grants_the_lock_again() {
    let (g, promoted, overlap) = failover("fence = \"generation\"");
    // The standby last heard the primary when the bump's WAL arrived (3 + 5 + 1 = 9 ms) and
    // checks every second: 31 000 is the first check 30 s after that.
    assert_eq!(promoted, vec![31_000.0]);
    assert_eq!((g[0].at_ms, g[0].token), (4.0, Some(1)));
    let second = g[1];
    assert_ne!(second.client, g[0].client);
    // The waiter retries every second (every host refused it meanwhile): granted within one
    // retry of the promotion, with the replicated generation + 1.
    assert!(second.at_ms > 31_000.0 && second.at_ms < 32_100.0, "{second:?}");
    assert_eq!(second.token, Some(2));
    assert_eq!(overlap, 1, "the old holder works on for 100 s");
}

#[test]
fn without_a_fence_the_grant_has_no_token_and_the_same_overlap() {
    let (g, _, overlap) = failover("");
    assert_eq!(g.iter().map(|g| g.token).collect::<Vec<_>>(), vec![None, None]);
    assert_eq!(overlap, 1);
}

#[test]
fn a_bump_that_had_not_reached_the_standby_is_handed_out_again() {
    // replication_lag_ms = 1000: the WAL of generation 1 would leave at 1 003 ms, after the
    // crash at 100 ms: the promoted standby starts from 0 and hands out 1 again.
    let (g, _, _) = failover("fence = \"generation\"\nreplication_lag_ms = 1000");
    assert_eq!(g.iter().map(|g| g.token).collect::<Vec<_>>(), vec![Some(1), Some(1)]);
}

#[test]
fn an_xact_locks_bump_commits_with_the_transaction_so_a_crash_loses_it() {
    let (g, _, overlap) = failover("fence = \"generation\"\nscope = \"transaction\"");
    assert_eq!(g.iter().map(|g| g.token).collect::<Vec<_>>(), vec![Some(1), Some(1)]);
    assert_eq!(overlap, 1);
}

/// The primary killed at 100 ms and restarted `down_ms` later.
fn restarted_after(down_ms: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let rest = format!(
        "[workload]\nclients = 2\nthink_ms = 0\nhold_ms = 100\n\n[[faults]]\nkind = \"crash\"\ntarget = \"server-0\"\nat_ms = 100\nduration_ms = {down_ms}\n"
    );
    let out = run(&scenario(60_000, "standby = true", &rest), "pg", 1);
    let at = |needle: &str| notes(&out, needle).iter().map(|t| t.0).collect::<Vec<f64>>();
    (at("promoted: primary silent"), at("staying read-only"), at("resuming as primary"))
}

#[test]
fn an_old_primary_back_after_the_promotion_stays_read_only() {
    // No fence, so no WAL: the standby last heard the primary at its own start and promotes at
    // its check 30 s later. Back at 40 100 ms, the old primary asks server-1 first (57P03 to
    // its clients meanwhile), hears "primary, timeline 2" one round trip later and never
    // serves again.
    let (promoted, read_only, resumed) = restarted_after(40_000);
    assert_eq!(promoted, vec![30_000.0]);
    assert_eq!(read_only, vec![40_102.0]);
    assert!(resumed.is_empty());
}

#[test]
fn an_old_primary_back_before_the_promotion_resumes_and_the_standby_stays() {
    // Back at 5 100 ms: server-1, still a standby, says "not primary"; server-0 resumes and its
    // WAL keepalives keep server-1 from promoting.
    let (promoted, read_only, resumed) = restarted_after(5_000);
    assert!(promoted.is_empty());
    assert!(read_only.is_empty());
    assert_eq!(resumed, vec![5_102.0]);
}
