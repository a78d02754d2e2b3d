//! Fuzz target: arbitrary bytes, read as UTF-8 text, through the scenario parser with the real
//! model registry. The parser must never panic, and every error it returns must carry a line and
//! a column (only an unreadable file has none, and this target reads no file). Bytes that are not
//! UTF-8 are skipped: `load_file` refuses them before parsing, at the first bad byte.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let models = locksim_algorithms::registry();
    if let Err(e) = locksim_simulator::scenario::parse_str("fuzz.toml", text, &models) {
        assert!(e.line.is_some() && e.column.is_some(), "an error with no position: {e}");
    }
});
