//! Golden trace hashes: seeds 0 and 1 of every row of every shipped scenario
//! (`scenarios/*.toml`, `scenarios/known/*.toml`) run in process with their full trace, and each
//! trace hash must equal the one pinned in `tests/golden/trace-hashes.txt`. Any change to what a
//! seed does (a model, the engine, a random draw, the fault schedule, the trace's text) changes
//! some hash, so a behaviour change can never slip in unnoticed; the determinism tests only check
//! that a run repeats itself.
//!
//! When a change is meant, re-bless: `LOCKSIM_BLESS=1 cargo test --test integration golden::`
//! rewrites the file from the current code (and prints which entries changed), to be committed
//! with the change that explains it (docs/testing.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use locksim_simulator::batch::run_seed;
use locksim_simulator::run::RunOptions;
use locksim_simulator::scenario::load_file;
use rayon::prelude::*;

/// The seeds pinned for every row.
const SEEDS: [u64; 2] = [0, 1];

/// The golden file, relative to the repository.
const GOLDEN: &str = "tests/golden/trace-hashes.txt";

const HEADER: &str = "\
# Golden trace hashes: seeds 0 and 1 of every row of every shipped scenario (tests/golden.rs).
# One line per file, label and seed: FILE LABEL SEED HASH (the trace hash, as `sim run --verify`
# computes it). Do not edit by hand: when a change to what seeds do is meant, regenerate with
#   LOCKSIM_BLESS=1 cargo test --test integration golden::
# and commit this file with the change.
";

/// One pinned seed: (file relative to the repository, row label, seed).
type Entry = (String, String, u64);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn shipped() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["scenarios", "scenarios/known"] {
        let rd = std::fs::read_dir(root().join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
        files
            .extend(rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "toml")));
    }
    files.sort();
    files
}

/// The trace hash of every pinned seed, as the current code runs it; a seed that panics is an
/// `Err` with the panic's message.
fn current() -> BTreeMap<Entry, Result<u64, String>> {
    let models = locksim_algorithms::registry();
    let mut jobs = Vec::new();
    for path in shipped() {
        let scenario = load_file(&path, &models).unwrap_or_else(|e| panic!("{e}"));
        let file = path.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
        let scenario = std::sync::Arc::new(scenario);
        for i in 0..scenario.runs.len() {
            for seed in SEEDS {
                jobs.push((file.clone(), scenario.clone(), i, seed));
            }
        }
    }
    jobs.into_par_iter()
        .map(|(file, scenario, i, seed)| {
            let run = &scenario.runs[i];
            let hash = run_seed(&scenario, run, seed, &RunOptions { trace: true }).map(|out| out.trace_hash);
            ((file, run.label.clone(), seed), hash)
        })
        .collect()
}

fn render(hashes: &BTreeMap<Entry, u64>) -> String {
    let mut text = HEADER.to_string();
    for ((file, label, seed), hash) in hashes {
        text.push_str(&format!("{file} {label} {seed} {hash:016x}\n"));
    }
    text
}

/// Reads the golden file: `FILE LABEL SEED HASH` per line, `#` comments and blank lines skipped.
fn parse(text: &str) -> Result<BTreeMap<Entry, u64>, String> {
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let bad = || format!("{GOLDEN}:{}: expected `FILE LABEL SEED HASH`, found `{line}`", n + 1);
        let [file, label, seed, hash] = fields[..] else { return Err(bad()) };
        let seed = seed.parse().map_err(|_| bad())?;
        let hash = u64::from_str_radix(hash, 16).map_err(|_| bad())?;
        out.insert((file.to_string(), label.to_string(), seed), hash);
    }
    Ok(out)
}

