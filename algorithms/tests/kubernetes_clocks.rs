//! What a leader that does not run, and clocks that run at the wrong rate, do to the Lease:
//! a leader paused past the lease duration is taken over and resumes acting (the package's
//! "does not guarantee that only one client is acting as a leader"), a shorter pause is
//! harmless, and clock drift alone is harmless, because expiry is judged only by candidates, on
//! their own clocks, from the moment they saw the record change.
//!
//! The runs use `locksim_1()` (the model before presets, which releases on cancel): these tests
//! pin the mechanisms; `kubernetes_library.rs` tests the `client-go-0.30` default.

use crate::kubernetes_common;

use kubernetes_common::*;
use locksim_simulator::history::HistoryEvent;

fn paused_holder(pause_ms: u64) -> String {
    format!(
        r#"
name = "kubernetes-paused-leader"
duration_ms = 60_000
algorithms = ["kubernetes"]

[network]
latency_ms = 1

[workload]
clients = 3
hold_ms = 20_000
think_ms = 0
acquisitions_per_client = 1

[[faults]]
kind = "pause"
target = "holder"
at_ms = 1_000
duration_ms = {pause_ms}
"#
    )
}

/// Paused 1 s into its 20 s hold for 30 s, the holder renews no more; its last renewal reached
/// the server at 5 ms (granted at 4 ms, renewed at once). The candidates see that record within
/// a try (2 002-4 402 ms) and take the Lease over at their first try 15 s or more after they
/// saw it: at 15 004-15 004 + 2 · 4 402 ms, during the pause. The paused holder resumes at
/// 31 000 ms still believing it holds: its hold timer, due at 20 004 ms, comes first, and it
/// writes. Overlap in every seed, and the write is a stale one.
#[test]
fn a_leader_paused_past_the_lease_duration_is_taken_over_and_resumes_acting() {
    let text = paused_holder(30_000);
    for seed in 0..10 {
        let out = run_config(&text, &locksim_1(), seed);
        let (_, holder) = fault_target(&out, "pause");
        let g = grants(&out);
        assert_eq!((g[0].0, g[0].1.as_str(), g[0].2), (4.0, holder.as_str(), 0), "seed {seed}");
        let (taken_at, _, token) = g[1].clone();
        assert_eq!(token, 1, "seed {seed}");
        assert!((15_004.0..=5.0 + 2.0 * 4_402.0 + 15_004.0).contains(&taken_at), "seed {seed}: taken at {taken_at}");
        assert!(taken_at < 31_000.0, "seed {seed}: taken over during the pause");
        assert!(out.metrics.overlap_events >= 1, "seed {seed}");
        assert!(out.metrics.stale_unfenced_events >= 1, "seed {seed}");
        let holder_write = events(&out, |e| matches!(e, HistoryEvent::ResourceWrite { grant: 1, .. }))
            .into_iter()
            .find(|s| {
                let HistoryEvent::ResourceWrite { client, .. } = s.event else { return false };
                client_name(&out, client) == holder
            })
            .map(|s| s.at_ns as f64 / 1e6)
            .expect("the resumed holder writes");
        assert!(holder_write > 31_000.0 && holder_write < 31_010.0, "seed {seed}: wrote at {holder_write}");
    }
}

/// Pauses shorter than the lease duration: 5 s (shorter than the renew deadline too) and 12 s
/// (longer than the renew deadline, but no renew poll is running during the pause: the poll
/// that renewed at 4 ms had returned). On resume the leader's renewal, due long ago, fires at
/// once; its fast path still finds the lease valid (observed at 6 ms + 15 s), and the UPDATE
/// succeeds: no candidate could take over before 15 s after it saw the last change. One grant
/// per client, in turn, no overlap, nothing lost.
#[test]
fn a_pause_shorter_than_the_lease_is_harmless() {
    for pause in [5_000, 12_000] {
        let text = paused_holder(pause);
        for seed in 0..10 {
            let out = run_config(&text, &locksim_1(), seed);
            let (_, holder) = fault_target(&out, "pause");
            let g = grants(&out);
            assert_eq!((g[0].1.as_str(), g[0].0), (holder.as_str(), 4.0), "pause {pause} seed {seed}");
            assert!(g[1].0 > 20_006.0, "pause {pause} seed {seed}: next grant at {} (after the release)", g[1].0);
            let resumed_renewal = calls_at(&out, "server-0", is_put)
                .into_iter()
                .find(|c| c.1 == holder && c.0 > 1_000.0)
                .expect("a renewal after the pause");
            assert_eq!(resumed_renewal.0, 1_000.0 + pause as f64 + 1.0, "pause {pause} seed {seed}");
            assert!(lost_notices(&out, &holder).is_empty(), "pause {pause} seed {seed}");
            assert_eq!(out.metrics.overlap_events, 0, "pause {pause} seed {seed}");
            assert_eq!(out.metrics.stale_unfenced_events, 0, "pause {pause} seed {seed}");
        }
    }
}

/// Clocks running up to 50% fast or slow (drift ±500 000 ppm on every node, wall clocks up to an
/// hour apart) with 1-5 s sections and 0-5 s pauses between them, so leaders renew while
/// candidates watch and the Lease changes hands often: no overlap and no stale write in any seed.
/// A candidate waits 15 s of its own clock from a change it saw; a leader renews every 2 s of
/// its own clock; even a leader at half speed and a candidate at 1.5× are far from the 7.5×
/// ratio it would take for a renewal to come later than a candidate's wait.
///
/// Token regressions can show, but only of one kind: a release sent while the same leader's
/// renewal was in flight gets 409 (kubernetes/kubernetes #131867), the Lease keeps naming that
/// client, and its next acquisition finds itself the holder and renews with the same
/// leaseTransitions: an equal token for two grants of the same client, never across clients.
#[test]
fn clock_drift_alone_does_not_break_the_lease() {
    let text = r#"
name = "kubernetes-drift"
duration_ms = 120_000
algorithms = ["kubernetes"]

[workload]
clients = 5
hold_ms = { uniform = [1_000, 5_000] }
think_ms = { uniform = [0, 5_000] }

[clocks]
drift_ppm = { uniform = [-500_000, 500_000] }
offset_ms = { uniform = [-3_600_000, 3_600_000] }
"#;
    // The schema's service time, 0.05 ms per Lease call.
    let cfg = KubernetesConfig { service_ms: Dist::Const(0.05), ..locksim_1() };
    let (mut takeovers, mut regressions) = (0, 0);
    for seed in 0..10 {
        let out = run_config(text, &cfg, seed);
        assert!(out.metrics.acquisitions > 20, "seed {seed}: {} acquisitions", out.metrics.acquisitions);
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
        assert_eq!(out.metrics.stale_unfenced_events, 0, "seed {seed}");
        // "key 0: client-4 granted token 30 at … ms, not above token 30 granted to client-4 at … ms"
        for v in out.metrics.violations.iter().filter(|v| v.kind == "token_regression") {
            let words: Vec<&str> = v.detail.split(' ').collect();
            let (client, token) = (words[2], words[5]);
            assert!(
                v.detail.contains(&format!("not above token {token} granted to {client} at ")),
                "seed {seed}: {}",
                v.detail
            );
            regressions += 1;
        }
        if out.metrics.token_regressions > 0 {
            assert!(!notes(&out, "failed to release lock: Conflict").is_empty(), "seed {seed}");
        }
        takeovers += grants(&out).windows(2).filter(|w| w[0].1 != w[1].1).count();
    }
    assert!(takeovers > 0, "the Lease never changed hands between clients");
    println!("{takeovers} changes of holder, {regressions} same-client equal tokens");
}
