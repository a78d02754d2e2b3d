//! Mechanism tests of how a Lease changes hands, read from the trace and the history: a crashed
//! holder's Lease is taken over one lease duration after the candidate last saw it change, a
//! released Lease at the candidate's next try, concurrent takeovers are decided by the
//! resourceVersion precondition (one 200, the rest 409), and `leaseTransitions` goes up by one
//! at every change of holder.
//!
//! Unless said otherwise the scenarios have a constant 1 ms one-way latency and no service time:
//! a Lease call takes exactly 2 ms.
//!
//! The runs use `locksim_1()` (the model before presets, which releases on cancel), or it with
//! `release_on_cancel: false`: these tests pin the mechanisms; `kubernetes_library.rs` tests the
//! `client-go-0.30` default.

use crate::kubernetes_common;

use kubernetes_common::*;

/// Two candidates for one Lease (the model's configuration is the test's).
fn two_clients(hold_ms: &str, faults: &str) -> String {
    format!(
        r#"
name = "kubernetes-takeover"
duration_ms = 60_000
algorithms = ["kubernetes"]

[network]
latency_ms = 1

[workload]
clients = 2
hold_ms = {hold_ms}
think_ms = 0
acquisitions_per_client = 1
{faults}
"#
    )
}

/// When the candidate sent its GETs to server-0, in time order.
fn gets_of(out: &locksim_simulator::run::SeedOutcome, client: &str) -> Vec<f64> {
    sent::<KubernetesMsg>(out)
        .into_iter()
        .filter(|s| s.node == client && s.peer == "server-0")
        .filter(|s| matches!(s.msg, KubernetesMsg::Request(r) if is_get(r)))
        .map(|s| s.at_ms())
        .collect()
}

/// When `client` last saw the record change before `before_ms` (its "observed a change" note).
fn last_observed(out: &locksim_simulator::run::SeedOutcome, client: &str, before_ms: f64) -> (f64, String) {
    notes(out, "observed a change")
        .into_iter()
        .rfind(|(t, n, _)| n == client && *t < before_ms)
        .map(|(t, _, d)| (t, d))
        .expect("the candidate saw the holder's record")
}

/// Both clients start at once: both GETs find no Lease, both CREATEs race, one gets 409
/// AlreadyExists. The holder is granted at 4 ms and renews at 4 + 2 002·k ms; the last renewal
/// before its crash at 9 000 ms reaches the server at 8 013 ms. The other candidate first sees
/// that record at its first GET after 8 013 ms (its tries are 2 000-4 400 ms apart plus the 2 ms
/// GET), then tries every 2 002-4 402 ms: the first try that starts at least 15 000 ms (the
/// record's leaseDurationSeconds) after that observation takes the Lease (GET at s, UPDATE
/// answered at s + 4 ms), the try before it was refused.
#[test]
fn a_crashed_holders_lease_is_taken_one_lease_duration_after_the_candidate_saw_it_change() {
    let text = two_clients("50_000", "[[faults]]\nkind = \"crash\"\ntarget = \"holder\"\nat_ms = 9_000\n");
    for seed in 0..10 {
        let out = run_config(&text, &locksim_1(), seed);
        let (_, holder) = fault_target(&out, "crash");
        let other = if holder == "client-0" { "client-1" } else { "client-0" };
        let g = grants(&out);
        assert_eq!(g.len(), 2, "seed {seed}: {g:?}");
        assert_eq!((g[0].0, g[0].1.as_str(), g[0].2), (4.0, holder.as_str(), 0), "seed {seed}");
        let refused = answers_to(&out, other, |r| *r == Err(ApiError::AlreadyExists));
        assert_eq!(refused.len(), 1, "seed {seed}: the losing CREATE");

        let renewals = calls_at(&out, "server-0", is_put);
        let last_renewal = renewals.iter().filter(|c| c.1 == holder).map(|c| c.0).fold(0.0, f64::max);
        assert_eq!(last_renewal, 8_013.0, "seed {seed}");

        let (granted_at, who, token) = g[1].clone();
        assert_eq!((who.as_str(), token), (other, 1), "seed {seed}");
        let (observed, what) = last_observed(&out, other, granted_at);
        assert!(what.contains("transitions=0") && what.contains("rv=6"), "seed {seed}: {what}");
        assert!(observed > 8_013.0 && observed <= 8_013.0 + 4_402.0 + 2.0, "seed {seed}: observed at {observed}");

        let gets = gets_of(&out, other);
        let take = gets.iter().position(|&s| s >= observed + 15_000.0).expect("a try after the lease duration");
        assert_eq!(granted_at, gets[take] + 4.0, "seed {seed}: the first try past the lease duration wins");
        let gap = gets[take] - gets[take - 1];
        assert!((2_002.0..4_402.0).contains(&gap), "seed {seed}: tries {gap} ms apart");
        let after = granted_at - observed;
        assert!((15_004.0..15_000.0 + 4_402.0 + 4.0).contains(&after), "seed {seed}: taken {after} ms after");
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
    }
}

