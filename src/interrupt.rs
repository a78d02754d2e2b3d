//! Ctrl-C (or SIGTERM): the first one asks the run to stop. The seeds in progress stop within a
//! few thousand events (the engine polls the flag; well under a second) and are discarded; the
//! results of the finished seeds are still printed and written, marked interrupted; a live run
//! stops its servers and clients. A second one quits at once, killing whatever real servers and
//! clients live mode had started.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

/// Exit code after an interrupted run (128 + SIGINT, the shell convention).
pub const INTERRUPTED: i32 = 130;

static STOP: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// The flag the seed runners and the engine poll; set by the first Ctrl-C or SIGTERM.
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
                "\ninterrupted: stopping the seeds in progress (discarded), then writing the finished ones (Ctrl-C again to quit now)"
            );
        });
    });
    &STOP
}
