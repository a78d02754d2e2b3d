//! The plain pattern's two known-unsafe two-round-trip forms, checked on the trace:
//! - `acquire = "setnx_then_expire"`: a client killed after its `SETNX` ran and before its
//!   `PEXPIRE` left leaves a key with no time to live: no `PEXPIRE` ever reaches the server, the
//!   key never expires, every later `SETNX` is refused and nobody is granted the lock again; a
//!   crash just after the `PEXPIRE` left costs only the TTL;
//! - `unlock = "get_then_del"`: the `DEL` sent after a `GET` that found the holder's value arrives
//!   after the key expired and another client took it: it deletes that client's key, and a third
//!   client is granted the lock while the second still holds it; the compare-and-delete script,
//!   one step, deletes nothing of the second client's.
//!
//! The rows pin `client = "locksim-1"` (the model before presets): these tests pin the mechanisms,
//! which the presets only configure; `redis_library.rs` tests the presets and the default.

use crate::redis_common;

use locksim_algorithms::redis::client::UnlockMode;
use locksim_simulator::history::HistoryEvent;
use locksim_simulator::scenario::FaultKind;
use redis_common::*;

/// Three clients asking at once; client-0 is nearer the server (0.25 ms against 1 ms), so its
/// `SETNX` arrives first (0.25 ms) and takes the key; its answer is due back at 0.55 ms. client-0
/// is killed at `crash_ms` and restarts 1 s later. TTL 30 s.
fn setnx_crash(crash_ms: f64, seed: u64) -> locksim_simulator::run::SeedOutcome {
    let text = format!(
        r#"
name = "setnx-crash"
duration_ms = 40000
algorithms = ["redis"]
[models.redis]
client = "locksim-1"
acquire = "setnx_then_expire"
[network]
latency_ms = 0.25
[[network.links]]
from = "client-*"
to = "server-*"
latency_ms = 1
[[network.links]]
from = "client-0"
to = "server-*"
latency_ms = 0.25
[workload]
clients = 3
think_ms = 0
[[faults]]
kind = "crash"
target = "client-0"
at_ms = {crash_ms}
duration_ms = 1000
"#
    );
    run(&text, "redis", seed)
}

#[test]
fn a_client_killed_between_setnx_and_pexpire_leaves_a_key_that_never_expires() {
    const TTL_MS: f64 = 30_000.0;
    for seed in 0..3 {
        // Killed at 0.4 ms: the SETNX ran at 0.25 ms, its answer (0.55 ms) finds the process gone.
        let out = setnx_crash(0.4, seed);
        let acquired: Vec<_> = responses_sent(&out, |a| matches!(a, Answer::Reply(Reply::Acquired { .. })))
            .into_iter()
            .filter(|r| r.node == "server-0")
            .collect();
        assert_eq!(
            acquired.len(),
            1,
            "seed {seed}: only the first SETNX took the key: {:?}",
            &acquired[..2.min(acquired.len())]
        );
        assert_eq!(acquired[0].peer, "client-0", "seed {seed}: {acquired:?}");
        // The second command was never sent, so the key has no time to live: no expiry ever
        // deletes it, and every later SETNX (40 s of polling) is refused.
        let pexpire = requests_delivered(&out, |c| matches!(c, Command::PExpire { .. }));
        assert!(pexpire.is_empty(), "seed {seed}: a PEXPIRE reached the server");
        assert!(notes(&out, "expired").is_empty(), "seed {seed}: the key expired");
        let refused = responses_sent(&out, |a| matches!(a, Answer::Reply(Reply::Taken { .. }))).len();
        assert!(refused > 300, "seed {seed}: only {refused} refused SETNX");
        assert!(events(&out, |e| matches!(e, HistoryEvent::Granted { .. })).is_empty(), "seed {seed}");
        assert_eq!(out.metrics.acquisitions, 0, "seed {seed}");

        // Killed at 0.6 ms: the answer arrived at 0.55 ms and the PEXPIRE left then; it reaches
        // the server at 0.8 ms (before the reset that follows it on the connection). The key
        // expires 30 s later and a poller takes the lock at its next try.
        let out = setnx_crash(0.6, seed);
        let pexpire = requests_delivered(&out, |c| matches!(c, Command::PExpire { .. }));
        assert!((pexpire[0].at_ms() - 0.8).abs() < 1e-9, "seed {seed}: first PEXPIRE at {}", pexpire[0].at_ms());
        assert!(pexpire[1].at_ms() > TTL_MS, "seed {seed}: the next PEXPIRE is a later holder's, after the TTL");
        let first = events(&out, |e| matches!(e, HistoryEvent::Granted { .. }))
            .first()
            .map(|e| e.at_ns as f64 / 1e6)
            .expect("a grant after the TTL");
        let expires_at = pexpire[0].at_ms() + TTL_MS;
        // A refused poller sleeps at most 250 ms (retry_ms), then one 2.05 ms round trip.
        assert!(first > expires_at && first < expires_at + 250.0 + 2.1, "seed {seed}: first grant at {first} ms");
    }
}

