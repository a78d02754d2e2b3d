//! The `sim` commands' work, in process (`locksim_campaign::command`): what the binary's tests
//! once had to spawn `sim` for. A run's shards merged write the results JSON the whole run
//! writes, byte for byte, and end in its class; a raised stop flag ends a run interrupted with
//! its results marked; bad options are refused as bad input, naming the option, before any
//! work; a sweep writes its files and checks every point's labels first.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use locksim_campaign::command::merge::{merge, MergeOptions};
use locksim_campaign::command::run::{run, RunOptions};
use locksim_campaign::command::sweep::{sweep, SweepOptions};
use locksim_campaign::{Class, CommandError};

/// Redlock (no token) with its holder paused past its TTL, and the database lock: Redlock
/// overlaps on most seeds, so `overlap = "none"` fails for it (exit 1); the database lock holds.
const SCENARIO: &str = concat!(
    "name = \"commands-test\"\nduration_ms = 2000\nseeds = 12\nalgorithms = [\"redlock\", \"db\"]\n\n",
    paused_redlock_beside_db!(),
    r#"
[expect.redlock]
overlap = "none"

[expect.db]
overlap = "none"
"#
);

/// A fresh directory holding the scenario as `s.toml`.
fn dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("locksim-commands-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("s.toml"), SCENARIO).expect("scenario written");
    dir
}

fn run_with(opts: RunOptions, stop: bool) -> Result<Class, CommandError> {
    run(&opts, &locksim_algorithms::registry(), &AtomicBool::new(stop))
}

fn options(dir: &Path) -> RunOptions {
    RunOptions { file: dir.join("s.toml"), threads: Some(2), ..RunOptions::default() }
}

#[test]
fn shards_merged_write_the_results_json_of_the_whole_run_and_end_in_its_class() {
    let dir = dir("shards");
    let whole = dir.join("whole.json");
    let class = run_with(RunOptions { json: Some(whole.clone()), ..options(&dir) }, false).expect("the run");
    assert_eq!(class, Class::ExpectationFailed, "Redlock overlaps: its `overlap = none` fails");
    let parts: Vec<PathBuf> = (0..3).map(|k| dir.join(format!("part-{k}.json"))).collect();
    for (k, part) in parts.iter().enumerate().rev() {
        let shard = RunOptions { json: Some(part.clone()), shard: Some(format!("{k}/3")), ..options(&dir) };
        assert_eq!(run_with(shard, false), Ok(Class::Passed), "a shard judges nothing");
    }
    let merged = dir.join("merged.json");
    let opts = MergeOptions { parts, json: Some(merged.clone()), ..MergeOptions::default() };
    assert_eq!(merge(&opts, &locksim_algorithms::registry()), Ok(Class::ExpectationFailed));
    let (whole, merged) = (std::fs::read_to_string(&whole).unwrap(), std::fs::read_to_string(&merged).unwrap());
    assert!(whole.contains("\"label\": \"redlock\""), "{whole}");
    assert_eq!(merged, whole, "merged shards are byte-identical to the whole run");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_raised_stop_flag_ends_the_run_interrupted_with_its_results_marked() {
    let dir = dir("stop");
    let json = dir.join("r.json");
    let class = run_with(RunOptions { json: Some(json.clone()), ..options(&dir) }, true).expect("the run");
    assert_eq!(class, Class::Interrupted);
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(text.contains("\"interrupted\": true"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_options_are_refused_as_bad_input_before_any_work() {
    let dir = dir("bad");
    let refused = |opts: RunOptions| match run_with(opts, false) {
        Err(CommandError::BadInput(message)) => message,
        other => panic!("expected bad input, got {other:?}"),
    };
    let empty = refused(RunOptions { seeds: Some("4..4".into()), ..options(&dir) });
    assert!(empty.starts_with("--seeds 4..4: the range is empty"), "{empty}");
    let trace = refused(RunOptions { trace: Some(None), seeds: Some("3".into()), ..options(&dir) });
    assert_eq!(trace, "--trace records one seed, but 3 seeds were asked for; add --seed S");
    let json = dir.join("never.json");
    let shard = refused(RunOptions { shard: Some("3/2".into()), json: Some(json.clone()), ..options(&dir) });
    assert!(shard.contains("3/2"), "{shard}");
    let label = refused(RunOptions { algorithms: vec!["nope".into()], ..options(&dir) });
    assert!(label.contains("nope"), "{label}");
    let input = refused(RunOptions { json: Some(dir.join("s.toml")), ..options(&dir) });
    assert!(input.contains("is the input file"), "{input}");
    assert!(!json.exists(), "nothing was written");
    assert_eq!(std::fs::read_to_string(dir.join("s.toml")).unwrap(), SCENARIO);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_sweep_writes_its_files_and_refuses_a_label_missing_at_a_point() {
    let dir = dir("sweep");
    let out = dir.join("out");
    let opts = SweepOptions {
        file: dir.join("s.toml"),
        params: vec!["models.redlock.ttl_ms=400,800".into()],
        seeds: Some("4".into()),
        algorithms: vec!["redlock".into()],
        threads: Some(2),
        out: out.clone(),
        ..SweepOptions::default()
    };
    let models = locksim_algorithms::registry();
    assert_eq!(sweep(&opts, &models, &AtomicBool::new(false)), Ok(Class::Passed), "a sweep judges no [expect]");
    let csv = std::fs::read_to_string(out.join("sweep.csv")).expect("sweep.csv");
    assert_eq!(csv.lines().count(), 3, "a header and one line per point: {csv}");
    assert!(csv.lines().nth(1).unwrap().starts_with("400,redlock,4,"), "{csv}");
    let missing = SweepOptions { algorithms: vec!["etcd".into()], out: dir.join("other"), ..opts };
    match sweep(&missing, &models, &AtomicBool::new(false)) {
        Err(CommandError::BadInput(message)) => assert!(message.contains("etcd"), "{message}"),
        other => panic!("expected bad input, got {other:?}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
