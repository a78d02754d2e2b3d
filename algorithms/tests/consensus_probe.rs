//! A leader's heartbeat to a follower that stopped answering: etcd's probe state. The follower
//! gets an AppendEntries with no entries (not the whole unacknowledged tail every round), no
//! new entries while it stays silent, and everything it lacks as soon as it answers. Driven by
//! hand on `consensus::Core`, three replicas, no network: each message is delivered or dropped
//! by the test.

use locksim_algorithms::consensus::{Config, ConsensusMsg, Core, Outbox};
use locksim_simulator::process::NodeId;
use locksim_simulator::rng::{stream, ChaCha8Rng};

const MS: u64 = 1_000_000;
const HEARTBEAT: u64 = 100 * MS;

/// Entries carried by each AppendEntries in `out` sent to `to`.
fn appends_to(out: &Outbox<u64>, to: NodeId) -> Vec<usize> {
    out.iter()
        .filter(|(dst, _)| *dst == to)
        .filter_map(|(_, m)| match m {
            ConsensusMsg::Append { entries, .. } => Some(entries.len()),
            _ => None,
        })
        .collect()
}

/// Delivers every message of `out` addressed to `to` to `core`, returning its answers to the
/// leader.
fn deliver(
    core: &mut Core<u64>,
    rng: &mut ChaCha8Rng,
    now: u64,
    leader: NodeId,
    out: &Outbox<u64>,
    to: NodeId,
) -> Outbox<u64> {
    let mut answers = Vec::new();
    for (dst, msg) in out.iter().filter(|(dst, _)| *dst == to) {
        debug_assert_eq!(*dst, to);
        core.step(now, rng, leader, msg.clone(), &mut answers);
    }
    answers
}

#[test]
fn a_silent_follower_is_probed_without_entries_and_gets_them_when_it_answers() {
    let ids: Vec<NodeId> = (0..3).collect();
    let (a, b, c) = (ids[0], ids[1], ids[2]);
    let cfg = Config::new(HEARTBEAT, 10 * HEARTBEAT);
    let mut rng = stream(7, "probe", "test");
    let mut leader: Core<u64> = Core::new(a, ids.clone(), cfg.clone());
    let mut live: Core<u64> = Core::new(b, ids.clone(), cfg.clone());
    let mut silent: Core<u64> = Core::new(c, ids.clone(), cfg);
    let mut out = Vec::new();
    leader.bootstrap(0, &mut rng, a, &mut out);
    live.bootstrap(0, &mut rng, a, &mut Vec::new());
    silent.bootstrap(0, &mut rng, a, &mut Vec::new());
    // Both followers take the new leader's empty entry; from here `c` hears nothing and says
    // nothing (it is down, or cut off).
    for f in [&mut live, &mut silent] {
        let to = f.me();
        for (_, ans) in deliver(f, &mut rng, MS, a, &out, to) {
            leader.step(2 * MS, &mut rng, to, ans, &mut Vec::new());
        }
    }
    let mut now = 2 * MS;
    let mut to_silent = Vec::new();
    for round in 1..=5u64 {
        // Three writes in each round; `b` acknowledges everything, `c` nothing.
        for v in 0..3 {
            let mut out = Vec::new();
            leader.propose(round * 10 + v, &mut out).expect("leader");
            to_silent.extend(appends_to(&out, c));
            for (_, ans) in deliver(&mut live, &mut rng, now, a, &out, b) {
                leader.step(now + MS, &mut rng, b, ans, &mut Vec::new());
            }
            now += 10 * MS;
        }
        now = round * HEARTBEAT;
        let mut out = Vec::new();
        leader.tick(now, &mut rng, &mut out);
        to_silent.extend(appends_to(&out, c));
        // The answering follower has everything: its heartbeat carries nothing either way.
        assert_eq!(appends_to(&out, b), vec![0], "round {round}");
        for (_, ans) in deliver(&mut live, &mut rng, now, a, &out, b) {
            leader.step(now + MS, &mut rng, b, ans, &mut Vec::new());
        }
    }
    // Round 1: each write went to `c` (one entry each) and the first heartbeat found it had
    // answered since the leader started (it took the empty entry): its 3 entries again. From
    // round 2 on it had not answered since the heartbeat before: a probe with no entries, and
    // no writes sent to it in between.
    assert_eq!(to_silent, vec![1, 1, 1, 3, 1, 1, 1, 0, 0, 0, 0], "entries per append to the silent follower");
    assert_eq!(leader.commit_index(), 16, "the leader and the live follower commit every write");

    // `c` comes back and answers the last probe: the answer brings all 15 writes at once.
    now += 5 * MS;
    let mut probe = Vec::new();
    leader.tick(now + HEARTBEAT, &mut rng, &mut probe);
    assert_eq!(appends_to(&probe, c), vec![0]);
    let answers = deliver(&mut silent, &mut rng, now + HEARTBEAT + MS, a, &probe, c);
    let mut catch_up = Vec::new();
    for (_, ans) in answers {
        leader.step(now + HEARTBEAT + 2 * MS, &mut rng, c, ans, &mut catch_up);
    }
    assert_eq!(appends_to(&catch_up, c), vec![15], "the probe's answer brings what the follower lacks");
    let answers = deliver(&mut silent, &mut rng, now + HEARTBEAT + 3 * MS, a, &catch_up, c);
    for (_, ans) in answers {
        leader.step(now + HEARTBEAT + 4 * MS, &mut rng, c, ans, &mut Vec::new());
    }
    assert_eq!(silent.last_index(), leader.last_index(), "the follower caught up");
}
