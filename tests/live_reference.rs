//! `sim live --reference`: the real lock libraries as clients (reference/PROTOCOL.md), one short
//! run per library against real servers on loopback: redis-py with its holder paused past the
//! TTL (a real overlap and stale write), node-redlock, Curator with its holder paused past the
//! session (what Curator's check sees after the resume), kazoo and clientv3 without faults; and
//! the command line's refusals (an unknown library, a missing toolchain: exit 2 naming it). A test
//! whose server or toolchain is missing, or whose harness cannot be built here (its build step
//! exits 2), prints `SKIPPED:` with the reason and passes.

use std::path::Path;
use std::process::Command;

use crate::support::cli::{fresh_dir, s, sim};
use crate::support::live::*;

/// Whether the test must skip: a server binary (or file) missing, or the harness's build step
/// exiting 2 (its toolchain missing). Builds the harness as `sim live` would, so the run does
/// not pay for it.
fn skip(test: &str, needs: &[(&str, &str)], library: &str) -> bool {
    for (what, package) in needs {
        let present = if what.starts_with('/') { Path::new(what).is_file() } else { on_path(what) };
        if !present {
            println!("SKIPPED: {test}: `{what}` is missing (Debian package {package})");
            return true;
        }
    }
    let out = Command::new("bash")
        .arg(format!("reference/{library}/build.sh"))
        .arg(format!("target/reference/{library}"))
        .output()
        .expect("bash runs");
    match out.status.code() {
        Some(0) => false,
        Some(2) => {
            println!("SKIPPED: {test}: {}", String::from_utf8_lossy(&out.stderr).trim());
            true
        }
        _ => panic!("reference/{library}/build.sh failed: {}", String::from_utf8_lossy(&out.stderr)),
    }
}

/// Runs `sim live FILE --reference [LIBS]` keeping the servers' directories (and so the harnesses'
/// specifications) under `dir`; returns (code, stdout, results JSON, history).
fn run_reference(dir: &Path, file: &Path, libs: Option<&str>) -> (i32, String, serde_json::Value, serde_json::Value) {
    let out = dir.join("results.json");
    let history = dir.join("history.jsonl");
    let keep = dir.join("servers");
    let mut args = vec!["live".to_string(), s(file), "--reference".to_string()];
    args.extend(libs.map(str::to_string));
    args.extend(["--json", &s(&out), "--history", &s(&history), "--keep-dir", &s(&keep)].map(str::to_string));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = sim(&args);
    assert!(out.is_file(), "no results written (exit {code}):\n{stdout}\n{stderr}");
    let left = processes_mentioning(dir);
    assert!(left.is_empty(), "processes left running after sim live: {left:?}");
    (code, stdout, results(&out), first_history(&history))
}

/// The events of one kind in a history.
fn events<'a>(history: &'a serde_json::Value, kind: &str) -> Vec<&'a serde_json::Value> {
    history["events"].as_array().unwrap().iter().filter(|e| e["event"] == kind).collect()
}

