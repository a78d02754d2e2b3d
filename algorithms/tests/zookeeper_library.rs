//! The `client` presets of the zookeeper model (issue 32, rows 7 and 8): Curator 5.4's connection
//! states reach the application through other threads, so a holder resumed from a pause past
//! its session checks before SUSPENDED arrives and writes stale (known outcome 08's setting);
//! and its release runs through `RetryLoop`, so a server failover of about a second under a
//! release no longer fails it. `locksim-1` (the default) is the model before presets.

#[path = "zookeeper_common/mod.rs"]
mod zookeeper_common;
use zookeeper_common::*;

use locksim_simulator::history::HistoryEvent;
use locksim_simulator::run::SeedOutcome;

fn known_08() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/known/08-zookeeper-pause-beyond-session.toml"
    ))
    .expect("the known-outcome scenario")
}

/// Known outcome 08 with `extra` added to its `suspended` row.
fn known_08_with(extra: &str) -> String {
    let text = known_08();
    let row = "on_connection_loss = \"suspended\"\n";
    assert_eq!(text.matches(row).count(), 1);
    text.replace(row, &format!("{row}{extra}\n"))
}

/// The first holder's writes under its first grant (the pause caught it right after that grant).
fn paused_holders_writes(out: &SeedOutcome) -> Vec<locksim_simulator::history::Stamped> {
    let first = events(out, |e| matches!(e, HistoryEvent::Granted { .. }))[0].node;
    events(out, |e| matches!(e, HistoryEvent::ResourceWrite { grant: 1, .. }))
        .into_iter()
        .filter(|e| matches!(e.event, HistoryEvent::ResourceWrite { client, .. } if client == first))
        .cloned()
        .collect()
}

#[test]
fn curator_5_4_a_holder_resumed_past_its_session_checks_before_suspended_arrives_and_writes_stale() {
    for seed in 0..3 {
        // The model before presets: the check runs the connection's clock, sees SUSPENDED first.
        let old = run(&known_08(), "suspended", seed);
        assert!(paused_holders_writes(&old).is_empty(), "seed {seed}: locksim-1 abandons the section");
        assert_eq!(old.metrics.stale_unfenced_events, 0);

        // Curator 5.4: the check reads the flag the listener has not set yet.
        let out = run(&known_08_with("client = \"curator-5.4\""), "suspended", seed);
        let writes = paused_holders_writes(&out);
        assert_eq!(writes.len(), 1, "seed {seed}: the paused holder writes");
        let HistoryEvent::ResourceWrite { fenced_accepted, .. } = writes[0].event else { unreachable!() };
        assert!(!fenced_accepted, "seed {seed}: the fenced resource rejects the old czxid");
        assert_eq!(out.metrics.stale_unfenced_events, 1, "seed {seed}");
        assert!(out.metrics.overlap_events >= 1, "seed {seed}");
        // SUSPENDED reaches the listener 60-80 ms after the connection noticed the read timeout,
        // which it did on resuming: after the write went out.
        let write_ms = writes[0].at_ns as f64 / 1e6;
        let noticed = trace(&out, "note", "Suspended queued for the listener thread");
        let got = trace(&out, "note", "listener gets Suspended");
        let (queued_ms, node, _) = noticed.first().expect("SUSPENDED queued").clone();
        let (got_ms, _, _) = got.iter().find(|(_, n, _)| *n == node).expect("SUSPENDED delivered").clone();
        assert!(queued_ms >= write_ms - 1.0, "seed {seed}: noticed at {queued_ms}, wrote at {write_ms}");
        let hops = got_ms - queued_ms;
        assert!((60.0..=80.0).contains(&hops), "seed {seed}: delivered {hops} ms after");
        assert!(got_ms > write_ms, "seed {seed}");
    }
}

#[test]
fn an_explicit_state_delivery_overrides_the_preset() {
    let out = run(&known_08_with("client = \"curator-5.4\"\nstate_delivery = \"sync\""), "suspended", 0);
    assert!(paused_holders_writes(&out).is_empty());
    assert_eq!(out.metrics.stale_unfenced_events, 0);
}

/// One client holding the lock for 1 s on a three-server ensemble (servers answer after 5 ms,
/// so a request is in flight that long); `extra` goes into `[models.zookeeper]`, `faults` at
/// the end.
fn one_release(extra: &str, faults: &str) -> String {
    format!(
        r#"
name = "release"
duration_ms = 20000
algorithms = ["zookeeper"]
[models.zookeeper]
service_ms = 5
{extra}
[network]
latency_ms = 0.5
[workload]
clients = 1
think_ms = 0
hold_ms = 1000
acquisitions_per_client = 1
{faults}
"#
    )
}

/// Where and when client-0 sends its release's delete, from a run without faults: (server, ms).
fn delete_sent(seed: u64) -> (String, f64) {
    let out = run(&one_release("", ""), "zookeeper", seed);
    let (ms, _, detail) =
        trace(&out, "send", "Delete(").into_iter().find(|(_, n, _)| n == "client-0").expect("a delete");
    let server = detail.split_whitespace().nth(1).expect("→ server").to_string();
    (server, ms)
}

/// The run with the server client-0 talks to killed 1 ms after the delete went out, for 1 s.
fn release_under_failover(extra: &str, seed: u64) -> SeedOutcome {
    let (server, at_ms) = delete_sent(seed);
    let fault = format!(
        "[[faults]]\nkind = \"crash\"\nmode = \"process\"\ntarget = \"{server}\"\nat_ms = {}\nduration_ms = 1000\n",
        at_ms + 1.0
    );
    run(&one_release(extra, &fault), "zookeeper", seed)
}

#[test]
fn curator_5_4_a_release_under_a_one_second_failover_completes_through_the_retry_loop() {
    for seed in 0..4 {
        let failed = |out: &SeedOutcome| events(out, |e| matches!(e, HistoryEvent::ReleaseFailed { .. })).len();
        // The model before presets: the reset fails the delete, and release() throws.
        let old = release_under_failover("", seed);
        assert_eq!(failed(&old), 1, "seed {seed}: locksim-1 fails the release");
        // Curator 5.4: RetryLoop sleeps 1 s and deletes again once reconnected.
        let out = release_under_failover("client = \"curator-5.4\"", seed);
        assert_eq!(failed(&out), 0, "seed {seed}: the release completes");
        let retried = trace(&out, "note", "of the release of lock 0");
        assert!(!retried.is_empty(), "seed {seed}: the release was retried");
        let deletes = trace(&out, "send", "Delete(").into_iter().filter(|(_, n, _)| n == "client-0").count();
        assert!(deletes >= 2, "seed {seed}: the delete went out again");
    }
}

#[test]
fn kazoo_retries_its_release_until_it_completes_and_is_not_reentrant() {
    let out = release_under_failover("client = \"kazoo-2.11\"", 0);
    assert!(events(&out, |e| matches!(e, HistoryEvent::ReleaseFailed { .. })).is_empty());
    let models = locksim_algorithms::registry();
    let sc = locksim_simulator::scenario::parse_str("k.toml", &one_release("client = \"kazoo-2.10\"", ""), &models)
        .unwrap_or_else(|e| panic!("{e}"));
    let run = &sc.runs[0];
    let notes = run.model.limitations(&run.params, &sc.setup.workload).join("\n");
    assert!(notes.contains("session_timeout_ms = 10000") && notes.contains("not reentrant"), "{notes}");
}
