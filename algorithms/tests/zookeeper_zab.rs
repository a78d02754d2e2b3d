//! ZAB's message pattern on the shared log, counted from the engine's trace: once a leader is
//! established, a write costs one proposal, one ack and one commit per follower (6 messages with
//! 3 servers) and nothing more among the servers (a follower's client adds its REQUEST to the
//! leader); an idle ensemble sends only the leader's ping to each follower every `tickTime / 2`
//! and the follower's answer. And the log under ZAB's pattern keeps Raft's safety through
//! crashes, pauses, partitions, loss and duplication (a follower commits on a COMMIT only as far
//! as its log is known to match the leader's).

use crate::consensus_common;
use crate::zookeeper_common;

use std::collections::BTreeMap;

use consensus_common::{World, MS};
use locksim_algorithms::consensus::{Config, ConsensusMsg, Pattern};
use locksim_algorithms::zookeeper::protocol::ZkMsg;
use locksim_simulator::history::HistoryEvent;
use locksim_simulator::run::SeedOutcome;
use locksim_simulator::setup::FaultKind;
use zookeeper_common::*;

/// A message one server sent another: true time (ms), sender, receiver, the message.
#[derive(Clone, Debug)]
struct Sent {
    at_ms: f64,
    from: String,
    to: String,
    msg: ZkMsg,
}

/// Every server-to-server send in the trace, in order.
fn server_sends(out: &SeedOutcome) -> Vec<Sent> {
    sent::<ZkMsg>(out)
        .into_iter()
        .filter(|s| s.node.starts_with("server-") && s.peer.starts_with("server-"))
        .map(|s| Sent { at_ms: s.at_ms(), from: s.node.to_string(), to: s.peer.to_string(), msg: s.msg.clone() })
        .collect()
}

/// The server leading at the end and when it started leading (its last `zk: leading` note).
fn last_leader(out: &SeedOutcome) -> (f64, String) {
    let (at, node, _) = notes(out, "zk: leading").pop().expect("a leader");
    (at, node)
}

/// The replicated log's own messages (votes, appends and their answers, commits).
fn is_log_message(msg: &ZkMsg) -> bool {
    matches!(msg, ZkMsg::Consensus(_))
}

/// The entry an append proposes, when it carries exactly one.
fn proposed_entry(msg: &ZkMsg) -> Option<u64> {
    match msg {
        ZkMsg::Consensus(ConsensusMsg::Append { prev_index, entries, .. }) if entries.len() == 1 => {
            Some(prev_index + 1)
        }
        _ => None,
    }
}

/// The index a successful append answer acknowledges.
fn acked_index(msg: &ZkMsg) -> Option<u64> {
    match msg {
        ZkMsg::Consensus(ConsensusMsg::AppendReply { success: true, index, .. }) => Some(*index),
        _ => None,
    }
}

/// The commit index a COMMIT carries.
fn commit_index(msg: &ZkMsg) -> Option<u64> {
    match msg {
        ZkMsg::Consensus(ConsensusMsg::Commit { commit, .. }) => Some(*commit),
        _ => None,
    }
}

fn is_ping(msg: &ZkMsg) -> bool {
    matches!(msg, ZkMsg::LeaderPing(_) | ZkMsg::PingTouches(_))
}

/// One client taking and releasing the lock for 8 s: a stream of writes (createSession,
/// create, delete), one at a time.
const WRITES: &str = r#"
name = "zk-writes"
duration_ms = 8000
algorithms = ["zookeeper"]
[workload]
clients = 1
hold_ms = 5
think_ms = 20
"#;

