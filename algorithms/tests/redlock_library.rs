//! The `client` preset and the behaviours that differ between Redlock libraries: the clock an
//! attempt's elapsed time is read on (`elapsed_clock`), a killed master's connection reset failing
//! the request at once, whether failed attempts unlock in between (node-redlock does not), and
//! whether an unlock that deleted the key on fewer than a quorum raises (`ReleaseFailed`: redsync,
//! node-redlock) or is ignored (redlock-rb).

use crate::redlock_common;
use redlock_common::*;

use locksim_simulator::history::HistoryEvent;
use locksim_simulator::scenario::parse_str;

/// One client, five masters at 0.5 ms each way; `workload` goes into `[workload]`, `faults` at
/// the end; no `[models.redlock]` table.
fn setup(workload: &str, faults: &str) -> String {
    format!(
        r#"
name = "library"
duration_ms = 3000
algorithms = ["redlock"]
[network]
latency_ms = 0.5
[workload]
clients = 1
think_ms = 0
acquisitions_per_client = 1
{workload}
{faults}
"#
    )
}

/// [`setup`] with masters that take no time per command and `extra` in `[models.redlock]`: for
/// the tests of what the `client` preset fills in, which read the row's parameters.
fn one_client(extra: &str, workload: &str, faults: &str) -> String {
    format!("{}[models.redlock]\nservice_ms = 0\n{extra}\n", setup(workload, faults))
}

/// redlock-rb's defaults with masters that take no time per command.
fn instant_masters() -> RedlockConfig {
    RedlockConfig { service_ms: Dist::Const(0.0), ..redlock_rb() }
}

#[test]
fn the_configurations_the_tests_state_in_rust_are_the_rows_the_parser_reads() {
    for (extra, stated) in [("", redlock_rb()), ("client = \"redsync-4\"\nttl_ms = 4000", redsync(4000))] {
        let text = format!("{}[models.redlock]\n{extra}\n", setup("", ""));
        let sc = parse_str("library.toml", &text, &locksim_algorithms::registry()).unwrap_or_else(|e| panic!("{e}"));
        let parsed = RedlockConfig::from_params(&sc.runs[0].params);
        assert_eq!(format!("{parsed:?}"), format!("{stated:?}"), "{extra:?}");
    }
}

/// client-0's wall clock steps 20 s forward at 2 ms, in the middle of its first SET round.
const JUMP: &str = r#"
[[faults]]
kind = "clock_jump"
target = "client-0"
at_ms = 2
by_ms = 20000
"#;

fn first_note(out: &locksim_simulator::run::SeedOutcome) -> String {
    notes(out, "redlock ").into_iter().find(|(_, n, _)| n == "client-0").expect("a redlock note").2
}

#[test]
fn a_wall_clock_step_during_the_round_spoils_the_attempt_only_on_the_wall_clock() {
    // Monotonic (redlock-rb's CLOCK_MONOTONIC, redsync): the step is invisible, 5 ms elapsed.
    let mono =
        run_config(&setup("", JUMP), &RedlockConfig { elapsed_clock: ElapsedClock::Mono, ..instant_masters() }, 0);
    let note = first_note(&mono);
    assert!(note.starts_with("redlock granted lock0: 5/5 masters, elapsed_ms=5.000"), "{note}");
    // Wall (node-redlock Date.now, antirez's Time.now): 20 s elapsed, more than the 10 s TTL.
    let wall =
        run_config(&setup("", JUMP), &RedlockConfig { elapsed_clock: ElapsedClock::Wall, ..instant_masters() }, 0);
    let note = first_note(&wall);
    assert!(note.starts_with("redlock attempt 1 on lock0 failed: 5/5 masters"), "{note}");
    assert!(note.contains("elapsed_ms=20005.000"), "{note}");
}

