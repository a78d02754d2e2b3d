//! The `client` presets of the etcd model (issue 32, rows 9 and 10, and etcd 3.4's missing
//! re-check): clientv3 has no per-call deadline of its own (the members answer their
//! `ReqTimeout`, and a keep-alive stream to a silent member ends only at the TTL deadline), it
//! balances unary calls round-robin over the members (3.3.14 and later), and no 3.4 release
//! re-reads the own key after waiting. `locksim-1` is the model before presets (the default until
//! issue 32's flip; the default is `clientv3-3.5` now, which the last test pins).

use crate::etcd_common;
use etcd_common::*;

use locksim_simulator::history::HistoryEvent;

fn known(name: &str) -> String {
    std::fs::read_to_string(format!("{}/../scenarios/known/{name}", env!("CARGO_MANIFEST_DIR"))).expect("scenario")
}

/// Scenario `text` with `[models.etcd]` `extra` appended (its rows take the model's settings); a
/// file that pins `client = "locksim-1"` there (known outcome 17's freeze) gets `extra` in its place.
fn with_model(text: &str, extra: &str) -> String {
    let pinned = "[models.etcd]\nclient = \"locksim-1\"\n";
    if text.contains(pinned) {
        return text.replace(pinned, &format!("[models.etcd]\n{extra}\n"));
    }
    format!("{text}\n[models.etcd]\n{extra}\n")
}

#[test]
fn clientv3_3_4_never_rechecks_after_waiting_and_3_5_does() {
    // 09's fixed row leaves recheck_after_wait at its default: the preset decides.
    let text = known("09-etcd-waiter-paused-beyond-ttl.toml");
    let row = "name = \"etcd-recheck\"\nmodel = \"etcd\"\n";
    assert_eq!(text.matches(row).count(), 1);
    let preset = |client: &str| text.replace(row, &format!("{row}client = \"{client}\"\n"));
    for seed in 0..3 {
        let old = run(&preset("locksim-1"), "etcd-recheck", seed);
        assert_eq!(old.metrics.overlap_events, 0, "seed {seed}: locksim-1 re-checks");
        let v34 = run(&preset("clientv3-3.4"), "etcd-recheck", seed);
        assert!(v34.metrics.overlap_events >= 1, "seed {seed}: clientv3 3.4 is told it holds");
        assert!(notes(&v34, "ErrSessionExpired").is_empty(), "seed {seed}");
        let v35 = run(&preset("clientv3-3.5"), "etcd-recheck", seed);
        assert_eq!(v35.metrics.overlap_events, 0, "seed {seed}: clientv3 3.5 re-checks");
        assert!(!notes(&v35, "ErrSessionExpired").is_empty(), "seed {seed}");
    }
}

/// One client holding the lock for 80 s; server-0 (the leader, and the member client-0 opens its
/// keep-alive stream on) is frozen from 1 s to 71 s, longer than the 60 s session.
fn frozen_member(extra: &str) -> String {
    format!(
        r#"
name = "frozen"
duration_ms = 90000
algorithms = ["etcd"]
[models.etcd]
{extra}
[workload]
clients = 1
think_ms = 0
hold_ms = 80000
acquisitions_per_client = 1
[[faults]]
kind = "pause"
target = "server-0"
at_ms = 1000
duration_ms = 70000
"#
    )
}

#[test]
fn clientv3_a_keep_alive_stream_to_a_frozen_member_ends_only_at_the_ttl_deadline() {
    for seed in 0..3 {
        let lost = |out: &locksim_simulator::run::SeedOutcome| {
            notes(out, "keep-alive unanswered for a whole TTL").into_iter().map(|(ms, _, _)| ms).next()
        };
        // locksim-1: the client gives the stream 7 s, moves to another member and keeps its session.
        let old = run(&frozen_member("client = \"locksim-1\""), "etcd", seed);
        assert!(!notes(&old, "keep-alive stream unanswered").is_empty(), "seed {seed}");
        assert_eq!(lost(&old), None, "seed {seed}: locksim-1 keeps the session");
        // clientv3: nothing moves the stream; the session ends one TTL after the last answer
        // (the first keep-alive, at the start), seen by the once-a-second deadline loop.
        for client in ["clientv3-3.4", "clientv3-3.5"] {
            let out = run(&frozen_member(&format!("client = \"{client}\"")), "etcd", seed);
            assert!(notes(&out, "keep-alive stream unanswered").is_empty(), "{client} seed {seed}");
            let at = lost(&out).unwrap_or_else(|| panic!("{client} seed {seed}: the session ends"));
            assert!((60_000.0..62_000.0).contains(&at), "{client} seed {seed}: session over at {at} ms");
            let honoured = events(&out, |e| matches!(e, HistoryEvent::Abandoned { .. }));
            assert_eq!(honoured.len(), 1, "{client} seed {seed}: the application stops at Session.Done()");
        }
    }
}

