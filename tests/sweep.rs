//! `sim sweep` as a user meets it: the files it writes (CSV rows, JSON points, charts), that the
//! swept value really reaches the run (and gives what `sim run` gives on a hand-edited file), and
//! that every kind of bad input is refused with exit code 2, a message naming the key, and
//! nothing run or written. Scenarios are small (2 s, 2 seeds, cheap models) and run on one thread.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn sim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim")).args(args).output().expect("sim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh directory for one test.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("locksim-sweep-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Redlock and the database lock, three clients, the holder paused for 800 ms once.
const SCENARIO: &str = r#"name = "sweep-test"
duration_ms = 2000
seeds = 2
algorithms = ["redlock", "db"]

[models.redlock]
ttl_ms = 1000

[workload]
clients = 3

[[faults]]
kind = "pause"
target = "holder"
at_ms = 500
duration_ms = 800

[expect.db]
overlap = "none"
"#;

const CHARTS: &[&str] = &[
    "overlap_rate",
    "stale_unfenced_rate",
    "stale_fenced_rate",
    "throughput_per_s",
    "acquire_latency_ms_p99",
    "messages_per_acquisition",
    "notifications_per_release",
];

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn writes_csv_json_and_charts_for_every_point() {
    let d = dir("files");
    let f = write(&d, "s.toml", SCENARIO);
    let out = d.join("out");
    let (code, stdout, err) = sim(&[
        "sweep",
        &f,
        "--param",
        "models.redlock.ttl_ms=500..1500:500",
        "--param",
        "workload.clients=2,4",
        "--threads",
        "1",
        "--out",
        &s(&out),
    ]);
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(stdout.contains("[expect] blocks are not judged"), "{stdout}");
    assert!(stdout.contains("sweep.csv (12 rows)"), "{stdout}");

    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 3 * 2 * 2, "{csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(&header[..4], &["models.redlock.ttl_ms", "workload.clients", "label", "runs"]);
    // Columns added later (double_executions_*) come after failing_seeds.
    assert_eq!(header[header.len() - 5], "failing_seeds");
    assert!(header.contains(&"stale_fenced_ci95_hi") && header.contains(&"acquire_latency_ms_p99"));
    // First parameter slowest, then the second, then the algorithms in file order.
    let keys: Vec<String> = lines[1..].iter().map(|l| l.split(',').take(3).collect::<Vec<_>>().join(",")).collect();
    assert_eq!(keys[0], "500,2,redlock");
    assert_eq!(keys[1], "500,2,db");
    assert_eq!(keys[2], "500,4,redlock");
    assert_eq!(keys[11], "1500,4,db");
    for l in &lines[1..] {
        assert_eq!(l.split(',').count(), header.len(), "{l}");
        let cells: Vec<&str> = l.split(',').collect();
        assert_eq!(cells[3], "2", "two runs per row: {l}");
        if cells[2] == "redlock" {
            // Redlock has no fencing token: empty cells, never 0.
            let i = header.iter().position(|h| *h == "stale_fenced_rate").unwrap();
            assert_eq!(&cells[i..i + 3], &["", "", ""], "{l}");
        }
    }

    let json = read_json(&out.join("sweep.json"));
    assert_eq!(json["scenario"], "sweep-test");
    assert_eq!(json["seeds"], serde_json::json!({"from": 0, "to": 2}));
    assert_eq!(json["params"][0]["key"], "models.redlock.ttl_ms");
    assert_eq!(json["params"][0]["values"], serde_json::json!([500, 1000, 1500]));
    assert_eq!(json["params"][1]["values"], serde_json::json!([2, 4]));
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    assert_eq!(points[5]["values"], serde_json::json!({"models.redlock.ttl_ms": 1500, "workload.clients": 4}));
    let mut failing = 0;
    for p in points {
        // By default a point holds one summary per row: the CSV's fields, not the whole results.
        assert!(p.get("results").is_none(), "{p}");
        let rows = p["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0]["label"], "redlock");
        assert_eq!(rows[0]["runs"], 2);
        assert!(rows[0]["stale_fenced_rate"].is_null(), "redlock cannot be fenced: {p}");
        // A point with failing seeds has its own scenario written, holding the point's values.
        if !rows[0]["failing_seeds"].as_array().unwrap().is_empty() {
            failing += 1;
            let file = p["scenario_file"].as_str().expect("a point with failing seeds has its scenario written");
            let text = std::fs::read_to_string(file).unwrap();
            let ttl = p["values"]["models.redlock.ttl_ms"].to_string();
            assert!(text.contains(&format!("ttl_ms = {ttl}")), "{text}");
        }
    }
    // The 500 ms TTL points overlap (the holder's pause outlives the key): their scenarios were checked.
    assert!(failing >= 2, "expected the 500 ms points to fail; got {failing}");
    for name in CHARTS {
        for ext in ["svg", "png"] {
            let file = out.join(format!("{name}.{ext}"));
            let len = std::fs::metadata(&file).unwrap_or_else(|_| panic!("{} missing", file.display())).len();
            assert!(len > 1000, "{} is only {len} bytes", file.display());
        }
    }
    let svg = std::fs::read_to_string(out.join("overlap_rate.svg")).unwrap();
    assert!(svg.contains("models.redlock.ttl_ms"), "the x axis names the parameter");
    assert!(svg.contains("redlock, workload.clients=4"), "one line per algorithm and other value");
}

#[test]
fn the_swept_value_changes_the_results() {
    let d = dir("changes");
    let f = write(&d, "s.toml", SCENARIO);
    let out = d.join("out");
    let (code, stdout, err) = sim(&[
        "sweep",
        &f,
        "--param",
        "workload.clients=1,6",
        "--param",
        "models.redlock.ttl_ms=200,5000",
        "--algorithm",
        "redlock",
        "--full",
        "--threads",
        "1",
        "--out",
        &s(&out),
    ]);
    assert_eq!(code, 0, "{stdout}{err}");
    let json = read_json(&out.join("sweep.json"));
    let row = |i: usize| json["points"][i]["results"][0].clone();
    // clients=1 and clients=6 (same ttl): more contention, more messages and acquisitions.
    let (one, six) = (row(0), row(2));
    assert_ne!(one["messages"], six["messages"]);
    assert!(six["acquisitions"].as_u64() > one["acquisitions"].as_u64(), "{one}\n{six}");
    // ttl 200 vs 5000 (6 clients): the TTL reaches the model and changes what happens.
    let (short, long) = (row(2), row(3));
    assert_eq!(short["params"]["ttl_ms"], 200);
    assert_eq!(long["params"]["ttl_ms"], 5000);
    let strip = |mut v: Value| {
        v.as_object_mut().unwrap().remove("params");
        v
    };
    assert_ne!(strip(short.clone()), strip(long.clone()));
    // An 800 ms pause of the holder outlives a 200 ms TTL, not a 5 s one.
    assert!(short["overlap"]["runs"].as_u64().unwrap() > 0, "{short}");
    assert_eq!(long["overlap"]["runs"], 0, "{long}");
}

#[test]
fn a_point_gives_what_sim_run_gives_on_the_hand_edited_file() {
    let d = dir("same");
    let f = write(&d, "s.toml", SCENARIO);
    let out = d.join("out");
    let (code, stdout, err) =
        sim(&["sweep", &f, "--param", "faults.0.duration_ms=300,900", "--full", "--threads", "1", "--out", &s(&out)]);
    assert_eq!(code, 0, "{stdout}{err}");
    let sweep = read_json(&out.join("sweep.json"));
    let edited = write(&d, "edited.toml", &SCENARIO.replace("duration_ms = 800", "duration_ms = 900"));
    assert_ne!(edited, f);
    let run_json = d.join("run.json");
    let (code, stdout, err) = sim(&["run", &edited, "--threads", "1", "--json", &s(&run_json)]);
    assert_eq!(code, 0, "{stdout}{err}");
    let run = read_json(&run_json);

    let mut from_sweep = sweep["points"][1]["results"].clone();
    let mut from_run = run["algorithms"].clone();
    // `replay` names the file to replay: the edited file for `sim run`, the point's scenario for
    // the sweep. Everything else is the same, byte for byte.
    for (a, b) in from_sweep.as_array_mut().unwrap().iter_mut().zip(from_run.as_array_mut().unwrap()) {
        match (a["replay"].as_str(), b["replay"].as_str()) {
            (None, None) => {}
            (Some(x), Some(y)) => {
                assert!(x.contains("points/point-1.toml"), "{x}");
                assert_eq!(x.replace(&format!("{}/points/point-1.toml", s(&out)), "F"), y.replace(&edited, "F"));
            }
            other => panic!("replay differs: {other:?}"),
        }
        a["replay"] = Value::Null;
        b["replay"] = Value::Null;
    }
    assert_eq!(serde_json::to_string_pretty(&from_sweep).unwrap(), serde_json::to_string_pretty(&from_run).unwrap());
    // And the other point differs (the fault's length mattered).
    assert_ne!(sweep["points"][0]["results"], sweep["points"][1]["results"]);
}

#[test]
fn a_float_range_includes_its_end() {
    let d = dir("float");
    let f = write(&d, "s.toml", SCENARIO);
    let out = d.join("out");
    let (code, stdout, err) = sim(&[
        "sweep",
        &f,
        "--param",
        "workload.hold_ms=0.5..2.0:0.5",
        "--algorithm",
        "db",
        "--seeds",
        "1",
        "--threads",
        "1",
        "--out",
        &s(&out),
    ]);
    assert_eq!(code, 0, "{stdout}{err}");
    let json = read_json(&out.join("sweep.json"));
    assert_eq!(json["params"][0]["values"], serde_json::json!([0.5, 1.0, 1.5, 2.0]));
    assert_eq!(json["seeds"], serde_json::json!({"from": 0, "to": 1}));
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let firsts: Vec<&str> = csv.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(firsts, ["0.5", "1", "1.5", "2"]);
}

#[test]
fn an_existing_out_dir_keeps_other_files() {
    let d = dir("keep");
    let f = write(&d, "s.toml", SCENARIO);
    let out = d.join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    std::fs::write(out.join("sweep.csv"), "old").unwrap();
    let (code, stdout, err) = sim(&[
        "sweep",
        &f,
        "--param",
        "workload.clients=2",
        "--algorithm",
        "db",
        "--seeds",
        "1",
        "--threads",
        "1",
        "--out",
        &s(&out),
    ]);
    assert_eq!(code, 0, "{stdout}{err}");
    assert_eq!(std::fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
    assert!(std::fs::read_to_string(out.join("sweep.csv")).unwrap().starts_with("workload.clients,label,"));
}

#[test]
fn bad_input_is_exit_2_naming_the_key_and_nothing_is_written() {
    let d = dir("bad");
    let f = write(&d, "s.toml", SCENARIO);
    let a_file = write(&d, "a-file", "x");
    let out = s(&d.join("out"));
    let under_file = format!("{a_file}/sub");
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["--param", "workload.clients", "--out", &out], vec!["workload.clients", "no `=`"]),
        // Unknown keys: the parser's explanation lists the valid ones.
        (vec!["--param", "workload.clientz=1..2:1", "--out", &out], vec!["workload.clientz", "valid keys here"]),
        (vec!["--param", "models.redlock.ttl=1..2:1", "--out", &out], vec!["models.redlock.ttl", "ttl_ms"]),
        (vec!["--param", "modles.redis.x=1", "--out", &out], vec!["modles", "valid keys here: name"]),
        // Paths that do not exist.
        (vec!["--param", "faults.7.duration_ms=1..2:1", "--out", &out], vec!["faults.7", "1 [[faults]] block"]),
        (vec!["--param", "variants.0.ttl_ms=1", "--out", &out], vec!["variants.0.ttl_ms", "`variants` is not in"]),
        // Out of range, told against the original file and the --param, not generated lines.
        (
            vec!["--param", "workload.clients=0..2:1", "--out", &out],
            vec!["workload.clients", "with --param workload.clients=0"],
        ),
        (vec!["--param", "models.redlock.ttl_ms=0,100", "--out", &out], vec!["models.redlock.ttl_ms", "found 0"]),
        (vec!["--param", "workload.clients=1..5:0", "--out", &out], vec!["workload.clients", "is 0"]),
        (vec!["--param", "workload.clients=1..5:-1", "--out", &out], vec!["workload.clients", "negative"]),
        (
            vec!["--param", "workload.clients=5..1:1", "--out", &out],
            vec!["workload.clients", "FROM must not be above TO"],
        ),
        (vec!["--param", "workload.clients=", "--out", &out], vec!["workload.clients", "no value"]),
        (
            vec!["--param", "workload.clients=1..20000:1", "--out", &out],
            vec!["workload.clients", "more than a sweep may have (10000)"],
        ),
        (
            vec!["--param", "workload.clients=1..101:1", "--param", "models.redlock.ttl_ms=1..100:1", "--out", &out],
            vec!["workload.clients (101) × models.redlock.ttl_ms (100)", "10100 points"],
        ),
        (vec!["--param", "seeds=1..3:1", "--out", &out], vec!["seeds", "--seeds"]),
        (vec!["--param", "workload.clients=2"], vec!["--out"]),
        (vec!["--param", "workload.clients=2", "--out", &a_file], vec!["a-file", "not a directory"]),
        (vec!["--param", "workload.clients=2", "--out", &under_file], vec!["a-file/sub", "cannot create"]),
        (
            vec!["--param", "workload.clients=2", "--out", &out, "--algorithm", "nope"],
            vec!["--algorithm nope", "valid labels"],
        ),
        (vec!["--param", "workload.clients=2", "--out", &out, "--seeds", "3..1"], vec!["--seeds", "reversed"]),
    ];
    for (args, needles) in cases {
        let mut all = vec!["sweep", f.as_str()];
        all.extend(&args);
        let (code, stdout, err) = sim(&all);
        assert_eq!(code, 2, "{args:?}: {stdout}{err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: expected {n:?} in: {err}");
        }
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        // No line:column of the generated text, and nothing ran or was written.
        assert!(!err.contains("s.toml:"), "{args:?}: {err}");
        assert!(!d.join("out").exists(), "{args:?} created the out dir");
    }
    // A directory that exists but cannot be written in (even by root).
    if cfg!(target_os = "linux") {
        let (code, _, err) = sim(&["sweep", &f, "--param", "workload.clients=2", "--out", "/proc/self"]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("--out /proc/self: cannot write"), "{err}");
    }
    // An error in the file itself keeps its real line.
    let broken = write(&d, "broken.toml", &SCENARIO.replace("clients = 3", "clients = -3"));
    let (code, _, err) = sim(&["sweep", &broken, "--param", "duration_ms=1000", "--out", &out]);
    assert_eq!(code, 2);
    assert!(err.contains("broken.toml:10:"), "{err}");
}

