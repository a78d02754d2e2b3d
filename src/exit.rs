//! The binary's exit codes, from a command's [`Class`] or [`CommandError`].

use locksim_campaign::{Class, CommandError};

/// Exit code: ran, every expectation held.
const OK: i32 = 0;
/// Exit code: an `[expect]` assertion failed (a search found a violation).
const EXPECTATION_FAILED: i32 = 1;
/// Exit code: bad command line or bad scenario file; nothing ran.
const BAD_INPUT: i32 = 2;
/// Exit code: a model or the simulator panicked in some seed (or a chart, server or client failed).
const MODEL_FAILED: i32 = 3;

/// A command's class as the exit code (130, 3, 1, 0).
pub fn code(class: Class) -> i32 {
    match class {
        Class::Interrupted => crate::interrupt::INTERRUPTED,
        Class::ModelFailed => MODEL_FAILED,
        Class::ExpectationFailed => EXPECTATION_FAILED,
        Class::Passed => OK,
    }
}

/// A command's error as the exit code: 2 when its input was refused, 3 when something of ours failed.
pub fn error_code(e: &CommandError) -> i32 {
    match e {
        CommandError::BadInput(_) => BAD_INPUT,
        CommandError::Failed(_) => MODEL_FAILED,
    }
}
