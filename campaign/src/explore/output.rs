//! What `sim explore` leaves behind: each failure's scenario file in DIR (the file as run, with a
//! comment block saying what failed and how to replay it), each failure shrunk beside it, narratives where the caller has them, and the summary table: per row, the
//! schedules run, how many failed, and each failure kind with its count and smallest example.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::parse_str;

use crate::explore::{Explored, Found, PANIC};
use crate::shrink::header::{human_ms, Size};
use crate::shrink::{shrink, NotShrunk, Request};

/// How the failures are written.
pub struct WriteOptions<'a> {
    /// The explored scenario's file, as the user wrote it.
    pub file: &'a str,
    /// The output directory (it exists).
    pub dir: &'a Path,
    /// Shrink every failure, each within this seed-run budget.
    pub shrink_budget: Option<u64>,
    /// Every known model.
    pub models: &'a [&'static dyn DynModel],
}

/// The smallest example of one row's failure kind.
#[derive(Clone, Debug)]
pub struct Example {
    /// The file.
    pub path: PathBuf,
    /// Its clients, faults and duration.
    pub size: Size,
    /// The seed that shows the failure in it.
    pub seed: u64,
}

/// One row's failures of one kind.
#[derive(Clone, Debug)]
pub struct KindTally {
    /// Schedules that failed first with this kind.
    pub count: u64,
    /// The smallest file showing it.
    pub example: Option<Example>,
}

/// The file name of a failure: `LABEL-KIND-seedN.toml`.
pub fn file_name(f: &Found) -> String {
    // The one sanitizer: the scenario parser refuses labels it maps to one name.
    let label = locksim_simulator::scenario::file_names::label_file_part(&f.label);
    format!("{label}-{}-seed{}.toml", f.kind, f.seed)
}

/// The comment block of a failure's file.
fn found_header(f: &Found, file: &str, path: &Path) -> String {
    let lines = [
        format!(
            "Found by `sim explore {file}`: seed {} drew {} extra fault(s) (the last [[faults]] blocks), and {} showed {} on it.",
            f.seed, f.drawn_faults, f.label, f.kind
        ),
        format!("First {}: {}", f.kind, f.detail.lines().next().unwrap_or("")),
        format!("Replay: sim run {} --algorithm {} --seed {} --trace", path.display(), f.label, f.seed),
    ];
    let mut out: String = lines.iter().map(|l| format!("# {l}\n")).collect();
    out.push('\n');
    out
}

