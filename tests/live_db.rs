//! `sim live` of the `db` model against a real MariaDB server on this machine: the no-fault
//! fidelity scenario (the lock row and `GET_LOCK`: no overlap, acquisitions, every process
//! stopped), the server killed and back (InnoDB's crash recovery: grants after the restart,
//! tokens never going back), a holder paused past `expire_ms` (the cleanup event deletes its row:
//! overlap, as simulated), and the configurations refused with their reasons. Without
//! `mariadbd` (Debian package mariadb-server) the server tests print `SKIPPED:` and pass.

use std::path::Path;

use crate::support::cli::{fresh_dir, s, sim};
use crate::support::live::*;

/// Whether `mariadbd` can be found as the backend finds it: on PATH, or in /usr/sbin.
fn have_mariadbd() -> bool {
    let on_path =
        std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("mariadbd").is_file()));
    on_path || Path::new("/usr/sbin/mariadbd").is_file()
}

fn skip(test: &str) -> bool {
    if have_mariadbd() {
        return false;
    }
    println!("SKIPPED: {test}: `mariadbd` is not on PATH nor in /usr/sbin (Debian package mariadb-server)");
    true
}

#[test]
fn db_no_faults_live() {
    let _serial = serial();
    if skip("db_no_faults_live") {
        return;
    }
    let dir = fresh_dir("live-db", "no-faults");
    let file = fidelity_copy("db-no-faults.toml", &dir, Some(3_000), false, |t| t);
    let out = dir.join("results.json");
    let keep = dir.join("servers");
    let (code, stdout, stderr) = sim(&["live", &s(&file), "--json", &s(&out), "--keep-dir", &s(&keep)]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("# live: real servers on this machine (mariadbd: "), "{stdout}");
    let json = results(&out);
    assert_eq!(json["mode"], "live");
    assert!(json["servers"][0]["version"].as_str().unwrap().contains("MariaDB"), "{json}");
    for label in ["db", "db-get-lock"] {
        let r = row(&json, label);
        assert_eq!(r["runs"], 1, "{r}");
        assert_eq!(r["overlap"]["runs"], 0, "{label}: {r}");
        let acquisitions = r["acquisitions"].as_u64().unwrap();
        assert!(acquisitions > 20, "{label}: only {acquisitions} acquisitions in 3 s live: {r}");
    }
    assert_eq!(row(&json, "db")["token_regressions_runs"], 0, "the AUTO_INCREMENT ids only grow");
    let left = processes_mentioning(&dir);
    assert!(left.is_empty(), "processes left running after sim live: {left:?}");
}

#[test]
fn db_server_killed_comes_back_live() {
    let _serial = serial();
    if skip("db_server_killed_comes_back_live") {
        return;
    }
    let dir = fresh_dir("live-db", "killed");
    let file = fidelity_copy("db-server-killed.toml", &dir, Some(5_000), false, |t| {
        t.replace("at_ms = 3_000", "at_ms = 1_500").replace("duration_ms = 2_000", "duration_ms = 1_500")
    });
    let history = dir.join("history.jsonl");
    let out = dir.join("results.json");
    let keep = dir.join("servers");
    let (code, stdout, stderr) =
        sim(&["live", &s(&file), "--history", &s(&history), "--json", &s(&out), "--keep-dir", &s(&keep)]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    for (label, h) in histories(&history) {
        let faults = h["faults"].as_array().unwrap();
        assert_eq!(faults.len(), 1, "{label}: one crash: {faults:?}");
        assert_eq!(faults[0]["kind"], "crash");
        assert_eq!(faults[0]["targets"], "server-0");
        let end = faults[0]["end_ns"].as_u64().expect("the crash ended with a restart");
        let start = faults[0]["start_ns"].as_u64().unwrap();
        assert!(end - start >= 1_400_000_000, "{label}: the server was down {} ms", (end - start) / 1_000_000);
        let after = grants_after(&h, end);
        assert!(after > 10, "{label}: only {after} grants after the restart: the service did not come back\n{stdout}");
    }
    let r = row(&results(&out), "db").clone();
    assert_eq!(r["overlap"]["runs"], 0, "{r}");
    assert_eq!(r["token_regressions_runs"], 0, "crash recovery keeps the AUTO_INCREMENT counter: {r}");
    assert!(processes_mentioning(&dir).is_empty());
}

/// A holder stopped past `expire_ms`: the cleanup event deletes its row, the next poller inserts
/// its own, and the resumed holder writes: an overlap, as simulated.
#[test]
fn db_paused_holder_overlaps_live() {
    let _serial = serial();
    if skip("db_paused_holder_overlaps_live") {
        return;
    }
    let dir = fresh_dir("live-db", "paused");
    let file = fidelity_copy("db-paused-holder.toml", &dir, Some(6_000), true, |t| t);
    let out = dir.join("results.json");
    let keep = dir.join("servers");
    let (code, stdout, stderr) = sim(&["live", &s(&file), "--json", &s(&out), "--keep-dir", &s(&keep)]);
    assert_eq!(code, 0, "every expectation (overlap and stale write in every run) holds live\n{stdout}\n{stderr}");
    let json = results(&out);
    assert_eq!(row(&json, "db")["overlap"]["runs"], 1);
    assert_eq!(row(&json, "db")["stale_unfenced"]["runs"], 1);
    assert!(processes_mentioning(&dir).is_empty());
}

#[test]
fn db_configurations_live_mode_cannot_run_are_refused_with_the_reason() {
    let _serial = serial();
    let dir = fresh_dir("live-db", "refusals");
    let cases: &[(&str, &str, &str)] = &[
        ("replication", "replication = \"semisync\"", "a replica, its binlog shipping and the failover manager"),
        ("autoinc", "autoinc_persistent = false", "MDEV-6076"),
        ("lock-wait", "lock_wait_timeout_ms = 1500", "innodb_lock_wait_timeout takes whole seconds"),
        ("cleanup", "expire_ms = 2_000\ncleanup_every_ms = 500", "scheduled in whole seconds"),
    ];
    for (name, params, expected) in cases {
        let text = std::fs::read_to_string("scenarios/fidelity/db-no-faults.toml")
            .unwrap()
            .replace("[models.db]\npoll_ms = 20", &format!("[models.db]\npoll_ms = 20\n{params}"));
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, text).unwrap();
        let (code, stdout, stderr) = sim(&["live", &s(&path), "--algorithm", "db"]);
        assert_eq!(code, 2, "{name}: {stdout}{stderr}");
        assert!(stderr.contains(expected), "{name}: {stderr}");
    }
}
