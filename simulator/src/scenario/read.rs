//! Reading a scenario file's text, bounded: a scenario is a few kilobytes of TOML, so a file over
//! [`MAX_SCENARIO_BYTES`] is refused rather than read whole (`sim check /dev/zero` read until
//! memory ran out). Every command that reads a scenario reads it here.

use std::io::Read;
use std::path::Path;

use crate::scenario::walk::Source;
use crate::scenario::ScenarioError;

/// The largest scenario file read: 16 MiB, thousands of times the largest real scenario, so only
/// a wrong file (a log, a device, a binary) reaches it.
pub const MAX_SCENARIO_BYTES: u64 = 16 * 1024 * 1024;

/// The text of the scenario file at `path`: refused if it cannot be read, is larger than
/// [`MAX_SCENARIO_BYTES`] (a device such as `/dev/zero` is read only that far) or is not UTF-8
/// (placed at its first bad byte).
pub fn read_scenario_text(path: &Path) -> Result<String, ScenarioError> {
    let label = path.display().to_string();
    let err = |line: Option<usize>, column: Option<usize>, message: String| ScenarioError {
        file: label.clone(),
        line,
        column,
        key: None,
        message,
    };
    let cannot_read = |e: std::io::Error| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            _ => e.to_string(),
        };
        err(None, None, format!("cannot read the scenario file: {why}"))
    };
    let file = std::fs::File::open(path).map_err(cannot_read)?;
    let mut bytes = Vec::new();
    // One byte past the limit tells a file of exactly the limit from a longer one.
    file.take(MAX_SCENARIO_BYTES + 1).read_to_end(&mut bytes).map_err(cannot_read)?;
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(err(
            None,
            None,
            format!(
                "the scenario file is larger than {} MiB ({MAX_SCENARIO_BYTES} bytes), the most a scenario \
                 may be; a scenario is a few kilobytes of TOML: is this the right file?",
                MAX_SCENARIO_BYTES / (1024 * 1024)
            ),
        ));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) => {
            let bytes = e.as_bytes();
            let valid = e.utf8_error().valid_up_to();
            let good = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
            let (line, column) = Source::new(&label, good).line_col(good.len());
            Err(err(Some(line), Some(column), "the scenario file is not UTF-8 text (TOML must be UTF-8)".into()))
        }
    }
}
