//! Shards and their partial results files: `sim run … --shard K/N` and `sim sweep … --shard K/N`
//! run one part of the seeds and write a [`PartialResults`] file; `sim merge` checks that the
//! parts belong together ([`check_parts`]) and folds them ([`merge_rows`]) into the totals one
//! machine would have folded, so the results it writes are byte-identical to a single run's.
//!
//! The split ([`Shard::seeds`]): shard K of N runs a contiguous block of the seed range, the
//! K-th of N blocks whose sizes differ by at most one (`from + len·K/N` up to `from +
//! len·(K+1)/N`). A sweep splits the seeds of every point the same way, so each shard runs every
//! point over its block. Shards share nothing: any one can be re-run alone to replace a lost one.
//!
//! Merging is exact because every folded quantity is an integer, an extreme, a histogram of
//! integer counts or a capped list in seed order ([`AlgorithmTotals::absorb`]), and the partial
//! file stores that state exactly ([`crate::exact`]).

use std::ops::Range;
use std::path::Path;

use locksim_simulator::scenario::{RunSpec, Scenario};
use serde::{Deserialize, Serialize};

use crate::json::{params_json, SeedRange};
use crate::AlgorithmTotals;

/// The partial file format this build writes and reads.
pub const FORMAT: u32 = 1;
/// `kind` of a `sim run --shard` partial file.
pub const KIND_RUN: &str = "locksim-partial-run";
/// `kind` of a `sim sweep --shard` partial file.
pub const KIND_SWEEP: &str = "locksim-partial-sweep";

/// Shard `index` (0-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which shard, from 0.
    pub index: u64,
    /// How many shards in all.
    pub count: u64,
}

impl Shard {
    /// Parses `K/N` (0 ≤ K < N); the error says what was expected.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = |why: &str| format!("--shard {text}: {why}; expected K/N with 0 <= K < N, e.g. --shard 0/4");
        let (k, n) = text.split_once('/').ok_or_else(|| bad("no `/`"))?;
        let num = |s: &str| s.trim().parse::<u64>().map_err(|_| bad("not a whole number"));
        let (index, count) = (num(k)?, num(n)?);
        if count == 0 {
            return Err(bad("N must be at least 1"));
        }
        if index >= count {
            return Err(bad("K must be below N (shards are numbered from 0)"));
        }
        Ok(Shard { index, count })
    }

    /// This shard's block of `all`: the K-th of N contiguous blocks whose sizes differ by at most
    /// one (empty when there are fewer seeds than shards).
    pub fn seeds(&self, all: Range<u64>) -> Range<u64> {
        let len = (all.end - all.start) as u128;
        let at = |k: u64| all.start + (len * k as u128 / self.count as u128) as u64;
        at(self.index)..at(self.index + 1)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A 64-bit FNV-1a hash of `text`, in hex: a short name for a scenario text in messages (the
/// files compare the whole text).
pub fn text_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// What a set of parts (or a sweep and the record it resumes) must share to belong together.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The `sim` version that wrote the file.
    pub version: String,
    /// The scenario file as the user named it.
    pub file: String,
    /// [`text_hash`] of `scenario_text`.
    pub scenario_hash: String,
    /// The scenario file's text, as run.
    pub scenario_text: String,
    /// Every seed of the whole run (not just this shard's).
    pub seeds: SeedRange,
    /// `--algorithm` labels (empty: every row).
    pub algorithms: Vec<String>,
    /// `sim sweep`'s `--param`s as written (empty for `sim run`).
    #[serde(default)]
    pub params: Vec<String>,
}

impl Origin {
    /// The origin of a run of `scenario_text` (read from `file`) by this `version`.
    pub fn new(
        version: &str,
        file: &str,
        scenario_text: &str,
        seeds: Range<u64>,
        algorithms: &[String],
        params: &[String],
    ) -> Self {
        Origin {
            version: version.to_string(),
            file: file.to_string(),
            scenario_hash: text_hash(scenario_text),
            scenario_text: scenario_text.to_string(),
            seeds: SeedRange { from: seeds.start, to: seeds.end },
            algorithms: algorithms.to_vec(),
            params: params.to_vec(),
        }
    }

    /// The seed range as a `Range`.
    pub fn seed_range(&self) -> Range<u64> {
        self.seeds.from..self.seeds.to
    }

    /// How `other` differs from `self` (the first difference, in words), or `None`. The scenario
    /// is the same when its text is: the file's name as typed (`./s.toml`, `s.toml`, an absolute
    /// path) is not compared; the merged results name shard 0's.
    pub fn difference(&self, other: &Origin) -> Option<String> {
        let list = |v: &[String]| if v.is_empty() { "(all)".to_string() } else { v.join(" ") };
        if self.version != other.version {
            Some(format!("written by sim {}, not {}", other.version, self.version))
        } else if self.scenario_text != other.scenario_text || self.scenario_hash != other.scenario_hash {
            Some(format!(
                "a different scenario text (hash {}, not {})",
                text_hash(&other.scenario_text),
                text_hash(&self.scenario_text)
            ))
        } else if self.seeds != other.seeds {
            Some(format!("seeds {}..{}, not {}..{}", other.seeds.from, other.seeds.to, self.seeds.from, self.seeds.to))
        } else if self.algorithms != other.algorithms {
            Some(format!("--algorithm {}, not {}", list(&other.algorithms), list(&self.algorithms)))
        } else if self.params != other.params {
            Some(format!("--param {}, not {}", list(&other.params), list(&self.params)))
        } else {
            None
        }
    }
}

/// The totals of one sweep point's rows.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointState {
    /// The point's number (0-based, as in `sweep.json`).
    pub point: usize,
    /// One state per row, in the point's row order.
    pub rows: Vec<AlgorithmTotals>,
}

