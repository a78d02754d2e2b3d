//! The binary's side of a campaign ([`locksim_campaign`]) that `sim compare` still uses here: the
//! worker pool from `--threads` and the one path to stdout.

use crate::exit::CliError;

/// A pool of `threads` workers (default: every core); `--threads 0` and more than
/// [`locksim_campaign::MAX_THREADS`] are refused.
pub fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, CliError> {
    locksim_campaign::thread_pool(threads).map_err(CliError::bad_input)
}

/// Writes to stdout (the one path there; see [`locksim_campaign::stdout`]).
pub use locksim_campaign::stdout::print_out;
