//! `sim live` against real servers on this machine: each live model's no-fault fidelity scenario
//! (no overlap, acquisitions, every process stopped), its server killed and the service back, a
//! paused holder's overlap, and the refusals (exit 2) for what live mode cannot do. Without the
//! server binaries on PATH the server tests print `SKIPPED:` and pass.

use std::path::Path;

use crate::support::cli::{fresh_dir, s, sim};
use crate::support::live::*;

fn skip_without(binary: &str, test: &str) -> bool {
    if on_path(binary) {
        return false;
    }
    println!("SKIPPED: {test}: `{binary}` is not on PATH (Debian package redis-server)");
    true
}

fn live_no_faults(model: &str, labels: &[&str]) {
    let dir = fresh_dir("live", &format!("{model}-no-faults"));
    let file = fidelity_copy(&format!("{model}-no-faults.toml"), &dir, Some(3_000), false, |t| t);
    let out = dir.join("results.json");
    let keep = dir.join("servers");
    let (code, stdout, stderr) = sim(&["live", &s(&file), "--json", &s(&out), "--keep-dir", &s(&keep)]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("# live: real servers on this machine (redis-server: Redis server v="), "{stdout}");
    let json = results(&out);
    assert_eq!(json["mode"], "live");
    assert!(json["servers"][0]["version"].as_str().unwrap().contains("v="), "{json}");
    for label in labels {
        let r = row(&json, label);
        assert_eq!(r["runs"], 1, "{r}");
        assert_eq!(r["overlap"]["runs"], 0, "{label}: {r}");
        let acquisitions = r["acquisitions"].as_u64().unwrap();
        assert!(acquisitions > 20, "{label}: only {acquisitions} acquisitions in 3 s live: {r}");
    }
    let left = processes_mentioning(&dir);
    assert!(left.is_empty(), "processes left running after sim live: {left:?}");
}

#[test]
fn redis_no_faults_live() {
    let _serial = serial();
    if skip_without("redis-server", "redis_no_faults_live") {
        return;
    }
    live_no_faults("redis", &["redis", "redisson"]);
}

#[test]
fn redlock_no_faults_live() {
    let _serial = serial();
    if skip_without("redis-server", "redlock_no_faults_live") {
        return;
    }
    live_no_faults("redlock", &["redlock"]);
}

fn killed_server_comes_back(model: &str, file_name: &str) {
    let dir = fresh_dir("live", &format!("{model}-killed"));
    let file = fidelity_copy(file_name, &dir, Some(5_000), false, |t| t);
    let edit = |text: String| {
        text.replace("at_ms = 3_000", "at_ms = 1_500").replace("duration_ms = 2_000", "duration_ms = 1_500")
    };
    std::fs::write(&file, edit(std::fs::read_to_string(&file).unwrap())).unwrap();
    let history = dir.join("history.jsonl");
    let (code, stdout, stderr) = sim(&["live", &s(&file), "--history", &s(&history), "--algorithm", model]);
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
    assert!(processes_mentioning(&dir).is_empty());
}

#[test]
fn redis_server_killed_comes_back_live() {
    let _serial = serial();
    if skip_without("redis-server", "redis_server_killed_comes_back_live") {
        return;
    }
    killed_server_comes_back("redis", "redis-server-killed.toml");
}

#[test]
fn redlock_master_killed_comes_back_live() {
    let _serial = serial();
    if skip_without("redis-server", "redlock_master_killed_comes_back_live") {
        return;
    }
    killed_server_comes_back("redlock", "redlock-master-killed.toml");
}

