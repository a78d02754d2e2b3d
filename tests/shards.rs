//! Several machines and interruptions, as a user meets them: `sim run --shard K/N` and
//! `sim sweep --shard K/N` parts folded by `sim merge` give byte for byte the files one machine
//! writes (results JSON, report directory, sweep files); parts that do not belong together are
//! refused with exit 2 naming the file; `sim sweep --resume` after a real Ctrl-C (SIGINT) gives
//! the files of an uninterrupted sweep. Scenarios are small (2 s simulated, a few seeds).
//!
//! The outputs hold no wall-clock fields, so they are compared whole. Sweep outputs name their
//! directory in replay commands, so each sweep runs from its own working directory with
//! `--out out`, and the scenario is named by one absolute path everywhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn sim_in(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim")).current_dir(cwd).args(args).output().expect("sim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh directory for one test.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("locksim-shards-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sub(d: &Path, name: &str) -> PathBuf {
    let p = d.join(name);
    std::fs::create_dir_all(&p).unwrap();
    p
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Redlock (no token) and the database lock, four clients, the holder paused past Redlock's TTL
/// (`fixtures/paused-redlock-beside-db.toml`, the body `campaign/tests` shares too): most seeds
/// overlap, so the failing-seed lists fill up across shard boundaries.
const SCENARIO: &str = concat!(
    "name = \"shards-test\"\nduration_ms = 2000\nseeds = 24\nalgorithms = [\"redlock\", \"db\"]\n\n",
    include_str!("fixtures/paused-redlock-beside-db.toml"),
    r#"
[expect.redlock]
overlap = "none"
"#
);

fn scenario(d: &Path) -> String {
    let p = d.join("s.toml");
    std::fs::write(&p, SCENARIO).unwrap();
    s(&p)
}

/// Every file under `root` (relative path → bytes), leaving out the names `skip` accepts.
fn files(root: &Path, skip: &dyn Fn(&str) -> bool) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, at: &Path, out: &mut BTreeMap<String, Vec<u8>>, skip: &dyn Fn(&str) -> bool) {
        for e in std::fs::read_dir(at).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out, skip);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                if !skip(&rel) {
                    out.insert(rel, std::fs::read(&p).unwrap());
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out, skip);
    out
}

fn assert_same_files(a: &Path, b: &Path, skip: &dyn Fn(&str) -> bool) {
    let (fa, fb) = (files(a, skip), files(b, skip));
    assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>(), "{} vs {}", a.display(), b.display());
    for (name, bytes) in &fa {
        assert!(bytes == &fb[name], "{name} differs between {} and {}", a.display(), b.display());
    }
    assert!(!fa.is_empty());
}

fn sweep_files(name: &str) -> bool {
    name.ends_with(".jsonl") || name.starts_with("shard-")
}

#[test]
fn run_in_three_shards_merged_equals_one_machine() {
    let d = dir("run");
    let f = scenario(&d);
    let one = s(&d.join("one.json"));
    let (code_one, table_one, err) =
        sim_in(&d, &["run", &f, "--threads", "1", "--json", &one, "--report", &s(&d.join("report-one"))]);
    // Redlock overlaps, so its `overlap = "none"` expectation fails: exit 1, and the merge must agree.
    assert_eq!(code_one, 1, "{table_one}{err}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&one).unwrap()).unwrap();
    let redlock = &json["algorithms"][0];
    assert!(redlock["failing_runs"].as_u64().unwrap() > 10, "the capped list must span shards: {redlock}");
    assert!(redlock["fairness"]["mean"].is_number());

    // Three shards on different thread counts, handed to the merge out of order.
    let mut parts = Vec::new();
    for (k, threads) in [(0, "1"), (1, "2"), (2, "1")] {
        let part = s(&d.join(format!("part-{k}.json")));
        let (code, out, err) =
            sim_in(&d, &["run", &f, "--shard", &format!("{k}/3"), "--threads", threads, "--json", &part]);
        assert_eq!(code, 0, "a shard judges nothing: {out}{err}");
        assert!(out.contains(&format!("# shard {k}/3: seeds {}..{} of 0..24", 8 * k, 8 * k + 8)), "{out}");
        parts.push(part);
    }
    // A shard re-run alone (on another thread count) gives the same bytes: it can replace a lost one.
    let again = s(&d.join("again.json"));
    let (code, out, err) = sim_in(&d, &["run", &f, "--shard", "1/3", "--threads", "1", "--json", &again]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&parts[1]).unwrap());
    let merged = s(&d.join("merged.json"));
    let (code, table, err) = sim_in(
        &d,
        &["merge", &parts[2], &parts[0], &parts[1], "--json", &merged, "--report", &s(&d.join("report-merged"))],
    );
    assert_eq!(code, code_one, "{table}{err}");
    assert_eq!(table, table_one, "the merge prints the table one machine printed");
    assert_eq!(std::fs::read(&merged).unwrap(), std::fs::read(&one).unwrap(), "results JSON byte for byte");
    assert_same_files(&d.join("report-one"), &d.join("report-merged"), &|_| false);
}

