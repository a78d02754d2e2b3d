//! Helpers shared by the zookeeper model's tests: run one labelled configuration of a scenario
//! text for one seed, or a scenario's network, workload and faults with a typed
//! [`ZooKeeperConfig`] ([`run_config`]), and read the history and the trace.

#![allow(dead_code)]

#[path = "../common/mod.rs"]
mod common;
pub use common::*;

pub use locksim_algorithms::zookeeper::ZooKeeperConfig;
use locksim_algorithms::zookeeper::{ZooKeeper, ZOOKEEPER};
use locksim_simulator::model::{Cluster, DynModel, Model, ParamSpec, Params, Topology};
use locksim_simulator::process::NodeKind;
use locksim_simulator::run::{RunOptions, SeedOutcome};
use locksim_simulator::scenario::parse_str;
use locksim_simulator::setup::WorkloadSpec;

/// The configuration of a row that sets only `client = "locksim-1"` (the model before presets),
/// for a test to change what it is about.
pub fn locksim_1() -> ZooKeeperConfig {
    let text = "name = \"defaults\"\nduration_ms = 1000\nalgorithms = [\"zookeeper\"]\n[models.zookeeper]\nclient = \"locksim-1\"\n";
    let sc = parse_str("zk_defaults.toml", text, &locksim_algorithms::registry()).unwrap_or_else(|e| panic!("{e}"));
    ZooKeeperConfig::from_params(&sc.runs[0].params)
}

/// The zookeeper model fixed to one typed configuration: it builds its cluster from the
/// configuration, not from the scenario's parameters.
struct Configured(ZooKeeperConfig);

impl Model for Configured {
    type Protocol = ZooKeeper;
    fn name(&self) -> &'static str {
        "zookeeper"
    }
    fn summary(&self) -> &'static str {
        "zookeeper, with a typed configuration"
    }
    fn params(&self) -> &'static [ParamSpec] {
        Model::params(&ZOOKEEPER)
    }
    fn library(&self, _params: &Params) -> Option<String> {
        Some(self.0.library.name().to_string())
    }
    fn fenced(&self, params: &Params) -> bool {
        Model::fenced(&ZOOKEEPER, params)
    }
    fn services(&self, _params: &Params) -> Vec<(String, NodeKind)> {
        self.0.services()
    }
    fn topology(&self, params: &Params) -> Topology {
        Model::topology(&ZOOKEEPER, params)
    }
    fn build(&self, _params: &Params, workload: &WorkloadSpec) -> Cluster<ZooKeeper> {
        self.0.cluster(workload)
    }
}

/// Runs `setup`, a scenario text with one `zookeeper` row and no model parameters (its network,
/// workload and faults), with the model configured as `cfg`, for `seed`, with a trace.
pub fn run_config(setup: &str, cfg: &ZooKeeperConfig, seed: u64) -> SeedOutcome {
    let sc = parse_str("test.toml", setup, &locksim_algorithms::registry()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.runs.len(), 1, "one row: the configuration comes from the test");
    Configured(cfg.clone()).run_seed(&sc.setup, &sc.runs[0].params, seed, &RunOptions { trace: true })
}
