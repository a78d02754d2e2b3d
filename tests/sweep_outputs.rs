//! What `sim sweep` writes scales with the sweep: `sweep.json` holds a summary per row (the full
//! results rows only with `--full`), `sweep.parquet` holds the CSV's rows with typed columns and
//! reads back (with the parquet crate's own reader) to the CSV's values, and the bytes written
//! per point keep a 10 000-point sweep under 50 MB. Scenarios are small (1 s, 2 seeds).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::Value;

use crate::support::cli::{self, sim};

/// A fresh directory for one test.
fn dir(test: &str) -> cli::TestDir {
    cli::fresh_dir("sweep-outputs", test)
}

/// Redlock (no fencing: empty cells) and the database lock; the holder pauses for 600 ms, so
/// short TTLs fail and write their point's scenario, as a real sweep's failing points do.
const SCENARIO: &str = r#"name = "outputs-test"
duration_ms = 1000
seeds = 2
algorithms = ["redlock", "db"]

[models.redlock]
ttl_ms = 1000

[workload]
clients = 3

[[faults]]
kind = "pause"
target = "holder"
at_ms = 200
duration_ms = 600
"#;

/// Runs a sweep of SCENARIO into `d/NAME` with these `--param`s and extra flags; returns the
/// output directory.
fn sweep(d: &Path, name: &str, params: &[&str], extra: &[&str]) -> PathBuf {
    let f = d.join("s.toml");
    std::fs::write(&f, SCENARIO).unwrap();
    let out = d.join(name);
    let (f, o) = (f.display().to_string(), out.display().to_string());
    let mut args = vec!["sweep", f.as_str()];
    for p in params {
        args.extend(["--param", p]);
    }
    if !extra.contains(&"--threads") {
        args.extend(["--threads", "1"]);
    }
    args.extend(["--out", o.as_str()]);
    args.extend(extra);
    let (code, stdout, err) = sim(&args);
    assert_eq!(code, 0, "{stdout}{err}");
    out
}

/// Every file under `dir` (relative path → size in bytes).
fn sizes(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::metadata(&p).unwrap().len());
            }
        }
    }
    out
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_10000_point_sweep_stays_under_50_mb() {
    let d = dir("size");
    // Two sweeps, 10 and 20 points: what the tables grow by is what a point costs. The charts are a fixed set of images whose size does not follow the point
    // count (a PNG may even shrink), so they count once, at their larger size.
    let small = sizes(&sweep(&d, "p10", &["models.redlock.ttl_ms=100..1000:100"], &[]));
    let large = sizes(&sweep(&d, "p20", &["models.redlock.ttl_ms=100..2000:100"], &[]));
    let is_chart = |name: &str| name.ends_with(".png") || name.ends_with(".svg");
    let grown = |name: &str| large[name].saturating_sub(small.get(name).copied().unwrap_or(0));
    let tables: Vec<&String> = large.keys().filter(|k| !is_chart(k) && !k.starts_with("points/")).collect();
    // Only the short TTLs fail here; a sweep may fail at every point, each writing its scenario.
    let scenario_bytes = large["points/point-0.toml"];
    let per_point = tables.iter().map(|k| grown(k)).sum::<u64>() as f64 / 10.0 + scenario_bytes as f64;
    let charts: u64 = large.iter().filter(|(k, _)| is_chart(k)).map(|(k, v)| *v.max(&small[k.as_str()])).sum();
    let fixed: f64 = charts as f64 + tables.iter().map(|k| small[k.as_str()]).sum::<u64>() as f64;
    let at_10000 = fixed + 10_000.0 * per_point;
    eprintln!("per point {per_point:.0} B, fixed {fixed:.0} B, 10 000 points ≈ {:.1} MB", at_10000 / 1e6);
    for k in &tables {
        eprintln!("  {k}: {} B a point", grown(k) as f64 / 10.0);
    }
    // The progress record is only for resuming: a finished sweep removes it.
    assert_eq!(tables.len(), 3, "sweep.csv, sweep.json, sweep.parquet: {large:?}");
    assert!(large.keys().any(|k| k.starts_with("points/")), "short TTLs fail and write their scenario");
    assert!(per_point > scenario_bytes as f64, "more points write more");
    assert!(at_10000 < 50e6, "10 000 points would write {at_10000} bytes ({per_point} per point, {fixed} once)");
    // sweep.json alone: a summary per row is well under the 85 KB a full point weighs.
    let json_per_point = grown("sweep.json") as f64 / 10.0;
    assert!(json_per_point < 2_000.0, "sweep.json grows {json_per_point} bytes a point");
}

