//! Mechanism tests of the leader's renew loop, read from the trace and the history: how often a
//! leader renews, and when a leader that cannot reach the API server gives leadership up.
//!
//! Every scenario here has a constant 1 ms one-way latency and no service time, so a Lease call
//! takes exactly 2 ms and every time below follows from client-go's loops by arithmetic.
//!
//! The runs use `locksim_1()` (the model before presets, which releases on cancel), or it with
//! `release_on_cancel: false`: these tests pin the mechanisms; `kubernetes_library.rs` tests the
//! `client-go-0.30` default.

use crate::kubernetes_common;

use kubernetes_common::*;

const ONE_LEADER: &str = r#"
name = "kubernetes-renew"
duration_ms = 40_000
algorithms = ["kubernetes"]

[network]
latency_ms = 1

[workload]
clients = 1
hold_ms = 30_000
think_ms = 0
acquisitions_per_client = 1
"#;

/// The leader renews at once when it starts leading (renew's `wait.Until` runs its poll at once),
/// then `retry_period_ms` after each renewal returned (`wait.Until` is sliding): every 2 002 ms.
/// Derivation: GET at 0 is answered 404 at 2 ms, CREATE is answered at 4 ms: granted at 4 ms.
/// Renewals are sent at 4 + 2 002·k ms and reach the server 1 ms later. The 30 s hold ends at
/// 30 004 ms; the resource write takes 2 ms; the release goes out at 30 006 ms. So the renewals
/// are k = 0 … 14 (the 16th would go out at 30 034 ms): 15 UPDATEs, each answered 200, each
/// keeping `leaseTransitions` 0 and raising the resourceVersion by one.
#[test]
fn the_leader_renews_retry_period_after_each_renewal_returned() {
    for seed in 0..3 {
        let out = run_config(ONE_LEADER, &locksim_1(), seed);
        let g = grants(&out);
        assert_eq!(g.len(), 1, "seed {seed}: {g:?}");
        assert_eq!((g[0].0, g[0].2), (4.0, 0), "seed {seed}: granted at 4 ms with leaseTransitions 0");

        let puts = calls_at(&out, "server-0", is_put);
        let renewals: Vec<_> = puts.iter().filter(|p| !is_release(p.2)).collect();
        let expected: Vec<f64> = (0..15).map(|k| 5.0 + 2_002.0 * k as f64).collect();
        assert_eq!(renewals.iter().map(|p| p.0).collect::<Vec<_>>(), expected, "seed {seed}");
        for (k, (_, from, call)) in renewals.iter().enumerate() {
            assert_eq!(from, "client-0");
            assert_eq!(spec_of(call).unwrap().transitions, 0, "seed {seed}: {call:?}");
            // The CREATE wrote revision 1; renewal k is conditioned on revision k + 1.
            assert_eq!(update_rv(call), Some(k as u64 + 1), "seed {seed}: {call:?}");
        }
        let ok = answers_to(&out, "client-0", |r| r.is_ok());
        assert_eq!(ok.len(), 1 + 15 + 1, "seed {seed}: CREATE, 15 renewals, the release (the GET was a 404)");

        // The release: one UPDATE with an empty holder and leaseDurationSeconds 1, keeping the
        // transitions, conditioned on the last renewal's revision (16).
        let releases: Vec<_> = puts.iter().filter(|p| is_release(p.2)).collect();
        assert_eq!(releases.len(), 1, "seed {seed}");
        assert_eq!(releases[0].0, 30_007.0, "seed {seed}");
        let spec = spec_of(releases[0].2).unwrap();
        assert_eq!(
            (update_rv(releases[0].2), spec.lease_duration_secs, spec.transitions),
            (Some(16), 1, 0),
            "{:?}",
            releases[0]
        );
        let writes = store_writes(&out);
        assert_eq!(writes.last().copied(), Some((17, None, 0)), "seed {seed}");
    }
}

fn isolated_leader(clients: usize) -> String {
    format!(
        r#"
name = "kubernetes-renew-deadline"
duration_ms = 60_000
algorithms = ["kubernetes"]

[network]
latency_ms = 1

[workload]
clients = {clients}
hold_ms = 50_000
think_ms = 0
acquisitions_per_client = 1

[[faults]]
kind = "isolate"
target = "holder"
at_ms = 9_000
duration_ms = 40_000
"#
    )
}

