//! locksim's lock models, one module each, and the registry from model name to model.
//!
//! Module map:
//! - `redis`: one Redis primary, replicas, Sentinel, the Redisson watchdog
//!
//! (Other models are added to [`registry`] as they are built.)

use locksim_simulator::model::Model;

/// Every model this build has, in the order `sim list` shows them.
pub fn registry() -> Vec<&'static dyn Model> {
    vec![]
}

/// The model with this name.
pub fn find(name: &str) -> Option<&'static dyn Model> {
    registry().into_iter().find(|m| m.name() == name)
}
