//! Ctrl-C (or SIGTERM): the first one asks the run to stop. The seeds in progress stop within a
//! few thousand events (the engine polls the flag; well under a second) and are discarded; the
//! results of the finished seeds are still printed and written, marked interrupted; a live run
//! stops its servers and clients; `sim exhaust` stops its search and prints the partial
//! certificate. A second one quits at once, killing whatever real servers and
//! clients live mode had started.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, OnceLock};

/// Exit code after an interrupted run (128 + SIGINT, the shell convention).
pub const INTERRUPTED: i32 = 130;

static STOP: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();
/// What the first Ctrl-C announces; a command whose stop is not "seeds cut, finished ones
/// written" (a search) says its own.
static ON_STOP: OnceLock<&'static str> = OnceLock::new();

/// What the first Ctrl-C says while seeds are being run.
const SEEDS_STOPPING: &str = "stopping the seeds in progress (discarded), then writing the finished ones";

/// What the first Ctrl-C says during `sim exhaust`.
pub const SEARCH_STOPPING: &str = "stopping the search, then printing its partial certificate";

/// The flag the seed runners and the engine poll; set by the first Ctrl-C or SIGTERM.
pub fn stop_flag() -> &'static AtomicBool {
    stop_flag_saying(SEEDS_STOPPING)
}

/// [`stop_flag`], with the first Ctrl-C announcing `what_happens` (set once per process).
pub fn stop_flag_saying(what_happens: &'static str) -> &'static AtomicBool {
    let _ = ON_STOP.set(what_happens);
    INSTALL.call_once(|| {
        // Without a handler (some sandboxes refuse one) Ctrl-C simply kills the process, as usual.
        let _ = ctrlc::set_handler(|| {
            if STOP.swap(true, Ordering::SeqCst) {
                eprintln!("\ninterrupted again: quitting without results");
                // process::exit runs no destructor: stop live mode's processes here.
                locksim_live::supervisor::kill_every_started_process();
                std::process::exit(INTERRUPTED);
            }
            let what_happens = ON_STOP.get().copied().unwrap_or(SEEDS_STOPPING);
            eprintln!("\ninterrupted: {what_happens} (Ctrl-C again to quit now)");
        });
    });
    &STOP
}