#[test]
fn sweep_in_two_shards_merged_equals_one_machine() {
    let d = dir("sweep");
    let f = scenario(&d);
    let sweep = |cwd: &Path, extra: &[&str]| {
        let mut args =
            vec!["sweep", &f, "--param", "models.redlock.ttl_ms=600,1500", "--param", "workload.clients=2,4"];
        args.extend(["--seeds", "5", "--threads", "1"]);
        args.extend(extra);
        sim_in(cwd, &args)
    };
    let one = sub(&d, "one");
    let (code, out_one, err) = sweep(&one, &["--out", "out"]);
    assert_eq!(code, 0, "{out_one}{err}");

    let shards = sub(&d, "shards");
    for k in 0..2 {
        let (code, out, err) = sweep(&shards, &["--out", "parts", "--shard", &format!("{k}/2")]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains(&format!("shard {k}/2 of sweep")), "{out}");
    }
    let parts = shards.join("parts");
    // A shard writes only its partial file (and its progress record), no sweep files.
    assert!(!parts.join("sweep.json").exists());
    let merged = sub(&d, "merged");
    let p = |k: u32| s(&parts.join(format!("shard-{k}-of-2.json")));
    let (code, out, err) = sim_in(&merged, &["merge", &p(1), &p(0), "--out", "out"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out, out_one, "the merge prints the summary one machine printed");
    assert_same_files(&one.join("out"), &merged.join("out"), &sweep_files);
    assert!(
        files(&one.join("out"), &|_| false).keys().any(|k| k.starts_with("points/")),
        "some point has a failing seed"
    );
}

#[test]
fn parts_that_do_not_belong_together_are_refused_naming_them() {
    let d = dir("refused");
    let f = scenario(&d);
    let part = |name: &str, shard: &str| {
        let p = s(&d.join(name));
        let (code, out, err) = sim_in(&d, &["run", &f, "--seeds", "6", "--shard", shard, "--json", &p]);
        assert_eq!(code, 0, "{out}{err}");
        p
    };
    let (a, b, c) = (part("a.json", "0/3"), part("b.json", "1/3"), part("c.json", "2/3"));
    let merged = d.join("merged.json");
    let merge = |parts: &[&str]| {
        let mut args = vec!["merge"];
        args.extend(parts);
        args.extend(["--json", merged.to_str().unwrap()]);
        let (code, out, err) = sim_in(&d, &args);
        assert_eq!(code, 2, "{out}{err}");
        assert!(!merged.exists(), "nothing is written on a refusal");
        err
    };
    let err = merge(&[&a, &c]);
    assert!(err.contains("missing shard 1/3 (seeds 2..4)"), "{err}");
    let err = merge(&[&a, &b, &c, &b]);
    assert!(err.contains(&format!("shard 1/3 is given twice: {b} and {b}")), "{err}");
    // Another version's part.
    let v = s(&d.join("v.json"));
    std::fs::write(&v, std::fs::read_to_string(&b).unwrap().replace(env!("CARGO_PKG_VERSION"), "99.0.0")).unwrap();
    let err = merge(&[&a, &v, &c]);
    assert!(err.contains(&format!("{v}: does not belong with {a}: written by sim 99.0.0")), "{err}");
    // A part of another scenario text (the file edited between two shards).
    std::fs::write(&f, SCENARIO.replace("clients = 4", "clients = 3")).unwrap();
    let foreign = part("foreign.json", "1/3");
    let err = merge(&[&a, &foreign, &c]);
    assert!(err.contains(&format!("{foreign}: does not belong with {a}: a different scenario text")), "{err}");
    // Unreadable or not a partial file.
    let err = merge(&[&a, &s(&d.join("nope.json")), &c]);
    assert!(err.contains("nope.json: cannot read"), "{err}");
    let err = merge(&[&a, &f, &c]);
    assert!(err.contains("s.toml: not a partial results file"), "{err}");
    // Run parts need --json or --report, not --out.
    let (code, _, err) = sim_in(&d, &["merge", &a, &b, &c, "--out", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("--out is for sweep parts"), "{err}");
}

/// Interrupts a sweep with SIGINT once its progress record holds `after` points; returns its exit
/// code and how many points it had recorded.
fn interrupt_sweep(cwd: &Path, args: &[&str], record: &Path, after: usize) -> (i32, usize) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sim"))
        .current_dir(cwd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("sim starts");
    let points = || std::fs::read_to_string(record).map_or(0, |t| t.lines().count().saturating_sub(1));
    // Counted polls, not a wall clock (clippy.toml keeps real time out of the code): 2 minutes.
    for poll in 0.. {
        if points() >= after {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended before it could be interrupted");
        assert!(poll < 24_000, "no point finished in 2 minutes");
        std::thread::sleep(Duration::from_millis(5));
    }
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    assert!(kill.success());
    let code = child.wait().unwrap().code().unwrap_or(-1);
    (code, points())
}

#[test]
fn resume_after_ctrl_c_gives_the_uninterrupted_files() {
    let d = dir("resume");
    let f = scenario(&d);
    // Eight points of 100 seeds (about 0.1 s each) on one thread: time to be interrupted between
    // points (the record is polled every 5 ms).
    let args = [
        "sweep",
        &f,
        "--param",
        "models.redlock.ttl_ms=400..1800:200",
        "--seeds",
        "100",
        "--threads",
        "1",
        "--out",
        "out",
    ];
    let whole = sub(&d, "whole");
    let (code, out, err) = sim_in(&whole, &args);
    assert_eq!(code, 0, "{out}{err}");

    let cut = sub(&d, "cut");
    let (code, recorded) = interrupt_sweep(&cut, &args, &cut.join("out/sweep-progress.jsonl"), 1);
    assert_eq!(code, 130, "a Ctrl-C'd sweep exits 130");
    assert!((1..8).contains(&recorded), "recorded {recorded} of 8 points");
    let cut_json = std::fs::read_to_string(cut.join("out/sweep.json")).unwrap();
    let cut_doc: serde_json::Value = serde_json::from_str(&cut_json).unwrap();
    assert_eq!(cut_doc["interrupted"], true);

    // Resuming another sweep in the same directory is refused, and changes nothing.
    let mut other = args.to_vec();
    other[3] = "models.redlock.ttl_ms=400..1600:200";
    let (code, _, err) = sim_in(&cut, &[&other[..], &["--resume"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("records another sweep") && err.contains("--param models.redlock.ttl_ms=400..1600:200"),
        "{err}"
    );

    let (code, out, err) = sim_in(&cut, &[&args[..], &["--resume"]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains(&format!("resume: {recorded} of 8 points already finished")), "{err}");
    assert_same_files(&whole.join("out"), &cut.join("out"), &sweep_files);
    // The finished sweep removed its record (neither directory keeps one), so resuming again
    // runs every point, to the same files.
    assert!(!cut.join("out/sweep-progress.jsonl").exists() && !whole.join("out/sweep-progress.jsonl").exists());
    let (code, _, err) = sim_in(&cut, &[&args[..], &["--resume"]].concat());
    assert_eq!(code, 0);
    assert!(err.contains("resume: no progress record in"), "{err}");
    assert_same_files(&whole.join("out"), &cut.join("out"), &sweep_files);
}