/// With replicas, real Sentinels fail the killed primary over: the clients, told by the Sentinels'
/// `+switch-master`, are granted by the promoted replica while the old primary is still down,
/// with no overlap (the replica had every lock key: Redisson's WAIT), and go on being granted
/// once the old primary is back.
///
/// The plain row's key lives 2 s here instead of the file's 30 s. The kill can leave a lock key on
/// the replica that nobody will delete: an unlock the primary ran but had not yet written to the
/// replica, or a `SET NX` whose reply the kill cut off after the replica had it (the client's
/// retry on the new primary finds its own key and is refused). The real systems do this too, and
/// the plain lock then stays taken for its whole TTL, past the old primary's return: seen once in
/// CI (0 grants while the primary was down), and in about 1 simulated seed in 4 of the file as it
/// is (the model's 5 ms `replication_lag_ms` widens the window). With 2 s the key expires before
/// the promotion, so what this test checks, the failover, is all that decides the grants.
/// Redisson's row keeps its 30 s lease: its owner re-enters a left-over hold, so grants go on.
#[test]
fn redis_sentinel_fails_the_killed_primary_over_live() {
    let _serial = serial();
    if skip_without("redis-server", "redis_sentinel_fails_the_killed_primary_over_live")
        || skip_without("redis-sentinel", "redis_sentinel_fails_the_killed_primary_over_live")
    {
        return;
    }
    let dir = fresh_dir("live", "redis-sentinel");
    let file = fidelity_copy("redis-sentinel-primary-killed.toml", &dir, Some(15_000), true, |t| {
        t.replacen("[models.redis]\n", "[models.redis]\nttl_ms = 2_000\n", 1)
    });
    assert!(std::fs::read_to_string(&file).unwrap().contains("ttl_ms = 2_000"), "the plain row's TTL was set");
    let history = dir.join("history.jsonl");
    let out = dir.join("results.json");
    let (code, stdout, stderr) = sim(&["live", &s(&file), "--history", &s(&history), "--json", &s(&out)]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    for (label, h) in histories(&history) {
        let faults = h["faults"].as_array().unwrap();
        assert_eq!(faults.len(), 1, "{label}: one crash: {faults:?}");
        assert_eq!(faults[0]["targets"], "server-0", "{label}: the leader selector asked the Sentinels");
        let (start, end) = (faults[0]["start_ns"].as_u64().unwrap(), faults[0]["end_ns"].as_u64().unwrap());
        // Grants while server-0 was down can only come from the promoted replica.
        let during = grants_after(&h, start) - grants_after(&h, end);
        assert!(during > 10, "{label}: {during} grants while the old primary was down: no failover\n{stdout}");
        // The old primary comes back (at `end`) still claiming the primary role, for the 8 s
        // before the Sentinels convert it: it must not count as a replica to WAIT for, or
        // Redisson's every acquisition fails after its 1 s WAIT ("None of slaves were synced").
        let after = grants_after(&h, end + 1_000_000_000);
        assert!(after > 20, "{label}: {after} grants after the old primary came back\n{stdout}");
    }
    assert!(processes_mentioning(&dir).is_empty());
}

/// A holder stopped past its TTL overlaps with the next holder on a real Redis, as simulated.
#[test]
fn redis_paused_holder_overlaps_live() {
    let _serial = serial();
    if skip_without("redis-server", "redis_paused_holder_overlaps_live") {
        return;
    }
    let dir = fresh_dir("live", "redis-paused");
    let file = fidelity_copy("redis-paused-holder.toml", &dir, Some(6_000), true, |t| t);
    let out = dir.join("results.json");
    let report = dir.join("report");
    let (code, stdout, stderr) = sim(&["live", &s(&file), "--json", &s(&out), "--report", &s(&report)]);
    assert_eq!(code, 0, "every expectation (overlap and stale write in every run) holds live\n{stdout}\n{stderr}");
    let json = results(&out);
    for label in ["redis", "redisson"] {
        assert_eq!(row(&json, label)["overlap"]["runs"], 1, "{label}");
        assert_eq!(row(&json, label)["stale_unfenced"]["runs"], 1, "{label}");
    }
    // Each row names the preset its recipe ran with, as a simulated run does: in the JSON, the
    // table's library column and the report page's.
    assert_eq!(
        (row(&json, "redis")["library"].as_str(), row(&json, "redisson")["library"].as_str()),
        (Some("redis-py-8"), Some("redisson-4.7")),
        "{json}"
    );
    let head = stdout.lines().find(|l| l.trim_start().starts_with("label")).expect(&stdout);
    assert!(head.split_whitespace().nth(1) == Some("library"), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("redis ") && l.contains(" redis-py-8 ")), "{stdout}");
    // The overlapping rows are named with their seed, but a live run gives no `replay:` command
    // (its table says it is not replayable).
    assert!(stdout.contains("redis: violations in 1 of 1 runs"), "{stdout}");
    assert!(stdout.contains("a live run is not replayable"), "{stdout}");
    assert!(!stdout.contains("replay: "), "no replay command for a live run:\n{stdout}");
    // The report's timeline is the recorded live run (it cannot be replayed): both rows' panels,
    // a lane per client, and the overlap the checker found, marked.
    let svg = std::fs::read_to_string(report.join("timeline.svg")).expect("a timeline");
    assert!(svg.contains("live run, seed 0"), "the title says it is the live run");
    // The legend's swatch, then the overlap on the two clients' lanes of each of the two rows
    // (more where a real run's timing made a third client overlap too).
    let marks = svg.matches("opacity=\"0.45\" fill=\"#D62728\"").count();
    assert!(marks > 2 * 2, "{marks} overlap rectangles in the timeline");
    for lane in ["client-0", "client-1"] {
        assert!(svg.contains(lane), "{lane}'s lane");
    }
    let page = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(page.contains("One live run"), "the caption says it is the recorded run");
    assert!(page.contains("<td class=\"label\">redisson-4.7</td>"), "the page's library column");
    // `sim report` on the live results draws no simulated stand-in for the run.
    let again = dir.join("again");
    let (code, _, stderr) = sim(&["report", &s(&out), "--out", &s(&again)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("cannot be replayed"), "{stderr}");
    assert!(!again.join("timeline.svg").exists(), "no re-simulated timeline for a live run");
}

#[test]
fn what_live_mode_cannot_do_is_refused_with_the_reason() {
    let _serial = serial();
    let dir = fresh_dir("live", "refusals");
    let cases: &[(&str, &str, &str)] = &[
        (
            "partition",
            "[[faults]]\nkind = \"partition\"\ngroups = [[\"server-0\"], [\"client-*\"]]\nat_ms = 100\nduration_ms = 100\n",
            "live mode cannot inject this fault faithfully: cutting links",
        ),
        (
            "machine",
            "[[faults]]\nkind = \"crash\"\nmode = \"machine\"\ntarget = \"server-0\"\nat_ms = 100\nduration_ms = 100\n",
            "mode = \"machine\"",
        ),
        ("loss", "", "loss = 0.01"),
    ];
    for (name, fault, expected) in cases {
        let mut text = std::fs::read_to_string("scenarios/fidelity/redis-no-faults.toml").unwrap();
        if *name == "loss" {
            text = text.replace("latency_ms = 0.05", "latency_ms = 0.05\nloss = 0.01");
        }
        text.push('\n');
        text.push_str(fault);
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, text).unwrap();
        let (code, stdout, stderr) = sim(&["live", &s(&path)]);
        assert_eq!(code, 2, "{name}: {stdout}{stderr}");
        assert!(stderr.contains(expected), "{name}: {stderr}");
        assert!(stderr.contains(&s(&path)), "{name}: the message names the file: {stderr}");
    }
    // A model live mode does not run yet.
    let (code, _, stderr) = sim(&["live", "scenarios/known/12-kubernetes-paused-leader.toml"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("live mode does not run the `kubernetes` model yet"), "{stderr}");
}

#[test]
fn a_missing_server_binary_names_its_package() {
    let _serial = serial();
    let dir = fresh_dir("live", "missing");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["live", "scenarios/fidelity/redlock-no-faults.toml"])
        .env("PATH", &dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("needs the Debian package `redis-server`"), "{stderr}");
}

