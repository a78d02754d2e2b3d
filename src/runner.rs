//! The binary's side of a campaign ([`locksim_campaign`]): the worker pool from `--threads`, the
//! progress bar on stderr, and the Ctrl-C stop flag handed to [`Campaign::run`].

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use locksim_campaign::{Campaign, Outcome, Progress};

use crate::exit::CliError;
use crate::interrupt;

/// A pool of `threads` workers (default: every core); `--threads 0` and more than
/// [`locksim_campaign::MAX_THREADS`] are refused.
pub fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, CliError> {
    locksim_campaign::thread_pool(threads).map_err(CliError::bad_input)
}

/// A progress bar on stderr when it is a terminal; hidden (and silent) when piped.
pub fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("[{bar:30}] {pos}/{len} seed-runs  {rate}  eta {eta}  {msg}")
            .expect("valid template")
            // indicatif's own {per_sec} prints four decimals; a whole number reads better.
            .with_key("rate", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0}/s", state.per_sec());
            })
            .progress_chars("=> "),
    );
    bar
}

/// Runs `campaign` on `pool` with the Ctrl-C stop flag, showing its seeds on `progress`.
pub fn run_campaign(campaign: &Campaign, pool: &rayon::ThreadPool, progress: &ProgressBar) -> Outcome {
    campaign.run(pool, interrupt::stop_flag(), shown_on(progress))
}

/// A campaign's progress callback drawing on `progress`: one step a seed, the row and the
/// violations so far as its message.
pub fn shown_on(progress: &ProgressBar) -> impl FnMut(Progress) + '_ {
    |p: Progress| {
        progress.set_message(format!("running {}; seed-runs with violations so far: {}", p.label, p.violating_runs));
        progress.inc(1);
    }
}

/// Writes to stdout (the one path there; see [`crate::print`]).
pub use crate::print::print_out;
