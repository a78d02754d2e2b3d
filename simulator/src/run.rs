//! Running one seed of one model: build the world from the setup and the model's typed cluster,
//! run it, hand back what it recorded ([`Recorded`]; the checkers are the caller's, see
//! [`SeedOutcome::checked`]). Also where a typed [`Model`] becomes a [`DynModel`].

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::clock::NodeClock;
use crate::directory::Directory;
use crate::engine::choice::SearchRun;
use crate::engine::network::{LinkParams, Network};
use crate::engine::pairs::PairIndex;
use crate::engine::{schedule, Behaviour, Node, World, WorldConfig};
use crate::history::{History, HistoryEvent, Stamped};
use crate::model::{DynModel, Model, ParamProblem, ParamSpec, Params, Topology};
use crate::process::NodeKind;
use crate::rng::stream;
use crate::search::SearchWorld;
use crate::setup::{Selector, Setup, WorkloadSpec};
use crate::time::{ms_to_ns, ms_to_ns_signed};
use crate::workload::{ClientNode, ResourceNode};

use crate::outcome::Halt;
pub use crate::outcome::{Recorded, RunOptions, SeedOutcome};

thread_local! {
    /// The history buffer of the last seed this thread finished with (see [`recycle`]).
    static SPARE_HISTORY: RefCell<Vec<Stamped>> = const { RefCell::new(Vec::new()) };
}

/// Hands a finished seed's history back for the next seed run on this thread: a seed's history
/// is large, and allocating it afresh each time costs page faults. Memory only: nothing of its
/// contents is kept.
pub fn recycle(history: History) {
    recycle_events(history.events);
}

fn recycle_events(mut events: Vec<Stamped>) {
    events.clear();
    SPARE_HISTORY.with(|s| {
        let mut spare = s.borrow_mut();
        if events.capacity() > spare.capacity() {
            *spare = events;
        }
    });
}

fn node_set(sel: &Selector, names: &[(String, NodeKind)]) -> Vec<bool> {
    names
        .iter()
        // The parser admits only fixed selectors in links (see `Selector::is_fixed`).
        .map(|(name, kind)| sel.fixed_match(name, *kind).unwrap_or(false))
        .collect()
}

/// The world of one seed of `model` with `params` through `setup`, at true time 0 with every
/// node's start and fault occurrence queued (`tracing`: it records a trace), and the nodes'
/// names and kinds by id. [`record_typed`] runs it to its end; a search copies it
/// (`World: Clone`) and runs it event by event.
pub fn build_world<M: Model>(
    model: &M,
    setup: &Setup,
    params: &Params,
    seed: u64,
    tracing: bool,
) -> (World<M::Protocol>, Vec<(String, NodeKind)>) {
    let w = &setup.workload;
    let cluster = model.build(params, w);
    let topology = model.topology(params);

    let mut names: Vec<(String, NodeKind)> = model.services(params);
    assert_eq!(
        names.len(),
        cluster.services.len(),
        "model {}: services() names {} nodes but build() made {}",
        model.name(),
        names.len(),
        cluster.services.len()
    );
    let mut processes: Vec<Behaviour<M::Protocol>> = cluster.services.into_iter().map(Behaviour::Service).collect();
    for (i, lib) in cluster.clients.into_iter().enumerate() {
        let name = format!("client-{i}");
        let driver_rng = stream(seed, &name, "workload");
        processes.push(Behaviour::Client(Box::new(ClientNode::new(lib, w.clone(), driver_rng))));
        names.push((name, NodeKind::Client));
    }
    names.push(("resource".to_string(), NodeKind::Resource));
    processes.push(Behaviour::Resource(ResourceNode::new(w.locks)));

    let nodes: Vec<Node<M::Protocol>> = processes
        .into_iter()
        .zip(names.iter())
        .map(|(p, (name, _))| {
            let mut clock_rng = stream(seed, name, "clock");
            let drift = setup.clocks.drift_ppm.sample(&mut clock_rng);
            let offset = ms_to_ns_signed(setup.clocks.offset_ms.sample(&mut clock_rng));
            Node::new(p, NodeClock::new(drift, offset), stream(seed, name, "model"))
        })
        .collect();

    let n = &setup.network;
    let base = LinkParams { latency_ms: n.latency_ms.clone(), loss: n.loss, duplicate: n.duplicate };
    let mut overrides = Vec::new();
    for l in &n.links {
        let params = LinkParams {
            latency_ms: l.latency_ms.clone().unwrap_or_else(|| base.latency_ms.clone()),
            loss: l.loss.unwrap_or(base.loss),
            duplicate: l.duplicate.unwrap_or(base.duplicate),
        };
        let from = node_set(&l.from, &names);
        let to = node_set(&l.to, &names);
        if !l.one_way {
            overrides.push((to.clone(), from.clone(), params.clone()));
        }
        overrides.push((from, to, params));
    }
    let dir = Directory::new(&names);
    let network = Network::new(PairIndex::of_directory(&dir), base, overrides, topology.ordered_links);
    let end_ns = ms_to_ns(setup.duration_ms);
    let occurrences = schedule::draw(&setup.faults, end_ns, &mut stream(seed, "faults", "schedule"));
    let world = World::new(
        dir,
        nodes,
        WorldConfig {
            end_ns,
            network,
            net_rng: stream(seed, "network", "latency"),
            fault_rng: stream(seed, "faults", "selection"),
            faults: setup.faults.clone(),
            occurrences,
            leaderless: topology.leaderless,
            tracing,
        },
    );
    let mut world = world;
    if let Some(replay) = &setup.replay {
        world.follow_replay(replay.events.clone(), replay.delays_ms.iter().map(|&ms| ms_to_ns(ms)).collect());
        if !replay.hold_ms.is_empty() || !replay.think_ms.is_empty() {
            let ns = |list: &[f64]| list.iter().map(|&ms| ms_to_ns(ms)).collect();
            world.follow_workload_times(ns(&replay.hold_ms), ns(&replay.think_ms));
        }
    }
    (world, names)
}

