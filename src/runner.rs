//! The binary's side of a campaign ([`locksim_campaign`]): the worker pool from `--threads`, the
//! progress on stderr ([`crate::progress`]), and the Ctrl-C stop flag handed to [`Campaign::run`].

use locksim_campaign::{Campaign, Outcome, Progress};

use crate::exit::CliError;
use crate::interrupt;
pub use crate::progress::progress_bar;
use crate::progress::Progress as Shown;

/// A pool of `threads` workers (default: every core); `--threads 0` and more than
/// [`locksim_campaign::MAX_THREADS`] are refused.
pub fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, CliError> {
    locksim_campaign::thread_pool(threads).map_err(CliError::bad_input)
}

/// Runs `campaign` on `pool` with the Ctrl-C stop flag, showing its seeds on `progress`.
pub fn run_campaign(campaign: &Campaign, pool: &rayon::ThreadPool, progress: &Shown) -> Outcome {
    campaign.run(pool, interrupt::stop_flag(), shown_on(progress))
}

/// A campaign's progress callback drawing on `progress`: one step a seed, the row and the
/// violations so far as its message.
pub fn shown_on(progress: &Shown) -> impl FnMut(Progress) + '_ {
    |p: Progress| {
        progress.set_message(format!("running {}; seed-runs with violations so far: {}", p.label, p.violating_runs));
        progress.inc(1);
    }
}

/// Writes to stdout (the one path there; see [`crate::print`]).
pub use crate::print::print_out;
