//! locksim's engine: a deterministic discrete-event simulator for distributed lock models.
//!
//! Module map:
//! - [`time`]: true time in integer nanoseconds, millisecond conversions
//! - [`clock`]: per-node monotonic and wall clocks with drift and jumps
//! - [`rng`]: seeded ChaCha8 streams per node and purpose
//! - [`dist`]: the number-or-distribution values of the scenario format
//! - [`process`]: the sans-IO `Process` interface and the handler context `Ctx`
//! - [`lockclient`]: the one lock-client interface every model's client library implements
//! - [`model`]: what a model is: parameter schema, validation, cluster builder
//! - [`history`]: the recorded history the checkers read
//! - [`checker`]: every metric of a run, from its history
//! - [`scenario`]: the scenario file format: parsing, validation, errors with line and column
//! - [`engine`]: the event loop, network, faults, selectors and trace
//! - [`enginebench`]: the standard engine-only benchmark workload (`sim bench engine`, criterion)
//! - [`workload`]: the shared workload driver (client nodes) and the protected resource node
//! - [`run`]: running one seed of one algorithm from a scenario
//! - [`batch`]: running many seeds in parallel, results in seed order, panics caught per seed

pub mod batch;
pub mod checker;
pub mod clock;
pub mod dist;
pub mod engine;
pub mod enginebench;
pub mod history;
pub mod lockclient;
pub mod model;
pub mod process;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod time;
pub mod workload;