/// Writes every failure to `opts.dir`, shrinks each when asked (unless `stop` is raised), and
/// returns each (row, kind)'s count and smallest example. `narrative` gives the story of a
/// (file, row, seed) when the caller has one; it is written beside the file as `.txt`.
/// `progress` hears about each shrink.
pub fn write_found(
    explored: &Explored,
    opts: &WriteOptions,
    pool: &rayon::ThreadPool,
    stop: &AtomicBool,
    narrative: &dyn Fn(&Path, &str, u64) -> Option<String>,
    progress: &mut dyn FnMut(&str),
) -> Result<BTreeMap<(String, &'static str), KindTally>, String> {
    let mut tallies: BTreeMap<(String, &'static str), KindTally> = BTreeMap::new();
    for f in &explored.found {
        let path = opts.dir.join(file_name(f));
        let text = found_header(f, opts.file, &path) + &f.text;
        write(&path, &text)?;
        // After a stop, no more seeds run (a narrative replays the seed, a shrink runs many):
        // the failing files are written, their stories and shrunk versions are not.
        let stopped = stop.load(Ordering::Relaxed);
        if !stopped {
            write_narrative(&path, &f.label, f.seed, narrative)?;
        }
        let size = parse_str(opts.file, &f.text, opts.models).map(|s| Size::of(&s)).map_err(|e| e.to_string())?;
        let key = (f.label.clone(), f.kind);
        let tally = tallies.entry(key).or_insert(KindTally { count: 0, example: None });
        tally.count += 1;
        offer(tally, Example { path: path.clone(), size, seed: f.seed });
        if f.kind == PANIC {
            continue;
        }
        let Some(budget) = opts.shrink_budget.filter(|_| !stopped) else { continue };
        let out = path.with_extension("shrunk.toml");
        let (file_text, out_text) = (path.display().to_string(), out.display().to_string());
        // The scenario as run, without the found file's comment block (which names another file).
        let req = Request {
            file: &file_text,
            text: &f.text,
            models: opts.models,
            label: &f.label,
            seed: f.seed,
            kind: Some(f.kind),
            budget,
            out_file: &out_text,
        };
        progress(&format!("shrinking {} ({} seed {})", path.display(), f.kind, f.seed));
        let shrunk = match shrink(&req, pool, stop, &mut |_| {}) {
            Ok(shrunk) => shrunk,
            // Stopped before its first witness: the failure's file stands unshrunk.
            Err(NotShrunk::InterruptedBeforeStart) => continue,
            Err(NotShrunk::Input(e)) => return Err(e),
        };
        write(&out, &shrunk.text)?;
        write_narrative(&out, &f.label, shrunk.witness.seed, narrative)?;
        progress(&format!("  {}: {}", out.display(), shrunk.summary));
        let size = parse_str(&out_text, &shrunk.text, opts.models).map(|s| Size::of(&s)).map_err(|e| e.to_string())?;
        offer(tally, Example { path: out, size, seed: shrunk.witness.seed });
    }
    Ok(tallies)
}

/// Keeps the smaller example: fewer faults, then fewer clients, then a shorter run; the one
/// offered first on a tie (lower seed).
fn offer(tally: &mut KindTally, e: Example) {
    let key = |e: &Example| (e.size.faults, e.size.clients, e.size.duration_ms);
    let smaller =
        tally.example.as_ref().is_none_or(|old| key(&e).partial_cmp(&key(old)) == Some(std::cmp::Ordering::Less));
    if smaller {
        tally.example = Some(e);
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    locksim_reports::write_atomic(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn write_narrative(
    path: &Path,
    label: &str,
    seed: u64,
    narrative: &dyn Fn(&Path, &str, u64) -> Option<String>,
) -> Result<(), String> {
    match narrative(path, label, seed) {
        Some(story) => write(&path.with_extension("txt"), &story),
        None => Ok(()),
    }
}

/// The summary table: per row, schedules run, failed, and each failure kind with its count and
/// smallest example.
pub fn summary_table(explored: &Explored, tallies: &BTreeMap<(String, &'static str), KindTally>) -> String {
    let width = explored.rows.iter().map(|r| r.label.len()).max().unwrap_or(5).max(5);
    let mut out =
        format!("{:<width$}  {:>9}  {:>6}  failure kinds: count, smallest example\n", "label", "schedules", "failed");
    out.push_str(&"-".repeat(width + 60));
    out.push('\n');
    for row in &explored.rows {
        let kinds: Vec<String> = tallies
            .iter()
            .filter(|((label, _), _)| *label == row.label)
            .map(|((_, kind), t)| match &t.example {
                Some(e) => format!(
                    "{kind} {}: {} (seed {}; clients {}, faults {}, {})",
                    t.count,
                    e.path.display(),
                    e.seed,
                    e.size.clients,
                    e.size.faults,
                    human_ms(e.size.duration_ms)
                ),
                None => format!("{kind} {}", t.count),
            })
            .collect();
        let first = kinds.first().cloned().unwrap_or_else(|| "none".to_string());
        out.push_str(&format!("{:<width$}  {:>9}  {:>6}  {first}\n", row.label, row.ran, row.failed));
        for k in kinds.iter().skip(1) {
            out.push_str(&format!("{:<width$}  {:>9}  {:>6}  {k}\n", "", "", ""));
        }
    }
    out
}
