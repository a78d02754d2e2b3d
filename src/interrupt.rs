//! Ctrl-C (or SIGTERM): the first one asks the run to stop after the seeds in progress (so the
//! results of the finished seeds are still printed; a live run stops its servers and clients); a
//! second one quits at once, killing whatever real servers and clients live mode had started.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

/// Exit code after an interrupted run (128 + SIGINT, the shell convention).
pub const INTERRUPTED: i32 = 130;

static STOP: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// The flag the seed runners poll between chunks; set by the first Ctrl-C.
pub fn stop_flag() -> &'static AtomicBool {
    INSTALL.call_once(|| {
        // Without a handler (some sandboxes refuse one) Ctrl-C simply kills the process, as usual.
        let _ = ctrlc::set_handler(|| {
            if STOP.swap(true, Ordering::SeqCst) {
                eprintln!("\ninterrupted again: quitting without results");
                // process::exit runs no destructor: stop live mode's processes here.
                locksim_live::supervisor::kill_every_started_process();
                std::process::exit(INTERRUPTED);
            }
            eprintln!(
                "\ninterrupted: finishing the seeds in progress, then printing what ran (Ctrl-C again to quit now)"
            );
        });
    });
    &STOP
}

/// Whether a Ctrl-C asked the run to stop.
pub fn interrupted() -> bool {
    STOP.load(Ordering::SeqCst)
}
