//! A world's fingerprint is the state, not the path: two worlds that reach the same state by
//! events in different orders (and so with different queue sequence numbers and timer slots)
//! have the same fingerprint, and a one-field difference (a node's state, a message in flight,
//! a timer's due time) gives another.

use crate::common;

use locksim_simulator::engine::World;
use locksim_simulator::process::{Ctx, Process, Protocol, TimerId};

const MS: u64 = 1_000_000;

struct Ticks;
impl Protocol for Ticks {
    type Msg = u64;
    type Timer = ();
}

/// Ticks three times: at `first_ms`, at `target_ms` on its monotonic clock, then `period_ms`
/// later, sending `payload` to its peer at the second tick. Each setting is consumed when used,
/// so two tickers set differently hold the same state once past it.
#[derive(Clone, Debug, Default)]
struct Ticker {
    peer: usize,
    first_ms: Option<u64>,
    /// Arms and cancels a timer before the first one: only the timer slots it leaves differ.
    scratch: bool,
    target_ms: Option<u64>,
    period_ms: Option<u64>,
    payload: Option<u64>,
    ticks: u32,
    received: u64,
    next: Option<TimerId>,
}

locksim_simulator::durable_whole!(Ticker);
impl Process<Ticks> for Ticker {
    fn on_start(&mut self, ctx: &mut Ctx<Ticks>) {
        if std::mem::take(&mut self.scratch) {
            let t = ctx.set_timer(50 * MS, ());
            ctx.cancel_timer(t);
        }
        let first = self.first_ms.take().expect("first_ms");
        self.next = Some(ctx.set_timer(first * MS, ()));
    }
    fn on_message(&mut self, _ctx: &mut Ctx<Ticks>, _from: usize, msg: u64) {
        self.received += msg;
    }
    fn on_timer(&mut self, ctx: &mut Ctx<Ticks>, _timer: TimerId, _tag: ()) {
        self.ticks += 1;
        ctx.note(|| format!("tick {}", self.ticks));
        let after_ns = if let Some(target) = self.target_ms.take() {
            target * MS - ctx.now_mono_ns()
        } else if let Some(period) = self.period_ms.take() {
            if let Some(p) = self.payload.take() {
                ctx.send(self.peer, p);
            }
            period * MS
        } else {
            return;
        };
        self.next = Some(ctx.set_timer(after_ns, ()));
    }
}

/// Tickers `a` and `b` (nodes 0 and 1) run to 12 ms: past both tickers' first two ticks (the
/// second at 10 ms), with their payloads in flight (5 ms links) and their third ticks armed.
fn world_at_12ms(a: Ticker, b: Ticker) -> (World<Ticks>, Vec<String>) {
    let mut world = common::service_world(vec![Box::new(a), Box::new(b)], 5.0, true, 100, true);
    world.run_through(12 * MS, None).expect("runs");
    let fp = world.fingerprint();
    assert_eq!(fp, world.fingerprint(), "a fingerprint reads only");
    let mut probe = world.clone();
    probe.run();
    let order =
        probe.finish().trace.expect("trace").entries.iter().map(|e| format!("{} {}", e.node, e.detail)).collect();
    (world, order)
}

fn ticker(peer: usize, first_ms: u64, scratch: bool) -> Ticker {
    Ticker {
        peer,
        first_ms: Some(first_ms),
        scratch,
        target_ms: Some(10),
        period_ms: Some(10),
        payload: Some(7),
        ..Ticker::default()
    }
}

#[test]
fn the_same_state_reached_in_another_order_has_the_same_fingerprint() {
    // server-0 ticks first (1 ms, then 2 ms for server-1) and leaves a cancelled slot behind;
    // in the other world server-1 does both. By 12 ms both worlds hold the same state.
    let (one, one_order) = world_at_12ms(ticker(1, 1, true), ticker(0, 2, false));
    let (two, two_order) = world_at_12ms(ticker(1, 2, false), ticker(0, 1, true));
    assert_ne!(one_order, two_order, "the ticks came in another order");
    assert_eq!(one.fingerprint(), two.fingerprint());
    assert_eq!(one.clone().fingerprint(), one.fingerprint(), "a copy has its original's fingerprint");
}

#[test]
fn a_one_field_difference_gives_another_fingerprint() {
    let (base, _) = world_at_12ms(ticker(1, 1, true), ticker(0, 2, false));
    let base = base.fingerprint();
    // A node's state: what server-0 has received.
    let (state, _) = world_at_12ms(Ticker { received: 1, ..ticker(1, 1, true) }, ticker(0, 2, false));
    // A message's payload: server-0's message, in flight at 12 ms.
    let (message, _) = world_at_12ms(Ticker { payload: Some(8), ..ticker(1, 1, true) }, ticker(0, 2, false));
    // A timer's due time: server-0's third tick at 21 ms, not 20.
    let (timer, _) = world_at_12ms(Ticker { period_ms: Some(11), ..ticker(1, 1, true) }, ticker(0, 2, false));
    let (state, message, timer) = (state.fingerprint(), message.fingerprint(), timer.fingerprint());
    assert_ne!(state, base, "node state");
    assert_ne!(message, base, "message payload");
    assert_ne!(timer, base, "timer due time");
    assert!(state != message && message != timer && state != timer);
}