/// A released Lease (holder "", leaseDurationSeconds 1) is taken at the candidate's next try,
/// whatever it observed before: the holder releases at 5 006 ms (granted at 4, 5 s hold, 2 ms
/// write), the release reaches the server at 5 007 ms, and the candidate's first GET after it is
/// answered with the empty holder and followed by its UPDATE: granted 4 ms after that GET, at
/// most 4 402 + 4 ms after the release. Without ReleaseOnCancel the Lease still names the old
/// holder, whose last renewal reached the server at 4 009 ms: the candidate waits 15 s after it
/// saw that record.
#[test]
fn a_released_lease_is_taken_at_the_next_try_an_unreleased_one_after_the_lease_duration() {
    let text = two_clients("5_000", "");
    for seed in 0..10 {
        let out = run_config(&text, &locksim_1(), seed);
        let g = grants(&out);
        assert_eq!(g.len(), 2, "seed {seed}: {g:?}");
        let (first, second) = (&g[0], &g[1]);
        assert_eq!((first.0, first.2, second.2), (4.0, 0, 1), "seed {seed}");
        let release: Vec<_> = calls_at(&out, "server-0", is_release).into_iter().filter(|c| c.1 == first.1).collect();
        assert_eq!(release.len(), 1, "seed {seed}");
        assert_eq!(release[0].0, 5_007.0, "seed {seed}");
        let spec = spec_of(release[0].2).unwrap();
        assert_eq!((spec.lease_duration_secs, spec.transitions), (1, 0), "seed {seed}: {:?}", release[0]);
        let gets = gets_of(&out, &second.1);
        let take = gets.iter().position(|&s| s + 1.0 > 5_007.0).unwrap();
        assert_eq!(second.0, gets[take] + 4.0, "seed {seed}");
        assert!(second.0 - 5_007.0 <= 4_402.0 + 4.0, "seed {seed}: taken at {}", second.0);

        let out = run_config(&text, &KubernetesConfig { release_on_cancel: false, ..locksim_1() }, seed);
        let g = grants(&out);
        assert_eq!(g.len(), 2, "no-release seed {seed}: {g:?}");
        assert!(calls_at(&out, "server-0", is_release).is_empty(), "no-release seed {seed}");
        let (observed, what) = last_observed(&out, &g[1].1, g[1].0);
        assert!(what.contains("rv=4"), "no-release seed {seed}: the last renewal (rv 4) {what}");
        assert!(g[1].0 >= observed + 15_004.0, "no-release seed {seed}: taken at {}", g[1].0);
        assert_eq!(g[1].2, 1, "no-release seed {seed}");
    }
}

/// kubernetes/kubernetes #131867: a release sent while a renewal is in flight carries the
/// revision the renewal is about to replace, so it gets 409 Conflict and the Lease stays with
/// the old holder until it expires. Granted at 4 ms, the holder renews at 6 ms and sends its
/// next renewal at 2 006 ms; with a 2 000.5 ms hold its release goes out at 2 006.5 ms, behind
/// that renewal on the same connection. With a 2 003 ms hold the renewal has returned (2 008 ms)
/// when the release goes out at 2 009 ms: the release works and the candidate gets the Lease at
/// its next try.
#[test]
fn a_release_racing_a_renewal_gets_409_and_the_lease_stays_until_it_expires() {
    for (hold, races) in [("2_000.5", true), ("2_003", false)] {
        let text = two_clients(hold, "");
        for seed in 0..5 {
            let out = run_config(&text, &locksim_1(), seed);
            let g = grants(&out);
            assert_eq!(g.len(), 2, "hold {hold} seed {seed}: {g:?}");
            let holder = &g[0].1;
            let release: Vec<_> =
                calls_at(&out, "server-0", is_release).into_iter().filter(|c| &c.1 == holder).collect();
            assert_eq!(release.len(), 1, "hold {hold} seed {seed}");
            let answer = answers_to(&out, holder, |r| *r == Err(ApiError::Conflict));
            // The holder's second renewal reaches the server at 2 007 ms either way.
            let renewed_at = 2_007.0;
            assert_eq!(answer.len(), usize::from(races), "hold {hold} seed {seed}: {answer:?}");
            if races {
                assert_eq!(release[0].0, 2_007.5);
                // Conditioned on the first renewal's revision (2: the CREATE wrote 1), which the
                // renewal ahead of it replaced with 3.
                assert!(is_put(release[0].2) && update_rv(release[0].2) == Some(2), "{:?}", release[0]);
                assert_eq!(store_writes(&out)[2].0, 3);
                // The Lease names the old holder, renewed at 2 007 ms: 15 s of waiting.
                assert!(g[1].0 >= renewed_at + 15_004.0, "hold {hold} seed {seed}: taken at {}", g[1].0);
            } else {
                assert_eq!(release[0].0, 2_010.0);
                assert!(g[1].0 - 2_010.0 <= 4_402.0 + 4.0, "hold {hold} seed {seed}: taken at {}", g[1].0);
            }
        }
    }
}

