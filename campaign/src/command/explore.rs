//! `sim explore`'s work, from its options: the options checked, the scenario parsed, DIR checked
//! and locked, the schedules run ([`crate::explore`]) with a progress bar, every failure written
//! (and shrunk), and the summary printed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use locksim_simulator::model::DynModel;

use crate::error::CommandError;
use crate::explore::output::{summary_table, write_found, WriteOptions};
use crate::explore::{explore as explore_scenario, Explored, Scheduler};
use crate::progress::progress_bar;
use crate::shrink::SEEDS_PER_CANDIDATE;
use crate::stdout::print_out;
use crate::verdict::Class;

/// `sim explore`'s options, as the command line gave them.
#[derive(Clone, Debug)]
pub struct ExploreOptions {
    /// The scenario file.
    pub file: PathBuf,
    /// `--algorithm` (empty: every row).
    pub algorithms: Vec<String>,
    /// `--budget`: schedules to draw (seeds 0..N).
    pub budget: u64,
    /// `--out` (default: FILE's name with `.explore`).
    pub out: Option<PathBuf>,
    /// `--no-shrink`.
    pub no_shrink: bool,
    /// `--shrink-budget`.
    pub shrink_budget: u64,
    /// `--scheduler`: `random` or `pct`.
    pub scheduler: String,
    /// `--depth` (PCT's).
    pub depth: Option<u32>,
    /// `--threads`.
    pub threads: Option<usize>,
}

fn default_out(file: &Path) -> PathBuf {
    let stem = file.file_stem().map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.explore"))
}

/// Explores, writes the failures and prints the summary; ends [`Class::Interrupted`] when `stop`
/// cut it, [`Class::ExpectationFailed`] when a violation was found, else [`Class::Passed`].
pub fn explore(
    opts: &ExploreOptions,
    models: &[&'static dyn DynModel],
    stop: &AtomicBool,
) -> Result<Class, CommandError> {
    let file = opts.file.display().to_string();
    let text = locksim_simulator::scenario::read_scenario_text(&opts.file)?;
    if opts.budget == 0 {
        return Err(CommandError::bad_input("--budget 0: expected at least 1 schedule"));
    }
    if !opts.no_shrink && opts.shrink_budget < SEEDS_PER_CANDIDATE as u64 {
        return Err(CommandError::bad_input(format!(
            "--shrink-budget {}: expected at least {SEEDS_PER_CANDIDATE} seed-runs (or --no-shrink)",
            opts.shrink_budget
        )));
    }
    let scheduler = scheduler(&opts.scheduler, opts.depth)?;
    // The scenario first (a bad file is reported as such), then the directory, then the work.
    locksim_simulator::scenario::parse_str(&file, &text, models)?;
    let dir = opts.out.clone().unwrap_or_else(|| default_out(&opts.file));
    let _out_lock = crate::out_dir::prepare_locked(&dir, "--out").map_err(CommandError::bad_input)?;
    let pool = crate::thread_pool(opts.threads).map_err(CommandError::bad_input)?;
    let progress = progress_bar(opts.budget);
    let mut failures = 0u64;
    let explored: Explored = explore_scenario(
        &file,
        &text,
        models,
        &opts.algorithms,
        opts.budget,
        scheduler,
        &pool,
        stop,
        &mut |_, failed| {
            failures += failed as u64;
            progress.set_message(format!("row-seeds with violations so far: {failures}"));
            progress.inc(1);
        },
    )
    .map_err(CommandError::bad_input)?;
    progress.finish_and_clear();
    let write = WriteOptions {
        file: &file,
        dir: &dir,
        shrink_budget: (!opts.no_shrink && scheduler == Scheduler::Random).then_some(opts.shrink_budget),
        models,
    };
    let narrative = |file: &Path, label: &str, seed: u64| crate::replay::narrative(file, models, label, seed);
    let tallies = write_found(&explored, &write, &pool, stop, &narrative, &mut |line| eprintln!("explore: {line}"))
        .map_err(CommandError::bad_input)?;
    let interrupted = stop.load(Ordering::SeqCst);
    let mut out = String::new();
    if interrupted {
        out.push_str(&format!(
            "# interrupted: {} of {} schedules ran; the table covers those\n",
            explored.seeds, opts.budget
        ));
    }
    out.push_str(&summary_table(&explored, &tallies));
    for row in &explored.rows {
        if let Some(seed) = row.first_failure {
            out.push_str(&format!("first failure: {} at schedule {} (seed {seed})\n", row.label, seed + 1));
        }
    }
    if !explored.found.is_empty() {
        out.push_str(&format!("{} failing scenario(s) written to {}\n", explored.found.len(), dir.display()));
    }
    print_out(&out);
    Ok(if interrupted {
        Class::Interrupted
    } else if explored.found.is_empty() {
        Class::Passed
    } else {
        Class::ExpectationFailed
    })
}

/// `--scheduler` and `--depth` as a [`Scheduler`].
fn scheduler(name: &str, depth: Option<u32>) -> Result<Scheduler, CommandError> {
    match (name, depth) {
        ("random", None) => Ok(Scheduler::Random),
        ("random", Some(_)) => Err(CommandError::bad_input("--depth is PCT's bug depth: give it with --scheduler pct")),
        ("pct", Some(0)) => Err(CommandError::bad_input("--depth 0: expected a bug depth of at least 1")),
        ("pct", depth) => Ok(Scheduler::Pct { depth: depth.unwrap_or(3) }),
        (other, _) => Err(CommandError::bad_input(format!("--scheduler {other}: expected one of random, pct"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheduler_options_are_checked_together() {
        assert_eq!(scheduler("random", None), Ok(Scheduler::Random));
        assert_eq!(scheduler("pct", None), Ok(Scheduler::Pct { depth: 3 }));
        assert_eq!(scheduler("pct", Some(5)), Ok(Scheduler::Pct { depth: 5 }));
        assert!(scheduler("random", Some(2)).unwrap_err().message().contains("give it with --scheduler pct"));
        assert!(scheduler("pct", Some(0)).unwrap_err().message().contains("at least 1"));
        assert!(scheduler("dfs", None).unwrap_err().message().contains("expected one of random, pct"));
    }
}
