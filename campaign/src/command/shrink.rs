//! `sim shrink`'s work, from its options: the budget and the output checked before any work, the
//! search run ([`crate::shrink`]) with its steps on stderr, the smallest scenario written, and
//! the reduction, the replay command and the witness seed's narrative printed.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use locksim_simulator::model::DynModel;

use crate::error::CommandError;
use crate::shrink::trial::{EXPECT_PREFIX, VIOLATION_KINDS};
use crate::shrink::{shrink as shrink_scenario, NotShrunk, Request, Shrunk, SEEDS_PER_CANDIDATE};
use crate::stdout::print_out;
use crate::verdict::Class;

/// `sim shrink`'s options, as the command line gave them.
#[derive(Clone, Debug, Default)]
pub struct ShrinkOptions {
    /// The scenario file.
    pub file: PathBuf,
    /// The row to shrink.
    pub algorithm: String,
    /// The seed that shows the failure.
    pub seed: u64,
    /// `--kind`: the violation kind to keep.
    pub kind: Option<String>,
    /// `--expect`: the failing `[expect]` line to keep instead.
    pub expect: Option<String>,
    /// `--out FILE` (default: FILE's name with `.shrunk.toml`).
    pub out: Option<PathBuf>,
    /// `--budget`: seed-runs the search may spend.
    pub budget: u64,
    /// `--threads`.
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