/// A process whose hand-written `Debug` (a trace's short form, as etcd's log entries print
/// without their origin) leaves `hidden` out; its typed fingerprint lists every field.
#[derive(Clone, Default)]
struct Terse {
    shown: u32,
    hidden: u32,
}

impl std::fmt::Debug for Terse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Terse {}", self.shown)
    }
}

locksim_simulator::fingerprint_struct!(Terse { shown, hidden });
locksim_simulator::durable_whole!(Terse);
impl Process<Ticks> for Terse {
    fn on_start(&mut self, _: &mut Ctx<Ticks>) {}
    fn on_message(&mut self, _: &mut Ctx<Ticks>, _: usize, _: u64) {}
    fn on_timer(&mut self, _: &mut Ctx<Ticks>, _: TimerId, _: ()) {}
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }
}

#[test]
fn a_field_the_debug_text_leaves_out_counts_where_the_type_has_a_fingerprint() {
    let world = |hidden| {
        let mut w = common::service_world(vec![Box::new(Terse { shown: 1, hidden })], 5.0, true, 100, false);
        w.run_through(MS, None).expect("runs");
        w
    };
    let text = |hidden| format!("{:?}", Terse { shown: 1, hidden });
    assert_eq!(text(1), text(2), "the Debug text is the same");
    // Before the typed form was preferred, the two hashed alike (the Debug text was hashed).
    assert_ne!(world(1).fingerprint(), world(2).fingerprint());
}

// Symmetry: interchangeable clients renamed (`World::fingerprint_symmetric`).

mod symmetry {
    use std::collections::VecDeque;
    use std::hash::Hasher;

    use locksim_simulator::clock::NodeClock;
    use locksim_simulator::directory::Directory;
    use locksim_simulator::dist::Dist;
    use locksim_simulator::engine::network::{LinkParams, Network};
    use locksim_simulator::engine::{Behaviour, Node, World, WorldConfig};
    use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
    use locksim_simulator::fingerprint_struct;
    use locksim_simulator::process::{Ctx, NodeId, NodeKind, Process, Protocol, TimerId};
    use locksim_simulator::rng::stream;

    use super::MS;

    struct Queue;

    #[derive(Clone, Debug)]
    enum Msg {
        Acquire,
        Granted,
    }

