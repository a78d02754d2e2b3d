//! What the test files share, declared once for the whole binary (`tests/tests.rs`): a file
//! reaches it as `crate::support::cli` (running `sim`, a fresh directory per test),
//! `crate::support::live` (live mode: one live test at a time, processes left behind, results)
//! and `crate::support::xml` (a well-formedness check of the SVG the reports write).

pub mod cli;
pub mod live;
pub mod xml;