#[test]
fn a_write_costs_a_proposal_an_ack_and_a_commit_per_follower() {
    for seed in 0..4 {
        let out = run(WRITES, "zookeeper", seed);
        let (since_ms, leader) = last_leader(&out);
        let sends: Vec<Sent> = server_sends(&out).into_iter().filter(|s| s.at_ms > since_ms).collect();
        let log: Vec<&Sent> = sends.iter().filter(|s| is_log_message(&s.msg)).collect();
        // Each entry proposed after the leader was established: its proposal to each follower.
        let mut proposals: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
        for s in &log {
            if let Some(entry) = proposed_entry(&s.msg) {
                assert_eq!(s.from, leader, "seed {seed}: {s:?}");
                proposals.entry(entry).or_default().push(&s.to);
            }
        }
        let writes = proposals.len();
        assert!(writes > 50, "seed {seed}: only {writes} writes");
        for (index, to) in &proposals {
            assert_eq!(to.len(), 2, "seed {seed}: entry {index} proposed to {to:?}");
            let acks = log.iter().filter(|s| acked_index(&s.msg) == Some(*index));
            assert_eq!(acks.count(), 2, "seed {seed}: acks of entry {index}");
            let commits = log.iter().filter(|s| commit_index(&s.msg) == Some(*index));
            assert_eq!(commits.count(), 2, "seed {seed}: commits of entry {index}");
        }
        // The entry that established the leader (ZAB's NEWLEADER) was proposed before the
        // window opens at its quorum; a follower slower than the quorum acks it inside the
        // window. Only such answers about earlier entries may be left over.
        let first_index = *proposals.keys().next().expect("a proposal");
        let earlier = |s: &&&Sent| acked_index(&s.msg).is_some_and(|i| i < first_index);
        let late = log.iter().filter(earlier).count();
        assert!(late <= 2, "seed {seed}: {late} answers about entries before the window");
        // Nothing else of the log: no heartbeat appends, no commit-carrying appends, no answer
        // to a commit. 6 messages per write.
        assert_eq!(log.len() - late, 6 * writes, "seed {seed}: {} log messages for {writes} writes", log.len() - late);
        // Besides the log: the leader's pings and their answers, and the REQUEST a follower
        // forwards for its client (at most one per write).
        let forwards = sends.iter().filter(|s| matches!(s.msg, ZkMsg::Forward(_))).count();
        assert!(forwards <= writes, "seed {seed}: {forwards} forwards");
        let other: Vec<&Sent> = sends
            .iter()
            .filter(|s| !is_log_message(&s.msg))
            .filter(|s| !is_ping(&s.msg))
            .filter(|s| !matches!(s.msg, ZkMsg::Forward(_)))
            .collect();
        assert!(other.is_empty(), "seed {seed}: unexpected server messages {other:?}");
    }
}

/// No acquisition at all (the client's first think outlasts the run): after the client's
/// session is created, the ensemble is idle for the rest of the 30 s.
fn idle(servers: u32, tick_ms: u32) -> String {
    format!(
        r#"
name = "zk-idle"
duration_ms = 30000
[[variants]]
name = "idle"
model = "zookeeper"
servers = {servers}
tick_ms = {tick_ms}
session_timeout_ms = {session_ms}
[workload]
clients = 1
think_ms = 60000
"#,
        session_ms = 10 * tick_ms
    )
}

#[test]
fn an_idle_ensemble_sends_only_the_leaders_ping_every_half_tick_and_its_answers() {
    for (servers, tick_ms) in [(3, 2000), (5, 500)] {
        for seed in 0..3 {
            let out = run(&idle(servers, tick_ms), "idle", seed);
            let (_, leader) = last_leader(&out);
            let sends: Vec<Sent> = server_sends(&out).into_iter().filter(|s| s.at_ms > 5000.0).collect();
            let half_tick_ms = tick_ms as f64 / 2.0;
            // 20 s from half a period before a ping round: exactly 20 s / (tick / 2) rounds.
            let first = sends.iter().find(|s| matches!(s.msg, ZkMsg::LeaderPing(_))).expect("a ping").at_ms;
            let (from_ms, to_ms) = (first - half_tick_ms / 2.0, first - half_tick_ms / 2.0 + 20_000.0);
            let window: Vec<&Sent> = sends.iter().filter(|s| s.at_ms >= from_ms && s.at_ms < to_ms).collect();
            let rounds = (20_000.0 / half_tick_ms) as usize;
            let followers: Vec<String> =
                (0..servers).map(|i| format!("server-{i}")).filter(|name| *name != leader).collect();
            for f in &followers {
                let pings: Vec<f64> = window
                    .iter()
                    .filter(|s| matches!(s.msg, ZkMsg::LeaderPing(_)) && s.from == leader && s.to == *f)
                    .map(|s| s.at_ms)
                    .collect();
                assert_eq!(pings.len(), rounds, "seed {seed}, tick {tick_ms}: pings to {f}");
                for pair in pings.windows(2) {
                    let gap = pair[1] - pair[0];
                    assert!((gap - half_tick_ms).abs() < 1e-3, "seed {seed}: pings to {f} {gap} ms apart");
                }
                let answers =
                    window.iter().filter(|s| matches!(s.msg, ZkMsg::PingTouches(_)) && s.from == *f && s.to == leader);
                assert_eq!(answers.count(), rounds, "seed {seed}, tick {tick_ms}: answers from {f}");
            }
            // Nothing else: no heartbeat of the log's own, nothing between followers.
            assert_eq!(
                window.len(),
                2 * rounds * followers.len(),
                "seed {seed}, tick {tick_ms}: {:?}",
                window.iter().filter(|s| !is_ping(&s.msg)).take(4).collect::<Vec<_>>()
            );
        }
    }
}