fn notes(json: &serde_json::Value) -> String {
    json["live_notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect::<Vec<_>>().join("\n")
}

#[test]
fn redis_py_holder_paused_past_its_ttl_overlaps_and_writes_stale() {
    let _serial = serial();
    let test = "redis_py_holder_paused_past_its_ttl_overlaps_and_writes_stale";
    if skip(test, &[("redis-server", "redis-server")], "redis-py") {
        return;
    }
    let dir = fresh_dir("live-reference", "redis-py");
    // TTL 2 s, the first holder stopped 3 s right after its grant: its key expires, the next
    // client takes the lock, the paused one resumes and writes (redis-py's Lock has no check).
    let file = fidelity_copy("redis-paused-holder.toml", &dir, Some(5_000), false, |t| t);
    let (_, stdout, json, history) = run_reference(&dir, &file, None);
    let r = row(&json, "redis");
    assert_eq!(r["runs"], 1, "{r}");
    // The library column names the real library that ran, not the row's preset.
    assert_eq!(r["library"], "redis-py 5.2.1", "{r}");
    assert!(stdout.lines().any(|l| l.starts_with("redis ") && l.contains(" redis-py 5.2.1 ")), "{stdout}");
    assert_eq!(r["overlap"]["runs"], 1, "{r}\n{stdout}");
    assert_eq!(r["stale_unfenced"]["runs"], 1, "{r}\n{stdout}");
    // The resumed holder's release finds another client's token: redis-py raises
    // LockNotOwnedError, recorded as the model's redis-py presets record it (a failed release,
    // refused, after the interval ended at the call).
    let failed = events(&history, "release_failed");
    assert!(failed.iter().any(|e| e["reason"] == "refused"), "{history}");
    assert!(r["failed_releases"].as_u64().unwrap() >= 1, "{r}");
    assert!(notes(&json).contains("LockNotOwnedError"), "{}", notes(&json));
    // redis-py issues no token; the row's Redisson variant has no reference client, said so.
    assert!(events(&history, "granted").iter().all(|g| g["token"].is_null()), "{history}");
    assert!(json["algorithms"].as_array().unwrap().iter().all(|a| a["label"] != "redisson"), "{json}");
    let n = notes(&json);
    assert!(n.contains("redis runs redis-py 5.2.1"), "{n}");
    assert!(n.contains("no reference client: redisson"), "{n}");
    assert!(stdout.contains("# note: no reference client: redisson"), "{stdout}");
}

#[test]
fn node_redlock_without_faults_grants_in_turn() {
    let _serial = serial();
    let test = "node_redlock_without_faults_grants_in_turn";
    if skip(test, &[("redis-server", "redis-server")], "node-redlock") {
        return;
    }
    let dir = fresh_dir("live-reference", "node-redlock");
    let file = fidelity_copy("redlock-no-faults.toml", &dir, Some(4_000), false, |t| t);
    let (code, stdout, json, history) = run_reference(&dir, &file, None);
    assert_eq!(code, 0, "{stdout}");
    let r = row(&json, "redlock");
    assert_eq!(r["overlap"]["runs"], 0, "{r}");
    let granted = events(&history, "granted").len();
    assert!(granted > 20, "only {granted} grants in 4 s: {r}");
    assert!(notes(&json).contains("node-redlock 5.0.0-beta.2"), "{json}");
}

#[test]
fn curator_holder_paused_past_its_session_loses_the_lock() {
    let _serial = serial();
    let test = "curator_holder_paused_past_its_session_loses_the_lock";
    let jar = "/usr/share/java/zookeeper.jar";
    if skip(test, &[("java", "default-jdk-headless"), (jar, "zookeeper")], "curator") {
        return;
    }
    let dir = fresh_dir("live-reference", "curator");
    // Session 4 s, the first holder stopped 8 s: its session expires, the next waiter is granted.
    let file = fidelity_copy("zookeeper-paused-holder.toml", &dir, Some(11_000), false, |t| t);
    let (_, stdout, json, history) = run_reference(&dir, &file, None);
    let r = row(&json, "zookeeper");
    assert_eq!(r["overlap"]["runs"], 1, "{r}\n{stdout}");
    // Every grant carries the lock node's czxid, and they rise.
    let tokens: Vec<u64> = events(&history, "granted").iter().map(|g| g["token"].as_u64().unwrap()).collect();
    assert!(tokens.len() >= 2 && tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
    // Curator told the paused client its connection was gone (the order against the write is
    // Curator's timing: see docs/live.md).
    let n = notes(&json);
    assert!(n.contains("Apache Curator 5.4.0"), "{n}");
    assert!(n.contains("client-") && (n.contains("SUSPENDED") || n.contains("LOST")), "{n}");
}

#[test]
fn kazoo_without_faults_grants_in_turn() {
    let _serial = serial();
    let test = "kazoo_without_faults_grants_in_turn";
    let jar = "/usr/share/java/zookeeper.jar";
    if skip(test, &[("java", "default-jdk-headless"), (jar, "zookeeper")], "kazoo") {
        return;
    }
    let dir = fresh_dir("live-reference", "kazoo");
    let file = fidelity_copy("zookeeper-no-faults.toml", &dir, Some(5_000), false, |t| t);
    let (code, stdout, json, history) = run_reference(&dir, &file, Some("kazoo"));
    assert_eq!(code, 0, "{stdout}");
    let r = row(&json, "zookeeper");
    assert_eq!(r["overlap"]["runs"], 0, "{r}");
    assert_eq!(r["token_regressions_runs"], 0, "{r}");
    let granted = events(&history, "granted").len();
    assert!(granted > 20, "only {granted} grants in 5 s: {r}");
    let n = notes(&json);
    assert!(n.contains("kazoo 2.10.0"), "{n}");
    // The naive herd lock has no harness: named, not run.
    assert!(n.contains("no reference client: zookeeper-naive"), "{n}");
}

#[test]
fn clientv3_without_faults_grants_in_turn() {
    let _serial = serial();
    let test = "clientv3_without_faults_grants_in_turn";
    if skip(test, &[("etcd", "etcd-server")], "clientv3") {
        return;
    }
    let dir = fresh_dir("live-reference", "clientv3");
    let file = fidelity_copy("etcd-no-faults.toml", &dir, Some(4_000), false, |t| t);
    let (code, stdout, json, history) = run_reference(&dir, &file, None);
    assert_eq!(code, 0, "{stdout}");
    let r = row(&json, "etcd");
    assert_eq!(r["overlap"]["runs"], 0, "{r}");
    assert_eq!(r["token_regressions_runs"], 0, "{r}");
    let granted = events(&history, "granted");
    assert!(granted.len() > 20, "only {} grants in 4 s: {r}", granted.len());
    assert!(granted.iter().all(|g| g["token"].as_u64().is_some()), "every grant has its key's create revision");
    assert!(notes(&json).contains("clientv3 3.4.23"), "{json}");
}

#[test]
fn an_unknown_library_or_a_missing_toolchain_exits_2_naming_it() {
    let (code, _, stderr) = sim(&["live", "scenarios/fidelity/redis-no-faults.toml", "--reference", "redisson"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("unknown library `redisson`") && stderr.contains("node-redlock"), "{stderr}");
    // redis-py's build step looks for the interpreter first: a missing one names its package.
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["live", "scenarios/fidelity/redis-no-faults.toml", "--reference"])
        .env("PYTHON", "/nonexistent/python3")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("Debian package python3"), "{stderr}");
}