/// The CSV's cells, split (this test's cells hold no commas or quotes).
fn csv_rows(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    (header, lines.map(|l| l.split(',').map(String::from).collect()).collect())
}

/// Every row of `sweep.parquet` through the parquet crate's record reader: (column, value).
fn parquet_rows(path: &Path) -> Vec<Vec<(String, Field)>> {
    let reader = SerializedFileReader::try_from(path).expect("sweep.parquet opens");
    let rows = reader.get_row_iter(None).expect("rows");
    rows.map(|r| r.expect("a row").get_column_iter().map(|(n, f)| (n.clone(), f.clone())).collect()).collect()
}

/// Asserts that `sweep.parquet` in `out` holds the CSV's rows, cell for cell, with integers as
/// INT64, numbers as DOUBLE, an empty cell as null and text as strings; returns the Parquet
/// rows.
fn assert_parquet_is_the_csv(out: &Path) -> Vec<Vec<(String, Field)>> {
    let (header, csv) = csv_rows(&out.join("sweep.csv"));
    let rows = parquet_rows(&out.join("sweep.parquet"));
    assert_eq!(rows.len(), csv.len());
    for (row, cells) in rows.iter().zip(&csv) {
        let names: Vec<&str> = row.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, header.iter().map(String::as_str).collect::<Vec<_>>());
        for ((name, field), cell) in row.iter().zip(cells) {
            match field {
                Field::Null => assert_eq!(cell, "", "{name}"),
                Field::Long(i) => assert_eq!(&i.to_string(), cell, "{name}"),
                Field::Double(x) => assert_eq!(cell.parse::<f64>().ok(), Some(*x), "{name}: {cell}"),
                Field::Bool(b) => assert_eq!(&b.to_string(), cell, "{name}"),
                Field::Str(s) => assert_eq!(s, cell, "{name}"),
                other => panic!("{name}: unexpected Parquet value {other:?}"),
            }
        }
    }
    rows
}

/// The Parquet value of column `name` in a row.
fn get<'a>(row: &'a [(String, Field)], name: &str) -> &'a Field {
    &row.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no column {name}")).1
}

#[test]
fn parquet_reads_back_as_the_csv_with_typed_columns() {
    let d = dir("parquet");
    let out = sweep(&d, "out", &["workload.hold_ms=0.5,1.5", "models.redlock.ttl_ms=300,2000"], &[]);
    let rows = assert_parquet_is_the_csv(&out);
    assert_eq!(rows.len(), 2 * 2 * 2);
    let first = &rows[0];
    assert_eq!(get(first, "workload.hold_ms"), &Field::Double(0.5), "a float parameter is DOUBLE");
    assert_eq!(get(first, "models.redlock.ttl_ms"), &Field::Long(300), "an integer parameter is INT64");
    assert_eq!(get(first, "label"), &Field::Str("redlock".into()));
    assert_eq!(get(first, "runs"), &Field::Long(2));
    assert!(matches!(get(first, "overlap_runs"), Field::Long(_)), "counts are INT64");
    assert!(matches!(get(first, "overlap_rate"), Field::Double(_)), "rates are DOUBLE");
    assert_eq!(get(first, "stale_fenced_rate"), &Field::Null, "redlock cannot be fenced: null, not 0");
    assert!(matches!(get(&rows[1], "stale_fenced_rate"), Field::Double(_)), "the db lock is fenced");
    // The 300 ms TTL points fail (the 600 ms pause outlives the key): seeds as the CSV writes them.
    assert!(rows.iter().any(|r| matches!(get(r, "failing_seeds"), Field::Str(s) if !s.is_empty())));

    // A string parameter is a string column; the bigger sweep of the size test reads back too.
    let list = sweep(&d, "list", &["faults.0.target=holder,client-0", "models.redlock.ttl_ms=100..1000:100"], &[]);
    let rows = assert_parquet_is_the_csv(&list);
    assert_eq!(get(&rows[0], "faults.0.target"), &Field::Str("holder".into()));
}

