//! Helpers shared by the etcd model's tests: run one labelled configuration of a scenario text for
//! one seed, or that row's [`EtcdConfig`] changed in Rust ([`run_edited`]), and read the history
//! and the trace.

#![allow(dead_code)]

use crate::common;
pub use common::*;

pub use locksim_algorithms::etcd::EtcdConfig;
use locksim_algorithms::etcd::{Etcd, ETCD};
use locksim_simulator::model::{Cluster, DynModel, Params};
use locksim_simulator::process::NodeKind;
use locksim_simulator::run::{RunOptions, SeedOutcome};
use locksim_simulator::scenario::parse_str;
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::trace::MessageLine;

pub use locksim_algorithms::etcd::protocol::{EtcdMsg, Op, Peer, Reply, Request, Response};

/// Every request sent whose call `is`, in order.
pub fn requests_sent<'o>(out: &'o SeedOutcome, is: impl Fn(&Op) -> bool) -> Vec<MessageLine<'o, Request>> {
    sent::<EtcdMsg>(out).into_iter().filter_map(|l| l.part(|m| request(m).filter(|r| is(&r.op)))).collect()
}

/// Every request delivered whose call `is`, in order.
pub fn requests_delivered<'o>(out: &'o SeedOutcome, is: impl Fn(&Op) -> bool) -> Vec<MessageLine<'o, Request>> {
    delivered::<EtcdMsg>(out).into_iter().filter_map(|l| l.part(|m| request(m).filter(|r| is(&r.op)))).collect()
}

/// Every successful answer delivered whose reply `is`, in order.
pub fn replies_delivered<'o>(out: &'o SeedOutcome, is: impl Fn(&Reply) -> bool) -> Vec<MessageLine<'o, Response>> {
    let answer = |m: &'o EtcdMsg| match m {
        EtcdMsg::Response(r) if r.result.as_ref().is_ok_and(&is) => Some(r),
        _ => None,
    };
    delivered::<EtcdMsg>(out).into_iter().filter_map(|l| l.part(answer)).collect()
}

fn request(m: &EtcdMsg) -> Option<&Request> {
    match m {
        EtcdMsg::Request(r) => Some(r),
        _ => None,
    }
}

impl TypedConfig for EtcdConfig {
    type Shipped = Etcd;
    fn shipped() -> &'static Etcd {
        &ETCD
    }
    fn library_name(&self) -> String {
        self.library.name().to_string()
    }
    fn services(&self) -> Vec<(String, NodeKind)> {
        EtcdConfig::services(self)
    }
    fn cluster(&self, workload: &WorkloadSpec) -> Cluster<Etcd> {
        self.cluster(workload)
    }
    fn shared_locks(&self, _params: &Params) -> bool {
        self.rw_recipe
    }
}

/// Runs `label` of the scenario `toml` for `seed`, with a trace, with the row's configuration
/// (its parameters after the `client` preset) changed by `edit`: a change a test makes in Rust,
/// checked by the compiler, instead of splicing TOML lines into the text.
pub fn run_edited(toml: &str, label: &str, seed: u64, edit: impl FnOnce(&mut EtcdConfig)) -> SeedOutcome {
    let sc = parse_str("test.toml", toml, &locksim_algorithms::registry()).unwrap_or_else(|e| panic!("{e}"));
    let run = sc.runs.iter().find(|r| r.label == label).unwrap_or_else(|| panic!("no run labelled {label}"));
    let mut cfg = EtcdConfig::from_params(&run.params);
    edit(&mut cfg);
    Configured(cfg).run_seed(&sc.setup, &run.params, seed, &RunOptions { trace: true })
}

/// The client's name for a node id.
pub fn client_index(out: &SeedOutcome, node: usize) -> usize {
    out.history.clients.iter().position(|&c| c == node).expect("a client")
}

/// Grants whose token is below an earlier grant's, or equal to one granted to another client:
/// token regressions proper. A client granted again the token it held before, after its Unlock
/// failed (`ReleaseFailed`: the own key stayed, and the next Lock in the same session finds it
/// still first), is not one: mutex.go re-holds under the same create revision.
pub fn regressions_other_than_regrants(out: &SeedOutcome) -> usize {
    use locksim_simulator::history::HistoryEvent;
    let mut best: Option<(u64, usize)> = None;
    let mut bad = 0;
    for g in events(out, |e| matches!(e, HistoryEvent::Granted { .. })) {
        let HistoryEvent::Granted { token: Some(t), .. } = g.event else { continue };
        match best {
            Some((b, holder)) if t < b || (t == b && holder != g.node) => bad += 1,
            Some((b, _)) if t == b => {}
            _ => best = Some((t, g.node)),
        }
    }
    bad
}
