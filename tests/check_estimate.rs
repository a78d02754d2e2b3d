//! `sim check`'s cost estimate: the probe runs and prints one `estimate:` line whose figures scale
//! with the seeds asked for (`--seeds`, or the file's `seeds`) and with the rows; `--no-estimate`
//! skips it; a run of more than an hour gets a warning.

use std::process::Command;

fn sim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("sim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The figures of the `estimate:` line.
#[derive(Debug)]
struct Line {
    rows: u64,
    seeds: u64,
    seed_runs: u64,
    simulated_s: f64,
    events: f64,
    text: String,
}

/// The number right before `unit` in `text` (`… 1200 seed-runs` → 1200).
fn before(text: &str, unit: &str) -> f64 {
    // A count of 1 takes the singular ("1 row x", "1 seed-run"): the unit without its "s".
    let singular = unit.replacen("s ", " ", 1).replacen("seed-runs", "seed-run", 1);
    let at = text.find(unit).or_else(|| text.find(&singular)).unwrap_or_else(|| panic!("{unit:?} not in {text}"));
    let word = text[..at].split_whitespace().last().unwrap().trim_start_matches('(');
    word.parse().unwrap_or_else(|_| panic!("{word:?} before {unit:?} in {text}"))
}

fn estimate(args: &[&str]) -> Line {
    let (code, out, err) = sim(args);
    assert_eq!(code, 0, "{args:?}: {out}{err}");
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("estimate: ")).collect();
    assert_eq!(lines.len(), 1, "one estimate line expected:\n{out}");
    let text = lines[0].to_string();
    Line {
        rows: before(&text, " rows x") as u64,
        seeds: before(&text, " seeds =") as u64,
        seed_runs: before(&text, " seed-runs") as u64,
        simulated_s: before(&text, " simulated s in all"),
        events: before(&text, " events"),
        text,
    }
}

fn write(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("locksim-check-estimate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn the_estimate_counts_the_files_rows_and_seeds_and_scales_with_seeds() {
    let file = "scenarios/failover.toml";
    let models = locksim_algorithms::registry();
    let sc = locksim_simulator::scenario::load_file(std::path::Path::new(file), &models).unwrap();
    let rows = sc.runs.len() as u64;

    let default = estimate(&["check", file]);
    assert_eq!((default.rows, default.seeds), (rows, sc.seeds), "{}", default.text);
    assert_eq!(default.seed_runs, rows * sc.seeds, "{}", default.text);
    assert_eq!(default.simulated_s, (rows * sc.seeds) as f64 * sc.setup.duration_ms / 1000.0);
    assert!(default.events > 0.0 && default.text.contains("of wall time on "), "{}", default.text);

    // The probe is chosen from event counts, so the events estimate is the same in every process:
    // doubling the seeds doubles seed-runs, simulated time and events.
    let ten = estimate(&["check", file, "--seeds", "10"]);
    let twenty = estimate(&["check", file, "--seeds", "100..120"]);
    assert_eq!((ten.seeds, twenty.seeds), (10, 20));
    assert_eq!(twenty.seed_runs, 2 * ten.seed_runs);
    assert_eq!(twenty.simulated_s, 2.0 * ten.simulated_s);
    let ratio = twenty.events / ten.events;
    assert!((ratio - 2.0).abs() < 0.02, "events {} then {}", ten.events, twenty.events);
}

#[test]
fn the_estimate_scales_with_the_files_seeds_and_rows() {
    let one = "name = \"e\"\nduration_ms = 20000\nseeds = 50\nalgorithms = [\"redis\"]\n";
    let two = "name = \"e\"\nduration_ms = 20000\nseeds = 100\nalgorithms = [\"redis\", \"etcd\"]\n";
    let a = estimate(&["check", &write("one.toml", one)]);
    let b = estimate(&["check", &write("two.toml", two)]);
    assert_eq!((a.rows, a.seeds, a.seed_runs), (1, 50, 50), "{}", a.text);
    assert_eq!((b.rows, b.seeds, b.seed_runs), (2, 100, 200), "{}", b.text);
    assert_eq!(b.simulated_s, 4.0 * a.simulated_s);
    assert!(b.events > 2.0 * a.events, "{} then {}", a.text, b.text);
}

/// One row of one seed reads "1 row x 1 seed = 1 seed-run", not "1 rows x 1 seeds = 1 seed-runs".
#[test]
fn a_count_of_one_is_singular() {
    let one = "name = \"e\"\nduration_ms = 2000\nseeds = 1\nalgorithms = [\"redis\"]\n";
    let (code, out, err) = sim(&["check", &write("single.toml", one), "--no-estimate"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(", 2000 ms, 1 seed, algorithms [redis], 0 faults, 0 expectations"), "{out}");
    let e = estimate(&["check", &write("single.toml", one)]);
    assert_eq!((e.rows, e.seeds, e.seed_runs), (1, 1, 1), "{}", e.text);
    assert!(e.text.starts_with("estimate: 1 row x 1 seed = 1 seed-run of 2 s simulated"), "{}", e.text);
    let plural = estimate(&["check", "scenarios/failover.toml", "--seeds", "2"]);
    assert!(plural.text.contains(" seeds = ") && plural.text.contains(" seed-runs of "), "{}", plural.text);
    assert!(!plural.text.contains(" 1 threads") && !plural.text.contains(" 1 seeds "), "{}", plural.text);
}

#[test]
fn no_estimate_skips_the_probe_and_a_long_run_is_warned_about() {
    let (code, out, _) = sim(&["check", "scenarios/failover.toml", "--no-estimate"]);
    assert_eq!(code, 0);
    assert!(out.contains(": ok: scenario"), "{out}");
    assert!(!out.contains("estimate:"), "{out}");

    let (_, out, _) = sim(&["check", "scenarios/failover.toml", "--seeds", "10"]);
    assert!(!out.contains("warning:"), "{out}");
    // A hundred million seed-runs of a minute each take far more than an hour on any machine.
    let (code, out, err) = sim(&["check", "scenarios/failover.toml", "--seeds", "100000000"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("warning: this run would take more than an hour"), "{out}");

    let (code, _, err) = sim(&["check", "scenarios/failover.toml", "--seeds", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("--seeds 0"), "{err}");
}
