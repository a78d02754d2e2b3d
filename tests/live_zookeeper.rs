//! `sim live` of the `zookeeper` model against a real ZooKeeper 3.8 ensemble on this machine
//! (Debian's `zookeeper` package, three JVMs per run): no faults (no overlap, acquisitions,
//! every process stopped), the leader killed (grants resume among the two left after their
//! election, no overlap, no token regression), and a holder paused past its session (its
//! ephemeral node goes, the next waiter is granted: overlap without a stale write). Each test
//! starts the ensemble once. Without `java` or the package's jar the tests print `SKIPPED:` and
//! pass.

use std::path::Path;

use crate::support::cli::{fresh_dir, s, sim};
use crate::support::live::*;

const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";

fn skip_without_zookeeper(test: &str) -> bool {
    let java = std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("java").is_file()));
    if java && Path::new(ZOOKEEPER_JAR).is_file() {
        return false;
    }
    println!("SKIPPED: {test}: `java` or {ZOOKEEPER_JAR} is missing (Debian package zookeeper)");
    true
}

#[test]
fn zookeeper_no_faults_live() {
    let _serial = serial();
    if skip_without_zookeeper("zookeeper_no_faults_live") {
        return;
    }
    let dir = fresh_dir("live-zookeeper", "no-faults");
    let file = fidelity_copy("zookeeper-no-faults.toml", &dir, None, false, |t| {
        t.replace("duration_ms = 15_000", "duration_ms = 4_000")
    });
    let out = dir.join("results.json");
    let keep = dir.join("servers");
    let (code, stdout, stderr) =
        sim(&["live", &s(&file), "--algorithm", "zookeeper", "--json", &s(&out), "--keep-dir", &s(&keep)]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(json["mode"], "live");
    assert!(json["servers"][0]["version"].as_str().unwrap().starts_with("3.8"), "{json}");
    let r = row(&json, "zookeeper");
    assert_eq!(r["runs"], 1, "{r}");
    assert_eq!(r["overlap"]["runs"], 0, "{r}");
    let acquisitions = r["acquisitions"].as_u64().unwrap();
    assert!(acquisitions > 20, "only {acquisitions} acquisitions in 4 s live: {r}");
    // The ensemble's three members each kept their own configuration and data directory.
    for i in 0..3 {
        let cfg = std::fs::read_to_string(keep.join(format!("zookeeper-0/server-{i}/zoo.cfg"))).unwrap();
        assert!(cfg.contains("tickTime=500") && cfg.contains("syncLimit=5"), "{cfg}");
        assert!(cfg.contains("maxSessionTimeout=10000") && cfg.contains("server.3=127.0.0.1:"), "{cfg}");
    }
    let left = processes_mentioning(&dir);
    assert!(left.is_empty(), "processes left running after sim live: {left:?}");
}

#[test]
fn zookeeper_leader_killed_live() {
    let _serial = serial();
    if skip_without_zookeeper("zookeeper_leader_killed_live") {
        return;
    }
    let dir = fresh_dir("live-zookeeper", "leader-killed");
    let file = fidelity_copy("zookeeper-leader-killed.toml", &dir, None, false, |t| {
        t.replace("duration_ms = 15_000", "duration_ms = 8_000")
            .replace("at_ms = 5_000", "at_ms = 2_000")
            .replace("duration_ms = 3_000", "duration_ms = 4_000")
    });
    let out = dir.join("results.json");
    let history = dir.join("history.jsonl");
    let (code, stdout, stderr) = sim(&["live", &s(&file), "--json", &s(&out), "--history", &s(&history)]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let r = row(&json, "zookeeper");
    assert_eq!(r["overlap"]["runs"], 0, "{r}");
    assert_eq!(r["token_regressions_runs"], 0, "{r}");
    let h = first_history(&history);
    let faults = h["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 1, "one crash: {faults:?}");
    assert_eq!(faults[0]["kind"], "crash");
    assert!(faults[0]["targets"].as_str().unwrap().starts_with("server-"), "{faults:?}");
    let start = faults[0]["start_ns"].as_u64().unwrap();
    let end = faults[0]["end_ns"].as_u64().expect("the crash ended with a restart");
    // While the old leader is down the two left elect one of themselves and serve again.
    let during = grants_between(&h, start, end);
    assert!(during > 10, "only {during} grants while the old leader was down: no new leader served\n{stdout}");
    assert!(grants_between(&h, end, u64::MAX) > 10, "the service stopped after the restart\n{stdout}");
    assert!(processes_mentioning(&dir).is_empty());
}

/// A holder stopped past its session timeout: the real leader expires the session, its
/// ephemeral node goes and the next waiter is granted; the holder resumes and writes stale
/// before SUSPENDED reaches its check (ZooKeeper's client sleeps 100 ms before it queues the
/// disconnect: the `curator-5.4` default, docs/models.md), as simulated.
#[test]
fn zookeeper_paused_holder_live() {
    let _serial = serial();
    if skip_without_zookeeper("zookeeper_paused_holder_live") {
        return;
    }
    let dir = fresh_dir("live-zookeeper", "paused");
    let file = fidelity_copy("zookeeper-paused-holder.toml", &dir, None, true, |t| {
        t.replace("duration_ms = 15_000", "duration_ms = 10_000")
    });
    let out = dir.join("results.json");
    let (code, stdout, stderr) = sim(&["live", &s(&file), "--json", &s(&out)]);
    assert_eq!(code, 0, "every expectation (overlap and a stale write in every run) holds live\n{stdout}\n{stderr}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let r = row(&json, "zookeeper");
    assert_eq!(r["overlap"]["runs"], 1, "{r}");
    assert_eq!(r["stale_unfenced"]["runs"], 1, "{r}");
    assert!(processes_mentioning(&dir).is_empty());
}

/// What the real ensemble cannot be configured to do is refused before anything starts.
#[test]
fn zookeeper_configurations_live_mode_cannot_run_are_refused() {
    let _serial = serial();
    let dir = fresh_dir("live-zookeeper", "refused");
    for (edit, expected) in [
        ("election_ms = 1_000", "FastLeaderElection"),
        ("servers = 7", "live mode starts at most 5"),
        ("tick_ms = 500.5", "whole milliseconds"),
    ] {
        let file = fidelity_copy("zookeeper-no-faults.toml", &dir, None, false, |t| {
            t.replacen("servers = 3\n", if edit.starts_with("servers") { "" } else { "servers = 3\n" }, 1)
                .replacen("[models.zookeeper]\n", &format!("[models.zookeeper]\n{edit}\n"), 1)
                .replacen("tick_ms = 500\n", if edit.starts_with("tick_ms") { "" } else { "tick_ms = 500\n" }, 1)
        });
        let (code, stdout, stderr) = sim(&["live", &s(&file), "--algorithm", "zookeeper"]);
        assert_eq!(code, 2, "{edit}: {stdout}{stderr}");
        assert!(stderr.contains(expected), "{edit}: {stderr}");
    }
}
