//! `sim explore` as a user meets it: on Redlock with clock jumps enabled it finds an overlap
//! within a few hundred schedules, writes a scenario file that replays it, and a shrunk one that
//! `sim check` accepts; on etcd with pauses far shorter than its lease it finds nothing; the same
//! inputs find the same failures whatever the thread count; a bad `[explore]` table exits 2; under
//! `--scheduler pct` a failure's file replays its PCT path exactly.

use std::path::Path;

use crate::support::cli::{self, s, sim};

const REDLOCK: &str = "tests/fixtures/explore-redlock-clocks.toml";
const ETCD: &str = "tests/fixtures/explore-etcd-short-pauses.toml";

/// A fresh directory for one test, removed when it ends.
fn dir(test: &str) -> cli::TestDir {
    cli::fresh_dir("explore", test)
}

/// The scenario files in `d` (sorted), shrunk ones apart.
fn files(d: &Path) -> (Vec<String>, Vec<String>) {
    let mut names: Vec<String> =
        std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let (shrunk, found) = names.into_iter().filter(|n| n.ends_with(".toml")).partition(|n| n.ends_with(".shrunk.toml"));
    (found, shrunk)
}

/// Overlapping runs when `file`'s `label` replays `seed`.
fn overlap_runs(file: &Path, label: &str, seed: &str, json: &Path) -> u64 {
    let (code, stdout, stderr) = sim(&["run", &s(file), "--algorithm", label, "--seed", seed, "--json", &s(json)]);
    assert!(code == 0 || code == 1, "{stdout}{stderr}");
    let results: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    results["algorithms"][0]["overlap"]["runs"].as_u64().expect("overlap.runs")
}

#[test]
fn redlock_with_clock_jumps_overlaps_and_the_file_replays_it() {
    let d = dir("redlock");
    let (code, stdout, stderr) =
        sim(&["explore", REDLOCK, "--budget", "300", "--shrink-budget", "40", "--out", &s(&d), "--threads", "2"]);
    assert_eq!(code, 1, "violations found exit 1\nstdout: {stdout}\nstderr: {stderr}");
    let row = stdout.lines().find(|l| l.starts_with("redlock ")).expect("a redlock row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[1], "300", "schedules run: {row}");
    let failed: u64 = cells[2].parse().unwrap();
    assert!(failed > 0, "{stdout}");
    assert!(row.contains("overlap"), "{stdout}");

    let (found, shrunk) = files(&d);
    assert_eq!(found.len() as u64, failed, "one file per failing schedule: {found:?}");
    let first = found.iter().find(|n| n.starts_with("redlock-overlap-seed")).expect("an overlap file");
    let seed = first.trim_start_matches("redlock-overlap-seed").trim_end_matches(".toml");
    let text = std::fs::read_to_string(d.join(first)).unwrap();
    assert!(text.contains("# drawn by `sim explore` for seed"), "{text}");
    assert!(text.contains("kind = \"clock_jump\""), "{text}");
    assert_eq!(
        overlap_runs(&d.join(first), "redlock", seed, &d.join("replay.json")),
        1,
        "the file replays the overlap"
    );

    // Every failure is shrunk beside it; the first overlap's shrunk file is a valid scenario that
    // still overlaps.
    assert_eq!(shrunk.len(), found.len(), "each failure shrunk: {shrunk:?}");
    let small = shrunk.iter().find(|n| n.starts_with("redlock-overlap-")).expect("a shrunk overlap");
    let small_path = d.join(small);
    let (code, out, err) = sim(&["check", &s(&small_path)]);
    assert_eq!(code, 0, "{out}{err}");
    let small_text = std::fs::read_to_string(&small_path).unwrap();
    let replay = small_text.lines().find(|l| l.starts_with("# Replay: ")).unwrap();
    let small_seed = replay.split("--seed ").nth(1).unwrap().split_whitespace().next().unwrap();
    assert_eq!(overlap_runs(&small_path, "redlock", small_seed, &d.join("replay2.json")), 1);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn etcd_with_pauses_shorter_than_the_lease_finds_nothing() {
    let d = dir("etcd");
    let (code, stdout, stderr) = sim(&["explore", ETCD, "--budget", "100", "--out", &s(&d)]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let row = stdout.lines().find(|l| l.starts_with("etcd ")).expect("an etcd row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[1..4], ["100", "0", "none"], "{row}");
    assert_eq!(files(&d), (vec![], vec![]), "nothing written");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_same_inputs_find_the_same_failures_whatever_the_threads() {
    let d = dir("determinism");
    let run = |threads: &str| {
        let (code, stdout, stderr) =
            sim(&["explore", REDLOCK, "--budget", "60", "--no-shrink", "--out", &s(&d), "--threads", threads]);
        assert!(code == 0 || code == 1, "{stderr}");
        let (found, _) = files(&d);
        let texts: Vec<String> = found.iter().map(|f| std::fs::read_to_string(d.join(f)).unwrap()).collect();
        (stdout, found, texts)
    };
    let one = run("1");
    let two = run("2");
    assert_eq!(one, two);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_bad_explore_table_exits_2() {
    let d = dir("bad");
    let bad = d.join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"b\"\nduration_ms = 1000\nalgorithms = [\"etcd\"]\n\n[explore]\nkinds = [\"partition\"]\n",
    )
    .unwrap();
    let (code, _, stderr) = sim(&["explore", &s(&bad), "--out", &s(&d.join("out"))]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("bad.toml:6:10: `explore.kinds.0`") && stderr.contains("not drawn by sim explore"),
        "{stderr}"
    );
    assert!(!d.join("out").exists(), "nothing is created on bad input");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn pct_failures_replay_exactly_and_bad_scheduler_words_exit_2() {
    let d = dir("pct");
    let (code, stdout, stderr) =
        sim(&["explore", REDLOCK, "--budget", "30", "--scheduler", "pct", "--depth", "3", "--out", &s(&d)]);
    assert_eq!(code, 1, "PCT finds the overlap within 30 schedules\nstdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("first failure: redlock at schedule "), "{stdout}");
    let (found, shrunk) = files(&d);
    assert!(shrunk.is_empty(), "PCT failures are not shrunk: {shrunk:?}");
    let first = found.iter().find(|n| n.starts_with("redlock-overlap-seed")).expect("an overlap file");
    let seed = first.trim_start_matches("redlock-overlap-seed").trim_end_matches(".toml");
    let path = d.join(first);
    assert!(std::fs::read_to_string(&path).unwrap().contains("[replay]"));
    // `sim run` follows the [replay] (PCT's order and latencies) and shows the overlap again,
    // without leaving the path.
    assert_eq!(overlap_runs(&path, "redlock", seed, &d.join("replay.json")), 1);
    let (_, out, err) = sim(&["run", &s(&path), "--algorithm", "redlock", "--seed", seed, "--trace"]);
    assert!(!format!("{out}{err}").contains("not due now"), "the replay diverged");

    for (args, says) in [
        (&["--depth", "3"][..], "--scheduler pct"),
        (&["--scheduler", "pct", "--depth", "0"][..], "--depth 0"),
        (&["--scheduler", "fifo"][..], "expected one of random, pct"),
    ] {
        let mut all = vec!["explore", REDLOCK, "--budget", "2"];
        all.extend_from_slice(args);
        let (code, _, stderr) = sim(&all);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}
