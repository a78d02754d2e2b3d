//! `sim shrink`'s work, from its options: the budget and the output checked before any work, the
//! search run ([`crate::shrink`]) with its steps on stderr, the smallest scenario written, and
//! the reduction, the replay command and the witness seed's narrative printed.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use locksim_simulator::model::DynModel;

use crate::error::CommandError;
use crate::shrink::trial::{EXPECT_PREFIX, VIOLATION_KINDS};
use crate::shrink::{shrink as shrink_scenario, NotShrunk, Request, Shrunk, DEFAULT_BUDGET, SEEDS_PER_CANDIDATE};
use crate::stdout::print_out;
use crate::verdict::Class;

const AFTER_HELP: &str = "\
What it tries, greedily and repeatedly until nothing more can go: fewer faults, fewer clients, a
shorter duration_ms, faults moved earlier or made shorter (no recurrence, no probability, fewer
targets), distributions replaced by constants, fewer servers (servers, masters, replicas,
sentinels), the row's parameters back to their defaults (never `client`: the row keeps its library
preset, and a candidate that would run another preset is skipped), workload keys back to theirs,
[network] and [clocks] entries removed, then rounder constants. The other rows, [expect] and
[explore] go first. A key whose line has a comment containing `shrink: keep` is never removed or
changed (nor the link, table or fault holding it): mark the setting the failure is about. Every candidate goes through the scenario parser (one it refuses is skipped) and runs on
the current witness seed, then seeds 0, 1, ... (8 seeds in all); the first that still shows the
violation becomes the witness. The result is the same whatever --threads is.

A failure that is no violation (an outage, a lock never granted again, a starved waiter) is kept
with --expect: an [expect] line that fails on the seed, judged on each seed alone as `sim run
FILE --seed S` judges it. `--expect METRIC` takes the row's own [expect.LABEL] line;
`--expect 'METRIC EXPECTED'` writes one out ('outage_ms < 1_000', 'acquisitions > 0',
'wait_ms_max < 5_000'). A seed fails it only with a measured value, never for want of data. Write
the promise the failure breaks, with a bound the run must exceed: 'acquisitions > 0' would also
be failed by a run cut too short to grant anything, 'outage_ms < 31_000' only by a lock that
stays away longer than its TTL.

The output file starts with a comment block: where it came from, the reduction (clients 10 → 2,
faults 3 → 1, duration 60 s → 6 s), the replay command and every edit kept. `sim check` accepts
it. Ctrl-C or SIGTERM stops the search within a second (the seed-runs in progress are cut, and a
candidate cut so counts as showing nothing) and writes the smallest scenario found so far; before
the seed's own run has shown the violation there is none, and nothing is written.

Exit codes: 0 written; 2 bad command line or scenario, an unknown label or kind, or a seed that
shows no such violation (nothing written); 130 interrupted (the smallest so far is written, if
the search had started).

Examples:
  sim shrink scenarios/known/02-redis-paused-holder.toml --algorithm redis --seed 0 --out small.toml
  sim shrink scenarios/incidents/openshift-leader-election-apiserver-downtime.toml --algorithm broken \
    --seed 0 --expect 'outage_ms < 1_000'";

/// `sim shrink`'s options: its command line, from which clap derives the arguments and their
/// `--help` (the doc comments below are that help text).
#[derive(Clone, Debug, Default, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct ShrinkOptions {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// The row to shrink (an algorithm or variant label).
    #[arg(long = "algorithm", value_name = "LABEL")]
    pub algorithm: String,
    /// A seed on which that row shows a violation.
    #[arg(long, value_name = "S")]
    pub seed: u64,
    /// The violation kind to keep: overlap, stale_unfenced, stale_fenced, lost_update,
    /// token_regression (default: the kind of the seed's first violation).
    #[arg(long, value_name = "KIND", conflicts_with = "expect")]
    pub kind: Option<String>,
    /// Keep a failing [expect] line instead of a violation: METRIC (the row's own line) or
    /// 'METRIC EXPECTED' ('outage_ms < 1_000'); any [expect] metric.
    #[arg(long, value_name = "LINE")]
    pub expect: Option<String>,
    /// Where to write the smallest scenario (default: FILE's name with `.shrunk.toml`, in the
    /// current directory).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Seed-runs the whole search may spend.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BUDGET)]
    pub budget: u64,
    /// Worker threads (default: all cores; at most 1024). The result does not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

