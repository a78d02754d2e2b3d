//! Engine behaviour through the public World API, with probe processes: timers on a drifting
//! clock, the pause backlog, crash and restart, partitions (two-way and one-way) and role
//! selectors resolved at fault time.

use locksim_simulator::clock::NodeClock;
use locksim_simulator::directory::Directory;
use locksim_simulator::dist::Dist;
use locksim_simulator::engine::network::{LinkParams, Network};
use locksim_simulator::engine::schedule::Occurrence;
use locksim_simulator::engine::{Behaviour, Node, World, WorldConfig};
use locksim_simulator::process::{ClientState, Crash, Ctx, NodeId, NodeKind, Process, Protocol, TimerId};
use locksim_simulator::rng::stream;
use locksim_simulator::setup::{FaultKind, FaultSpec, Selector};
use locksim_simulator::trace::TraceEntry;

const MS: u64 = 1_000_000;

/// A probe: at start it sets the timers and sends the messages it was given; it counts what it
/// handles; it reports a fixed leadership and client state.
#[derive(Default)]
struct Probe {
    timers_ms: Vec<u64>,
    sends: Vec<(NodeId, &'static str)>,
    leadership: Option<u64>,
    state: ClientState,
    crashed: u32,
    /// Durable across crashes (as a model would declare it).
    restarts: u32,
}

#[derive(Clone, Debug)]
struct Ping(&'static str);

/// The probes' protocol: text pings, and timers tagged with their own length in ms.
struct Probes;
impl Protocol for Probes {
    type Msg = Ping;
    type Timer = u64;
}

impl Process<Probes> for Probe {
    fn on_start(&mut self, ctx: &mut Ctx<Probes>) {
        for t in self.timers_ms.clone() {
            ctx.set_timer(t * MS, t);
        }
        for (to, text) in self.sends.clone() {
            ctx.send(to, Ping(text));
        }
    }
    fn on_message(&mut self, ctx: &mut Ctx<Probes>, _from: NodeId, msg: Ping) {
        ctx.note(|| format!("got Ping({:?})", msg.0));
    }
    fn on_timer(&mut self, ctx: &mut Ctx<Probes>, _timer: TimerId, tag: u64) {
        ctx.note(|| format!("timer {tag}"));
    }
    fn on_crash(&mut self, _crash: &Crash) {
        self.crashed += 1;
        self.timers_ms.clear();
        self.sends.clear();
    }
    fn on_restart(&mut self, ctx: &mut Ctx<Probes>) {
        self.restarts += 1;
        ctx.note(|| "restarted".to_string());
    }
    fn leadership(&self) -> Option<u64> {
        self.leadership
    }
    fn client_state(&self) -> ClientState {
        self.state
    }
}

fn fault(kind: FaultKind, targets: Vec<Selector>, at_ms: f64, duration_ms: Option<f64>) -> FaultSpec {
    FaultSpec {
        kind,
        targets,
        at_ms: Dist::Const(at_ms),
        duration_ms: duration_ms.map(Dist::Const),
        every_ms: None,
        probability: 1.0,
    }
}

/// Builds a world of probes with a constant 1 ms network, runs it for `end_ms`, returns the trace.
fn run_world(nodes: Vec<(&str, NodeKind, Probe, f64)>, faults: Vec<FaultSpec>, end_ms: u64) -> Vec<TraceEntry> {
    let names: Vec<(String, NodeKind)> = nodes.iter().map(|(n, k, _, _)| (n.to_string(), *k)).collect();
    let count = names.len();
    let procs: Vec<Node<Probes>> = nodes
        .into_iter()
        .map(|(name, _, p, drift)| {
            Node::new(Behaviour::Service(Box::new(p)), NodeClock::new(drift, 0), stream(1, name, "model"))
        })
        .collect();
    let base = LinkParams { latency_ms: Dist::Const(1.0), loss: 0.0, duplicate: 0.0 };
    let occurrences: Vec<Occurrence> = faults
        .iter()
        .enumerate()
        .map(|(i, f)| Occurrence {
            fault: i,
            start_ns: (f.at_ms.mean() * MS as f64) as u64,
            duration_ns: f.duration_ms.as_ref().map(|d| (d.mean() * MS as f64) as u64),
            value: match &f.kind {
                FaultKind::ClockJump { by_ms } => by_ms.mean(),
                FaultKind::ClockDrift { ppm } => ppm.mean(),
                _ => 0.0,
            },
        })
        .collect();
    let mut world: World<Probes> = World::new(
        Directory::new(&names),
        procs,
        WorldConfig {
            end_ns: end_ms * MS,
            network: Network::new(count, base, vec![], false),
            net_rng: stream(1, "network", "latency"),
            fault_rng: stream(1, "faults", "selection"),
            faults,
            occurrences,
            leaderless: false,
            tracing: true,
        },
    );
    world.run();
    world.finish().trace.expect("tracing").entries
}

fn find<'a>(trace: &'a [TraceEntry], node: &str, kind: &str, contains: &str) -> Vec<&'a TraceEntry> {
    trace.iter().filter(|e| e.node == node && e.kind == kind && e.detail.contains(contains)).collect()
}