    impl Fingerprint for Msg {
        fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
            h.write_u8(match self {
                Msg::Acquire => 0,
                Msg::Granted => 1,
            });
        }
    }

    impl Protocol for Queue {
        type Msg = Msg;
        type Timer = ();
        fn msg_fingerprint(msg: &Msg) -> Option<&dyn Fingerprint> {
            Some(msg)
        }
        fn timer_fingerprint(timer: &()) -> Option<&dyn Fingerprint> {
            Some(timer)
        }
    }

    /// A lock server: grants to the first asker, queues the others (by node id).
    #[derive(Clone, Debug, Default)]
    struct Server {
        holder: Option<NodeId>,
        waiters: VecDeque<NodeId>,
    }

    locksim_simulator::durable_whole!(Server);
    impl Fingerprint for Server {
        fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
            let Server { holder, waiters } = self;
            ids.opt_node(h, *holder);
            ids.nodes(h, waiters);
        }
    }

    impl Process<Queue> for Server {
        fn on_start(&mut self, _: &mut Ctx<Queue>) {}
        fn on_message(&mut self, ctx: &mut Ctx<Queue>, from: NodeId, _: Msg) {
            if self.holder.is_none() {
                self.holder = Some(from);
                ctx.send(from, Msg::Granted);
            } else {
                self.waiters.push_back(from);
            }
        }
        fn on_timer(&mut self, _: &mut Ctx<Queue>, _: TimerId, _: ()) {}
        fn as_fingerprint(&self) -> Option<&dyn Fingerprint> {
            Some(self)
        }
    }

    /// A client (a service of kind `Client`): asks the server at `ask_ms` (consumed when used,
    /// so clients set apart only by it hold the same state once past it).
    #[derive(Clone, Debug, Default)]
    struct Client {
        ask_ms: Option<u64>,
        held: bool,
        waiting: bool,
        count: u32,
        timer: Option<TimerId>,
    }

    fingerprint_struct!(Client { ask_ms, held, waiting, count, timer });

    locksim_simulator::durable_whole!(Client);
    impl Process<Queue> for Client {
        fn on_start(&mut self, ctx: &mut Ctx<Queue>) {
            if let Some(at) = self.ask_ms.take() {
                self.timer = Some(ctx.set_timer(at * MS, ()));
            }
        }
        fn on_message(&mut self, _: &mut Ctx<Queue>, _: NodeId, _: Msg) {
            self.held = true;
            self.waiting = false;
        }
        fn on_timer(&mut self, ctx: &mut Ctx<Queue>, _: TimerId, _: ()) {
            self.timer = None;
            self.waiting = true;
            ctx.send(0, Msg::Acquire);
        }
        fn as_fingerprint(&self) -> Option<&dyn Fingerprint> {
            Some(self)
        }
    }

    /// `server-0` (node 0) and the clients (nodes 1..), each client's random stream keyed by its
    /// own name as a real run's is; 2 ms links, run to `at_ms`.
    fn world(server: Server, clients: Vec<Client>, at_ms: u64) -> World<Queue> {
        let mut names = vec![("server-0".to_string(), NodeKind::Server)];
        names.extend((0..clients.len()).map(|i| (format!("client-{i}"), NodeKind::Client)));
        let mut processes: Vec<Box<dyn Process<Queue>>> = vec![Box::new(server)];
        processes.extend(clients.into_iter().map(|c| Box::new(c) as Box<dyn Process<Queue>>));
        let nodes = processes
            .into_iter()
            .zip(&names)
            .map(|(p, (name, _))| Node::new(Behaviour::Service(p), NodeClock::new(0.0, 0), stream(1, name, "model")))
            .collect();
        let base = LinkParams { latency_ms: Dist::Const(2.0), loss: 0.0, duplicate: 0.0 };
        let mut world = World::new(
            Directory::new(&names),
            nodes,
            WorldConfig {
                end_ns: 100 * MS,
                network: Network::new(names.len(), base, vec![], true),
                net_rng: stream(1, "network", "latency"),
                fault_rng: stream(1, "faults", "selection"),
                faults: vec![],
                occurrences: vec![],
                leaderless: true,
                tracing: false,
            },
        );
        world.run_through(at_ms * MS, None).expect("runs");
        world
    }

    fn asks(ms: &[u64]) -> Vec<Client> {
        ms.iter().map(|&m| Client { ask_ms: Some(m), ..Client::default() }).collect()
    }

    #[test]
    fn swapping_two_interchangeable_clients_gives_the_same_symmetric_fingerprint() {
        // client-0 asks first and holds, client-1 waits; then the other way round.
        let one = world(Server::default(), asks(&[1, 2]), 10);
        let two = world(Server::default(), asks(&[2, 1]), 10);
        assert!(one.symmetry_applies() && two.symmetry_applies());
        assert_ne!(one.fingerprint(), two.fingerprint(), "by node id they differ");
        assert_eq!(one.fingerprint_symmetric(), two.fingerprint_symmetric());
        // Mid-flight too: at 4 ms the grant to the first asker is on its way (a message and a
        // timer, each naming a client).
        let one = world(Server::default(), asks(&[1, 3]), 4);
        let two = world(Server::default(), asks(&[3, 1]), 4);
        assert_ne!(one.fingerprint(), two.fingerprint());
        assert_eq!(one.fingerprint_symmetric(), two.fingerprint_symmetric());
        // Three clients in any order.
        let a = world(Server::default(), asks(&[1, 2, 3]), 10);
        let b = world(Server::default(), asks(&[3, 1, 2]), 10);
        assert_eq!(a.fingerprint_symmetric(), b.fingerprint_symmetric());
    }

    #[test]
    fn a_server_naming_another_client_than_the_holder_is_not_merged() {
        let holds = Client { held: true, ..Client::default() };
        let waits = Client { waiting: true, ..Client::default() };
        let server = |holder, waiter| Server { holder: Some(holder), waiters: VecDeque::from([waiter]) };
        // Consistent: the server names client-0 (node 1), which holds; and its mirror image.
        let consistent = world(server(1, 2), vec![holds.clone(), waits.clone()], 1);
        let mirror = world(server(2, 1), vec![waits.clone(), holds.clone()], 1);
        // Unsound to merge: the server names client-0 as holder, client-1 believes it holds.
        let split = world(server(1, 2), vec![waits.clone(), holds.clone()], 1);
        assert_eq!(consistent.fingerprint_symmetric(), mirror.fingerprint_symmetric());
        assert_ne!(consistent.fingerprint_symmetric(), split.fingerprint_symmetric());
        // The clients alone, as a multiset, are the same in both: only the renaming tells.
        assert_ne!(mirror.fingerprint_symmetric(), split.fingerprint_symmetric());
    }

    #[test]
    fn a_one_field_difference_still_differs_under_symmetry() {
        let base = world(Server::default(), asks(&[1, 2]), 10).fingerprint_symmetric();
        let mut counted = asks(&[1, 2]);
        counted[1].count = 1;
        assert_ne!(world(Server::default(), counted, 10).fingerprint_symmetric(), base, "a client's field");
        // A timer's due time: client-1 still to ask, at 5 ms or at 6 ms.
        let soon = world(Server::default(), asks(&[1, 5]), 4).fingerprint_symmetric();
        let later = world(Server::default(), asks(&[1, 6]), 4).fingerprint_symmetric();
        assert_ne!(soon, later, "a timer's due time");
        // A message in flight: at 2 ms client-0's request is on its way, or (asked at 2 ms) not.
        let flying = world(Server::default(), asks(&[1, 9]), 2).fingerprint_symmetric();
        let pending = world(Server::default(), asks(&[3, 9]), 2).fingerprint_symmetric();
        assert_ne!(flying, pending, "a message in flight");
    }
}
