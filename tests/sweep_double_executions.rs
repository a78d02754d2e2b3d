//! `sim sweep` writes `sim run`'s `double_executions` too: four columns appended after
//! `failing_seeds` in `sweep.csv` and `sweep.parquet` (runs, rate and its 95% interval), the same
//! fields in each `sweep.json` row, equal to the results JSON's `double_executions` of a
//! scheduled workload; empty cells, nulls and no JSON field for a loop workload.

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::Value;

use crate::support::cli::{self, s, sim};

/// ShedLock with the database's clock, nodes 200 s apart, a 10 s job every minute: the first
/// variant runs the job twice in every period, the second (lockAtLeastFor 50 s) never (known
/// outcome 30d, cut to two minutes).
const SCHEDULED: &str = r#"name = "double-executions-sweep"
duration_ms = 130_000
seeds = 2

[[variants]]
name = "twice"
model = "db"
mode = "shedlock"
lock_at_most_for_ms = 60_000
time_source = "db"

[[variants]]
name = "once"
model = "db"
mode = "shedlock"
lock_at_most_for_ms = 60_000
lock_at_least_for_ms = 50_000
time_source = "db"

[network]
latency_ms = 1

[workload]
kind = "scheduled"
period_ms = 60_000
clients = 2
hold_ms = 10_000

[[faults]]
kind = "clock_jump"
target = "client-1"
at_ms = 1_000
by_ms = 200_000
"#;

const LOOP: &str = "name = \"loop\"\nduration_ms = 1000\nseeds = 2\nalgorithms = [\"db\"]\n\n[workload]\nclients = 2\n";

const APPENDED: [&str; 4] =
    ["double_executions_runs", "double_executions_rate", "double_executions_ci95_lo", "double_executions_ci95_hi"];

/// What one sweep wrote: the CSV header, the CSV rows, sweep.json and the Parquet rows (name, value).
type SweepFiles = (Vec<String>, Vec<Vec<String>>, Value, Vec<Vec<(String, Field)>>);

/// Sweeps `text` over `param` into `dir/out` and reads back what it wrote.
fn sweep(d: &std::path::Path, text: &str, param: &str) -> SweepFiles {
    let f = d.join("s.toml");
    std::fs::write(&f, text).unwrap();
    let out = d.join("out");
    let (code, stdout, err) = sim(&["sweep", &s(&f), "--param", param, "--threads", "1", "--out", &s(&out)]);
    assert_eq!(code, 0, "{stdout}{err}");
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let mut lines = csv.lines().map(|l| l.split(',').map(str::to_string).collect::<Vec<_>>());
    let header = lines.next().unwrap();
    let json: Value = serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    let reader = SerializedFileReader::try_from(out.join("sweep.parquet").as_path()).unwrap();
    let parquet = reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| r.unwrap().get_column_iter().map(|(n, f)| (n.clone(), f.clone())).collect())
        .collect();
    (header, lines.collect(), json, parquet)
}

fn column(header: &[String], name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

fn parquet_field<'a>(row: &'a [(String, Field)], name: &str) -> &'a Field {
    &row.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no column {name}")).1
}

#[test]
fn a_scheduled_sweep_writes_double_executions_in_every_table() {
    let d = cli::fresh_dir("sweep-double-executions", "scheduled");
    let (header, rows, json, parquet) = sweep(&d, SCHEDULED, "workload.hold_ms=10000,5000");
    // Appended: the older columns keep their positions, failing_seeds included.
    let tail: Vec<&str> = header[header.len() - 5..].iter().map(String::as_str).collect();
    assert_eq!(tail, ["failing_seeds", APPENDED[0], APPENDED[1], APPENDED[2], APPENDED[3]]);
    assert_eq!(rows.len(), 4, "two points × two variants");
    let (label, runs) = (column(&header, "label"), column(&header, "runs"));
    let (de_runs, de_rate) = (column(&header, APPENDED[0]), column(&header, APPENDED[1]));
    let points = json["points"].as_array().unwrap();
    for (i, row) in rows.iter().enumerate() {
        let twice = row[label] == "twice";
        assert_eq!(row[runs], "2");
        assert_eq!(row[de_runs], if twice { "2" } else { "0" }, "{row:?}");
        assert_eq!(row[de_rate], if twice { "1" } else { "0" }, "{row:?}");
        let summary = &points[i / 2]["rows"][i % 2];
        assert_eq!(summary["label"], row[label].as_str());
        assert_eq!(summary["double_executions_runs"], if twice { 2 } else { 0 });
        assert_eq!(summary["double_executions_rate"].as_f64(), Some(if twice { 1.0 } else { 0.0 }));
        assert!(summary["double_executions_ci95_hi"].as_f64().is_some_and(|hi| hi > 0.0), "{summary}");
        assert_eq!(parquet_field(&parquet[i], APPENDED[0]), &Field::Long(if twice { 2 } else { 0 }));
        assert_eq!(parquet_field(&parquet[i], APPENDED[1]), &Field::Double(if twice { 1.0 } else { 0.0 }));
    }
    // The same numbers as `sim run --json` gives for that row.
    let (f, r) = (d.join("s.toml"), d.join("r.json"));
    let (code, _, err) = sim(&["run", &s(&f), "--threads", "1", "--json", &s(&r)]);
    assert_eq!(code, 0, "{err}");
    let results: Value = serde_json::from_str(&std::fs::read_to_string(&r).unwrap()).unwrap();
    let twice = &results["algorithms"][0]["double_executions"];
    assert_eq!(points[0]["rows"][0]["double_executions_runs"], twice["runs"]);
    assert_eq!(points[0]["rows"][0]["double_executions_ci95_lo"], twice["ci95"][0]);
}

#[test]
fn a_loop_sweep_leaves_the_double_execution_cells_empty() {
    let d = cli::fresh_dir("sweep-double-executions", "loop");
    let (header, rows, json, parquet) = sweep(&d, LOOP, "workload.clients=2,3");
    for name in APPENDED {
        let k = column(&header, name);
        assert!(rows.iter().all(|r| r[k].is_empty()), "{name}: no data, not 0");
        assert!(parquet.iter().all(|r| parquet_field(r, name) == &Field::Null));
        assert!(json["points"][0]["rows"][0].get(name).is_none(), "left out of sweep.json like the results JSON");
    }
}
