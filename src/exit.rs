//! The binary's one error type: a message and the exit code it maps to.

/// Exit code: ran, every expectation held.
pub const OK: i32 = 0;
/// Exit code: an `[expect]` assertion failed.
pub const EXPECTATION_FAILED: i32 = 1;
/// Exit code: bad command line or bad scenario file; nothing ran.
pub const BAD_INPUT: i32 = 2;
/// Exit code: a model or the simulator panicked in some seed.
pub const MODEL_FAILED: i32 = 3;

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

impl From<locksim_simulator::scenario::ScenarioError> for CliError {
    fn from(e: locksim_simulator::scenario::ScenarioError) -> Self {
        CliError::bad_input(e.to_string())
    }
}

/// A report that cannot be written is the user's side (2); a chart that fails to draw is ours (3).
impl From<locksim_simulator::scenario::UnknownLabel> for CliError {
    fn from(e: locksim_simulator::scenario::UnknownLabel) -> Self {
        CliError::bad_input(e.to_string())
    }
}

impl From<locksim_reports::ReportError> for CliError {
    fn from(e: locksim_reports::ReportError) -> Self {
        match e {
            locksim_reports::ReportError::Io(message) => CliError::bad_input(message),
            draw @ locksim_reports::ReportError::Draw(_) => CliError { code: MODEL_FAILED, message: draw.to_string() },
        }
    }
}