#[test]
fn a_fast_clock_fires_its_timers_early_in_true_time() {
    let fast = Probe { timers_ms: vec![10_000], ..Default::default() };
    let exact = Probe { timers_ms: vec![10_000], ..Default::default() };
    let trace = run_world(
        vec![("server-0", NodeKind::Server, fast, 1000.0), ("server-1", NodeKind::Server, exact, 0.0)],
        vec![],
        20_000,
    );
    let f = find(&trace, "server-0", "timer", "10000")[0].at_ns;
    let e = find(&trace, "server-1", "timer", "10000")[0].at_ns;
    assert_eq!(e, 10_000 * MS);
    // 1000 ppm fast: 10 s of local time pass in 10 s / 1.001 of true time, ~9.99 ms early.
    assert!(f < e && e - f > 9 * MS && e - f < 10 * MS, "fast fired at {f}");
}

#[test]
fn a_drift_fault_moves_pending_timers() {
    let p = Probe { timers_ms: vec![10_000], ..Default::default() };
    let faults = vec![fault(
        FaultKind::ClockDrift { ppm: Dist::Const(100_000.0) },
        vec![Selector::Named("server-0".into())],
        5_000.0,
        None,
    )];
    let trace = run_world(vec![("server-0", NodeKind::Server, p, 0.0)], faults, 20_000);
    let fired = find(&trace, "server-0", "timer", "10000");
    assert_eq!(fired.len(), 1, "fires once, not at the stale time too");
    // 5 s at rate 1, then 5 s of local time at rate 1.1: 5 + 5/1.1 = 9.545 s.
    let t = fired[0].at_ns as f64 / 1e9;
    assert!((t - 9.5454).abs() < 0.001, "fired at {t}");
}

#[test]
fn a_paused_node_handles_its_backlog_at_resume_in_order() {
    let sender = Probe { sends: vec![(1, "hello")], ..Default::default() };
    let sleeper = Probe { timers_ms: vec![50], ..Default::default() };
    // Paused just after its start (a pause at 0 would hold the start itself), until 100.5 ms.
    let faults = vec![fault(FaultKind::Pause, vec![Selector::Named("server-1".into())], 0.5, Some(100.0))];
    let trace = run_world(
        vec![("server-0", NodeKind::Server, sender, 0.0), ("server-1", NodeKind::Server, sleeper, 0.0)],
        faults,
        200,
    );
    let queued = find(&trace, "server-1", "queued", "hello");
    assert_eq!(queued.len(), 1);
    assert_eq!(queued[0].at_ns, MS, "arrived during the pause");
    let got = find(&trace, "server-1", "note", "got Ping(\"hello\")");
    assert_eq!(got[0].at_ns, 100 * MS + MS / 2, "handled at resume");
    let timer = find(&trace, "server-1", "note", "timer 50");
    assert_eq!(timer[0].at_ns, 100 * MS + MS / 2, "the due timer fires at resume");
    // Order: the message arrived (1 ms) before the timer was due (50 ms).
    let pos = |e: &TraceEntry| trace.iter().position(|x| std::ptr::eq(x, e)).unwrap();
    assert!(pos(got[0]) < pos(timer[0]));
}