#[test]
fn clientv3_a_write_lost_with_a_killed_leader_is_answered_request_timed_out_by_the_member() {
    let text = known("17-etcd-leader-killed.toml");
    for seed in 0..4 {
        // locksim-1: the client's own 7 s deadline; the members never answer a timeout.
        let old = run(&with_model(&text, "client = \"locksim-1\""), "etcd", seed);
        assert!(notes(&old, "timed out (ReqTimeout)").is_empty(), "seed {seed}");
        assert!(!notes(&old, "call unanswered").is_empty(), "seed {seed}");
        // clientv3 3.4: no client deadline; the member the call reached answers ErrTimeout
        // ReqTimeout (5 s + 2 × 1 s) after it proposed, as in issue 32's run of 3.4.23.
        let out = run(&with_model(&text, "client = \"clientv3-3.4\""), "etcd", seed);
        assert!(notes(&out, "call unanswered").is_empty(), "seed {seed}");
        let timeouts = notes(&out, "timed out (ReqTimeout)");
        assert!(!timeouts.is_empty(), "seed {seed}: a member answers request timed out");
        let killed_ms = out
            .trace
            .as_ref()
            .unwrap()
            .entries
            .iter()
            .find(|t| t.kind == "fault")
            .map(|t| t.at_ns as f64 / 1e6)
            .expect("the kill");
        for (ms, node, _) in &timeouts {
            assert!(node.starts_with("server-"));
            assert!(*ms >= killed_ms + 6_900.0 && *ms <= killed_ms + 7_100.0, "seed {seed}: at {ms}, kill {killed_ms}");
        }
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
    }
}

/// The members client-0's unary calls (lease grant, lock transaction, delete) were sent to.
fn unary_targets(extra: &str) -> std::collections::BTreeSet<String> {
    let text = format!(
        "name = \"rr\"\nduration_ms = 3000\nalgorithms = [\"etcd\"]\n[models.etcd]\n{extra}\n[workload]\nclients = 1\nthink_ms = 0\nhold_ms = 100\nacquisitions_per_client = 3\n"
    );
    let out = run(&text, "etcd", 0);
    requests_sent(&out, |op| !matches!(op, Op::KeepAlive { .. }))
        .into_iter()
        .filter(|r| r.node == "client-0")
        .map(|r| r.peer.to_string())
        .collect()
}

#[test]
fn clientv3_balances_unary_calls_round_robin_over_the_members() {
    assert_eq!(unary_targets("client = \"locksim-1\"").into_iter().collect::<Vec<_>>(), ["server-0"]);
    for client in ["clientv3-3.4", "clientv3-3.5"] {
        let members = unary_targets(&format!("client = \"{client}\""));
        assert_eq!(members.into_iter().collect::<Vec<_>>(), ["server-0", "server-1", "server-2"], "{client}");
    }
    // An explicit balancer wins over the preset.
    let pinned = unary_targets("client = \"clientv3-3.5\"\nbalancer = \"pinned\"");
    assert_eq!(pinned.into_iter().collect::<Vec<_>>(), ["server-0"]);
}

#[test]
fn clientv3_3_4_a_leader_frozen_past_the_ttl_ends_the_sessions_streamed_to_it_and_their_waiters_overlap() {
    // Known outcome 17's 70 s leader freeze. Under clientv3 the keep-alive streams opened on the
    // frozen member stay there (no client deadline): those sessions end at their TTL deadline and
    // the new leader revokes their leases, deleting their waiting keys. 3.4's Mutex does not
    // re-check after waiting (etcd issue #11456): such a waiter is told it holds. 3.5 re-checks;
    // locksim-1 moves the stream after 7 s and keeps the sessions.
    let text = known("17-etcd-leader-pause-stale-delete.toml");
    for seed in 0..3 {
        let old = run(&text, "etcd", seed);
        assert_eq!(old.metrics.overlap_events, 0, "seed {seed}");
        assert!(notes(&old, "keep-alive unanswered for a whole TTL").is_empty(), "seed {seed}");
        let v34 = run(&with_model(&text, "client = \"clientv3-3.4\""), "etcd", seed);
        let ended = notes(&v34, "keep-alive unanswered for a whole TTL");
        assert!(!ended.is_empty(), "seed {seed}: sessions on the frozen leader end");
        assert!(v34.metrics.overlap_events >= 1, "seed {seed}: a waiter without its key is told it holds");
        let v35 = run(&with_model(&text, "client = \"clientv3-3.5\""), "etcd", seed);
        assert!(!notes(&v35, "keep-alive unanswered for a whole TTL").is_empty(), "seed {seed}");
        assert_eq!(v35.metrics.overlap_events, 0, "seed {seed}: 3.5 re-checks");
    }
}

