//! `sim exhaust` as a user meets it: on plain Redis with a pause around the TTL it exits 1 and
//! writes the shortest counterexample, which `sim run` replays exactly (its `[expect]` that the
//! overlap shows in its one seed holds, and the trace follows the whole `[replay]`); with the
//! fenced resource and a pause far past the TTL it prints a complete certificate and exits 0; bad
//! bounds exit 2 naming what is wrong; the scenario's `[exhaust]` table gives the bounds unless a
//! flag overrides them, and its errors name their file, line and column; on etcd's target the
//! search separates etcd-io/etcd#11456 (clientv3 3.4 without the re-check after waiting) from the
//! fixed library.

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
