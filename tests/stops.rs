//! How a run stops before its end, as a user meets it: SIGTERM (or Ctrl-C) in the middle of a
//! seed that would run for minutes ends the process within a second, with what finished written
//! and marked interrupted (a shard's part too, which `sim merge` marks interrupted in turn; `sim
//! explore` and `sim shrink` alike); a zero-time loop (every time 0) ends its seed with the cause named, in `sim run` and in
//! `sim check`'s probe, instead of running until memory runs out.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::cli::{fresh_dir, s, sim};

/// Seeds of about 28 simulated hours with 50 clients: each takes minutes of wall time.
const LONG: &str = "name = \"long\"\nduration_ms = 100000000\nseeds = 4\nalgorithms = [\"redlock\", \"redis\"]\n\
                    [workload]\nclients = 50\n[expect.redis]\noverlap = \"none\"\n";

/// Two rows over the same long seeds: `idle`'s seeds finish in a fraction of a second (one
/// command in service per 1000 simulated seconds, no retries), `busy`'s (plain Redis, 50 clients)
/// run for minutes. Rows run one after the other, so a signal after a second or so falls while
/// every idle seed is finished and every busy one is in progress.
const MIXED: &str = "name = \"mixed\"\nduration_ms = 100000000\nseeds = 4\n[workload]\nclients = 50\n\
                     [[variants]]\nname = \"idle\"\nmodel = \"redis\"\nservice_ms = 1000000\n\
                     timeout_ms = 1000000000\nretry_attempts = 0\n\
                     [[variants]]\nname = \"busy\"\nmodel = \"redis\"\n";

/// How long a test waits after its SIGTERM before it gives up on the process (and kills it):
/// long enough to tell "slow" from "never", short enough that a regression fails in seconds
/// rather than after the minutes its seeds would take.
const GIVE_UP: Duration = Duration::from_secs(15);

/// What `sim` printed before it exited on SIGTERM.
struct Output {
    stdout: String,
    stderr: String,
}

/// Runs `sim args` in `dir`'s files, sends it SIGTERM after `after` (long enough for its seeds to
/// be well under way; start-up is a few milliseconds), and asserts that it exited within a
/// second of the signal with exit 130. A process still running [`GIVE_UP`] after the signal is
/// killed and the test fails.
// Real time is the point here: the helper times the process, not anything inside a run.
#[allow(clippy::disallowed_methods)]
fn sigterm_after(dir: &Path, name: &str, args: &[&str], after: Duration) -> Output {
    let (out_path, err_path) = (dir.join(format!("{name}.stdout")), dir.join(format!("{name}.stderr")));
    let mut child = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("sim starts");
    std::thread::sleep(after);
    let signalled = Instant::now();
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill runs");
    assert!(status.success(), "sim {args:?} ended before the signal");
    let status = loop {
        if let Some(status) = child.try_wait().expect("sim can be waited for") {
            break status;
        }
        if signalled.elapsed() > GIVE_UP {
            let _ = child.kill();
            let _ = child.wait();
            panic!("sim {args:?} still running {GIVE_UP:?} after SIGTERM (killed)");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = signalled.elapsed();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let out = Output { stdout: read(&out_path), stderr: read(&err_path) };
    assert!(took < Duration::from_secs(1), "sim {args:?} exited {took:?} after SIGTERM\n{}{}", out.stdout, out.stderr);
    assert_eq!(status.code(), Some(130), "sim {args:?}\n{}{}", out.stdout, out.stderr);
    out
}

/// The zero-time scenario: latency, service, hold and think all 0.
const ZERO: &str = "name = \"zero\"\nduration_ms = 60000\nseeds = 3\nalgorithms = [\"redis\"]\n\
                    [network]\nlatency_ms = 0\n[workload]\nhold_ms = 0\nthink_ms = 0\n\
                    [models.redis]\nservice_ms = 0\n";

/// A zero-time loop validation cannot see: the one positive latency is on a link nobody uses.
fn zero_unseen() -> String {
    format!("{ZERO}[[network.links]]\nfrom = \"server-0\"\nto = \"resource\"\nlatency_ms = 1\n")
}

/// SIGTERM while every thread is inside a long seed: the process exits within a second of the
/// signal, with exit 130; the seeds in progress are discarded, and the results JSON is still
/// written, saying it was interrupted and how many seeds each row finished (none here).
#[test]
fn sigterm_in_a_long_seed_stops_within_a_second_and_writes_what_finished() {
    let dir = fresh_dir("stops", "sigterm");
    let file = dir.join("long.toml");
    std::fs::write(&file, LONG).unwrap();
    let json = dir.join("results.json");
    let args = ["run", &s(&file), "--threads", "2", "--json", &s(&json)];
    let Output { stdout, .. } = sigterm_after(&dir, "run", &args, Duration::from_millis(1500));
    assert!(stdout.contains("# interrupted: 0 of 8 seed-runs finished"), "{stdout}");

    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("--json written")).expect("--json parses");
    assert_eq!(v["interrupted"], true, "{v}");
    for row in v["algorithms"].as_array().expect("rows") {
        assert_eq!(row["seeds_finished"], 0, "{row}");
        assert_eq!(row["runs"], 0, "an unfinished seed is not counted as a run: {row}");
    }
    assert_eq!(v["expectations"], serde_json::json!([]), "nothing ran, nothing is judged");
}

/// SIGTERM after some seeds finished: those are in the results (the table and the JSON), counted
/// as runs, and only the seeds in progress are missing.
#[test]
fn sigterm_after_some_seeds_finished_writes_those_seeds() {
    let dir = fresh_dir("stops", "sigterm-some");
    let file = dir.join("mixed.toml");
    std::fs::write(&file, MIXED).unwrap();
    let json = dir.join("results.json");
    let args = ["run", &s(&file), "--threads", "2", "--json", &s(&json)];
    let Output { stdout, .. } = sigterm_after(&dir, "run", &args, Duration::from_millis(1500));
    assert!(stdout.contains("# interrupted: 4 of 8 seed-runs finished"), "{stdout}");
    let idle_line = stdout.lines().find(|l| l.starts_with("idle ")).unwrap_or_default();
    assert!(!idle_line.is_empty() && !idle_line.contains("not run"), "the idle row is in the table: {stdout}");

    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("--json written")).expect("--json parses");
    assert_eq!(v["interrupted"], true, "{v}");
    let rows = v["algorithms"].as_array().expect("rows");
    let row = |label: &str| rows.iter().find(|r| r["label"] == label).unwrap_or_else(|| panic!("{label}: {v}"));
    assert_eq!((row("idle")["seeds_finished"].as_u64(), row("idle")["runs"].as_u64()), (Some(4), Some(4)), "{v}");
    assert!(row("idle")["throughput_per_s"].is_number(), "the finished seeds' figures are written: {v}");
    assert_eq!((row("busy")["seeds_finished"].as_u64(), row("busy")["runs"].as_u64()), (Some(0), Some(0)), "{v}");
}

