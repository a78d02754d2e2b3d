//! The binary's side of a campaign ([`locksim_campaign`]): the worker pool from `--threads`, the
//! progress on stderr ([`locksim_campaign::progress`]), and the Ctrl-C stop flag handed to
//! [`Campaign::run`].

use locksim_campaign::progress::Progress as Shown;
use locksim_campaign::{Campaign, Outcome};

use crate::exit::CliError;
use crate::interrupt;
pub use locksim_campaign::progress::{progress_bar, shown_on};

/// A pool of `threads` workers (default: every core); `--threads 0` and more than
/// [`locksim_campaign::MAX_THREADS`] are refused.
pub fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, CliError> {
    locksim_campaign::thread_pool(threads).map_err(CliError::bad_input)
}

/// Runs `campaign` on `pool` with the Ctrl-C stop flag, showing its seeds on `progress`.
pub fn run_campaign(campaign: &Campaign, pool: &rayon::ThreadPool, progress: &Shown) -> Outcome {
    campaign.run(pool, interrupt::stop_flag(), shown_on(progress))
}

/// Writes to stdout (the one path there; see [`locksim_campaign::stdout`]).
pub use locksim_campaign::stdout::print_out;
