//! Engine behaviour through the public World API, with probe processes: timers on a drifting
//! clock, the pause backlog, crash and restart, partitions (two-way and one-way) and role
//! selectors resolved at fault time.

use locksim_simulator::clock::NodeClock;
use locksim_simulator::directory::Directory;
use locksim_simulator::dist::Dist;
use locksim_simulator::engine::network::{LinkParams, Network};
use locksim_simulator::engine::schedule::Occurrence;
use locksim_simulator::engine::{Behaviour, Node, World, WorldConfig};
use locksim_simulator::process::{ClientState, Crash, CrashKind, Ctx, NodeId, NodeKind, Process, Protocol, TimerId};
use locksim_simulator::rng::stream;
use locksim_simulator::setup::{FaultKind, FaultSpec, Selector};
use locksim_simulator::trace::{MessageLine, Trace, TraceEntry};
use locksim_simulator::traced::{FaultPhase, TracedFault};

const MS: u64 = 1_000_000;

/// A probe: at start it sets the timers and sends the messages it was given; it counts what it
/// handles; it reports a fixed leadership and client state.
#[derive(Clone, Debug, Default)]
struct Probe {
    timers_ms: Vec<u64>,
    sends: Vec<(NodeId, &'static str)>,
    leadership: Option<u64>,
    state: ClientState,
    crashed: u32,
    /// How the last crash took it down (noted at the restart).
    last_crash: Option<CrashKind>,
    /// Durable across crashes (as a model would declare it).
    restarts: u32,
    /// When the timer with this tag fires, send this message (a probe sent at a chosen time:
    /// routed by the network rules in force then, unlike a `send_after` decided at start).
    timer_sends: Vec<(u64, NodeId, &'static str)>,
    /// When the timer with the first tag fires, set a timer of the second length (ms).
    timer_then: Vec<(u64, u64)>,
}

#[derive(Clone, Debug)]
struct Ping(&'static str);

/// The probes' protocol: text pings, and timers tagged with their own length in ms.
struct Probes;
impl Protocol for Probes {
    type Msg = Ping;
    type Timer = u64;
}

impl locksim_simulator::durable::Durable for Probe {
    /// All but its start-up plan; it counts its crashes and notes the last one's kind.
    type Disk = Probe;
    fn into_disk(self, crash: &Crash) -> Probe {
        Probe {
            last_crash: Some(crash.kind),
            crashed: self.crashed + 1,
            timers_ms: Vec::new(),
            sends: Vec::new(),
            ..self
        }
    }
    fn from_disk(disk: Probe) -> Probe {
        disk
    }
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
        for &(t, to, text) in &self.timer_sends {
            if t == tag {
                ctx.send(to, Ping(text));
            }
        }
        for &(t, next) in &self.timer_then {
            if t == tag {
                ctx.set_timer(next * MS, next);
            }
        }
    }
    fn on_reset(&mut self, ctx: &mut Ctx<Probes>, peer: NodeId) {
        let name = ctx.name_of(peer).to_string();
        ctx.note(|| format!("reset by {name}"));
    }
    fn on_restart(&mut self, ctx: &mut Ctx<Probes>) {
        self.restarts += 1;
        let kind = self.last_crash;
        ctx.note(|| format!("restarted after {kind:?}"));
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

/// A node's probe notes (what its handlers saw), in trace order, with their true times.
fn notes<'a>(trace: &'a [TraceEntry], node: &str) -> Vec<(u64, &'a str)> {
    trace.iter().filter(|e| e.node == node && e.kind == "note").map(|e| (e.at_ns, e.detail.as_str())).collect()
}

fn named(name: &str) -> Vec<Selector> {
    vec![Selector::Named(name.into())]
}

/// A process kill of `name` at `at_ms`, restarted after `for_ms` (`None`: never).
fn kill(name: &str, at_ms: f64, for_ms: Option<f64>) -> FaultSpec {
    fault(FaultKind::Crash { mode: CrashKind::Process }, named(name), at_ms, for_ms)
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
    // server-1 is paused from 0.5 ms (just after its start: a pause at 0 would hold the start
    // itself) until 100.5 ms. During the pause, in true time: "first" arrives at 1 ms, its own
    // 20 ms timer is due at 20 ms, "second" (sent by server-0's 30 ms timer) arrives at 31 ms.
    // True arrival order is message, timer, message: "messages before timers" (or "timers
    // before messages") would handle them in a different order.
    let sender = Probe {
        sends: vec![(1, "first")],
        timers_ms: vec![30],
        timer_sends: vec![(30, 1, "second")],
        ..Default::default()
    };
    let sleeper = Probe { timers_ms: vec![20], ..Default::default() };
    let faults = vec![fault(FaultKind::Pause, named("server-1"), 0.5, Some(100.0))];
    let trace = run_world(
        vec![("server-0", NodeKind::Server, sender, 0.0), ("server-1", NodeKind::Server, sleeper, 0.0)],
        faults,
        200,
    );
    let queued = |text: &str| find(&trace, "server-1", "queued", text).iter().map(|e| e.at_ns).collect::<Vec<_>>();
    assert_eq!(queued("first"), vec![MS], "arrived during the pause");
    assert_eq!(queued("second"), vec![31 * MS], "arrived during the pause, after the timer was due");
    let resume = 100 * MS + MS / 2;
    assert_eq!(
        notes(&trace, "server-1"),
        vec![(resume, "got Ping(\"first\")"), (resume, "timer 20"), (resume, "got Ping(\"second\")")],
        "the whole backlog is handled at resume, in true arrival order"
    );
}

#[test]
fn a_fault_at_time_zero_holds_the_nodes_start() {
    // Crashed at 0: it does not start (it would send while down); it restarts at the crash's end.
    let crashed = Probe { sends: vec![(1, "from the dead")], ..Default::default() };
    // Paused at 0: it starts when it resumes, and only then sends.
    let paused = Probe { sends: vec![(0, "late")], ..Default::default() };
    let faults = vec![
        kill("server-0", 0.0, Some(10.0)),
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
    let faults = vec![fault(
        FaultKind::Crash { mode: CrashKind::Process },
        vec![Selector::Named("server-1".into())],
        0.5,
        Some(100.0),
    )];
    let trace = run_world(
        vec![("server-0", NodeKind::Server, sender, 0.0), ("server-1", NodeKind::Server, victim, 0.0)],
        faults,
        1_000,
    );
    assert_eq!(find(&trace, "server-1", "drop", "refused: process down").len(), 1);
    assert!(find(&trace, "server-1", "note", "timer").is_empty(), "timers die with the crash");
    let restarted = find(&trace, "server-1", "note", "restarted");
    assert_eq!(restarted.len(), 1);
    assert_eq!(restarted[0].at_ns, 100 * MS + MS / 2);
}

#[test]
fn partitions_cut_both_ways_or_one_way_and_heal() {
    // Both partitions last 0..10 ms. The probes at start are sent during the cut; the 20 ms
    // probes are sent after it healed and must get through.
    let groups = || vec![named("server-0"), named("server-1")];
    let probes = || {
        let a = Probe {
            sends: vec![(1, "a→b")],
            timers_ms: vec![20],
            timer_sends: vec![(20, 1, "a→b healed")],
            ..Default::default()
        };
        let b = Probe {
            sends: vec![(0, "b→a")],
            timers_ms: vec![20],
            timer_sends: vec![(20, 0, "b→a healed")],
            ..Default::default()
        };
        vec![("server-0", NodeKind::Server, a, 0.0), ("server-1", NodeKind::Server, b, 0.0)]
    };

    let one_way = FaultKind::Partition { groups: groups(), one_way: true };
    let trace = run_world(probes(), vec![fault(one_way, vec![], 0.0, Some(10.0))], 100);
    assert_eq!(find(&trace, "server-0", "drop", "Ping(\"a→b\")").len(), 1, "cut from the first group");
    assert_eq!(find(&trace, "server-0", "note", "got Ping(\"b→a\")").len(), 1, "the other direction still works");
    let healed = find(&trace, "server-1", "note", "got Ping(\"a→b healed\")");
    assert_eq!(healed.len(), 1, "after the one-way cut ends, the cut direction works again");
    assert_eq!(healed[0].at_ns, 21 * MS);
    assert_eq!(find(&trace, "server-0", "note", "b→a healed").len(), 1);

    let two_way = FaultKind::Partition { groups: groups(), one_way: false };
    let trace = run_world(probes(), vec![fault(two_way, vec![], 0.0, Some(10.0))], 100);
    assert_eq!(find(&trace, "server-0", "drop", "Ping(\"a→b\")").len(), 1);
    assert_eq!(find(&trace, "server-1", "drop", "Ping(\"b→a\")").len(), 1);
    assert!(find(&trace, "server-1", "note", "got Ping(\"a→b\")").is_empty());
    assert!(find(&trace, "server-0", "note", "got Ping(\"b→a\")").is_empty());
    for (node, text) in [("server-1", "a→b healed"), ("server-0", "b→a healed")] {
        let got = find(&trace, node, "note", text);
        assert_eq!(got.len(), 1, "after the two-way cut ends, {text} gets through: {got:?}");
        assert_eq!(got[0].at_ns, 21 * MS);
    }
}

#[test]
fn overlapping_pauses_nest_and_the_node_resumes_when_the_last_ends() {
    // server-1: pauses 0.5..50.5 and 10..110 (the first to start ends first).
    // server-2: pauses 0.5..150.5 and 10..60 (the second lies inside the first).
    // Each gets a message at 3 ms, has a timer due at 40 ms, and gets a message at 71 ms,
    // after one of its pauses ended but while the other still holds it.
    let sender = Probe {
        timers_ms: vec![2, 70],
        timer_sends: vec![(2, 1, "early"), (2, 2, "early"), (70, 1, "between"), (70, 2, "between")],
        ..Default::default()
    };
    let one = Probe { timers_ms: vec![40], ..Default::default() };
    let two = Probe { timers_ms: vec![40], ..Default::default() };
    let faults = vec![
        fault(FaultKind::Pause, named("server-1"), 0.5, Some(50.0)),
        fault(FaultKind::Pause, named("server-1"), 10.0, Some(100.0)),
        fault(FaultKind::Pause, named("server-2"), 0.5, Some(150.0)),
        fault(FaultKind::Pause, named("server-2"), 10.0, Some(50.0)),
    ];
    let trace = run_world(
        vec![
            ("server-0", NodeKind::Server, sender, 0.0),
            ("server-1", NodeKind::Server, one, 0.0),
            ("server-2", NodeKind::Server, two, 0.0),
        ],
        faults,
        300,
    );
    for (node, resume) in [("server-1", 110 * MS), ("server-2", 150 * MS + MS / 2)] {
        assert_eq!(
            find(&trace, node, "queued", "between").len(),
            1,
            "{node} is still paused when its first pause to end ends"
        );
        let resumes: Vec<(u64, &str)> =
            find(&trace, node, "resume", "").iter().map(|e| (e.at_ns, e.detail.as_str())).collect();
        assert_eq!(resumes, vec![(resume, "3 queued events")], "{node} resumes once, when its last pause ends");
        assert_eq!(
            notes(&trace, node),
            vec![(resume, "got Ping(\"early\")"), (resume, "timer 40"), (resume, "got Ping(\"between\")")],
            "{node} handles its backlog when its last pause ends"
        );
    }
}

#[test]
fn a_crash_during_a_pause_drops_the_backlog_and_the_pauses_end_resumes_nothing() {
    // server-1: paused 0.5..100.5, crashed 20..60 inside it, paused again 105..120.
    // server-2: paused 0.5..30.5, crashed 20..80 (the crash outlasts the pause).
    // Both get "doomed" at 1 ms (queued by the pause) and have a timer due at 10 ms (backlogged).
    let sender = Probe {
        sends: vec![(1, "doomed"), (2, "doomed")],
        timers_ms: vec![65, 112],
        timer_sends: vec![(65, 1, "after restart"), (112, 1, "in second pause")],
        ..Default::default()
    };
    let one = Probe { timers_ms: vec![10], ..Default::default() };
    let two = Probe { timers_ms: vec![10], ..Default::default() };
    let faults = vec![
        fault(FaultKind::Pause, named("server-1"), 0.5, Some(100.0)),
        kill("server-1", 20.0, Some(40.0)),
        fault(FaultKind::Pause, named("server-1"), 105.0, Some(15.0)),
        fault(FaultKind::Pause, named("server-2"), 0.5, Some(30.0)),
        kill("server-2", 20.0, Some(60.0)),
    ];
    let trace = run_world(
        vec![
            ("server-0", NodeKind::Server, sender, 0.0),
            ("server-1", NodeKind::Server, one, 0.0),
            ("server-2", NodeKind::Server, two, 0.0),
        ],
        faults,
        300,
    );
    for node in ["server-1", "server-2"] {
        assert_eq!(find(&trace, node, "queued", "doomed").len(), 1, "{node} queued it while paused");
    }
    // server-1 restarts at the crash's end, handles what arrives then at once (the crash ended
    // the pause), its first pause's end resumes nothing, and the backlog the crash dropped never
    // comes back, not even at the resume of a later pause.
    let resumes: Vec<(u64, &str)> =
        find(&trace, "server-1", "resume", "").iter().map(|e| (e.at_ns, e.detail.as_str())).collect();
    assert_eq!(resumes, vec![(120 * MS, "1 queued events")], "only the later pause resumes server-1");
    assert_eq!(
        notes(&trace, "server-1"),
        vec![
            (60 * MS, "restarted after Some(Process)"),
            (66 * MS, "got Ping(\"after restart\")"),
            (120 * MS, "got Ping(\"in second pause\")")
        ],
    );
    // server-2: the pause's end, while it is down, does nothing; it restarts once, at the crash's end.
    assert!(find(&trace, "server-2", "resume", "").is_empty(), "a crashed node does not resume");
    assert_eq!(notes(&trace, "server-2"), vec![(80 * MS, "restarted after Some(Process)")]);
}

#[test]
fn the_end_of_a_drift_fault_restores_the_previous_rate() {
    // Pairs of nodes with the same base drift (0 and 1000 ppm); the first of each pair runs
    // 10% fast from 1 s to 2 s. Each sets a 3 s timer at start (it fires after the fault ended)
    // and then a 10 s timer: that one must take as long in true time as on its undrifted twin.
    let probe = || Probe { timers_ms: vec![3_000], timer_then: vec![(3_000, 10_000)], ..Default::default() };
    let drift =
        |name: &str| fault(FaultKind::ClockDrift { ppm: Dist::Const(100_000.0) }, named(name), 1_000.0, Some(1_000.0));
    let trace = run_world(
        vec![
            ("server-0", NodeKind::Server, probe(), 0.0),
            ("server-1", NodeKind::Server, probe(), 0.0),
            ("server-2", NodeKind::Server, probe(), 1000.0),
            ("server-3", NodeKind::Server, probe(), 1000.0),
        ],
        vec![drift("server-0"), drift("server-2")],
        30_000,
    );
    let fired = |node: &str, tag: &str| {
        let f = find(&trace, node, "note", &format!("timer {tag}"));
        assert_eq!(f.len(), 1, "{node}: timer {tag}");
        f[0].at_ns
    };
    // The 10 s timer's true length on each node.
    let length = |node: &str| fired(node, "10000") - fired(node, "3000");
    for (drifted, twin) in [("server-0", "server-1"), ("server-2", "server-3")] {
        // The fault happened: the 3 s timer fired early (0.1 s of extra local time in 1 s).
        let early = fired(twin, "3000") - fired(drifted, "3000");
        assert!(early > 98 * MS && early <= 100 * MS, "{drifted} fired its 3 s timer {early} ns early");
        assert!(fired(drifted, "3000") > 2_000 * MS, "set after the fault ended");
        let (d, t) = (length(drifted), length(twin));
        assert!(d.abs_diff(t) <= 2, "{drifted}: 10 s timer took {d} ns, its undrifted twin {t} ns");
    }
    assert_eq!(length("server-1"), 10_000 * MS);
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
        fault(FaultKind::Crash { mode: CrashKind::Process }, vec![Selector::Leader], 5.0, None),
        // No client ever holds: the fault waits (and never fires).
        fault(FaultKind::Crash { mode: CrashKind::Process }, vec![Selector::Holder], 5.0, None),
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
        trace.iter().filter(|e| e.kind == "fault" && e.detail.starts_with("crash (process) starts")).collect();
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

/// A client that pings server-0 at start (opening a connection) and again at 8, 20 and 25 ms.
fn pinging_client() -> Probe {
    Probe {
        sends: vec![(1, "hello")],
        timers_ms: vec![8, 20, 25],
        timer_sends: vec![(8, 1, "while-down"), (20, 1, "after-restart"), (25, 1, "again")],
        ..Probe::default()
    }
}

#[test]
fn a_killed_process_resets_its_connections_and_refuses_while_down() {
    let trace = run_world(
        vec![
            ("client-0", NodeKind::Client, pinging_client(), 0.0),
            ("server-0", NodeKind::Server, Probe::default(), 0.0),
        ],
        vec![kill("server-0", 5.0, Some(10.0))],
        40,
    );
    let resets: Vec<u64> =
        notes(&trace, "client-0").iter().filter(|(_, n)| n.starts_with("reset by server-0")).map(|(t, _)| *t).collect();
    // The kill closes the connection opened at 1 ms (told at 6 ms); the ping at 8 ms is refused
    // (told at 10 ms); after the restart at 15 ms the pings arrive.
    assert_eq!(resets, vec![6 * MS, 10 * MS], "{trace:#?}");
    let got: Vec<&str> = notes(&trace, "server-0").iter().map(|(_, n)| *n).collect();
    assert!(got.contains(&"got Ping(\"after-restart\")") && got.contains(&"got Ping(\"again\")"), "{got:?}");
    assert!(got.contains(&"restarted after Some(Process)"), "{got:?}");
    assert!(!find(&trace, "-", "fault", "crash (process) starts").is_empty());
}

#[test]
fn a_lost_host_tells_nobody_and_refuses_old_connections_after_its_restart() {
    let trace = run_world(
        vec![
            ("client-0", NodeKind::Client, pinging_client(), 0.0),
            ("server-0", NodeKind::Server, Probe::default(), 0.0),
        ],
        vec![fault(FaultKind::Crash { mode: CrashKind::Machine }, named("server-0"), 5.0, Some(10.0))],
        40,
    );
    let resets: Vec<u64> =
        notes(&trace, "client-0").iter().filter(|(_, n)| n.starts_with("reset by server-0")).map(|(t, _)| *t).collect();
    // Silence while the host is down; the first ping on the old connection after the restart is
    // refused (sent 20, told 22); the next one, on a new connection, arrives.
    assert_eq!(resets, vec![22 * MS], "{trace:#?}");
    let got: Vec<&str> = notes(&trace, "server-0").iter().map(|(_, n)| *n).collect();
    assert!(!got.contains(&"got Ping(\"while-down\")") && !got.contains(&"got Ping(\"after-restart\")"), "{got:?}");
    assert!(got.contains(&"got Ping(\"again\")") && got.contains(&"restarted after Some(Machine)"), "{got:?}");
}

#[test]
fn a_reset_does_not_cross_a_cut_link() {
    let trace = run_world(
        vec![
            ("client-0", NodeKind::Client, pinging_client(), 0.0),
            ("server-0", NodeKind::Server, Probe::default(), 0.0),
        ],
        vec![fault(FaultKind::Isolate, named("client-0"), 3.0, Some(30.0)), kill("server-0", 5.0, Some(10.0))],
        40,
    );
    assert!(notes(&trace, "client-0").iter().all(|(_, n)| !n.starts_with("reset")), "{trace:#?}");
}

#[test]
fn a_paused_peer_learns_of_the_reset_when_it_resumes() {
    let trace = run_world(
        vec![
            ("client-0", NodeKind::Client, pinging_client(), 0.0),
            ("server-0", NodeKind::Server, Probe::default(), 0.0),
        ],
        vec![fault(FaultKind::Pause, named("client-0"), 3.0, Some(4.0)), kill("server-0", 5.0, Some(10.0))],
        40,
    );
    let resets: Vec<u64> =
        notes(&trace, "client-0").iter().filter(|(_, n)| n.starts_with("reset by")).map(|(t, _)| *t).collect();
    assert_eq!(resets.first(), Some(&(7 * MS)), "{trace:#?}");
}

// ---- what a crash clears, and faults that wait for a role (the engine's mutants that no
// test caught: docs/testing.md, "Mutation testing") ----

/// `client-0` (id 0) connected to `server-b` (id 1) and `server-a` (id 3) at start, `server-x`
/// (id 2) that nobody talks to, and enough idle probes to need two words per node in the
/// connection bits (66 nodes).
fn wide_world(faults: Vec<FaultSpec>) -> Vec<TraceEntry> {
    let client = Probe { sends: vec![(1, "b"), (3, "a")], ..Probe::default() };
    let idle: Vec<String> = (0..62).map(|i| format!("idle-{i}")).collect();
    let mut nodes = vec![
        ("client-0", NodeKind::Client, client, 0.0),
        ("server-b", NodeKind::Server, Probe::default(), 0.0),
        ("server-x", NodeKind::Server, Probe::default(), 0.0),
        ("server-a", NodeKind::Server, Probe::default(), 0.0),
    ];
    nodes.extend(idle.iter().map(|n| (n.as_str(), NodeKind::Client, Probe::default(), 0.0)));
    run_world(nodes, faults, 60)
}

fn resets_seen(trace: &[TraceEntry], node: &str) -> Vec<(u64, String)> {
    notes(trace, node).into_iter().filter(|(_, n)| n.starts_with("reset by")).map(|(t, n)| (t, n.to_string())).collect()
}

/// A killed process resets only the connections it had: `client-0`'s (opened at start), not the
/// idle nodes'; killing one server forgets no other node's connections. Kills `crash`'s `p !=
/// node && self.bit(..)` made `||` (every node reset) and two mutants of the row it clears
/// (`node * w..(node + 1) * w` with either `*` as `/`): a wider range forgets `server-b`'s
/// connection, a reversed one panics.
#[test]
fn a_kill_resets_the_connections_it_had_and_forgets_them() {
    let trace = wide_world(vec![
        kill("server-a", 5.0, Some(5.0)),
        kill("server-b", 20.0, Some(5.0)),
        kill("server-a", 30.0, Some(5.0)),
    ]);
    let to_client = resets_seen(&trace, "client-0");
    assert_eq!(
        to_client,
        vec![(6 * MS, "reset by server-a".to_string()), (21 * MS, "reset by server-b".to_string())],
        "client-0's resets"
    );
    for node in ["server-x", "idle-0", "idle-61"] {
        assert!(resets_seen(&trace, node).is_empty(), "{node} was reset: {:?}", resets_seen(&trace, node));
    }
}

/// A kill whose resets cannot reach the peer (its link is cut) still ends the connections: the
/// restarted process has none, so a second kill resets nobody. Kills the two mutants that
/// empty or shift the row a crash clears (`node * w` as `node + w`, and `(node + 1) * w` as
/// `(node * 1) * w`; `server-b` is id 1, whose row is words 2 and 3): a delivered reset clears
/// the bits anyway, so only an undelivered one shows it.
#[test]
fn a_kill_ends_the_connections_even_when_its_resets_are_lost() {
    let trace = wide_world(vec![
        fault(FaultKind::Isolate, named("client-0"), 4.0, Some(4.0)),
        kill("server-b", 5.0, Some(5.0)),
        kill("server-b", 30.0, Some(5.0)),
    ]);
    assert_eq!(resets_seen(&trace, "client-0"), vec![], "client-0's resets");
    assert_eq!(
        find(&trace, "server-b", "drop", "connection reset (link cut)").len(),
        1,
        "the first kill's reset, lost"
    );
}

/// A crashed client is recorded as such in the history; a crashed server is not. Kills
/// `crash`'s `kind_of(node) == NodeKind::Client` made `!=`.
#[test]
fn only_a_client_crash_is_recorded_as_one() {
    let trace = run_world(
        vec![
            ("client-0", NodeKind::Client, Probe::default(), 0.0),
            ("server-0", NodeKind::Server, Probe::default(), 0.0),
        ],
        vec![kill("client-0", 5.0, None), kill("server-0", 6.0, None)],
        20,
    );
    let crashed: Vec<&str> = trace
        .iter()
        .filter(|e| e.kind == "history" && e.detail.contains("ClientCrashed"))
        .map(|e| e.node.as_str())
        .collect();
    assert_eq!(crashed, vec!["client-0"], "{trace:#?}");
}

/// A fault aimed at `leader` while no leader is up waits, says so once (at its start), and
/// starts within a millisecond of a leader coming back. Kills `retry_fault`'s `now + ROLE_RETRY`
/// made `*` (never retried) and its trace test `trace.is_some() && start == now` made `||` or
/// `!=` (the line repeated at every retry, or written only at the retries).
#[test]
fn a_fault_waiting_for_a_leader_starts_when_one_is_back() {
    let leader = Probe { leadership: Some(1), ..Default::default() };
    let trace = run_world(
        vec![("server-0", NodeKind::Server, leader, 0.0), ("client-0", NodeKind::Client, Probe::default(), 0.0)],
        vec![
            // The leader is down from 2 to 20 ms; a pause aimed at the leader is due at 5 ms.
            kill("server-0", 2.0, Some(18.0)),
            fault(FaultKind::Pause, vec![Selector::Leader], 5.0, Some(3.0)),
        ],
        60,
    );
    let waits: Vec<u64> = trace
        .iter()
        .filter(|e| e.kind == "fault" && e.detail.contains("waits for a `leader`"))
        .map(|e| e.at_ns)
        .collect();
    assert_eq!(waits, vec![5 * MS], "the wait is said once, when the fault is due");
    let started: Vec<u64> =
        trace.iter().filter(|e| e.kind == "fault" && e.detail.starts_with("pause starts")).map(|e| e.at_ns).collect();
    assert_eq!(started.len(), 1, "{trace:#?}");
    assert!((20 * MS..=21 * MS).contains(&started[0]), "the pause started at {} ns", started[0]);
}

/// Two isolations that overlap: the end of the first lifts only its own cut. `client-0`
/// (isolated 1-10 ms) reaches `server-0` at 12 ms; `client-1` (isolated 5-20 ms) does not.
/// Kills `remove_rules`' `*o != owner` made `==` (the end of the first would lift the second's
/// cut and keep its own).
#[test]
fn the_end_of_a_fault_lifts_only_its_own_rules() {
    let sender =
        |text: &'static str| Probe { timers_ms: vec![12], timer_sends: vec![(12, 2, text)], ..Probe::default() };
    let trace = run_world(
        vec![
            ("client-0", NodeKind::Client, sender("from-0"), 0.0),
            ("client-1", NodeKind::Client, sender("from-1"), 0.0),
            ("server-0", NodeKind::Server, Probe::default(), 0.0),
        ],
        vec![
            fault(FaultKind::Isolate, named("client-0"), 1.0, Some(9.0)),
            fault(FaultKind::Isolate, named("client-1"), 5.0, Some(15.0)),
        ],
        40,
    );
    let got: Vec<&str> = notes(&trace, "server-0").iter().map(|(_, n)| *n).collect();
    assert_eq!(got, vec!["got Ping(\"from-0\")"], "{trace:#?}");
}

/// What tests match instead of a line's text (`locksim_simulator::traced`): each message line
/// carries the message as the model's own value and the node at its other end, a sent one when
/// it arrives; a timer line its tag; a fault line the fault's kind, phase and targets.
#[test]
fn trace_lines_carry_their_message_timer_and_fault_as_values() {
    let a = Probe {
        sends: vec![(1, "cut")],
        timers_ms: vec![20],
        timer_sends: vec![(20, 1, "healed")],
        ..Default::default()
    };
    let cut = FaultKind::Partition { groups: vec![named("server-0"), named("server-1")], one_way: false };
    let entries = run_world(
        vec![("server-0", NodeKind::Server, a, 0.0), ("server-1", NodeKind::Server, Probe::default(), 0.0)],
        vec![fault(cut.clone(), vec![], 0.0, Some(10.0))],
        100,
    );
    let trace = Trace { entries };
    let line = |l: MessageLine<'_, Ping>| (l.at_ns, l.node.to_string(), l.peer.to_string(), l.msg.0, l.arrives_ns);
    let dropped: Vec<_> = trace.dropped::<Ping>().map(line).collect();
    assert_eq!(dropped, vec![(0, "server-0".into(), "server-1".into(), "cut", None)]);
    let sent: Vec<_> = trace.sent::<Ping>().map(line).collect();
    assert_eq!(sent, vec![(20 * MS, "server-0".into(), "server-1".into(), "healed", Some(21 * MS))]);
    let delivered: Vec<_> = trace.delivered::<Ping>().map(line).collect();
    assert_eq!(delivered, vec![(21 * MS, "server-1".into(), "server-0".into(), "healed", None)]);
    // Only messages of the type asked for.
    assert_eq!(trace.sent::<String>().count(), 0);

    let timers: Vec<(u64, &str, u64)> =
        trace.entries.iter().filter_map(|e| Some((e.at_ns, e.node.as_str(), *e.subject.timer::<u64>()?))).collect();
    assert_eq!(timers, vec![(20 * MS, "server-0", 20)]);

    let faults: Vec<(u64, &TracedFault)> = trace.faults().map(|(e, f)| (e.at_ns, f)).collect();
    assert_eq!(faults.len(), 2, "{faults:?}");
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(faults[0].0, 0);
    assert_eq!(
        faults[0].1,
        &TracedFault {
            kind: cut.clone(),
            phase: FaultPhase::Starts,
            targets: names(&["server-0", "server-1"]),
            groups: vec![names(&["server-0"]), names(&["server-1"])],
        }
    );
    assert_eq!((faults[1].0, faults[1].1.phase, &faults[1].1.kind), (10 * MS, FaultPhase::Ends, &cut));
}
