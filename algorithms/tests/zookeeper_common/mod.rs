//! Helpers shared by the zookeeper model's tests: run one labelled configuration of a scenario
//! text for one seed, or a scenario's network, workload and faults with a typed
//! [`ZooKeeperConfig`] ([`run_config`]), and read the history and the trace.

#![allow(dead_code)]

use crate::common;
pub use common::*;

pub use locksim_algorithms::zookeeper::ZooKeeperConfig;
use locksim_algorithms::zookeeper::{ZooKeeper, ZOOKEEPER};
use locksim_simulator::model::Cluster;
use locksim_simulator::process::NodeKind;
use locksim_simulator::run::SeedOutcome;
use locksim_simulator::scenario::parse_str;
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::trace::MessageLine;

pub use locksim_algorithms::zookeeper::protocol::{Op, Request, ZkMsg};

/// Every client request sent whose operation `is`, in order.
pub fn requests_sent<'o>(out: &'o SeedOutcome, is: impl Fn(&Op) -> bool) -> Vec<MessageLine<'o, Request>> {
    let request = |m: &'o ZkMsg| match m {
        ZkMsg::Request(r) if is(&r.op) => Some(r),
        _ => None,
    };
    sent::<ZkMsg>(out).into_iter().filter_map(|l| l.part(request)).collect()
}

/// The configuration of a row that sets only `client = "locksim-1"` (the model before presets),
/// for a test to change what it is about.
pub fn locksim_1() -> ZooKeeperConfig {
    let text = "name = \"defaults\"\nduration_ms = 1000\nalgorithms = [\"zookeeper\"]\n[models.zookeeper]\nclient = \"locksim-1\"\n";
    let sc = parse_str("zk_defaults.toml", text, &locksim_algorithms::registry()).unwrap_or_else(|e| panic!("{e}"));
    ZooKeeperConfig::from_params(&sc.runs[0].params)
}

impl TypedConfig for ZooKeeperConfig {
    type Shipped = ZooKeeper;
    fn shipped() -> &'static ZooKeeper {
        &ZOOKEEPER
    }
    fn library_name(&self) -> String {
        self.library.name().to_string()
    }
    fn services(&self) -> Vec<(String, NodeKind)> {
        ZooKeeperConfig::services(self)
    }
    fn cluster(&self, workload: &WorkloadSpec) -> Cluster<ZooKeeper> {
        self.cluster(workload)
    }
}