#[test]
fn the_del_after_a_get_deletes_the_lock_another_client_took_in_between() {
    use Step::*;
    // client-0 holds from 0.55 ms (TTL 2 s: the key expires at 2 000.25 ms) and releases at
    // 1 000 ms; its GET is answered at 1 000.25 ms with its own value, and the answer reaches it at
    // 1 000.55 ms, while it is paused (1 000.4 ms to 2 500.4 ms). client-1 takes the expired key
    // at 2 100.25 ms; client-2 asks at 2 600 ms, after client-0's late DEL (2 500.65 ms).
    let scripts =
        vec![vec![(0.0, Acquire(0)), (1000.0, Release(0))], vec![(2100.0, Acquire(0))], vec![(2600.0, Acquire(0))]];
    let pause = || vec![fault(FaultKind::Pause, "client-0", 1000.4, Some(1500.0))];
    let get_then_del = RedisConfig { ttl_ms: 2000.0, unlock: UnlockMode::GetThenDel, ..locksim_1() };
    let trace = scripted_config(&get_then_del, scripts.clone(), pause(), 3000.0, 1);
    let get_answer = find(&trace, "server-0", "send", "→ client-0 Response { id: 2, answer: Reply(Value(");
    assert_eq!(get_answer.len(), 1, "the GET found client-0's value");
    assert!((get_answer[0].0 - 1000.25).abs() < 1e-9);
    let taken_by_1 = find(&trace, "server-0", "send", "→ client-1 Response { id: 1, answer: Reply(Acquired");
    assert_eq!(taken_by_1.len(), 1, "client-1 took the expired key");
    let del = find(&trace, "server-0", "deliver", "← client-0 Request { id: 3, cmd: Del");
    assert_eq!(del.len(), 1);
    assert!(del[0].0 > taken_by_1[0].0, "the DEL ({}) came after client-1's grant ({})", del[0].0, taken_by_1[0].0);
    assert!((del[0].0 - 2500.65).abs() < 1e-9, "DEL at {}", del[0].0);
    let deleted = find(&trace, "server-0", "send", "→ client-0 Response { id: 3, answer: Reply(Int(1))");
    assert_eq!(deleted.len(), 1, "the DEL deleted a key: client-1's");
    // client-1 never released; client-2 is granted anyway: two holders.
    assert_eq!(find(&trace, "client-1", "note", "lib Granted").len(), 1);
    let granted_2 = find(&trace, "client-2", "note", "lib Granted");
    assert_eq!(granted_2.len(), 1, "client-2 got the lock client-1 holds");
    assert!((granted_2[0].0 - 2600.55).abs() < 1e-9, "client-2 granted at {}", granted_2[0].0);

    // The compare-and-delete script, same schedule: client-0's release deleted its own key at
    // 1 000.25 ms in one step; nothing is sent after the pause, and client-2 is refused.
    let trace = scripted_config(&RedisConfig { ttl_ms: 2000.0, ..locksim_1() }, scripts, pause(), 3000.0, 1);
    assert_eq!(find(&trace, "client-1", "note", "lib Granted").len(), 1);
    assert!(find(&trace, "server-0", "deliver", "← client-0 Request { id: 3").is_empty());
    assert!(find(&trace, "client-2", "note", "lib Granted").is_empty());
    assert!(!find(&trace, "client-2", "note", "lib Refused").is_empty());
}
