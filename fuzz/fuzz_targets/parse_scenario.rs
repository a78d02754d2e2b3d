//! Fuzz target: arbitrary bytes, two ways.
//!
//! 1. Read as UTF-8 text, through the scenario parser with the real model registry. The parser
//!    must never panic, and every error it returns must carry a line and a column (only an
//!    unreadable file has none, and this target reads no file). Bytes that are not UTF-8 are
//!    skipped here: `load_file` refuses them before parsing, at the first bad byte. A text that
//!    parses also runs one seed of every row, bounded (`extremes::parse_and_run`).
//! 2. As picks from tables of extreme times (0 everywhere, a nanosecond, at and just beyond the
//!    1e12 ms bound, negative steps), built into a scenario (`extremes::scenario_text`) that goes
//!    through the parser and, when valid, a bounded run: no overflow, no panic, no hang (a
//!    zero-time loop is stopped by the engine's stall detector).
//!
//! `tests/time_extremes.rs` runs the same builder on stable over a fixed set of inputs.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../extremes.rs"]
mod extremes;

fuzz_target!(|data: &[u8]| {
    let models = locksim_algorithms::registry();
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = extremes::parse_and_run(text, &models);
    }
    let _ = extremes::parse_and_run(&extremes::scenario_text(data), &models);
});
