//! Outputs as an adversarial user meets them (issue 31): a symbolic link is written through, a
//! device or FIFO is written in place and never replaced, a directory is refused; every output
//! is checked before any seed runs; an output that is an input is refused however it is
//! spelled; two writers of one output directory do not mix; a closed stdout pipe ends quietly;
//! `sim merge` recognises a scenario by its text, not its spelling; counts do not wrap.

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::cli::{fresh_dir, s, sim};

const MINIMAL: &str = "name = \"m\"\nduration_ms = 1000\nseeds = 2\nalgorithms = [\"redlock\"]\n";

fn scenario(dir: &Path) -> String {
    let p = dir.join("m.toml");
    std::fs::write(&p, MINIMAL).unwrap();
    s(&p)
}

fn sim_in(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim")).current_dir(cwd).args(args).output().expect("sim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn is_results_json(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v["algorithms"].is_array())
}

#[test]
fn a_symbolic_link_is_written_through_and_stays_a_link() {
    let d = fresh_dir("outputs", "link");
    let f = scenario(&d);
    std::fs::create_dir(d.join("real")).unwrap();
    std::fs::write(d.join("real/results.json"), "old").unwrap();
    std::os::unix::fs::symlink("real/results.json", d.join("link.json")).unwrap();
    let (code, out, err) = sim(&["run", &f, "--seeds", "1", "--json", &s(&d.join("link.json"))]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(std::fs::symlink_metadata(d.join("link.json")).unwrap().file_type().is_symlink(), "the link is kept");
    assert!(is_results_json(&std::fs::read_to_string(d.join("real/results.json")).unwrap()), "its target is written");
    // A dangling link creates its target.
    std::os::unix::fs::symlink("real/new.json", d.join("dangling.json")).unwrap();
    let (code, out, err) = sim(&["run", &f, "--seeds", "1", "--json", &s(&d.join("dangling.json"))]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(is_results_json(&std::fs::read_to_string(d.join("real/new.json")).unwrap()));
    assert!(std::fs::symlink_metadata(d.join("dangling.json")).unwrap().file_type().is_symlink());
}

#[test]
fn stdout_dev_null_and_a_fifo_are_written_in_place() {
    let d = fresh_dir("outputs", "stream");
    let f = scenario(&d);
    // `-` and /dev/stdout: the JSON follows the table on standard output.
    for target in ["-", "/dev/stdout"] {
        let (code, out, err) = sim(&["run", &f, "--seeds", "1", "--json", target]);
        assert_eq!(code, 0, "{target}: {out}{err}");
        let json_start = out.find("{\n").unwrap_or_else(|| panic!("{target}: no JSON on stdout: {out}"));
        assert!(is_results_json(&out[json_start..]), "{target}: {out}");
    }
    let (code, out, err) = sim(&["run", &f, "--seeds", "1", "--json", "/dev/null"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());

    let fifo = d.join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = Command::new("cat").arg(&fifo).stdout(Stdio::piped()).spawn().unwrap();
    let (code, out, err) = sim(&["run", &f, "--seeds", "1", "--json", &s(&fifo)]);
    assert_eq!(code, 0, "{out}{err}");
    let read = reader.wait_with_output().unwrap();
    assert!(is_results_json(&String::from_utf8_lossy(&read.stdout)), "the reader got the JSON");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO is still a FIFO");
}

#[test]
fn a_full_device_reports_the_error_and_stays_a_device() {
    let d = fresh_dir("outputs", "full");
    let f = scenario(&d);
    // A device of our own first (as root, mknod works in most places): were it replaced, only
    // this test's directory would suffer, and /dev/full is not tried.
    let own = d.join("full");
    let made = Command::new("mknod").arg(&own).args(["c", "1", "7"]).stderr(Stdio::null()).status();
    let mut targets = Vec::new();
    if made.is_ok_and(|st| st.success()) {
        targets.push(own.clone());
    }
    targets.push("/dev/full".into());
    for target in targets {
        let (code, out, err) = sim(&["run", &f, "--seeds", "1", "--json", &s(&target)]);
        assert_eq!(code, 2, "{}: {out}{err}", target.display());
        assert!(err.contains("No space left on device"), "{}: {err}", target.display());
        let kind = std::fs::symlink_metadata(&target).unwrap().file_type();
        assert!(kind.is_char_device(), "{} was replaced", target.display());
    }
}

#[test]
fn a_directory_or_a_missing_directory_is_refused_before_any_seed_runs() {
    let d = fresh_dir("outputs", "before");
    let f = scenario(&d);
    // 10^6 seeds would take minutes: a refusal that comes after them would time the test out,
    // and it would print the table first.
    let many = ["--seeds", "1000000"];
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--json".into(), "/nonexistent/x.json".into()],
            "--json /nonexistent/x.json: the directory /nonexistent does not exist",
        ),
        (vec!["--json".into(), s(&d)], "is a directory"),
        (vec!["--report".into(), s(&d.join("m.toml"))], "not a directory"),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["run".to_string(), f.clone()];
        args.extend(many.iter().map(|a| a.to_string()));
        args.extend(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = sim(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.is_empty(), "nothing ran: {out}");
    }
    // A directory that cannot be created even as root: under a regular file (never outside the
    // test's own directory: root could create /nonexistent).
    let keep = s(&d.join("m.toml/keep"));
    let (code, out, err) = sim(&["live", &f, "--keep-dir", &keep]);
    assert_eq!(code, 2, "--keep-dir: {out}{err}");
    assert!(err.contains(&format!("--keep-dir {keep}: cannot create the directory")), "{err}");
    assert!(out.is_empty(), "no server started: {out}");
    let bad = "/nonexistent/x.json";
    for args in [
        vec!["live", &f, "--json", bad],
        vec!["live", &f, "--history", bad],
        vec!["shrink", &f, "--algorithm", "redlock", "--seed", "0", "--out", bad],
        vec!["bench", "scenario", &f, "--json", bad],
        vec!["merge", &f, "--json", bad],
    ] {
        let (code, out, err) = sim(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains("/nonexistent/x.json: the directory /nonexistent does not exist"), "{args:?}: {err}");
    }
}

#[test]
fn an_output_that_is_an_input_is_refused_however_spelled() {
    let d = fresh_dir("outputs", "input");
    let f = scenario(&d);
    std::os::unix::fs::symlink("m.toml", d.join("link.toml")).unwrap();
    let spellings = [f.clone(), format!("{}/./m.toml", s(&d)), "./m.toml".into(), "link.toml".into()];
    for out_path in &spellings {
        for args in [
            vec!["run", "m.toml", "--seeds", "1", "--json", out_path],
            vec!["run", "m.toml", "--seed", "1", "--trace", out_path],
            vec!["shrink", "m.toml", "--algorithm", "redlock", "--seed", "0", "--out", out_path],
            vec!["live", "m.toml", "--json", out_path],
            vec!["bench", "scenario", "m.toml", "--json", out_path],
        ] {
            let (code, out, err) = sim_in(&d, &args);
            assert_eq!(code, 2, "{args:?}: {out}{err}");
            assert!(err.contains("is the input file"), "{args:?}: {err}");
        }
    }
    let (code, _, err) = sim_in(&d, &["run", "m.toml", "--seed", "1", "--json", "x.json", "--trace", "./x.json"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("name the same file"), "{err}");
    assert_eq!(std::fs::read_to_string(d.join("m.toml")).unwrap(), MINIMAL, "the scenario is untouched");
}

/// Two runs writing one report directory: the second is refused (exit 2) while the first holds
/// it, and the directory is free again once the first ends (however it ends).
#[test]
#[allow(clippy::disallowed_methods)] // real time: waiting for another process
fn a_second_writer_of_an_output_directory_is_refused() {
    use std::time::{Duration, Instant};
    let d = fresh_dir("outputs", "lock");
    let f = scenario(&d);
    let report = s(&d.join("report"));
    let mut first = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_sim"))
            .args(["run", &f, "--seeds", "100000000", "--threads", "1", "--report", &report])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // The first creates the directory and locks it at once; a second writer tried earlier would
    // take the lock itself and make the first give up, so wait for the directory, then a little.
    let start = Instant::now();
    while !d.join("report").is_dir() {
        if let Some(status) = first.0.try_wait().unwrap() {
            let mut err = String::new();
            first.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            panic!("the first run ended ({status}) before creating the directory: {err}");
        }
        if start.elapsed() > Duration::from_secs(60) {
            panic!("the first run never created the directory");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let (code, out, refused) = sim(&["run", &f, "--seeds", "1", "--report", &report]);
    if code != 2 {
        panic!("a second writer was let in: {out}{refused}");
    }
    assert!(refused.contains(&format!("--report {report}: another sim is writing into this directory")), "{refused}");
    for args in [
        vec!["sweep", &f, "--param", "workload.clients=2,3", "--seeds", "1", "--out", &report],
        vec!["explore", &f, "--budget", "1", "--no-shrink", "--out", &report],
    ] {
        let (code, _, err) = sim(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("another sim is writing into this directory"), "{args:?}: {err}");
    }
    drop(first);
    let (code, out, err) = sim(&["run", &f, "--seeds", "1", "--report", &report]);
    assert_eq!(code, 0, "free once the first is gone: {out}{err}");
}

/// A child process killed (and reaped) when the test ends, passed or failed.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A reader that goes away (`sim list | head -1`): the command ends quietly with exit 0.
#[test]
fn a_closed_stdout_pipe_ends_quietly() {
    let d = fresh_dir("outputs", "pipe");
    let f = scenario(&d);
    for args in [vec!["list"], vec!["check", &f, "--no-estimate"], vec!["check", &f], vec!["run", &f, "--seeds", "1"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sim"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Closed before the child has printed anything: its first write meets a broken pipe.
        drop(child.stdout.take());
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let code = child.wait().unwrap().code();
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: {err}");
    }
    // The command goes on past the closed pipe: its files are still written.
    let json = d.join("results.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["run", &f, "--seeds", "1", "--json", &s(&json)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(is_results_json(&std::fs::read_to_string(&json).unwrap()), "--json is written after the pipe closed");
}

/// Shards run as `./scenarios/x.toml` and `scenarios/x.toml` are one scenario: the same text.
#[test]
fn merge_recognises_a_scenario_by_its_text_not_its_spelling() {
    let d = fresh_dir("outputs", "merge");
    std::fs::create_dir(d.join("scenarios")).unwrap();
    std::fs::write(d.join("scenarios/x.toml"), MINIMAL).unwrap();
    let (code, out, err) = sim_in(&d, &["run", "./scenarios/x.toml", "--shard", "0/2", "--json", "p0.json"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = sim_in(&d, &["run", "scenarios/x.toml", "--shard", "1/2", "--json", "p1.json"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = sim_in(&d, &["merge", "p0.json", "p1.json", "--json", "merged.json"]);
    assert_eq!(code, 0, "{out}{err}");
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("merged.json")).unwrap()).unwrap();
    assert_eq!(merged["algorithms"][0]["runs"], 2, "{merged}");
    // A different text under the same name still does not belong.
    std::fs::write(d.join("scenarios/x.toml"), MINIMAL.replace("1000", "1500")).unwrap();
    let (code, out, err) = sim_in(&d, &["run", "scenarios/x.toml", "--shard", "1/2", "--json", "p1.json"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = sim_in(&d, &["merge", "p0.json", "p1.json", "--json", "merged.json"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a different scenario text"), "{err}");
}

/// The largest seed range: the seed-run count is exact, not wrapped.
#[test]
fn seed_run_counts_do_not_wrap() {
    let d = fresh_dir("outputs", "counts");
    let two_rows = d.join("two.toml");
    std::fs::write(&two_rows, MINIMAL.replace("[\"redlock\"]", "[\"redlock\", \"redis\"]")).unwrap();
    let (code, out, err) = sim(&["check", &s(&two_rows), "--seeds", "0..18446744073709551615"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 rows x 18446744073709551615 seeds = 36893488147419103230 seed-runs"), "{out}");
    // A run of that many seed-runs is refused, not wrapped into a small count.
    let (code, out, err) = sim(&["run", &s(&two_rows), "--seeds", "0..18446744073709551615"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("seed-runs"), "{err}");
}

/// Labels that would name one file (`a/b` and `a_b` both give `explain-a_b.svg` and
/// `a_b-overlap-seed0.toml`) are refused where the second is written.
#[test]
fn labels_that_collide_on_disk_are_refused_at_parse_time() {
    let d = fresh_dir("outputs", "labels");
    let f = d.join("labels.toml");
    let text = "name = \"l\"\nduration_ms = 1000\nalgorithms = [\"redlock\"]\n\n\
                [[variants]]\nname = \"a/b\"\nmodel = \"redis\"\n\n\
                [[variants]]\nname = \"a_b\"\nmodel = \"redis\"\n";
    std::fs::write(&f, text).unwrap();
    for args in [vec!["check", &s(&f)], vec!["run", &s(&f), "--seeds", "1"], vec!["explore", &s(&f), "--budget", "1"]] {
        let (code, out, err) = sim(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(&format!("{}:10:8", s(&f))), "the second label's line and column: {err}");
        assert!(err.contains("variant name `a_b` gives the same file names as `a/b` (line 6)"), "{err}");
    }
    // A label that differs from an algorithm's only in case collides too (macOS, Windows).
    std::fs::write(&f, text.replace("a/b", "x").replace("a_b", "Redlock")).unwrap();
    let (code, _, err) = sim(&["check", &s(&f)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`Redlock` gives the same file names as `redlock` (line 3)"), "{err}");
    // Distinct names pass.
    std::fs::write(&f, text.replace("a/b", "a-b")).unwrap();
    let (code, _, err) = sim(&["check", &s(&f), "--no-estimate"]);
    assert_eq!(code, 0, "{err}");
}
