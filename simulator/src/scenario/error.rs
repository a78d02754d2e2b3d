//! Scenario errors: every one names the file, line and column, the key, what was expected and
//! the valid choices. The binary maps them to exit code 2.

use std::fmt;

/// A scenario file that cannot be used, with where and why.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    /// The file as the user named it.
    pub file: String,
    /// 1-based line and column of the offending key or value, when known.
    pub line: Option<usize>,
    /// 1-based column, when known (only shown with a line).
    pub column: Option<usize>,
    /// Dotted key path (`faults.2.target`, `models.redis.ttl_ms`), when the error is about a key.
    /// Array elements are numbered from 0 (`faults.1` is the second `[[faults]]`), as in `sim
    /// sweep --param` paths, so a path from an error can be pasted into a sweep. For a TOML
    /// syntax error the path is read from the text around it (best effort).
    pub key: Option<String>,
    /// What is wrong, what was expected, and the valid choices.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        write!(f, ": ")?;
        if let Some(key) = &self.key {
            write!(f, "`{key}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ScenarioError {}