/// Random faults on the log alone (no owner, so no pings: proposals every 5-40 ms and the
/// commits keep followers in touch), as `consensus_raft` runs Raft's pattern: one leader per
/// term, no committed entry lost or changed, logs agree up to every commit index (checked by
/// `World` after every step); after the faults stop, a leader commits again.
#[test]
fn the_log_keeps_raft_safety_under_zab_messages() {
    let mut total_committed = 0u64;
    for seed in 0..400u64 {
        let n = if seed % 2 == 0 { 3 } else { 5 };
        let mut cfg = Config::new(1000 * MS, 1000 * MS);
        cfg.pattern = Pattern::Zab;
        cfg.leader_timeout_ns = Some(4000 * MS);
        let mut w = World::new(seed, n, cfg);
        let fault_end = 20_000 * MS;
        w.run_random_faults(seed, fault_end);
        let mut proposed = None;
        for _ in 0..400 {
            let t = w.now + 50 * MS;
            w.run_until(t);
            if let Some((_, ix, _)) = w.propose() {
                proposed = Some(ix);
            }
        }
        let ix = proposed.unwrap_or_else(|| panic!("seed {seed}: no leader after the faults stopped"));
        w.run_until(w.now + 3000 * MS);
        assert!(w.max_committed() >= ix, "seed {seed}: nothing commits after healing");
        w.check_all();
        total_committed += w.max_committed();
    }
    assert!(total_committed > 400 * 200, "only {total_committed} entries committed");
}

/// The write stream of [`WRITES`] for `run_ms`, with a follower crashed (`mode`) from 3 s for
/// `down_ms`.
fn follower_crashed(mode: &str, run_ms: u32, down_ms: u32) -> String {
    format!(
        r#"
name = "zk-follower-crashed"
duration_ms = {run_ms}
algorithms = ["zookeeper"]
[workload]
clients = 1
hold_ms = 5
think_ms = 20
[[faults]]
kind = "crash"
target = "follower"
at_ms = 3000
duration_ms = {down_ms}
mode = "{mode}"
"#
    )
}

/// A run of [`follower_crashed`] as the leader saw it: the crashed follower, when it went down
/// and came back (ms), and the log messages the last leader sent it.
struct CrashedFollower {
    victim: String,
    down_ms: f64,
    up_ms: f64,
    log_to_victim: Vec<Sent>,
}

/// Seeds 0 to 3 of [`follower_crashed`]: each seed's run and what its last leader sent the
/// crashed follower.
fn crashed_follower_runs(
    mode: &'static str,
    run_ms: u32,
    down_ms: u32,
) -> impl Iterator<Item = (u64, SeedOutcome, CrashedFollower)> {
    let scenario = follower_crashed(mode, run_ms, down_ms);
    (0..4).map(move |seed| {
        let out = run(&scenario, "zookeeper", seed);
        let f = CrashedFollower::of(&out, mode, f64::from(down_ms), seed);
        (seed, out, f)
    })
}