/// SIGTERM in a shard's long seed (Slurm's or Kubernetes' stop): the shard still writes its part
/// within a second, marked interrupted with no seed finished, exit 130; `sim merge` of such parts
/// gives results marked interrupted, names each cut shard, its missing seeds and the command that
/// runs it again, and exits 130.
#[test]
fn sigterm_in_a_shard_writes_a_marked_part_that_merges_into_marked_results() {
    let dir = fresh_dir("stops", "sigterm-shard");
    let file = dir.join("long.toml");
    std::fs::write(&file, LONG).unwrap();
    let mut parts = Vec::new();
    for k in 0..2 {
        let part = dir.join(format!("part-{k}.json"));
        let shard = format!("{k}/2");
        let args = ["run", &s(&file), "--threads", "2", "--shard", &shard, "--json", &s(&part)];
        let Output { stdout, .. } = sigterm_after(&dir, &format!("shard-{k}"), &args, Duration::from_millis(1000));
        assert!(stdout.contains(&format!("# interrupted: 0 of 4 seed-runs of shard {k}/2 finished")), "{stdout}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&part).expect("the part is written")).expect("parses");
        assert_eq!(v["interrupted"], true, "{v}");
        assert_eq!(v["seeds_finished"], serde_json::json!([0, 0]), "{v}");
        parts.push(s(&part));
    }
    let json = dir.join("results.json");
    let (code, stdout, stderr) = sim(&["merge", &parts[0], &parts[1], "--json", &s(&json)]);
    assert_eq!(code, 130, "{stdout}{stderr}");
    assert!(
        stdout.contains("shard 1/2")
            && stdout.contains("was interrupted: missing redlock seeds 2..4, redis seeds 2..4"),
        "{stdout}"
    );
    assert!(stdout.contains("--seeds 0..4 --shard 1/2 --json PART"), "{stdout}");
    assert!(stdout.contains("# interrupted: 0 of 8 seed-runs finished"), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("--json written")).expect("--json parses");
    assert_eq!(v["interrupted"], true, "{v}");
    for row in v["algorithms"].as_array().expect("rows") {
        assert_eq!(row["seeds_finished"], 0, "{row}");
    }
}

/// SIGTERM while `sim explore` is inside long schedules: it stops within a second (the seeds in
/// progress are cut, not waited for), prints what it ran marked interrupted, and exits 130.
#[test]
fn sigterm_in_explore_stops_within_a_second_marked_interrupted() {
    let dir = fresh_dir("stops", "sigterm-explore");
    let file = dir.join("long.toml");
    std::fs::write(&file, format!("{LONG}[explore]\nkinds = [\"pause\"]\nmax_faults = 1\n")).unwrap();
    let out_dir = dir.join("out");
    let args = ["explore", &s(&file), "--budget", "4", "--threads", "2", "--out", &s(&out_dir)];
    let Output { stdout, .. } = sigterm_after(&dir, "explore", &args, Duration::from_millis(1500));
    assert!(stdout.contains("# interrupted: 0 of 4 schedules ran"), "{stdout}");
}

/// SIGTERM while `sim shrink` runs the seed it was given (which would run for minutes): the run
/// is cut, not waited for; there is no witness yet, so it says the search had not started,
/// writes nothing and exits 130 within a second.
#[test]
fn sigterm_in_shrink_before_its_first_witness_stops_within_a_second_writing_nothing() {
    let dir = fresh_dir("stops", "sigterm-shrink");
    let file = dir.join("long.toml");
    std::fs::write(&file, LONG).unwrap();
    let out = dir.join("small.toml");
    let (file_arg, out_arg) = (s(&file), s(&out));
    for kind in [None, Some("overlap")] {
        // Without --kind the seed's run finds the kind; with it, the run looks for the witness.
        let mut args = vec!["shrink", &file_arg, "--algorithm", "redis", "--seed", "0", "--threads", "2"];
        args.extend(["--out", &out_arg]);
        args.extend(kind.iter().flat_map(|k| ["--kind", *k]));
        let Output { stdout, stderr } = sigterm_after(&dir, "shrink", &args, Duration::from_millis(1500));
        assert!(stdout.contains("# interrupted before the search started"), "{kind:?}: {stdout}{stderr}");
        assert!(!out.exists(), "{kind:?}: nothing is written before a witness");
    }
}

/// The scenario, every time 0, is refused before anything runs, by `sim run` and `sim
/// check` alike (exit 2, at `workload.hold_ms`, the cause and the fix named), in seconds.
#[test]
#[allow(clippy::disallowed_methods)]
fn a_scenario_whose_every_time_is_zero_is_refused() {
    let dir = fresh_dir("stops", "zero-refused");
    let file = dir.join("zero.toml");
    std::fs::write(&file, ZERO).unwrap();
    for command in ["run", "check"] {
        let started = Instant::now();
        let (code, out, err) = sim(&[command, &s(&file)]);
        assert!(started.elapsed() < Duration::from_secs(10), "{command} took {:?}", started.elapsed());
        assert_eq!(code, 2, "{command}: {out}{err}");
        assert!(
            err.contains("zero.toml:8:11: `workload.hold_ms`: every latency, service, hold and think time"),
            "{err}"
        );
        assert!(err.contains("zero-time loop") && err.contains("give one of them a positive value"), "{err}");
    }
}

/// `sim run` on a zero-time loop that validation cannot see: each seed ends with the cause named
/// (a failed seed, as a panicked one: exit 3, `panicked_seeds`), in seconds, not after gigabytes.
#[test]
#[allow(clippy::disallowed_methods)]
fn a_zero_time_loop_fails_its_seed_with_the_cause_named() {
    let dir = fresh_dir("stops", "zero-run");
    let file = dir.join("zero.toml");
    std::fs::write(&file, zero_unseen()).unwrap();
    let json = dir.join("results.json");
    let started = Instant::now();
    let (code, out, err) = sim(&["run", &s(&file), "--seeds", "2", "--json", &s(&json)]);
    assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("simulated time stuck at 0 ms for"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let row = &v["algorithms"][0];
    assert_eq!(row["panicked_runs"], 2, "{row}");
    let message = row["panicked_seeds"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("zero-time loop") && message.contains("give one of them a positive value"), "{message}");
}

/// `sim check` on a zero-time loop that validation cannot see: the probe stops in the loop and
/// the scenario is refused (exit 2) with the cause, instead of hanging.
#[test]
#[allow(clippy::disallowed_methods)]
fn sim_check_finds_the_zero_time_loop_in_its_probe() {
    let dir = fresh_dir("stops", "zero-check");
    let file = dir.join("zero.toml");
    std::fs::write(&file, zero_unseen()).unwrap();
    let started = Instant::now();
    let (code, out, err) = sim(&["check", &s(&file)]);
    assert!(started.elapsed() < Duration::from_secs(30), "took {:?}", started.elapsed());
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("zero.toml") && err.contains("`redis` (seed 0)"), "{err}");
    assert!(err.contains("simulated time stuck at 0 ms") && err.contains("zero-time loop"), "{err}");
}

/// SIGTERM while `sim exhaust` searches (the etcd target, which takes seconds): it stops within a
/// second, says on stderr that it prints its partial certificate (not `sim run`'s "seeds in
/// progress" line), and prints that certificate: search incomplete (interrupted), its bounds and
/// the states explored so far; exit 130.
#[test]
fn sigterm_in_exhaust_prints_the_partial_certificate() {
    let dir = fresh_dir("stops", "sigterm-exhaust");
    let file = format!("{}/scenarios/exhaust/etcd.toml", env!("CARGO_MANIFEST_DIR"));
    let args = ["exhaust", &file, "--algorithm", "etcd"];
    let Output { stdout, stderr } = sigterm_after(&dir, "exhaust", &args, Duration::from_millis(1500));
    assert!(stderr.contains("interrupted: stopping the search, then printing its partial certificate"), "{stderr}");
    assert!(!stderr.contains("seeds in progress"), "{stderr}");
    assert!(stdout.contains("search incomplete (interrupted)"), "{stdout}");
    assert!(stdout.contains("bounds: ") && stdout.contains("states explored "), "{stdout}");
}
