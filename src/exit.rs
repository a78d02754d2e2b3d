//! The binary's exit codes, from a command's [`Class`] or [`CommandError`]; and the one error
//! type the binary's commands return: a message and the exit code it maps to.

use locksim_campaign::{Class, CommandError};

/// Exit code: ran, every expectation held.
pub const OK: i32 = 0;
/// Exit code: an `[expect]` assertion failed (a search found a violation).
pub const EXPECTATION_FAILED: i32 = 1;
/// Exit code: bad command line or bad scenario file; nothing ran.
pub const BAD_INPUT: i32 = 2;
/// Exit code: a model or the simulator panicked in some seed.
pub const MODEL_FAILED: i32 = 3;

/// A command's class as the exit code (130, 3, 1, 0).
pub fn code(class: Class) -> i32 {
    match class {
        Class::Interrupted => crate::interrupt::INTERRUPTED,
        Class::ModelFailed => MODEL_FAILED,
        Class::ExpectationFailed => EXPECTATION_FAILED,
        Class::Passed => OK,
    }
}

#[derive(Debug)]
pub struct CliError {
    pub code: i32,
    pub message: String,
}

impl CliError {
    pub fn bad_input(message: impl Into<String>) -> Self {
        CliError { code: BAD_INPUT, message: message.into() }
    }
}

impl From<CommandError> for CliError {
    fn from(e: CommandError) -> Self {
        match e {
            CommandError::BadInput(message) => CliError { code: BAD_INPUT, message },
            CommandError::Failed(message) => CliError { code: MODEL_FAILED, message },
        }
    }
}

impl From<locksim_simulator::scenario::ScenarioError> for CliError {
    fn from(e: locksim_simulator::scenario::ScenarioError) -> Self {
        CommandError::from(e).into()
    }
}

impl From<locksim_simulator::scenario::UnknownLabel> for CliError {
    fn from(e: locksim_simulator::scenario::UnknownLabel) -> Self {
        CommandError::from(e).into()
    }
}

impl From<locksim_reports::ReportError> for CliError {
    fn from(e: locksim_reports::ReportError) -> Self {
        CommandError::from(e).into()
    }
}