/// A shard's partial results file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PartialResults {
    /// [`KIND_RUN`] or [`KIND_SWEEP`].
    pub kind: String,
    /// [`FORMAT`].
    pub format: u32,
    /// What every part of the same run shares.
    #[serde(flatten)]
    pub origin: Origin,
    /// Which shard this is.
    pub shard: Shard,
    /// The seeds this shard ran ([`Shard::seeds`] of the origin's seeds).
    pub shard_seeds: SeedRange,
    /// `sim run`: one state per row.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<AlgorithmTotals>,
    /// `sim sweep`: every point, each with one state per row.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<PointState>,
    /// `sim run`: the shard was stopped (Ctrl-C, SIGTERM); each row holds only the first
    /// `seeds_finished` seeds of the block, as an interrupted run's results JSON does. Absent in
    /// a whole part (and in files written before parts could be cut).
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupted: bool,
    /// With `interrupted`: the seeds each row finished (a prefix of the block, rows in order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seeds_finished: Vec<u64>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl PartialResults {
    /// A `sim run` shard's file.
    pub fn run(origin: Origin, shard: Shard, totals: &[AlgorithmTotals]) -> Self {
        let s = shard.seeds(origin.seed_range());
        PartialResults {
            kind: KIND_RUN.into(),
            format: FORMAT,
            origin,
            shard,
            shard_seeds: SeedRange { from: s.start, to: s.end },
            rows: totals.to_vec(),
            points: Vec::new(),
            interrupted: false,
            seeds_finished: Vec::new(),
        }
    }

    /// A `sim run` shard's file for a shard that was stopped: each row of `totals` holds the
    /// first seeds of the block only, and the file says how many.
    pub fn run_interrupted(origin: Origin, shard: Shard, totals: &[AlgorithmTotals]) -> Self {
        PartialResults {
            interrupted: true,
            // A panicked seed finished too, as in the results JSON's `seeds_finished`.
            seeds_finished: totals.iter().map(|t| t.runs + t.panicked_runs).collect(),
            ..PartialResults::run(origin, shard, totals)
        }
    }

    /// The seeds of this part's block that row `row` did not finish (empty for a whole part).
    pub fn missing_seeds(&self, row: usize) -> Range<u64> {
        let done = if self.interrupted { self.seeds_finished.get(row).copied().unwrap_or(0) } else { u64::MAX };
        let from = self.shard_seeds.from.saturating_add(done).min(self.shard_seeds.to);
        from..self.shard_seeds.to
    }

    /// A `sim sweep` shard's file: `points[i]` holds point i's rows.
    pub fn sweep(origin: Origin, shard: Shard, points: Vec<PointState>) -> Self {
        let s = shard.seeds(origin.seed_range());
        PartialResults {
            kind: KIND_SWEEP.into(),
            format: FORMAT,
            origin,
            shard,
            shard_seeds: SeedRange { from: s.start, to: s.end },
            rows: Vec::new(),
            points,
            interrupted: false,
            seeds_finished: Vec::new(),
        }
    }

    /// The file's text: pretty JSON with a trailing newline.
    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a partial results file serialises");
        s.push('\n');
        s
    }
}