/// Eight candidates, 200 ms each way: a candidate's GET and UPDATE are 400 ms apart at the
/// server, so after a release several candidates often read the same revision and send an
/// UPDATE conditioned on it. The store answers the first 200 and every other 409 Conflict; only
/// the 200's sender is granted, with leaseTransitions one above the record it read.
/// Every write the store makes keeps leaseTransitions (renewal, release) or, when the holder
/// becomes someone else, raises it by exactly one; so without faults the grants' tokens are
/// 0, 1, 2, … in grant order.
#[test]
fn concurrent_takeovers_one_wins_and_transitions_count_the_changes_of_holder() {
    let text = r#"
name = "kubernetes-conflict"
duration_ms = 120_000
algorithms = ["kubernetes"]

[network]
latency_ms = 200

[workload]
clients = 8
hold_ms = 500
think_ms = { uniform = [0, 3_000] }
"#;
    let mut races = 0;
    for seed in 0..5 {
        let out = run_config(text, &locksim_1(), seed);
        let writes = store_writes(&out);
        // Every UPDATE the store received, by its precondition: (sender, transitions written,
        // whether it takes the Lease over (transitions one above the record it read), answered 200).
        let mut by_rv: std::collections::BTreeMap<u64, Vec<(String, u64, bool, bool)>> = Default::default();
        let sends = sent::<KubernetesMsg>(&out);
        for (t, from, call) in calls_at(&out, "server-0", is_put) {
            let rv = update_rv(call).unwrap();
            let answer = sends
                .iter()
                .filter(|s| s.at_ms() == t && s.node == "server-0" && s.peer == from)
                .find_map(|s| match s.msg {
                    KubernetesMsg::Response(r) if r.id == call.id => Some(r),
                    _ => None,
                })
                .expect("every call is answered");
            let ok = answer.result.is_ok();
            assert!(ok || answer.result == Err(ApiError::Conflict), "seed {seed}: {answer:?}");
            let transitions = spec_of(call).unwrap().transitions;
            let read = writes.iter().find(|w| w.0 == rv).expect("a revision the store wrote").2;
            by_rv.entry(rv).or_default().push((from, transitions, transitions == read + 1, ok));
        }
        let last = writes.last().unwrap().0;
        let granted = grants(&out);
        for (rv, puts) in &by_rv {
            // Revision `rv` was replaced by exactly one write conditioned on it (the last one by none).
            let oks: Vec<&(String, u64, bool, bool)> = puts.iter().filter(|p| p.3).collect();
            assert_eq!(oks.len(), usize::from(*rv < last), "seed {seed}: UPDATEs on rv {rv}: {puts:?}");
            let takeovers = puts.iter().filter(|p| p.2).count();
            if takeovers > 1 && oks.first().is_some_and(|w| w.2) {
                races += 1;
                // The one that got 200 is granted with the transitions it wrote; the others are not.
                let (winner, transitions) = (&oks[0].0, oks[0].1);
                let with_token: Vec<&String> = granted.iter().filter(|g| g.2 == transitions).map(|g| &g.1).collect();
                assert_eq!(with_token, vec![winner], "seed {seed}: rv {rv}: {puts:?}");
            }
        }
        assert_eq!((writes[0].0, writes[0].2), (1, 0), "seed {seed}: the CREATE");
        for w in writes.windows(2) {
            let (prev, next) = (&w[0], &w[1]);
            assert_eq!(next.0, prev.0 + 1, "seed {seed}: one revision per write");
            let expected = if next.1.is_some() && next.1 != prev.1 { prev.2 + 1 } else { prev.2 };
            assert_eq!(next.2, expected, "seed {seed}: {prev:?} -> {next:?}");
        }
        let tokens: Vec<u64> = grants(&out).iter().map(|g| g.2).collect();
        assert!(tokens.len() > 20, "seed {seed}: {} grants", tokens.len());
        assert_eq!(tokens, (0..tokens.len() as u64).collect::<Vec<_>>(), "seed {seed}");
        assert_eq!(out.metrics.overlap_events + out.metrics.token_regressions, 0, "seed {seed}");
    }
    assert!(races > 0, "no two UPDATEs ever carried the same resourceVersion");
    println!("{races} revisions with several takeover UPDATEs in 5 seeds");
}