impl CrashedFollower {
    fn of(out: &SeedOutcome, mode: &str, down_for_ms: f64, seed: u64) -> CrashedFollower {
        let (down_ms, crash) = faults(out)
            .into_iter()
            .rfind(|(_, f)| {
                f.phase == FaultPhase::Starts && matches!(f.kind, FaultKind::Crash { mode: m } if m.name() == mode)
            })
            .expect("the crash");
        let victim = crash.targets[0].clone();
        let (_, leader) = last_leader(out);
        assert_ne!(leader, victim, "seed {seed}: the follower's crash moved the leadership");
        let log_to_victim = server_sends(out)
            .into_iter()
            .filter(|s| s.from == leader && s.to == victim && is_log_message(&s.msg))
            .collect();
        CrashedFollower { victim, down_ms, up_ms: down_ms + down_for_ms, log_to_victim }
    }

    /// The log messages sent to the follower strictly between two true times (ms).
    fn between(&self, from_ms: f64, to_ms: f64) -> Vec<&Sent> {
        self.log_to_victim.iter().filter(|s| s.at_ms > from_ms && s.at_ms < to_ms).collect()
    }
}

/// A killed follower's connection resets, and ZooKeeper's leader drops its `LearnerHandler`
/// (`Leader.removeLearnerHandler`): no PROPOSAL or COMMIT goes to it while it is down. The log's
/// catch-up still tries it once a half-tick round (it stands for the follower reconnecting),
/// and once it is back it acknowledges and gets every proposal again.
#[test]
fn a_killed_follower_gets_no_proposals_or_commits_until_it_answers() {
    for (seed, out, f) in crashed_follower_runs("process", 12_000, 5_000) {
        // While it is down (from 5 ms in, when its reset has come back): no proposal, no
        // commit, at most one resend per half-tick round (tick_ms 2000 by default: 5 rounds in
        // 5 s). Pings are not log messages and are not counted.
        let down = f.between(f.down_ms + 5.0, f.up_ms);
        let writes = events(&out, |e| matches!(e, HistoryEvent::AcquireStart { .. }))
            .iter()
            .filter(|e| e.at_ns as f64 / 1e6 > f.down_ms && (e.at_ns as f64 / 1e6) < f.up_ms)
            .count();
        assert!(writes > 50, "seed {seed}: only {writes} acquisitions while the follower was down");
        assert!(down.len() <= 6, "seed {seed}: {} log messages to the dead {}: {down:?}", down.len(), f.victim);
        let append = |s: &&Sent| {
            matches!(s.msg, ZkMsg::Consensus(ConsensusMsg::Append { .. } | ConsensusMsg::AppendReply { .. }))
        };
        assert!(down.iter().all(append), "seed {seed}: {down:?}");
        // Back: it acknowledges, and proposals and commits reach it again.
        let after = f.between(f.up_ms + 2000.0, f64::INFINITY);
        assert!(after.iter().filter(|s| commit_index(&s.msg).is_some()).count() > 20, "seed {seed}: {after:?}");
        assert!(after.iter().any(|s| proposed_entry(&s.msg).is_some()), "seed {seed}: no proposal after the restart");
    }
}

/// A follower silent for `syncLimit` ticks (5 × 2 000 ms by default) is dropped: ZooKeeper's
/// `LearnerHandler` reads its socket with that timeout and ends on it. Until then the leader
/// sends it every proposal and commit (the connection looks alive); after it, at most one resend
/// a round; once the host is back, proposals and commits again. Its host is lost for 20 s:
/// nobody is told, its messages are lost.
#[test]
fn a_silent_follower_is_dropped_after_sync_limit_ticks() {
    for (seed, _, f) in crashed_follower_runs("machine", 30_000, 20_000) {
        // Its last answer came just before the loss; the leader drops it at the first ping round
        // 10 s after that (a round is 1 s).
        let before_drop = f.between(f.down_ms + 1000.0, f.down_ms + 9000.0).len();
        let after_drop = f.between(f.down_ms + 11_500.0, f.up_ms).len();
        assert!(before_drop > 200, "seed {seed}: only {before_drop} log messages in the first 8 s of silence");
        assert!(after_drop <= 9, "seed {seed}: {after_drop} log messages to the dropped {}", f.victim);
        let back = f.between(f.up_ms + 2000.0, f64::INFINITY);
        assert!(back.len() > 50, "seed {seed}: nothing reaches {} once it is back", f.victim);
    }
}