/// A partial file as read, with the name to call it by in messages.
#[derive(Clone, Debug)]
pub struct Part {
    /// The path as given.
    pub name: String,
    /// Its content.
    pub partial: PartialResults,
}

/// Reads a partial results file; the error names the file and what is wrong with it.
pub fn read_part(path: &Path) -> Result<Part, String> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: cannot read the partial results: {e}"))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        format!("{name}: not a partial results file (not JSON: {e}); expected what `--shard K/N` writes")
    })?;
    let kind = value.get("kind").and_then(|k| k.as_str()).unwrap_or("");
    if kind != KIND_RUN && kind != KIND_SWEEP {
        return Err(format!(
            "{name}: not a partial results file (kind {kind:?}; expected {KIND_RUN:?} from `sim run --shard` or {KIND_SWEEP:?} from `sim sweep --shard`)"
        ));
    }
    let format = value.get("format").and_then(|f| f.as_u64());
    if format != Some(FORMAT as u64) {
        return Err(format!(
            "{name}: partial results format {}, but this sim reads format {FORMAT}; merge with the sim that wrote it",
            format.map_or("(none)".to_string(), |f| f.to_string())
        ));
    }
    let partial: PartialResults =
        serde_json::from_value(value).map_err(|e| format!("{name}: a damaged partial results file: {e}"))?;
    Ok(Part { name, partial })
}

/// Checks that `parts` are the shards of one run: the same kind, version, scenario text (not
/// the file's spelling), seeds, `--algorithm`s and `--param`s, the same N, each shard's seeds as [`Shard::seeds`]
/// gives them, and every shard 0..N present exactly once. Returns the parts in shard order; the
/// error names the file at fault (both files of a duplicate, every missing K).
pub fn check_parts(parts: &[Part]) -> Result<Vec<&Part>, String> {
    let Some(first) = parts.first() else {
        return Err("no partial results files given".into());
    };
    let (a, pa) = (&first.name, &first.partial);
    for part in &parts[1..] {
        let (b, pb) = (&part.name, &part.partial);
        if pb.kind != pa.kind {
            return Err(format!(
                "{b}: a {} file, but {a} is a {} file; merge the parts of one command",
                pb.kind, pa.kind
            ));
        }
        if let Some(why) = pa.origin.difference(&pb.origin) {
            return Err(format!("{b}: does not belong with {a}: {why}"));
        }
        if pb.shard.count != pa.shard.count {
            return Err(format!(
                "{b}: shard {}, but {a} is shard {}; every part must split into the same N",
                pb.shard, pa.shard
            ));
        }
    }
    let count = pa.shard.count;
    let mut by_index: Vec<Option<&Part>> = vec![None; count as usize];
    for part in parts {
        let p = &part.partial;
        let want = p.shard.seeds(p.origin.seed_range());
        if p.shard.index >= count || p.shard_seeds != (SeedRange { from: want.start, to: want.end }) {
            return Err(format!(
                "{}: shard {} should hold seeds {}..{} but holds {}..{}; a damaged or hand-edited file",
                part.name, p.shard, want.start, want.end, p.shard_seeds.from, p.shard_seeds.to
            ));
        }
        let slot = &mut by_index[p.shard.index as usize];
        if let Some(other) = slot {
            return Err(format!(
                "shard {} is given twice: {} and {}; give each shard once",
                p.shard, other.name, part.name
            ));
        }
        *slot = Some(part);
    }
    let missing: Vec<String> = by_index
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_none())
        .map(|(k, _)| {
            let s = Shard { index: k as u64, count }.seeds(pa.origin.seed_range());
            format!("{k}/{count} (seeds {}..{})", s.start, s.end)
        })
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "missing shard{} {} of {}; run {} again with --shard K/N and give its file too",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            pa.origin.file,
            if missing.len() == 1 { "it" } else { "each" }
        ));
    }
    Ok(by_index.into_iter().flatten().collect())
}

/// The rows `scenario` runs with the `--algorithm` filter `algorithms` (empty: all), in order.
pub fn selected_runs<'a>(scenario: &'a Scenario, algorithms: &[String]) -> Vec<&'a RunSpec> {
    scenario.runs.iter().filter(|r| algorithms.is_empty() || algorithms.contains(&r.label)).collect()
}