#[test]
fn help_explains_keys_ranges_and_outputs() {
    let (code, out, _) = sim(&["sweep", "--help"]);
    assert_eq!(code, 0);
    for word in [
        "faults.0.duration_ms",
        "models.redlock.ttl_ms",
        "FROM..TO:STEP",
        "sweep.csv",
        "sweep.json",
        "sweep.parquet",
        "--full",
        "not judged",
    ] {
        assert!(out.contains(word), "{word} missing from sweep help:\n{out}");
    }
    let (_, out, _) = sim(&["--help"]);
    assert!(out.contains("sweep"), "{out}");
}

/// Ctrl-C stops a long sweep: exit 130, and the finished points are written.
#[cfg(unix)]
#[test]
fn ctrl_c_writes_what_finished() {
    use std::io::Read;
    let d = dir("interrupt");
    let long = "name = \"long\"\nduration_ms = 60000\nseeds = 100000\nalgorithms = [\"redlock\"]\n";
    let f = write(&d, "long.toml", long);
    let out = d.join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["sweep", &f, "--param", "workload.clients=2,3", "--threads", "1", "--out", &s(&out)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sim starts");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    assert!(status.success());
    let code = child.wait().expect("sim ends").code();
    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    assert_eq!(code, Some(130), "{stdout}");
    assert!(stdout.contains("# interrupted:"), "{stdout}");
    let json = read_json(&out.join("sweep.json"));
    assert_eq!(json["interrupted"], true);
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "only the first point had started");
    assert_eq!(points[0]["complete"], false);
    assert!(points[0]["rows"][0]["runs"].as_u64().unwrap() > 0);
    assert!(out.join("sweep.csv").exists() && out.join("overlap_rate.svg").exists());
}