#[test]
fn a_fault_at_time_zero_holds_the_nodes_start() {
    // Crashed at 0: it does not start (it would send while down); it restarts at the crash's end.
    let crashed = Probe { sends: vec![(1, "from the dead")], ..Default::default() };
    // Paused at 0: it starts when it resumes, and only then sends.
    let paused = Probe { sends: vec![(0, "late")], ..Default::default() };
    let faults = vec![
        fault(FaultKind::Crash, vec![Selector::Named("server-0".into())], 0.0, Some(10.0)),
        fault(FaultKind::Pause, vec![Selector::Named("server-1".into())], 0.0, Some(20.0)),
    ];
    let trace = run_world(
        vec![("server-0", NodeKind::Server, crashed, 0.0), ("server-1", NodeKind::Server, paused, 0.0)],
        faults,
        100,
    );
    assert!(find(&trace, "server-0", "send", "").is_empty(), "a node down at its start sends nothing");
    assert_eq!(find(&trace, "server-0", "start", "skipped").len(), 1);
    assert_eq!(find(&trace, "server-0", "note", "restarted")[0].at_ns, 10 * MS);
    let sends = find(&trace, "server-1", "send", "late");
    assert_eq!(sends.len(), 1);
    assert_eq!(sends[0].at_ns, 20 * MS, "the paused node starts at resume");
}

#[test]
fn a_crashed_node_drops_messages_and_timers_then_restarts() {
    let sender = Probe { sends: vec![(1, "lost")], ..Default::default() };
    let victim = Probe { timers_ms: vec![50, 500], ..Default::default() };
    let faults = vec![fault(FaultKind::Crash, vec![Selector::Named("server-1".into())], 0.5, Some(100.0))];
    let trace = run_world(
        vec![("server-0", NodeKind::Server, sender, 0.0), ("server-1", NodeKind::Server, victim, 0.0)],
        faults,
        1_000,
    );
    assert_eq!(find(&trace, "server-1", "drop", "node down").len(), 1);
    assert!(find(&trace, "server-1", "note", "timer").is_empty(), "timers die with the crash");
    let restarted = find(&trace, "server-1", "note", "restarted");
    assert_eq!(restarted.len(), 1);
    assert_eq!(restarted[0].at_ns, 100 * MS + MS / 2);
}

#[test]
fn partitions_cut_both_ways_or_one_way_and_heal() {
    let a = Probe { sends: vec![(1, "a→b")], timers_ms: vec![], ..Default::default() };
    let b = Probe { sends: vec![(0, "b→a")], ..Default::default() };
    let one_way = FaultKind::Partition {
        groups: vec![vec![Selector::Named("server-0".into())], vec![Selector::Named("server-1".into())]],
        one_way: true,
    };
    let trace = run_world(
        vec![("server-0", NodeKind::Server, a, 0.0), ("server-1", NodeKind::Server, b, 0.0)],
        vec![fault(one_way, vec![], 0.0, Some(10.0))],
        100,
    );
    assert_eq!(find(&trace, "server-0", "drop", "a→b").len(), 1, "cut from the first group");
    assert_eq!(find(&trace, "server-0", "note", "b→a").len(), 1, "the other direction still works");

    let a = Probe { sends: vec![(1, "a→b")], ..Default::default() };
    let b = Probe { sends: vec![(0, "b→a")], ..Default::default() };
    let two_way = FaultKind::Partition {
        groups: vec![vec![Selector::Named("server-0".into())], vec![Selector::Named("server-1".into())]],
        one_way: false,
    };
    let trace = run_world(
        vec![("server-0", NodeKind::Server, a, 0.0), ("server-1", NodeKind::Server, b, 0.0)],
        vec![fault(two_way, vec![], 0.0, None)],
        100,
    );
    assert_eq!(find(&trace, "server-0", "drop", "a→b").len(), 1);
    assert_eq!(find(&trace, "server-1", "drop", "b→a").len(), 1);
}

