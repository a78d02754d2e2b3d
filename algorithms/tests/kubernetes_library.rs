//! The `client` preset of the kubernetes model (issue 32, item 1; docs/libraries.md "Other
//! differences" 7): client-go v0.30.0's `ReleaseOnCancel` is a plain `bool` that a program leaves
//! false unless it sets it, so a leader that stops leading leaves the Lease naming it and the next
//! candidate waits out the lease duration. `client-go-0.30` is the default (issue 32: the newest
//! stable release); `locksim-1`, the default before, is the model before presets, which releases
//! on cancel.

use crate::kubernetes_common;

use kubernetes_common::*;
use locksim_simulator::history::HistoryEvent;
use locksim_simulator::run::SeedOutcome;

/// Two candidates, one Lease, one 5 s leadership each; constant 1 ms latency, no service time.
fn two_leaders(extra: &str) -> String {
    leaders(extra, 1)
}

/// The same with `acquisitions` leaderships per client, back to back.
fn leaders(extra: &str, acquisitions: u32) -> String {
    format!(
        r#"
name = "kubernetes-library"
duration_ms = 60_000
algorithms = ["kubernetes"]

[models.kubernetes]
service_ms = 0
{extra}

[network]
latency_ms = 1

[workload]
clients = 2
hold_ms = 5_000
think_ms = 0
acquisitions_per_client = {acquisitions}
"#
    )
}

/// From the first leader's `unlock()` returning to the second leader's grant (ms).
fn handover_ms(out: &SeedOutcome) -> f64 {
    let g = grants(out);
    assert_eq!(g.len(), 2, "both candidates lead once: {g:?}");
    let released = events(out, |e| matches!(e, HistoryEvent::Released { .. }))
        .into_iter()
        .find(|s| client_name(out, s.node) == g[0].1)
        .map(|s| s.at_ns as f64 / 1e6)
        .expect("the first leader's unlock returned");
    g[1].0 - released
}

#[test]
fn client_go_0_30_does_not_release_on_cancel_so_the_next_candidate_waits_out_the_lease() {
    for seed in 0..5 {
        // locksim-1: release() empties the holder; the candidate takes it at its next try,
        // at most RetryPeriod × 2.2 = 4.4 s later.
        let old = run(&two_leaders("client = \"locksim-1\""), "kubernetes", seed);
        let old_gap = handover_ms(&old);
        assert!(old_gap < 4_500.0, "seed {seed}: locksim-1 hands over at the next try, {old_gap} ms");
        assert!(!notes(&old, "released").is_empty(), "seed {seed}");
        // client-go-0.30: no release; the Lease names the old leader until the candidate has
        // seen it unchanged for the whole 15 s lease duration (from its last "observed a change",
        // at most one try, RetryPeriod × 2.2 = 4.4 s, either side of the unlock).
        let new = run(&two_leaders("client = \"client-go-0.30\""), "kubernetes", seed);
        let new_gap = handover_ms(&new);
        assert!(
            (10_000.0..24_000.0).contains(&new_gap),
            "seed {seed}: client-go-0.30 waits out the lease, {new_gap} ms"
        );
        let g = grants(&new);
        let seen = notes(&new, "observed a change")
            .into_iter()
            .filter(|(t, n, _)| *n == g[1].1 && *t < g[1].0)
            .map(|(t, _, _)| t)
            .next_back()
            .expect("the candidate saw the leader's record");
        assert!(g[1].0 - seen >= 15_000.0, "seed {seed}: taken {} ms after the last change it saw", g[1].0 - seen);
        assert!(notes(&new, ": released").is_empty(), "seed {seed}: nothing released");
        // An explicit release_on_cancel = true (a program that sets ReleaseOnCancel) wins over the preset.
        let set = run(&two_leaders("client = \"client-go-0.30\"\nrelease_on_cancel = true"), "kubernetes", seed);
        assert_eq!(handover_ms(&set), old_gap, "seed {seed}: the same run as locksim-1");
    }
}

#[test]
fn a_row_without_client_runs_client_go_0_30() {
    // Naming the default changes nothing: the same history, event for event; locksim-1 (the
    // default before issue 32's flip) is another run.
    for seed in 0..3 {
        let plain = run(&two_leaders(""), "kubernetes", seed);
        let named = run(&two_leaders("client = \"client-go-0.30\""), "kubernetes", seed);
        assert_eq!(plain.history.events, named.history.events, "seed {seed}");
        let old = run(&two_leaders("client = \"locksim-1\""), "kubernetes", seed);
        assert_ne!(plain.history.events, old.history.events, "seed {seed}");
    }
}

/// Without `ReleaseOnCancel` the Lease still names a leader that stopped, under the identity its
/// process keeps, so that process's next `RunOrDie` finds itself the holder and renews at once
/// with the same `leaseTransitions`: back to back, it keeps the Lease and the other candidate
/// waits. The checker counts each such grant as a leaked re-grant (the same token, nobody else
/// granted in between). Under locksim-1 the release hands the Lease over.
#[test]
fn client_go_0_30_re_grants_an_unreleased_lease_to_the_same_process() {
    for seed in 0..3 {
        let new = run(&leaders("client = \"client-go-0.30\"", 3), "kubernetes", seed);
        let g = grants(&new);
        assert_eq!(g.len(), 6, "seed {seed}: {g:?}");
        // The first leader's three leaderships come first, all with token 0, a few ms apart.
        assert!(g[..3].iter().all(|x| x.1 == g[0].1 && x.2 == 0), "seed {seed}: {g:?}");
        assert!(g[2].0 - g[0].0 < 10_100.0, "seed {seed}: {g:?}");
        // Then the other candidate's three, after it waited out the lease, with token 1.
        assert!(g[3..].iter().all(|x| x.1 == g[3].1 && x.1 != g[0].1 && x.2 == 1), "seed {seed}: {g:?}");
        assert!(g[3].0 - g[2].0 > 10_000.0, "seed {seed}: {g:?}");
        // Each client's second and third leaderships.
        assert_eq!(new.metrics.leaked_regrants, 4, "seed {seed}");
        let old = run(&leaders("client = \"locksim-1\"", 3), "kubernetes", seed);
        assert_eq!(old.metrics.leaked_regrants, 0, "locksim-1 seed {seed}");
    }
}