/// Runs one seed of `model` with `params` through `setup` and returns its recording, unless
/// `stop` becomes true or the seed's simulated time stops advancing ([`World::run_until`]): then
/// the seed has no result.
pub fn record_typed<M: Model>(
    model: &M,
    setup: &Setup,
    params: &Params,
    seed: u64,
    opts: &RunOptions,
    stop: Option<&AtomicBool>,
) -> Result<Recorded, Halt> {
    let w = &setup.workload;
    let fenced = model.fenced(params);
    let (world, names) = build_world(model, setup, params, seed, opts.trace);
    let end_ns = ms_to_ns(setup.duration_ms);
    let spare = SPARE_HISTORY.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let mut world = world.with_history_buffer(spare);

    // A stop raised after the last event still ends the seed here: checking a long seed's history
    // can take longer than the bound a stop promises, and a seed not yet checked has no result.
    let ended = world.run_until(stop).and_then(|()| match stop {
        Some(s) if s.load(Ordering::Relaxed) => Err(Halt::Stopped),
        _ => Ok(()),
    });
    let result = world.finish();
    if let Err(halt) = ended {
        recycle_events(result.history);
        return Err(halt);
    }

    let mut final_counter = vec![0u64; w.locks as usize];
    for e in &result.history {
        if let HistoryEvent::ResourceWrite { key, value, .. } = e.event {
            final_counter[key as usize] = value;
        }
    }
    let clients = names.iter().enumerate().filter(|(_, (_, k))| *k == NodeKind::Client).map(|(i, _)| i).collect();
    let history = History {
        events: result.history,
        folded: result.folded,
        messages: result.messages,
        client_messages: result.client_messages,
        duration_ns: end_ns,
        final_counter,
        clients,
        fenced,
        node_names: names.iter().map(|(n, _)| n.clone()).collect(),
        faults: result.faults,
        schedule_period_ns: w.schedule.as_ref().map(|s| ms_to_ns(s.period_ms)),
        clocks: result.clocks,
        leaders: result.leaders,
    };
    Ok(Recorded { seed, history, trace: result.trace, events: result.events_processed })
}

impl<M: Model> DynModel for M {
    fn name(&self) -> &'static str {
        Model::name(self)
    }
    fn summary(&self) -> &'static str {
        Model::summary(self)
    }
    fn params(&self) -> &'static [ParamSpec] {
        Model::params(self)
    }
    fn validate(&self, params: &Params, workload: &WorkloadSpec) -> Vec<ParamProblem> {
        Model::validate(self, params, workload)
    }
    fn limitations(&self, params: &Params, workload: &WorkloadSpec) -> Vec<String> {
        Model::limitations(self, params, workload)
    }
    fn fenced(&self, params: &Params) -> bool {
        Model::fenced(self, params)
    }
    fn library(&self, params: &Params) -> Option<String> {
        Model::library(self, params)
    }
    fn shared_locks(&self, params: &Params) -> bool {
        Model::shared_locks(self, params)
    }
    fn services(&self, params: &Params) -> Vec<(String, NodeKind)> {
        Model::services(self, params)
    }
    fn topology(&self, params: &Params) -> Topology {
        Model::topology(self, params)
    }
    fn record_seed(
        &self,
        setup: &Setup,
        params: &Params,
        seed: u64,
        opts: &RunOptions,
        stop: Option<&AtomicBool>,
    ) -> Result<Recorded, Halt> {
        record_typed(self, setup, params, seed, opts, stop)
    }
    fn search_world(&self, setup: &Setup, params: &Params, seed: u64) -> Box<dyn SearchWorld> {
        let (world, names) = build_world(self, setup, params, seed, false);
        let fenced = Model::fenced(self, params);
        Box::new(SearchRun::new(world, names, fenced, seed, setup.workload.locks))
    }
}
