//! Helpers shared by the zookeeper model's tests: run one labelled configuration of a scenario
//! text for one seed, and read the history and the trace.

#![allow(dead_code)]

#[path = "../common/mod.rs"]
mod common;
pub use common::*;