/// What differs between the golden file and the current hashes, one line per entry.
fn differences(golden: &BTreeMap<Entry, u64>, now: &BTreeMap<Entry, u64>) -> Vec<String> {
    let mut out = Vec::new();
    for (entry @ (file, label, seed), hash) in now {
        match golden.get(entry) {
            Some(g) if g == hash => {}
            Some(g) => out.push(format!(
                "{file} {label} seed {seed}: golden {g:016x}, now {hash:016x} \
                 (replay: sim run {file} --algorithm {label} --seed {seed} --trace)"
            )),
            None => out.push(format!("{file} {label} seed {seed}: not in the golden file (a new row?)")),
        }
    }
    for (file, label, seed) in golden.keys().filter(|e| !now.contains_key(*e)) {
        out.push(format!("{file} {label} seed {seed}: in the golden file, no longer shipped"));
    }
    out
}

#[test]
fn trace_hashes_of_seeds_0_and_1_of_every_shipped_row_match_the_golden_file() {
    let results = current();
    let panics: Vec<String> = results
        .iter()
        .filter_map(|((file, label, seed), r)| r.as_ref().err().map(|m| format!("{file} {label} seed {seed}: {m}")))
        .collect();
    assert!(panics.is_empty(), "seeds panicked (nothing pinned):\n  {}", panics.join("\n  "));
    let now: BTreeMap<Entry, u64> = results.into_iter().map(|(e, r)| (e, r.expect("no panic"))).collect();
    let path = root().join(GOLDEN);
    let golden_text = std::fs::read_to_string(&path).unwrap_or_default();

    if std::env::var_os("LOCKSIM_BLESS").is_some_and(|v| !v.is_empty() && v != "0") {
        let before = parse(&golden_text).unwrap_or_default();
        let changed = differences(&before, &now);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        // Written beside and renamed, so an interrupted bless never leaves half a file.
        let tmp = path.with_extension("txt.tmp");
        std::fs::write(&tmp, render(&now)).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        eprintln!("blessed {GOLDEN}: {} entries, {} changed", now.len(), changed.len());
        for c in &changed {
            eprintln!("  {c}");
        }
        return;
    }

    let golden = parse(&golden_text).unwrap_or_else(|e| panic!("{e}"));
    let diff = differences(&golden, &now);
    assert!(
        diff.is_empty(),
        "{} of {} golden trace hashes differ from {GOLDEN}:\n  {}\n\n\
         If every difference is meant (a model, the engine or a random draw changed on purpose), \
         re-bless and commit the file with the change:\n  LOCKSIM_BLESS=1 cargo test --test integration golden::\n\
         Otherwise the change altered what these seeds do: replay one with the command shown.",
        diff.len(),
        now.len().max(golden.len()),
        diff.join("\n  ")
    );
}

/// The file format round-trips, and each kind of difference is reported by name.
#[test]
fn the_golden_file_format_round_trips_and_differences_are_named() {
    let mut a = BTreeMap::new();
    a.insert(("scenarios/x.toml".to_string(), "db".to_string(), 0), 0x0123_4567_89ab_cdefu64);
    a.insert(("scenarios/x.toml".to_string(), "redis".to_string(), 1), 7);
    assert_eq!(parse(&render(&a)).unwrap(), a);
    assert!(parse("scenarios/x.toml db 0\n").unwrap_err().contains(":1: expected"));

    let mut b = a.clone();
    b.insert(("scenarios/x.toml".to_string(), "db".to_string(), 0), 1);
    b.remove(&("scenarios/x.toml".to_string(), "redis".to_string(), 1));
    b.insert(("scenarios/y.toml".to_string(), "etcd".to_string(), 0), 2);
    let diff = differences(&a, &b);
    assert_eq!(diff.len(), 3, "{diff:?}");
    assert!(diff[0].contains("golden 0123456789abcdef, now 0000000000000001"), "{diff:?}");
    assert!(diff[0].contains("--algorithm db --seed 0"), "{diff:?}");
    assert!(diff[1].contains("not in the golden file"), "{diff:?}");
    assert!(diff[2].contains("no longer shipped"), "{diff:?}");
}