#[test]
fn a_killed_masters_reset_fails_its_request_at_once_a_lost_machine_waits_out_the_timeout() {
    let crash = |mode: &str| {
        format!(
            "[[faults]]\nkind = \"crash\"\ntarget = \"server-0\"\nmode = \"{mode}\"\nat_ms = 0\nduration_ms = 2000\n"
        )
    };
    let granted_at = |mode: &str| {
        let out = run_config(&setup("", &crash(mode)), &instant_masters(), 0);
        let g = events(&out, |e| matches!(e, HistoryEvent::Granted { .. }));
        g[0].at_ns as f64 / 1e6
    };
    // A killed process: the SET to server-0 is refused and the client's connection reset one
    // latency later; the next master is asked at once (4 of 5 at about 5 ms).
    let process = granted_at("process");
    assert!(process < 10.0, "granted at {process} ms");
    // A lost machine tells nobody: redlock-rb waits its 100 ms redis_timeout first.
    let machine = granted_at("machine");
    assert!(machine > 100.0 && machine < 110.0, "granted at {machine} ms");
}

/// client-0 reaches only server-0 and server-1: every attempt wins 2 of 5.
const MINORITY: &str = r#"
[[faults]]
kind = "partition"
groups = [["client-0"], ["server-2", "server-3", "server-4"]]
at_ms = 0
"#;

#[test]
fn node_redlock_unlocks_once_after_its_last_attempt_the_others_after_each() {
    // retries = 1: redlock-rb and node-redlock count retries (two attempts), redsync counts
    // attempts (one). redlock-rb and redsync unlock after every failed attempt, node-redlock
    // only after its last.
    for (client, attempts, unlock_rounds) in [("redlock-rb", 2, 2), ("redsync", 1, 1), ("node-redlock", 2, 1)] {
        let extra = format!("client = \"{client}\"\nretries = 1\nnode_timeout_ms = 50");
        let out = run(&one_client(&extra, "", MINORITY), "redlock", 0);
        // The first acquire call, up to its failure (the workload then starts another).
        let entries: Vec<_> = out.trace.as_ref().unwrap().entries.iter().filter(|e| e.node == "client-0").collect();
        let end = entries.iter().position(|e| e.detail.starts_with("AcquireFailed")).expect("the call fails");
        let sent = |needle: &str| {
            entries[..end].iter().filter(|e| matches!(e.kind, "send" | "drop") && e.detail.contains(needle)).count()
        };
        let (sets, unlocks) = (sent(" SET "), sent(" UNLOCK "));
        assert_eq!((sets, unlocks), (5 * attempts, 5 * unlock_rounds), "{client}");
    }
}

#[test]
fn a_preset_keeps_a_value_the_scenario_set_even_to_redlock_rbs_default() {
    // `retries = 3` is redlock-rb's default; written in the file with `client = "redsync"` it
    // must stay 3 (three attempts, redsync counts attempts), not become redsync's 32. Left out,
    // the preset's 32 attempts run (here cut short by the run's end, so at least 4).
    let attempts_of = |extra: &str| {
        let out = run(&one_client(extra, "", MINORITY), "redlock", 0);
        let entries: Vec<_> = out.trace.as_ref().unwrap().entries.iter().filter(|e| e.node == "client-0").collect();
        let end = entries.iter().position(|e| e.detail.starts_with("AcquireFailed")).unwrap_or(entries.len());
        entries[..end].iter().filter(|e| matches!(e.kind, "send" | "drop") && e.detail.contains(" SET ")).count() / 5
    };
    assert_eq!(attempts_of("client = \"redsync\"\nretries = 3\nnode_timeout_ms = 50"), 3);
    assert!(attempts_of("client = \"redsync\"\nnode_timeout_ms = 50") > 3);
}

#[test]
fn an_unlock_after_the_keys_expired_raises_in_redsync_and_node_redlock_not_in_redlock_rb() {
    // A 300 ms TTL and a 1 s critical section: at release every key has expired, so the unlock
    // script deletes nothing anywhere.
    let workload = "hold_ms = 1000";
    for (client, raises) in [("redlock-rb", false), ("redsync", true), ("node-redlock", true)] {
        let extra = format!("client = \"{client}\"\nttl_ms = 300");
        let out = run(&one_client(&extra, workload, ""), "redlock", 0);
        let failed = events(&out, |e| matches!(e, HistoryEvent::ReleaseFailed { .. })).len();
        assert_eq!(failed, usize::from(raises), "{client}");
        let note = notes(&out, "redlock released").pop().expect("a release").2;
        assert!(note.starts_with("redlock released lock0: deleted on 0/5 masters"), "{client}: {note}");
    }
}