#[test]
fn full_keeps_the_whole_rows_and_the_summaries_agree_with_them() {
    let d = dir("full");
    let params = ["models.redlock.ttl_ms=300,2000"];
    let summary = sweep(&d, "summary", &params, &[]);
    let full = sweep(&d, "full", &params, &["--full"]);
    let (s, f) = (read_json(&summary.join("sweep.json")), read_json(&full.join("sweep.json")));
    for (sp, fp) in s["points"].as_array().unwrap().iter().zip(f["points"].as_array().unwrap()) {
        assert!(sp.get("results").is_none() && fp.get("rows").is_none());
        assert_eq!(sp["values"], fp["values"]);
        let (rows, results) = (sp["rows"].as_array().unwrap(), fp["results"].as_array().unwrap());
        assert_eq!(rows.len(), 2);
        for (row, whole) in rows.iter().zip(results) {
            // The full row is the results JSON's: CDF, params and all.
            assert!(!whole["acquire_latency_cdf_ms"].as_array().unwrap().is_empty(), "{whole}");
            assert!(whole.get("params").is_some() && whole.get("messages").is_some());
            assert_eq!(row["label"], whole["label"]);
            assert_eq!(row["runs"], whole["runs"]);
            assert_eq!(row["overlap_runs"], whole["overlap"]["runs"]);
            assert_eq!(row["overlap_rate"], whole["overlap"]["rate"]);
            assert_eq!(row["overlap_ci95_hi"], whole["overlap"]["ci95"][1]);
            assert_eq!(row["acquire_latency_ms_p99"], whole["acquire_latency_ms"]["p99"]);
            assert_eq!(row["messages_per_acquisition"], whole["messages_per_acquisition"]);
            assert_eq!(row["failing_seeds"], whole["failing_seeds"]);
            assert!(row.get("acquire_latency_cdf_ms").is_none());
        }
    }
    assert!(
        std::fs::metadata(full.join("sweep.json")).unwrap().len()
            > 4 * std::fs::metadata(summary.join("sweep.json")).unwrap().len(),
        "the summaries are much smaller than the full rows"
    );
    // --full changes sweep.json only.
    for name in ["sweep.csv", "sweep.parquet"] {
        assert_eq!(std::fs::read(summary.join(name)).unwrap(), std::fs::read(full.join(name)).unwrap(), "{name}");
    }
}

#[test]
fn the_same_sweep_writes_the_same_parquet_bytes() {
    let d = dir("determinism");
    let params = ["models.redlock.ttl_ms=300..900:300", "workload.clients=2,3"];
    let a = sweep(&d, "a", &params, &[]);
    let b = sweep(&d, "b", &params, &["--threads", "2"]);
    let bytes = std::fs::read(a.join("sweep.parquet")).unwrap();
    assert_eq!(bytes, std::fs::read(b.join("sweep.parquet")).unwrap());
    // sweep.json names the output directory (a point's scenario_file), so compare the CSV too.
    assert_eq!(std::fs::read(a.join("sweep.csv")).unwrap(), std::fs::read(b.join("sweep.csv")).unwrap());
    // The footer names no library version or time: a fixed writer name and no extra metadata.
    let reader = SerializedFileReader::try_from(a.join("sweep.parquet").as_path()).unwrap();
    let meta = reader.metadata().file_metadata();
    assert_eq!(meta.created_by(), Some("locksim sim sweep"));
    assert!(meta.key_value_metadata().is_none());
    assert_eq!(meta.num_rows(), 3 * 2 * 2);
}

#[test]
fn merge_full_keeps_the_whole_rows_of_sharded_sweeps() {
    let d = dir("merge");
    let params = ["models.redlock.ttl_ms=300,2000"];
    let one = sweep(&d, "one", &params, &["--full"]);
    let parts = sweep(&d, "parts", &params, &["--shard", "0/2"]);
    sweep(&d, "parts", &params, &["--shard", "1/2"]);
    let part = |k: u32| parts.join(format!("shard-{k}-of-2.json")).display().to_string();
    let merged = d.join("merged");
    let (code, stdout, err) = sim(&["merge", &part(0), &part(1), "--out", &merged.display().to_string(), "--full"]);
    assert_eq!(code, 0, "{stdout}{err}");
    let json = read_json(&merged.join("sweep.json"));
    for p in json["points"].as_array().unwrap() {
        assert!(p.get("rows").is_none(), "{p}");
        assert!(!p["results"][0]["acquire_latency_cdf_ms"].as_array().unwrap().is_empty(), "{p}");
    }
    for name in ["sweep.csv", "sweep.parquet"] {
        assert_eq!(std::fs::read(one.join(name)).unwrap(), std::fs::read(merged.join(name)).unwrap(), "{name}");
    }
    // --full is for sweep parts, which write to --out; a shard writes no sweep.json.
    let (code, _, err) = sim(&["merge", &part(0), &part(1), "--full"]);
    assert_eq!(code, 2, "{err}");
    let f = d.join("s.toml").display().to_string();
    let (code, _, err) = sim(&[
        "sweep",
        &f,
        "--param",
        params[0],
        "--shard",
        "0/2",
        "--full",
        "--out",
        &d.join("x").display().to_string(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--full") && err.contains("--shard"), "{err}");
}