/// The default output: FILE's name with `.shrunk.toml`, in the current directory.
fn default_out(file: &Path) -> PathBuf {
    let stem = file.file_stem().map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.shrunk.toml"))
}

/// Shrinks as `opts` say, writes the smallest scenario found and prints what went; ends
/// [`Class::Interrupted`] when `stop` cut the search, else [`Class::Passed`].
pub fn shrink(
    opts: &ShrinkOptions,
    models: &[&'static dyn DynModel],
    stop: &AtomicBool,
) -> Result<Class, CommandError> {
    let file = opts.file.display().to_string();
    let text = locksim_simulator::scenario::read_scenario_text(&opts.file)?;
    if opts.budget < SEEDS_PER_CANDIDATE as u64 {
        return Err(CommandError::bad_input(format!(
            "--budget {}: expected at least {SEEDS_PER_CANDIDATE} seed-runs (one candidate's worth)",
            opts.budget
        )));
    }
    let out = opts.out.clone().unwrap_or_else(|| default_out(&opts.file));
    // Before any work: writable, and not the scenario being shrunk (however spelled).
    crate::out_file::check_all(&[("--out", Some(&out))], &[&opts.file])?;
    let pool = crate::thread_pool(opts.threads).map_err(CommandError::bad_input)?;
    let out_text = out.display().to_string();
    let expect_kind = opts.expect.as_deref().map(|e| format!("{EXPECT_PREFIX}{e}"));
    let request = Request {
        file: &file,
        text: &text,
        models,
        label: &opts.algorithm,
        seed: opts.seed,
        kind: expect_kind.as_deref().or(opts.kind.as_deref()),
        budget: opts.budget,
        out_file: &out_text,
    };
    let shrunk = match shrink_scenario(&request, &pool, stop, &mut |step| eprintln!("shrink: {step}")) {
        Ok(shrunk) => shrunk,
        Err(NotShrunk::Input(message)) => return Err(CommandError::bad_input(message)),
        Err(NotShrunk::InterruptedBeforeStart) => {
            print_out(&format!(
                "# interrupted before the search started (seed {} of {} had not yet been shown to fail): nothing written\n",
                opts.seed, opts.algorithm
            ));
            return Ok(Class::Interrupted);
        }
    };
    locksim_reports::write_atomic(&out, &shrunk.text)
        .map_err(|e| CommandError::bad_input(format!("cannot write {}: {e}", out.display())))?;
    print_out(&report(&out, &opts.algorithm, &shrunk, models));
    Ok(if shrunk.interrupted { Class::Interrupted } else { Class::Passed })
}

/// What the terminal gets: the reduction, the file, the replay command and the narrative.
fn report(out: &Path, label: &str, s: &Shrunk, models: &[&'static dyn DynModel]) -> String {
    let mut text = String::new();
    if s.interrupted {
        text.push_str("# interrupted: the smallest scenario found so far is written\n");
    } else if s.budget_spent {
        text.push_str(
            "# budget spent: the smallest scenario found so far is written (a larger --budget may go further)\n",
        );
    }
    text.push_str(&format!("{}: {} ({} edits kept, {} seed-runs)\n", s.kind, s.summary, s.steps.len(), s.seed_runs));
    text.push_str(&format!("wrote {}\n", out.display()));
    text.push_str(&format!(
        "replay: sim run {} --algorithm {label} --seed {} --trace\n",
        out.display(),
        s.witness.seed
    ));
    if !s.witness.detail.is_empty() {
        // A violation has a first occurrence; a failing [expect] line has its judgement.
        let first =
            if VIOLATION_KINDS.contains(&s.kind.as_str()) { format!("first {} ", s.kind) } else { String::new() };
        text.push_str(&format!("{first}on seed {}: {}\n", s.witness.seed, s.witness.detail));
    }
    // After a stop no more seeds run: the story replays the witness seed, which may be long.
    let story = if s.interrupted { None } else { crate::replay::narrative(out, models, label, s.witness.seed) };
    if let Some(story) = story {
        text.push('\n');
        text.push_str(&story);
    }
    text
}
