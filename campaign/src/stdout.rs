//! The one path to standard output: [`print_out`] and `outln!` (`println!` through it). A reader
//! that goes away (`sim list | head -1`) is not an error: the rest of the output is dropped
//! quietly and the command goes on, so its files are still written and its exit code is its own
//! (`println!` would panic, and exiting at once would lose `--json` and `--report`).
//! `clippy::print_stdout` is denied in this crate and in the binary to keep it the one path.

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once standard output has failed: later prints are dropped.
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);

/// Writes `text` to standard output. On a broken pipe it drops this and every later print
/// quietly; on another error (`> /dev/full`) it says so once on stderr and drops them too.
pub fn print_out(text: &str) {
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        STDOUT_GONE.store(true, Ordering::Relaxed);
        if e.kind() != ErrorKind::BrokenPipe {
            eprintln!("note: cannot write to standard output ({e}); the rest of it is dropped");
        }
    }
}

/// Prints a line to standard output through [`print_out`].
#[macro_export]
macro_rules! outln {
    () => {
        $crate::stdout::print_out("\n")
    };
    ($($arg:tt)*) => {
        $crate::stdout::print_out(&format!("{}\n", format_args!($($arg)*)))
    };
}
