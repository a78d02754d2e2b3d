//! Several API servers in front of the one store: `server-1 …` forward every Lease call to
//! `server-0`, which holds the store and is the `leader` for the scenario selectors; a client
//! whose API server stops answering moves to the next one after its HTTP timeout; one whose API
//! server process is killed sees its connection reset and moves on at once.

use crate::kubernetes_common;

use kubernetes_common::*;

const THREE_SERVERS: &str = r#"
name = "kubernetes-servers"
duration_ms = 30_000
algorithms = ["kubernetes"]

[models.kubernetes]
servers = 3
service_ms = 0

[network]
latency_ms = 1

[workload]
clients = 3
hold_ms = 1_000
think_ms = 0

[[faults]]
kind = "crash"
target = "server-1"
at_ms = 3_000
"#;

/// client-i starts with server-(i mod 3). client-1's first GET goes to server-1, which passes
/// it to server-0 and relays the answer: 4 ms for the call instead of 2. server-1's host is lost
/// at 3 s (a machine crash: no reset tells anyone); client-1's next call there is lost and times
/// out after request_timeout_ms (5 s), and its following call goes to server-2.
#[test]
fn front_servers_forward_to_the_store_and_a_timed_out_client_moves_on() {
    let text = THREE_SERVERS.replace("at_ms = 3_000", "at_ms = 3_000\nmode = \"machine\"");
    for seed in 0..5 {
        let out = run(&text, "kubernetes", seed);
        let forwarded = forwarded_calls_at(&out, "server-0", is_get);
        assert!(forwarded.iter().any(|c| c.0 == 2.0 && c.1 == "server-1"), "seed {seed}: {forwarded:?}");
        assert!(forwarded.iter().any(|c| c.0 == 2.0 && c.1 == "server-2"), "seed {seed}: {forwarded:?}");
        let direct = calls_at(&out, "server-0", is_get);
        assert!(direct.iter().any(|c| c.0 == 1.0 && c.1 == "client-0"), "seed {seed}: {direct:?}");

        // Every call client-1 sent (a call to a crashed server is sent and lost on arrival).
        let sent: Vec<(f64, String)> = calls_sent_by(&out, "client-1");
        let first_after_crash = sent.iter().position(|(t, _)| *t > 3_000.0).expect("client-1 calls after the crash");
        let (lost_at, to) = sent[first_after_crash].clone();
        assert_eq!(to, "server-1", "seed {seed}: {sent:?}");
        let (next_at, next_to) = sent[first_after_crash + 1].clone();
        assert_eq!(next_to, "server-2", "seed {seed}: {sent:?}");
        assert!(next_at >= lost_at + 5_000.0, "seed {seed}: {sent:?}");
        assert!(!notes(&out, "timed out").is_empty(), "seed {seed}");
    }
}

/// When a client sent each of its Lease calls, and to which server.
fn calls_sent_by(out: &locksim_simulator::run::SeedOutcome, client: &str) -> Vec<(f64, String)> {
    sent::<KubernetesMsg>(out)
        .into_iter()
        .filter(|s| s.node == client && matches!(s.msg, KubernetesMsg::Request(r) if r.lease == 0))
        .map(|s| (s.at_ms(), s.peer.to_string()))
        .collect()
}

/// The `leader` selector names the server with the store (server-0), and a crash of it stops
/// every Lease call whichever API server a client talks to.
#[test]
fn the_leader_is_the_server_with_the_store() {
    let text = THREE_SERVERS.replace("target = \"server-1\"", "target = \"leader\"");
    for seed in 0..3 {
        let out = run(&text, "kubernetes", seed);
        let (_, crashed) = fault_target(&out, "crash");
        assert_eq!(crashed, "server-0", "seed {seed}");
        let answered_after: Vec<(f64, &str)> = delivered::<KubernetesMsg>(&out)
            .into_iter()
            .filter(|d| d.at_ms() > 3_001.0 && d.node.starts_with("client-"))
            .filter(|d| matches!(d.msg, KubernetesMsg::Response(r) if r.result.is_ok()))
            .map(|d| (d.at_ms(), d.node))
            .collect();
        assert!(answered_after.is_empty(), "seed {seed}: {answered_after:?}");
    }
}

const KILLED_MID_CALL: &str = r#"
name = "kubernetes-server-killed"
duration_ms = 20_000
algorithms = ["kubernetes"]

[models.kubernetes]
servers = 3
service_ms = 0

[network]
latency_ms = 2

[workload]
clients = 3
hold_ms = 1_000
think_ms = 0

[[faults]]
kind = "crash"
target = "server-1"
at_ms = 3
"#;

/// server-1's process is killed at 3 ms while client-1's first GET is being forwarded through it
/// (sent at 0, at server-1 at 2 ms, at server-0 at 4 ms). The kernel resets the connection; the
/// reset reaches client-1 at 5 ms and the call fails at once (Go's HTTP/2 transport fails the
/// streams of a closed connection) instead of after request_timeout_ms (5 s). The elector
/// retries at its retry period (2 s × (1 + 1.2·u): 2 to 4.4 s), on server-2.
#[test]
fn a_killed_api_server_fails_the_call_at_once_and_the_elector_retries_at_its_period() {
    for seed in 0..5 {
        let out = run(KILLED_MID_CALL, "kubernetes", seed);
        let failed = notes(&out, "failed: connection reset");
        let (at, who, _) = failed.first().cloned().unwrap_or_else(|| panic!("seed {seed}: no reset failure"));
        assert_eq!(who, "client-1", "seed {seed}");
        assert!(at < 10.0, "seed {seed}: the call failed at {at} ms");
        assert!(notes(&out, "timed out").is_empty(), "seed {seed}: a call timed out");
        let sent: Vec<(f64, String)> = calls_sent_by(&out, "client-1");
        let (next_at, next_to) = sent.iter().find(|(t, _)| *t > at).cloned().expect("client-1 retries");
        assert_eq!(next_to, "server-2", "seed {seed}: {sent:?}");
        assert!((at + 2_000.0..=at + 4_400.0).contains(&next_at), "seed {seed}: retried at {next_at} ms: {sent:?}");
    }
}