#[test]
fn a_partition_group_naming_a_node_this_run_lacks_still_starts() {
    // One scenario drives several algorithms; a group such as ["server-0", "server-4"] names a
    // node a three-server run does not have. That name selects nobody: the cut still happens.
    let a = Probe { sends: vec![(1, "a→b")], ..Default::default() };
    let b = Probe::default();
    let cut = FaultKind::Partition {
        groups: vec![
            vec![Selector::Named("server-0".into()), Selector::Named("server-4".into())],
            vec![Selector::Named("server-1".into())],
        ],
        one_way: false,
    };
    let trace = run_world(
        vec![("server-0", NodeKind::Server, a, 0.0), ("server-1", NodeKind::Server, b, 0.0)],
        vec![fault(cut, vec![], 0.0, Some(10.0))],
        100,
    );
    assert!(
        trace.iter().any(|e| e.kind == "fault" && e.detail.starts_with("partition starts")),
        "the partition starts: {:?}",
        trace.iter().filter(|e| e.kind == "fault").map(|e| &e.detail).collect::<Vec<_>>()
    );
    assert_eq!(find(&trace, "server-0", "drop", "a→b").len(), 1, "server-0 is cut from server-1");
}

#[test]
fn a_message_in_flight_when_the_link_is_cut_is_lost() {
    let a = Probe { sends: vec![(1, "late")], ..Default::default() };
    let b = Probe::default();
    let trace = run_world(
        vec![("server-0", NodeKind::Server, a, 0.0), ("server-1", NodeKind::Server, b, 0.0)],
        vec![fault(FaultKind::Isolate, vec![Selector::Named("server-1".into())], 0.5, Some(10.0))],
        100,
    );
    assert_eq!(find(&trace, "server-1", "drop", "link cut in flight").len(), 1);
}

#[test]
fn role_selectors_resolve_at_fault_time_and_wait_for_a_member() {
    let old = Probe { leadership: Some(1), ..Default::default() };
    let new = Probe { leadership: Some(2), ..Default::default() };
    let idle = Probe::default();
    let faults = vec![
        fault(FaultKind::Crash, vec![Selector::Leader], 5.0, None),
        // No client ever holds: the fault waits (and never fires).
        fault(FaultKind::Crash, vec![Selector::Holder], 5.0, None),
    ];
    let trace = run_world(
        vec![
            ("server-0", NodeKind::Server, old, 0.0),
            ("server-1", NodeKind::Server, new, 0.0),
            ("client-0", NodeKind::Client, idle, 0.0),
        ],
        faults,
        50,
    );
    let starts: Vec<&TraceEntry> =
        trace.iter().filter(|e| e.kind == "fault" && e.detail.starts_with("crash starts")).collect();
    assert_eq!(starts.len(), 1);
    assert!(starts[0].detail.contains("[server-1]"), "highest term leads: {}", starts[0].detail);
    assert!(trace.iter().any(|e| e.kind == "fault" && e.detail.contains("waits for a `holder`")));

    let holder = Probe { state: ClientState::Holding, ..Default::default() };
    let other = Probe::default();
    let trace = run_world(
        vec![("client-0", NodeKind::Client, other, 0.0), ("client-1", NodeKind::Client, holder, 0.0)],
        vec![fault(FaultKind::Pause, vec![Selector::Holder], 1.0, Some(5.0))],
        50,
    );
    assert!(trace.iter().any(|e| e.kind == "fault" && e.detail.contains("pause starts on [client-1]")));
}