/// Starts `sim live FILE --keep-dir KEEP` (output piped) and returns once its five clients run.
// Real time: waiting for real processes.
#[allow(clippy::disallowed_methods)]
fn start_live_run(dir: &Path, file: &Path, keep: &Path) -> std::process::Child {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["live", &s(file), "--keep-dir", &s(keep)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while processes_mentioning(dir).iter().filter(|p| p.contains("live-client")).count() < 5 {
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "the clients never started");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child
}

/// SIGTERM (or Ctrl-C) in the middle of a live run: the run stops early, its table is still
/// printed, exit 130, and every server and client it started is gone.
#[test]
// Real time: the test watches a real run and bounds how long it takes to stop.
#[allow(clippy::disallowed_methods)]
fn a_terminated_live_run_stops_every_process_it_started() {
    let _serial = serial();
    if skip_without("redis-server", "a_terminated_live_run_stops_every_process_it_started") {
        return;
    }
    let dir = fresh_dir("live", "terminated");
    let file = fidelity_copy("redlock-no-faults.toml", &dir, Some(30_000), false, |t| t);
    let keep = dir.join("servers");
    let start = std::time::Instant::now();
    let child = start_live_run(&dir, &file, &keep);
    std::thread::sleep(std::time::Duration::from_secs(1));
    let killed = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("# interrupted: 0 of 1 live runs finished") || stdout.contains("redlock "), "{stdout}");
    let left = processes_mentioning(&dir);
    assert!(left.is_empty(), "processes left running after SIGTERM: {left:?}");
    assert!(start.elapsed() < std::time::Duration::from_secs(25), "stopped early, not at the 30 s end");
}