/// An empty row for `run` of `scenario`, as the seed runner starts one.
pub fn empty_row(scenario: &Scenario, run: &RunSpec) -> AlgorithmTotals {
    let model = run.model;
    AlgorithmTotals::new(&run.label, model.name(), params_json(&run.params.values), model.fenced(&run.params))
        .with_limitations(model.limitations(&run.params, &scenario.setup.workload))
        .with_library(model.library(&run.params))
}

/// `scenario`'s selected rows, each folded from `states` (one list of row states per part, in
/// seed order). The error names the part (`names`, parallel to `states`) that does not fit.
pub fn merge_rows(
    scenario: &Scenario,
    algorithms: &[String],
    states: &[&[AlgorithmTotals]],
    names: &[&str],
) -> Result<Vec<AlgorithmTotals>, String> {
    let runs = selected_runs(scenario, algorithms);
    let mut rows: Vec<AlgorithmTotals> = runs.iter().map(|r| empty_row(scenario, r)).collect();
    for (part, name) in states.iter().zip(names) {
        if part.len() != rows.len() {
            return Err(format!("{name}: holds {} rows, but the scenario runs {}", part.len(), rows.len()));
        }
        for (state, row) in part.iter().zip(rows.iter_mut()) {
            row.absorb_state(state).map_err(|e| format!("{name}: {e}"))?;
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_blocks_cover_the_seeds_once_in_order() {
        for (n_seeds, count) in [(10u64, 3u64), (2, 5), (7, 1), (100, 7)] {
            let all = 5..5 + n_seeds;
            let mut next = all.start;
            for index in 0..count {
                let s = Shard { index, count }.seeds(all.clone());
                assert_eq!(s.start, next, "{n_seeds} seeds, shard {index}/{count}");
                assert!(s.end - s.start <= n_seeds / count + 1);
                next = s.end;
            }
            assert_eq!(next, all.end);
        }
        assert_eq!(Shard { index: 1, count: 2 }.seeds(0..10), 5..10);
    }

    #[test]
    fn shard_syntax() {
        assert_eq!(Shard::parse("1/4"), Ok(Shard { index: 1, count: 4 }));
        assert!(Shard::parse("4/4").unwrap_err().contains("below N"));
        assert!(Shard::parse("0/0").unwrap_err().contains("at least 1"));
        assert!(Shard::parse("1").unwrap_err().contains("K/N"));
        assert!(Shard::parse("a/2").unwrap_err().contains("whole number"));
    }

    fn part(name: &str, index: u64, count: u64, text: &str) -> Part {
        let origin = Origin::new("0.1.0", "s.toml", text, 0..10, &[], &[]);
        Part { name: name.into(), partial: PartialResults::run(origin, Shard { index, count }, &[]) }
    }

    #[test]
    fn parts_must_be_complete_unique_and_alike() {
        let ok = [part("b", 1, 2, "x"), part("a", 0, 2, "x")];
        let sorted = check_parts(&ok).unwrap();
        assert_eq!(sorted.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        let e = check_parts(&[part("a", 0, 3, "x"), part("c", 2, 3, "x")]).unwrap_err();
        assert!(e.contains("missing shard 1/3 (seeds 3..6)"), "{e}");
        let e = check_parts(&[part("a", 0, 2, "x"), part("a2", 0, 2, "x")]).unwrap_err();
        assert!(e.contains("given twice: a and a2"), "{e}");
        let e = check_parts(&[part("a", 0, 2, "x"), part("f", 1, 2, "y")]).unwrap_err();
        assert!(e.starts_with("f: does not belong with a: a different scenario text"), "{e}");
        let mut v = part("v", 1, 2, "x");
        v.partial.origin.version = "9.9.9".into();
        let e = check_parts(&[part("a", 0, 2, "x"), v]).unwrap_err();
        assert!(e.contains("v: does not belong with a: written by sim 9.9.9"), "{e}");
        let e = check_parts(&[part("a", 0, 2, "x"), part("n", 1, 3, "x")]).unwrap_err();
        assert!(e.contains("n: shard 1/3, but a is shard 0/2"), "{e}");
        // The same text named another way (`./s.toml`) is the same scenario.
        let mut spelled = part("d", 1, 2, "x");
        spelled.partial.origin.file = "./s.toml".into();
        assert!(check_parts(&[part("a", 0, 2, "x"), spelled]).is_ok());
    }
}
