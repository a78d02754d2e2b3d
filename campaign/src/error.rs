//! Why a command ended without doing its work: its input was refused (a bad command line,
//! scenario or output; nothing ran) or something of ours failed (a model, a chart, a server).
//! The binary maps each to its exit code (2 and 3) and prints the message after `error: `.

use std::fmt;

use locksim_reports::ReportError;
use locksim_simulator::scenario::{ScenarioError, UnknownLabel};

/// A command's error: its message, and whose side it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandError {
    /// Bad command line, scenario or output (nothing ran, or nothing could be written): exit 2.
    BadInput(String),
    /// A model, the simulator, a chart, a server or a client failed: exit 3.
    Failed(String),
}

impl CommandError {
    /// The user's side: exit 2.
    pub fn bad_input(message: impl Into<String>) -> Self {
        CommandError::BadInput(message.into())
    }

    /// What went wrong, as printed.
    pub fn message(&self) -> &str {
        match self {
            CommandError::BadInput(m) | CommandError::Failed(m) => m,
        }
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl From<ScenarioError> for CommandError {
    fn from(e: ScenarioError) -> Self {
        CommandError::bad_input(e.to_string())
    }
}

impl From<UnknownLabel> for CommandError {
    fn from(e: UnknownLabel) -> Self {
        CommandError::bad_input(e.to_string())
    }
}

/// A report that cannot be written is the user's side; a chart that fails to draw is ours.
impl From<ReportError> for CommandError {
    fn from(e: ReportError) -> Self {
        match e {
            ReportError::Io(message) => CommandError::bad_input(message),
            draw @ ReportError::Draw(_) => CommandError::Failed(draw.to_string()),
        }
    }
}
