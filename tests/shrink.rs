//! `sim shrink` as a user meets it: Kleppmann's paused Redis holder (known outcome 02) shrinks to
//! at most two clients and one fault, the output still overlaps when replayed and `sim check`
//! accepts it; two shrinks (on different thread counts) write the same bytes; bad input (an
//! unknown label, a seed without the violation, an unknown kind) exits 2 with a clear message
//! and writes nothing.

use std::path::Path;
use std::process::Command;

use crate::support::cli::{self, s, sim};

const KNOWN_02: &str = "scenarios/known/02-redis-paused-holder.toml";

/// A fresh directory for one test.
fn dir(test: &str) -> cli::TestDir {
    cli::fresh_dir("shrink", test)
}

/// The number after `key = ` on its own line of `text` (underscores allowed).
fn int_key(text: &str, key: &str) -> Option<i64> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{key} = ")).map(|v| v.replace('_', "").parse().ok()))
        .flatten()
}

/// The replay seed the comment block names (`--seed N --trace`).
fn replay_seed(text: &str) -> String {
    let line = text.lines().find(|l| l.starts_with("# Replay: ")).expect("a replay line");
    line.split("--seed ").nth(1).unwrap().split_whitespace().next().unwrap().to_string()
}

fn shrink_02(out: &Path, threads: &str) -> String {
    let (code, stdout, stderr) =
        sim(&["shrink", KNOWN_02, "--algorithm", "redis", "--seed", "0", "--out", &s(out), "--threads", threads]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("overlap: "), "{stdout}");
    // The final scenario's story, as `sim explain` tells it: the pause and the second grant.
    assert!(
        stdout.contains("\n1. ") && stdout.contains(" was paused at ") && stdout.contains("still held it"),
        "{stdout}"
    );
    assert!(stderr.contains("shrink: "), "progress goes to stderr: {stderr}");
    std::fs::read_to_string(out).expect("the output is written")
}

#[test]
fn known_02_shrinks_to_two_clients_one_fault_and_still_overlaps() {
    let d = dir("known02");
    let out = d.join("small.toml");
    let text = shrink_02(&out, "2");

    // The original has 3 clients, one fault, two rows and 30 s.
    let clients = int_key(&text, "clients").expect("clients is written");
    assert!(clients <= 2, "clients = {clients}\n{text}");
    assert_eq!(text.matches("[[faults]]").count(), 1, "{text}");
    assert!(int_key(&text, "duration_ms").unwrap() < 30_000, "{text}");
    // The scenario itself, after the comment block.
    let body = &text[text.find("\nname = ").expect("a name key")..];
    assert!(!body.contains("redis-del"), "the other row is gone: {text}");
    assert!(!body.contains("[expect"), "[expect] is gone: {text}");
    assert!(text
        .starts_with("# Shrunk by `sim shrink` from scenarios/known/02-redis-paused-holder.toml, row redis, seed 0"));
    assert!(text.contains("# Reduction: rows 2 → 1, clients 3 → "), "{text}");

    // `sim check` accepts it.
    let (code, stdout, stderr) = sim(&["check", &s(&out)]);
    assert_eq!(code, 0, "{stdout}{stderr}");

    // The replay command it names shows the overlap.
    let seed = replay_seed(&text);
    let json = d.join("replay.json");
    let (code, stdout, stderr) = sim(&["run", &s(&out), "--algorithm", "redis", "--seed", &seed, "--json", &s(&json)]);
    assert!(code == 0 || code == 1, "{stdout}{stderr}");
    let results: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let overlap_runs = &results["algorithms"][0]["overlap"]["runs"];
    assert_eq!(overlap_runs.as_u64(), Some(1), "replay of seed {seed}: {}", results["algorithms"][0]["overlap"]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn shrinking_is_deterministic_whatever_the_threads() {
    let d = dir("determinism");
    let out = d.join("small.toml");
    let first = shrink_02(&out, "1");
    std::fs::remove_file(&out).unwrap();
    let second = shrink_02(&out, "2");
    assert_eq!(first, second, "two shrinks of the same input wrote different files");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let d = dir("bad");
    let out = d.join("never.toml");
    let o = s(&out);

    let (code, _, stderr) = sim(&["shrink", KNOWN_02, "--algorithm", "nope", "--seed", "0", "--out", &o]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--algorithm nope: no such algorithm or variant") && stderr.contains("redis, redis-del"),
        "{stderr}"
    );

    // 01 runs Redis without faults: no seed overlaps.
    let clean = "scenarios/known/01-redis-no-faults.toml";
    let (code, _, stderr) = sim(&["shrink", clean, "--algorithm", "redis", "--seed", "3", "--out", &o]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("seed 3 of redis") && stderr.contains("shows no violation"), "{stderr}");

    let (code, _, stderr) =
        sim(&["shrink", KNOWN_02, "--algorithm", "redis", "--seed", "0", "--kind", "stale_fenced", "--out", &o]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("shows no stale_fenced violation"), "{stderr}");

    let (code, _, stderr) =
        sim(&["shrink", KNOWN_02, "--algorithm", "redis", "--seed", "0", "--kind", "leaked_regrant", "--out", &o]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a violation") && stderr.contains("valid kinds: overlap, stale_unfenced"), "{stderr}");

    assert!(!out.exists(), "nothing is written on bad input");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Ctrl-C (SIGINT) once the search is under way: the smallest scenario so far is written, says it
/// was cut short, still parses, and the exit code is 130.
#[test]
fn ctrl_c_writes_the_smallest_so_far() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let d = dir("interrupt");
    let out = d.join("cut.toml");
    // Ten clients, 100 s, eight rows: a shrink of several seconds on one thread.
    let mut child = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["shrink", "scenarios/gc-pause.toml", "--algorithm", "zookeeper", "--seed", "1"])
        .args(["--out", &s(&out), "--threads", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sim starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    assert!(first.starts_with("shrink: "), "the first progress line: {first}");
    let killed = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    assert!(killed.success());
    let status = child.wait().unwrap();
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    assert_eq!(status.code(), Some(130), "{stdout}");
    assert!(stdout.starts_with("# interrupted: the smallest scenario found so far is written"), "{stdout}");
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(text.contains("# Cut short (budget spent or interrupted)"), "{text}");
    let (code, o, e) = sim(&["check", &s(&out)]);
    assert_eq!(code, 0, "{o}{e}");
    std::fs::remove_dir_all(&d).unwrap();
}
