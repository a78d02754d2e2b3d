//! `sim exhaust` as a user meets it: on plain Redis with a pause around the TTL it exits 1 and
//! writes the shortest counterexample, which `sim run` replays exactly (its `[expect]` that the
//! overlap shows in its one seed holds, and the trace follows the whole `[replay]`); with the
//! fenced resource and a pause far past the TTL it prints a complete certificate and exits 0; bad
//! bounds exit 2 naming what is wrong; the scenario's `[exhaust]` table gives the bounds unless a
//! flag overrides them, and its errors name their file, line and column; on etcd's target the
//! search separates etcd-io/etcd#11456 (clientv3 3.4 without the re-check after waiting) from the
//! fixed library. A model's panic (made on demand by the debug-build hook
//! `LOCKSIM_TEST_PANIC_EXHAUST`) exits 3 with its message: during the search with the path to it
//! written, while the first world is built with nothing written; flags past the table's bounds and
//! menu entries naming a node the row lacks exit 2.

use crate::support::cli::{self, s, sim};

const REDIS: &str = "scenarios/exhaust/redis.toml";

#[test]
fn a_counterexample_is_written_and_sim_run_replays_it_exactly() {
    let d = cli::fresh_dir("exhaust", "replay");
    let out = d.join("redis.exhaust.toml");
    let (code, stdout, stderr) = sim(&[
        "exhaust",
        REDIS,
        "--algorithm",
        "redis",
        "--fault",
        "pause@clients:ttl_ms-1,ttl_ms+1",
        "--out",
        &s(&out),
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("overlap found, shortest path"), "{stdout}");
    assert!(stdout.contains(&format!("replay: sim run {}", s(&out))), "{stdout}");
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(text.contains("[replay]") && text.contains("[[faults]]") && text.contains("overlap = \"all\""), "{text}");

    // The file's own [expect] (the overlap in its one seed) holds, and no replay step diverged.
    let (code, stdout, stderr) = sim(&["run", &s(&out), "--trace", &s(&d.join("trace.txt"))]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let trace = std::fs::read_to_string(d.join("trace.txt")).expect("trace");
    assert!(!trace.contains("is not due now"), "the replay diverged:\n{trace}");
    assert!(trace.contains("pause starts on [client-"), "{trace}");
}

#[test]
fn a_fenced_row_gets_a_complete_certificate() {
    let (code, stdout, stderr) =
        sim(&["exhaust", REDIS, "--algorithm", "redis-fenced", "--fault", "pause@clients:ttl_ms+500"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("no fenced-stale-write in every schedule within these bounds (search complete)"),
        "{stdout}"
    );
    for part in ["bounds: 2 clients x 1 acquisition", "states explored", "unique states", "largest depth", "wall time"]
    {
        assert!(stdout.contains(part), "{part}: {stdout}");
    }
    assert!(!stdout.contains("proved"), "{stdout}");
}

#[test]
fn bad_bounds_exit_2_naming_the_problem() {
    let cases: &[(&[&str], &str)] = &[
        (&["--fault", "nap@clients:5"], "valid kinds: pause, crash"),
        (&["--fault", "pause@clients:lease_ms+1"], "ttl_ms"),
        (&["--delays", "min,oops"], "--delays min,oops"),
        (&["--property", "fenced-stale-write"], "not fenced"),
        (&["--clients", "0"], "--clients 0"),
    ];
    for (extra, want) in cases {
        let mut args = vec!["exhaust", REDIS, "--algorithm", "redis"];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = sim(&args);
        assert_eq!(code, 2, "{extra:?}: {stdout}{stderr}");
        assert!(stderr.contains(want), "{extra:?}: {stderr}");
    }
    let (code, _, stderr) = sim(&["exhaust", REDIS, "--algorithm", "nope"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("redis-fenced"), "the valid labels: {stderr}");
}

#[test]
fn the_exhaust_table_gives_the_bounds_and_flags_override_it() {
    // No flag: the table's menu, clients and hold time.
    let (code, stdout, stderr) = sim(&["exhaust", REDIS, "--algorithm", "redis", "--out", "/dev/null"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("from [pause@clients:ttl_ms-1,ttl_ms+1]"), "{stdout}");
    assert!(stdout.contains("2 clients x 1 acquisition (hold {100} ms, think {0} ms)"), "{stdout}");
    // A flag replaces its key: a shorter pause, and the certificate is complete.
    let (code, stdout, stderr) =
        sim(&["exhaust", REDIS, "--algorithm", "redis", "--fault", "pause@clients:ttl_ms-200"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("from [pause@clients:ttl_ms-200]") && stdout.contains("search complete"), "{stdout}");
    // A set of hold times is searched pair by pair; the counts cover both.
    let (code, stdout, stderr) =
        sim(&["exhaust", REDIS, "--algorithm", "redis", "--fault", "pause@clients:ttl_ms-200", "--hold-ms", "100,150"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("(hold {100, 150} ms, think {0} ms)"), "{stdout}");
}

#[test]
fn a_bad_exhaust_table_exits_2_at_its_place() {
    let d = cli::fresh_dir("exhaust", "table");
    let text = std::fs::read_to_string(REDIS).unwrap();
    // A menu entry naming a parameter the row lacks: found against the row, named by its place.
    let bad = d.join("bad-param.toml");
    std::fs::write(&bad, text.replace("pause@clients:ttl_ms-1,ttl_ms+1", "pause@clients:lease_ms+1")).unwrap();
    let line = text.lines().position(|l| l.starts_with("menu = ")).unwrap() + 1;
    let (code, _, stderr) = sim(&["exhaust", &s(&bad), "--algorithm", "redis"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("bad-param.toml:{line}:9: `exhaust.menu.0`: pause@clients:lease_ms+1")),
        "{stderr}"
    );
    assert!(stderr.contains("ttl_ms"), "the row's parameters: {stderr}");
    // A kind the menu does not know: refused by the parser, as every scenario error.
    let bad = d.join("bad-kind.toml");
    std::fs::write(&bad, text.replace("pause@clients:ttl_ms-1,ttl_ms+1", "nap@clients:5")).unwrap();
    let (code, _, stderr) = sim(&["exhaust", &s(&bad), "--algorithm", "redis"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("bad-kind.toml:{line}:9: `exhaust.menu.0`")) && stderr.contains("valid kinds"),
        "{stderr}"
    );
    // Without a table, K > 0 needs a menu.
    let plain = d.join("plain.toml");
    std::fs::write(&plain, &text[..text.find("\n# The bounds `sim exhaust`").unwrap()]).unwrap();
    let (code, _, stderr) = sim(&["exhaust", &s(&plain), "--algorithm", "redis", "--faults", "2"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no fault menu"), "{stderr}");
    // The same budget from the table names its key, not a flag that was not given.
    let no_menu = d.join("no-menu.toml");
    std::fs::write(&no_menu, text.replace("menu = [\"pause@clients:ttl_ms-1,ttl_ms+1\"]", "menu = []")).unwrap();
    let (code, _, stderr) = sim(&["exhaust", &s(&no_menu), "--algorithm", "redis"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no-menu.toml: [exhaust] faults = 1: no fault menu to choose from"), "{stderr}");
    let deep = d.join("start-depth.toml");
    std::fs::write(&deep, format!("{text}start_depth = 20\n")).unwrap();
    let (code, _, stderr) = sim(&["exhaust", &s(&deep), "--algorithm", "redis", "--max-depth", "10"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("start-depth.toml: [exhaust] start_depth = 20: expected at most --max-depth (10)"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

const ETCD: &str = "scenarios/exhaust/etcd.toml";

#[test]
fn etcd_11456_is_found_without_the_recheck_and_certified_absent_with_it() {
    // The table's bound: 3 clients, one pause past the lease of a waiter blocked on its watch.
    let d = cli::fresh_dir("exhaust", "etcd-11456");
    let out = d.join("etcd-no-recheck.exhaust.toml");
    let (code, stdout, stderr) = sim(&["exhaust", ETCD, "--algorithm", "etcd-no-recheck", "--out", &s(&out)]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("from [pause@blocked:lease_ttl_ms+1000]"), "{stdout}");
    assert!(stdout.contains("overlap found, shortest path"), "{stdout}");
    let (code, stdout, stderr) = sim(&["run", &s(&out)]);
    assert_eq!(code, 0, "the counterexample replays: {stdout}{stderr}");
    // clientv3 3.5 re-reads its key after the wait: no schedule within the same bounds overlaps.
    let (code, stdout, stderr) = sim(&["exhaust", ETCD, "--algorithm", "etcd"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("no overlap in every schedule within these bounds (search complete)"), "{stdout}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn distinct_faults_bound_the_menu_to_one_use_of_each_entry() {
    // K = 2 from one entry, a pause past the TTL: two pauses (one per client) let the first
    // holder write after the second's grant but before its first write, which the fenced
    // resource cannot reject yet (the fencing gap, docs/exhaustive.md).
    let args =
        ["exhaust", REDIS, "--algorithm", "redis-fenced", "--fault", "pause@clients:ttl_ms+500", "--faults", "2"];
    let (code, stdout, stderr) = sim(&[&args[..], &["--out", "/dev/null"]].concat());
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.matches("fault: pause client-").count() == 2, "{stdout}");
    // Each entry at most once: the one pause left gives a complete certificate.
    let (code, stdout, stderr) = sim(&[&args[..], &["--distinct-faults"]].concat());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("at most 2 faults (each entry at most once)"), "{stdout}");
    assert!(stdout.contains("(search complete)"), "{stdout}");
}

#[test]
fn hold_times_chosen_per_acquisition_replay_and_explain() {
    // 2 clients of 2 acquisitions on plain Redis (TTL 1 s, redis-py polling every 100 ms), no
    // fault: only a hold chosen at each grant overlaps (client-0 holding 10 ms, then 1016 ms);
    // every acquisition holding one of those times does not (what the pair-by-pair search was).
    let d = cli::fresh_dir("exhaust", "per-acquisition");
    let out = d.join("holds.exhaust.toml");
    let bounds = ["exhaust", REDIS, "--algorithm", "redis", "--faults", "0", "--acquisitions", "2", "--think-ms", "0"];
    for single in ["10", "1016"] {
        let (code, stdout, stderr) = sim(&[&bounds[..], &["--hold-ms", single]].concat());
        assert_eq!(code, 0, "{single}: {stdout}{stderr}");
        assert!(stdout.contains("no overlap in every schedule within these bounds (search complete)"), "{stdout}");
    }
    let (code, stdout, stderr) = sim(&[&bounds[..], &["--hold-ms", "10,1016", "--out", &s(&out)]].concat());
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("hold times chosen, in order: client-0 10 ms, client-0 1016 ms, client-1 10 ms"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(text.contains("hold_ms = [10.0, 1016.0, 10.0]"), "{text}");

    // `sim run` replays it exactly (its [expect]: the overlap in its one seed), and `sim
    // explain` tells it.
    let (code, stdout, stderr) = sim(&["run", &s(&out), "--trace", &s(&d.join("trace.txt"))]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let trace = std::fs::read_to_string(d.join("trace.txt")).expect("trace");
    assert!(!trace.contains("is not due now"), "the replay diverged:\n{trace}");
    let (code, stdout, stderr) =
        sim(&["explain", &s(&out), "--algorithm", "redis", "--seed", "0", "--out", &s(&d), "--quiet"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("overlap") && stdout.contains("client-1 was granted key 0"), "{stdout}");

    // Without the chosen holds (every acquisition holding the workload's 10 ms) the same events
    // give no overlap: the replay's expectation fails.
    let without = d.join("without.toml");
    std::fs::write(&without, text.replace("hold_ms = [10.0, 1016.0, 10.0]\n", "")).unwrap();
    let (code, stdout, stderr) = sim(&["run", &s(&without)]);
    assert_eq!(code, 1, "{stdout}{stderr}");

    // A bad list exits 2 naming its file, line, column and key.
    let bad = d.join("bad.toml");
    std::fs::write(&bad, text.replace("hold_ms = [10.0, 1016.0, 10.0]", "hold_ms = [10.0, -1.0]")).unwrap();
    let (code, _, stderr) = sim(&["run", &s(&bad)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("bad.toml:") && stderr.contains("`replay.hold_ms.1`: expected a hold time"), "{stderr}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Runs `sim` with `args` and the debug-build hook `LOCKSIM_TEST_PANIC_EXHAUST` set to `at`
/// (`locksim_campaign::exhaust::test_panic`): the real model's world panics there, as a model
/// with a bug would. (exit code, stdout, stderr)
#[cfg(debug_assertions)]
fn sim_panicking_at(at: &str, args: &[&str]) -> (i32, String, String) {
    use locksim_campaign::exhaust::test_panic::TEST_PANIC_EXHAUST_VAR;
    cli::sim_with_env(&[(TEST_PANIC_EXHAUST_VAR, at)], args)
}

#[cfg(debug_assertions)]
#[test]
fn a_model_panic_during_the_search_exits_3_with_its_message_and_replay_file() {
    // Plain Redis with the table's pause: the world panics on client-1's first reply, which the
    // search reaches on its first paths. Without the hook the same search exits 1 (the overlap).
    let d = cli::fresh_dir("exhaust", "panic-search");
    let out = d.join("panic.exhaust.toml");
    let key = "deliver server-0 -> client-1";
    let (code, stdout, stderr) = sim_panicking_at(key, &["exhaust", REDIS, "--algorithm", "redis", "--out", &s(&out)]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(stdout.contains("redis (redis): the model panicked, search stopped (path of "), "{stdout}");
    assert!(stdout.contains(&format!("`{key}` panics on purpose")), "the message: {stdout}");
    assert!(stdout.lines().any(|l| l.contains("panicked at step ") && l.ends_with(key)), "{stdout}");
    assert!(stdout.contains(&format!("written to {}", s(&out))), "{stdout}");
    let text = std::fs::read_to_string(&out).expect("the path to the panic is written");
    assert!(
        text.contains("[replay]") && text.contains(&format!("\"{key}\",\n]")) && !text.contains("[expect"),
        "{text}"
    );
    // The file is a scenario `sim` accepts.
    let (code, stdout, stderr) = sim(&["check", &s(&out)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

#[cfg(debug_assertions)]
#[test]
fn a_model_panic_building_the_first_world_exits_3_and_writes_nothing() {
    // Before the search's first step there is no path: the message and the row, no file.
    let d = cli::fresh_dir("exhaust", "panic-first-world");
    let out = d.join("first.exhaust.toml");
    let (code, stdout, stderr) =
        sim_panicking_at("first-world", &["exhaust", REDIS, "--algorithm", "redis", "--out", &s(&out)]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(
        stdout.contains("redis (redis): the model panicked building the first world, before the search"),
        "{stdout}"
    );
    assert!(stdout.contains("the first world panics on purpose"), "the message: {stdout}");
    assert!(stdout.contains("no replay file written"), "{stdout}");
    assert!(!stdout.contains("written to"), "{stdout}");
    assert!(!out.exists(), "nothing to replay, nothing written");
}

#[test]
fn flags_past_the_tables_bounds_and_unknown_nodes_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        // Once built a world of 100000 clients for minutes before the search (deaf to Ctrl-C).
        (&["--clients", "100000"], "--clients 100000: expected at most 1000 clients"),
        (&["--faults", "17"], "--faults 17: expected at most 16 faults"),
        (&["--acquisitions", "99999999999"], "--acquisitions 99999999999: expected at most 1000000"),
        (&["--slow-messages", "1001"], "--slow-messages 1001: expected at most 1000"),
        (&["--max-states", "99999999999"], "--max-states 99999999999: expected at most 1000000000"),
        // The valid words of a delay are listed with the row's parameters.
        (&["--delays", "fast"], "with KEY a numeric parameter of this row (down_after_ms, "),
        (&["--delays", "fast"], "; or min or max (the network's latency bounds)"),
        // A node the row lacks was never chosen: the certificate covered no such fault (exit 0).
        (&["--fault", "pause@nobody:5"], "--fault pause@nobody:5: no node `nobody`"),
        (&["--fault", "pause@client-2:5"], "a node name: server-0, client-0, client-1"),
    ];
    for (extra, want) in cases {
        let mut args = vec!["exhaust", REDIS, "--algorithm", "redis", "--out", "/dev/null"];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = sim(&args);
        assert_eq!(code, 2, "{extra:?}: {stdout}{stderr}");
        assert!(stderr.contains(want), "{extra:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{extra:?}: {stderr}");
    }
    // A named node is still a valid target.
    let (code, stdout, stderr) =
        sim(&["exhaust", REDIS, "--algorithm", "redis", "--fault", "pause@client-1:ttl_ms+1", "--out", "/dev/null"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    // From the table, the unknown node is named by its file, line and column.
    let d = cli::fresh_dir("exhaust", "table-node");
    let text = std::fs::read_to_string(REDIS).unwrap();
    let bad = d.join("bad-node.toml");
    std::fs::write(&bad, text.replace("pause@clients:ttl_ms-1,ttl_ms+1", "pause@nobody:5")).unwrap();
    let line = text.lines().position(|l| l.starts_with("menu = ")).unwrap() + 1;
    let (code, _, stderr) = sim(&["exhaust", &s(&bad), "--algorithm", "redis"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("bad-node.toml:{line}:9: `exhaust.menu.0`: pause@nobody:5: no node `nobody`")),
        "{stderr}"
    );
}