#[test]
fn a_row_without_client_runs_clientv3_3_5_the_newest_stable_release() {
    // Issue 32: the default preset is the newest stable release read. A row that names no client
    // balances round-robin (locksim-1 pinned one member) and has no client-side deadline.
    let members = unary_targets("");
    assert_eq!(members.into_iter().collect::<Vec<_>>(), ["server-0", "server-1", "server-2"]);
    let models = locksim_algorithms::registry();
    let text = "name = \"d\"\nduration_ms = 1000\nalgorithms = [\"etcd\"]\n";
    let sc = locksim_simulator::scenario::parse_str("d.toml", text, &models).unwrap_or_else(|e| panic!("{e}"));
    let run = &sc.runs[0];
    assert_eq!(run.model.library(&run.params).as_deref(), Some("clientv3-3.5"), "the table and JSON name it");
    let notes = run.model.limitations(&run.params, &sc.setup.workload).join("\n");
    assert!(notes.contains("client = \"clientv3-3.5\"") && notes.contains("call_deadline = none"), "{notes}");
}

fn fidelity(name: &str) -> String {
    std::fs::read_to_string(format!("{}/../scenarios/fidelity/{name}", env!("CARGO_MANIFEST_DIR"))).expect("scenario")
}

#[test]
fn clientv3_a_holder_resumed_past_its_lease_races_session_done_to_its_check_and_both_win() {
    // The paused-holder file: the holder resumes 2 s after its lease ended, its hold already
    // over. clientv3's deadline loop notices at the resume and Session.Done() closes 0.1-0.2 ms
    // later (session_done_ms); the application thread reaches its check 0-0.3 ms after its
    // wake-up (resume_to_check_ms). Live, clientv3 3.4.23 wrote stale in 4 of 8 runs: over seeds
    // the model gives both outcomes, from the draws. locksim-1 delivers the end at once: never.
    let text = fidelity("etcd-paused-holder.toml");
    let preset = |client: &str| text.replace("[models.etcd]\n", &format!("[models.etcd]\nclient = \"{client}\"\n"));
    let (mut stale, mut stopped) = (0, 0);
    for seed in 0..16 {
        let old = run(&preset("locksim-1"), "etcd", seed);
        assert_eq!(old.metrics.stale_unfenced_events, 0, "seed {seed}: locksim-1 learns the end first");
        let v34 = run(&preset("clientv3-3.4"), "etcd", seed);
        assert!(v34.metrics.overlap_events >= 1, "seed {seed}");
        let reached = notes(&v34, "reaches its check in");
        assert!(!reached.is_empty(), "seed {seed}: the check raced Session.Done()");
        if v34.metrics.stale_unfenced_events > 0 {
            stale += 1;
            assert!(!notes(&v34, "Session.Done() closes").is_empty(), "seed {seed}");
        } else {
            stopped += 1;
            assert!(!events(&v34, |e| matches!(e, HistoryEvent::Abandoned { .. })).is_empty(), "seed {seed}");
        }
    }
    assert!(stale >= 2 && stopped >= 2, "both outcomes over 16 seeds: {stale} stale, {stopped} stopped");
}

#[test]
fn clientv3_a_waiters_watch_is_cancelled_on_its_own_stream_not_round_robin() {
    // clientv3 sends the WatchCancelRequest on the watch stream (`watchGrpcStream.run`,
    // `clientv3/watch.go:698-723 @v3.4.23`), to the member the watch was opened on. Sent through
    // the round-robin balancer (the model until this test), it reached members without that watch,
    // every waiter's watches stayed open and their events kept flowing: 208 client messages per
    // acquisition under clientv3-3.4 on this file, against 19 for the recipe live.
    let file = format!("{}/../scenarios/fidelity/etcd-no-faults.toml", env!("CARGO_MANIFEST_DIR"));
    let text = with_model(&std::fs::read_to_string(file).expect("the fidelity file"), "client = \"clientv3-3.4\"");
    let out = run(&text, "etcd", 0);
    let cancels = requests_sent(&out, |op| matches!(op, Op::WatchCancel { .. }));
    assert!(cancels.len() >= 100, "waiters cancel their watches: {}", cancels.len());
    for cancel in &cancels {
        let Op::WatchCancel { watch_id: id } = cancel.msg.op else { unreachable!() };
        let (node, ms) = (cancel.node, cancel.at_ms());
        let opened = requests_sent(&out, |op| matches!(op, Op::Watch { watch_id, .. } if *watch_id == id))
            .into_iter()
            .find(|w| w.node == node)
            .unwrap_or_else(|| panic!("{node} opened watch {id}"));
        assert_eq!(cancel.peer, opened.peer, "{node} at {ms} ms: the cancel of watch {id} went elsewhere");
    }
    let per_acquisition = out.metrics.client_messages as f64 / out.metrics.acquisitions as f64;
    assert!((14.0..20.0).contains(&per_acquisition), "{per_acquisition} client messages per acquisition");
}