/// A leader cut off from the API server gives up when its renew poll's RenewDeadline passes,
/// and the application hears of it (`OnStoppedLeading`) only when `Run` returns, after
/// `release()`. Derivation: granted at 4 ms, renewals at 4 + 2 002·k ms; the one at 8 012 ms
/// returns at 8 014 ms; isolated at 9 000 ms, the next poll starts at 10 014 ms: its fast-path
/// UPDATE times out at 15 014 ms (the 5 s HTTP timeout), the slow path's GET is cut short by the
/// poll's 10 s deadline at 20 014 ms. With ReleaseOnCancel the release UPDATE goes out at
/// 20 014 ms and times out at 25 014 ms: Lost then. Without it: Lost at 20 014 ms.
#[test]
fn an_isolated_leader_gives_up_at_the_renew_deadline_and_hears_of_it_after_release() {
    let text = isolated_leader(1);
    for (release_on_cancel, lost_at) in [(true, 25_014.0), (false, 20_014.0)] {
        let cfg = KubernetesConfig { release_on_cancel, ..locksim_1() };
        let label = format!("release_on_cancel = {release_on_cancel}");
        for seed in 0..3 {
            let out = run_config(&text, &cfg, seed);
            assert_eq!(lost_notices(&out, "client-0"), vec![lost_at], "{label} seed {seed}");
            // The section is abandoned at once (OnStoppedLeading exits kube-controller-manager).
            let abandoned = events(&out, |e| matches!(e, locksim_simulator::history::HistoryEvent::Abandoned { .. }));
            assert_eq!(abandoned.len(), 1, "{label} seed {seed}");
            // What the isolated leader tried to send: the fast-path PUT, the GET, the release.
            let kinds: Vec<(f64, &str)> = dropped::<KubernetesMsg>(&out)
                .into_iter()
                .filter(|d| d.node == "client-0" && d.peer == "server-0")
                .filter_map(|d| match d.msg {
                    KubernetesMsg::Request(r) if is_release(r) => Some((d.at_ms(), "release")),
                    KubernetesMsg::Request(r) if matches!(r.verb, Verb::Get) => Some((d.at_ms(), "get")),
                    KubernetesMsg::Request(_) => Some((d.at_ms(), "renew")),
                    _ => None,
                })
                .collect();
            let mut expected = vec![(10_014.0, "renew"), (15_014.0, "get")];
            if release_on_cancel {
                expected.push((20_014.0, "release"));
            }
            assert_eq!(kinds, expected, "{label} seed {seed}");
        }
    }
}

/// The consequence of that ordering: a candidate takes an isolated leader's Lease over
/// `lease_duration_ms` after it last saw it change (at least 15 004 ms after the renewal that
/// reached the server at 8 013 ms), while the leader with ReleaseOnCancel acts until 25 014 ms,
/// 17 s after its last renewal: the two overlap exactly when the candidate was granted before
/// 25 014 ms. Without ReleaseOnCancel the leader stops at 20 014 ms, before any candidate can take
/// over: never an overlap.
#[test]
fn release_on_cancel_keeps_an_isolated_leader_acting_past_the_lease_duration() {
    let text = isolated_leader(2);
    let mut overlapping = 0;
    for seed in 0..20 {
        for release_on_cancel in [true, false] {
            let label = format!("release_on_cancel = {release_on_cancel}");
            let out = run_config(&text, &KubernetesConfig { release_on_cancel, ..locksim_1() }, seed);
            let (_, holder) = fault_target(&out, "isolate");
            let lost = lost_notices(&out, &holder);
            let taken: Vec<(f64, String, u64)> = grants(&out).into_iter().filter(|g| g.1 != holder).collect();
            assert_eq!(taken.len(), 1, "{label} seed {seed}: {taken:?}");
            let (granted_at, _, token) = taken[0].clone();
            assert_eq!(token, 1, "{label} seed {seed}: one change of holder");
            assert!(granted_at >= 8_013.0 + 15_004.0, "{label} seed {seed}: taken over at {granted_at}");
            let overlap = out.metrics.overlap_events > 0;
            assert_eq!(overlap, granted_at < lost[0], "{label} seed {seed}: granted {granted_at}, lost {lost:?}");
            if !release_on_cancel {
                assert!(!overlap, "seed {seed}");
            } else if overlap {
                overlapping += 1;
            }
        }
    }
    assert!(overlapping > 0, "ReleaseOnCancel never let the isolated leader overlap in 20 seeds");
    println!("ReleaseOnCancel: the isolated leader overlapped a candidate in {overlapping} of 20 seeds");
}