/// A live run cut by SIGTERM is marked, not passed off as a whole run: the table and the results
/// JSON say interrupted, the cut run is named with the time it ran (and not counted as
/// finished), and the row that never started is "not run", its expectation not judged.
#[test]
// Real time: the test watches a real run.
#[allow(clippy::disallowed_methods)]
fn a_cut_live_run_is_marked_and_the_row_that_never_started_is_not_judged() {
    let _serial = serial();
    if skip_without("redis-server", "a_cut_live_run_is_marked_and_the_row_that_never_started_is_not_judged") {
        return;
    }
    let dir = fresh_dir("live", "cut");
    let file = fidelity_copy("redlock-no-faults.toml", &dir, Some(30_000), false, |t| {
        t.replace("algorithms = [\"redlock\"]", "algorithms = [\"redlock\", \"redis\"]")
            + "\n[expect.redis]\noverlap = \"none\"\nacquisitions = \"> 100\"\n"
    });
    let json = dir.join("results.json");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["live", &s(&file), "--json", &s(&json)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while processes_mentioning(&dir).iter().filter(|p| p.contains("live-client")).count() < 5 {
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "the clients never started");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_secs(1));
    let killed = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("# interrupted: 0 of 2 live runs finished"), "{stdout}");
    assert!(stdout.contains("cut short") && stdout.contains("redlock seed 0 after "), "{stdout}");
    assert!(stdout.contains("not run (no verdict): redis"), "{stdout}");
    assert!(!stdout.contains("no completed runs"), "the unstarted row is not judged: {stdout}");

    let v = results(&json);
    assert_eq!(v["interrupted"], true, "{v}");
    let redlock = row(&v, "redlock");
    assert_eq!((redlock["runs"].as_u64(), redlock["seeds_finished"].as_u64()), (Some(1), Some(0)), "{redlock}");
    let redis = row(&v, "redis");
    assert_eq!((redis["runs"].as_u64(), redis["seeds_finished"].as_u64()), (Some(0), Some(0)), "{redis}");
    let judged: Vec<&serde_json::Value> = v["expectations"].as_array().unwrap().iter().collect();
    assert!(judged.iter().all(|e| e["label"] != "redis"), "{judged:?}");
    let notes = v["live_notes"].to_string();
    assert!(notes.contains("cut short") && notes.contains("not run (no verdict): redis"), "{notes}");
}

/// `sim compare` stopped during its live run: the cut run is not compared as if whole, and the
/// summary claims no agreement; exit 130.
#[test]
// Real time: the test watches a real run.
#[allow(clippy::disallowed_methods)]
fn a_cut_compare_claims_no_agreement() {
    use std::io::{BufRead, BufReader};
    let _serial = serial();
    if skip_without("redis-server", "a_cut_compare_claims_no_agreement") {
        return;
    }
    let dir = fresh_dir("live", "cut-compare");
    let file = fidelity_copy("redlock-no-faults.toml", &dir, Some(30_000), false, |t| t);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["compare", &s(&file), "--seeds", "1", "--sim-seeds", "4"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the live run to begin (after the calibration and the simulated seeds).
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("live run, seed 0") {
            break;
        }
    }
    assert!(seen.contains("live run, seed 0"), "the live run never started: {seen}");
    std::thread::sleep(std::time::Duration::from_secs(2));
    let killed = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}{seen}{}", rest.join("\n"));
    assert!(stdout.contains("no agreement is claimed"), "{stdout}");
    assert!(stdout.contains("cut short, not compared: redlock live seed 0 after "), "{stdout}");
    assert!(stdout.contains("redlock: not compared (interrupted before a live run finished)"), "{stdout}");
    assert!(!stdout.contains("live inside?"), "no table judges the cut run: {stdout}");
}

/// `sim live` killed with SIGKILL runs no handler and no destructor, yet leaves nothing: each
/// client asked the kernel to kill it with its parent, and each server was started through
/// `sim live-exec`, which did the same before becoming the server (PR_SET_PDEATHSIG).
#[test]
// A live test waits on the machine's clock for real processes.
#[allow(clippy::disallowed_methods)]
fn a_live_run_killed_outright_leaves_no_process() {
    let _serial = serial();
    if skip_without("redis-server", "a_live_run_killed_outright_leaves_no_process") {
        return;
    }
    let dir = fresh_dir("live", "sigkilled");
    let file = fidelity_copy("redlock-no-faults.toml", &dir, Some(30_000), false, |t| t);
    let keep = dir.join("servers");
    let mut child = start_live_run(&dir, &file, &keep);
    // Five Redis masters run in their directories under `keep`.
    assert_eq!(processes_working_in(&keep).len(), 5, "{:?}", processes_working_in(&keep));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // The kernel delivers the parent-death signals at once; allow for scheduling.
    let mut left = Vec::new();
    for _ in 0..50 {
        left = [processes_mentioning(&dir), processes_working_in(&keep)].concat();
        if left.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(left.is_empty(), "processes left running after SIGKILL: {left:?}");
}
