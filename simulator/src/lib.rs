//! locksim's engine: a deterministic discrete-event simulator for distributed lock models.
//!
//! Module map:
//! Layered bottom-up; a module imports only from the layers above it in this list:
//! - [`time`]: true time in integer nanoseconds, millisecond conversions
//! - [`directory`]: node ids, node kinds and the directory of names
//! - [`clock`]: per-node monotonic and wall clocks with drift and jumps
//! - [`rng`]: seeded ChaCha8 streams per node and purpose
//! - [`portable`]: normal and exponential draws, `ln` and `exp`, the same on every platform (libm)
//! - [`lognormal_ns`]: a log-normal drawn in nanoseconds from its quantile table (network latency)
//! - [`dist`]: the number-or-distribution values of the scenario format
//! - [`history`]: the recorded history the checkers read
//! - [`timers`]: timer ids and the timer slab
//! - [`fingerprint`]: typed state hashing with node ids renamed (a world's symmetric fingerprint)
//! - [`wire`]: the workload's resource messages and timers, and the envelopes around a model's
//! - [`wire_enum`]: `wrapper_enum!`, how a model declares its message and timer enums
//! - [`durable`]: what survives a crash, as a type (`Crash`, `Durable`: a node's disk, and how it boots from it)
//! - [`process`]: the typed sans-IO interface (`Protocol`, `Process`) and the handler context `Ctx`
//! - [`lockclient`]: the one lock-client interface every model's client library implements
//! - [`setup`]: a resolved run's setting (network, workload, clocks, faults, selectors)
//! - [`traced`]: what a trace line is about, as typed values (message, timer, history event, fault)
//! - [`trace`]: the event log and its hash
//! - [`metric`]: the registry of metrics a user can name (`[expect]`, the JSON, the table)
//! - [`checker`]: every metric of a run, from its history
//! - [`outcome`]: what one seed is asked for and gives back
//! - [`search`]: what a systematic search sees of a world (choices, steps, injected faults), types erased
//! - [`model`]: what a model is: typed `Model`, its erased `DynModel`, parameters
//! - [`workload`]: the shared workload driver (client nodes) and the protected resource node
//! - [`engine`]: the event loop, network, faults and selectors
//! - [`enginebench`]: the standard engine-only benchmark workload (`sim bench engine`, criterion)
//! - [`run`]: running one seed of one model (and `Model` → `DynModel`)
//! - [`realtime`]: one client or resource node hosted on a real clock, for live mode
//! - [`scenario`]: the scenario file format: parsing, validation, errors with line and column
//! - [`batch`]: running many seeds in parallel, results in seed order, panics caught per seed
//! - [`estimate`]: what a run would cost (events, wall time), from a short probe (`sim check`)

#![warn(missing_docs)]

pub mod batch;
pub mod checker;
pub mod clock;
pub mod directory;
pub mod dist;
pub mod durable;
pub mod engine;
pub mod enginebench;
pub mod estimate;
pub mod fingerprint;
pub mod history;
pub mod lockclient;
pub mod lognormal_ns;
pub mod metric;
pub mod model;
pub mod outcome;
pub mod portable;
pub mod process;
pub mod realtime;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod search;
pub mod setup;
pub mod time;
pub mod timers;
pub mod trace;
pub mod traced;
pub mod wire;
pub mod wire_enum;
pub mod workload;
