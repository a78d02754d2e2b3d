//! The standard engine workload, fixed so other simulators can run the same thing: 5 servers
//! each guarding one lock, 20 clients. Each client picks a server uniformly and sends a
//! try-acquire; on a grant it holds uniform 1–5 ms, sends a release and waits for its reply; on a
//! refusal it backs off uniform 1–10 ms. One-way latency uniform 1–10 ms, a 500 ms request
//! timeout, 60 simulated seconds, one seed. Only the engine runs: no lock model, no checker.

use rand::Rng;

use crate::clock::NodeClock;
use crate::directory::Directory;
use crate::dist::Dist;
use crate::durable::Durable;
use crate::engine::network::{LinkParams, Network};
use crate::engine::{Behaviour, Node, World, WorldConfig};
use crate::process::{Crash, Ctx, NodeId, NodeKind, Process, Protocol, TimerId};
use crate::rng::stream;
use crate::time::{Nanos, NS_PER_MS, NS_PER_SEC};

/// Servers in the workload, each guarding one lock.
pub const SERVERS: usize = 5;
/// Clients in the workload.
pub const CLIENTS: usize = 20;
/// The standard run's simulated length in seconds (what `sim bench engine` runs).
pub const SIMULATED_S: u64 = 60;
const REQUEST_TIMEOUT_NS: Nanos = 500 * NS_PER_MS;

#[derive(Clone, Copy, Debug)]
enum BenchMsg {
    TryAcquire,
    Granted,
    Refused,
    Release,
    Released,
}

/// The benchmark's protocol.
struct Bench;

impl Protocol for Bench {
    type Msg = BenchMsg;
    type Timer = BenchTimer;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BenchTimer {
    Timeout,
    Next,
    Release,
}

#[derive(Clone, Debug)]
struct Server {
    holder: Option<NodeId>,
}

impl Process<Bench> for Server {
    fn on_start(&mut self, _ctx: &mut Ctx<Bench>) {}
    fn on_message(&mut self, ctx: &mut Ctx<Bench>, from: NodeId, m: BenchMsg) {
        match m {
            BenchMsg::TryAcquire => {
                if self.holder.is_none() {
                    self.holder = Some(from);
                    ctx.send(from, BenchMsg::Granted);
                } else {
                    ctx.send(from, BenchMsg::Refused);
                }
            }
            BenchMsg::Release => {
                if self.holder == Some(from) {
                    self.holder = None;
                }
                ctx.send(from, BenchMsg::Released);
            }
            _ => {}
        }
    }
    fn on_timer(&mut self, _ctx: &mut Ctx<Bench>, _timer: TimerId, _tag: BenchTimer) {}
}

impl Durable for Server {
    /// Nothing: the holder is in memory.
    type Disk = ();
    fn into_disk(self, _crash: &Crash) {}
    fn from_disk(_disk: ()) -> Server {
        Server { holder: None }
    }
}

#[derive(Clone, Debug)]
struct Client {
    server: NodeId,
    timeout: Option<TimerId>,
}

impl Client {
    fn try_acquire(&mut self, ctx: &mut Ctx<Bench>) {
        self.server = ctx.rng().gen_range(0..SERVERS);
        ctx.send(self.server, BenchMsg::TryAcquire);
        self.timeout = Some(ctx.set_timer(REQUEST_TIMEOUT_NS, BenchTimer::Timeout));
    }
    fn after(&mut self, ctx: &mut Ctx<Bench>, lo_ms: u64, hi_ms: u64) {
        let ns = ctx.rng().gen_range(lo_ms * NS_PER_MS..=hi_ms * NS_PER_MS);
        ctx.set_timer(ns, BenchTimer::Next);
    }
}

impl Process<Bench> for Client {
    fn on_start(&mut self, ctx: &mut Ctx<Bench>) {
        self.try_acquire(ctx);
    }
    fn on_message(&mut self, ctx: &mut Ctx<Bench>, _from: NodeId, m: BenchMsg) {
        if let Some(t) = self.timeout.take() {
            ctx.cancel_timer(t);
        }
        match m {
            // Hold 1–5 ms, then release (the release is sent when the hold timer fires).
            BenchMsg::Granted => {
                let ns = ctx.rng().gen_range(NS_PER_MS..=5 * NS_PER_MS);
                ctx.set_timer(ns, BenchTimer::Release);
            }
            BenchMsg::Refused => self.after(ctx, 1, 10),
            BenchMsg::Released => self.try_acquire(ctx),
            _ => {}
        }
    }
    fn on_timer(&mut self, ctx: &mut Ctx<Bench>, _timer: TimerId, tag: BenchTimer) {
        match tag {
            BenchTimer::Timeout => {
                self.timeout = None;
                self.try_acquire(ctx);
            }
            BenchTimer::Next => self.try_acquire(ctx),
            BenchTimer::Release => {
                ctx.send(self.server, BenchMsg::Release);
                self.timeout = Some(ctx.set_timer(REQUEST_TIMEOUT_NS, BenchTimer::Timeout));
            }
        }
    }
}

impl Durable for Client {
    /// All of it: the benchmark's client keeps its state across a crash.
    type Disk = Client;
    fn into_disk(self, _crash: &Crash) -> Client {
        self
    }
    fn from_disk(disk: Client) -> Client {
        disk
    }
}

/// What one run of the workload did.
#[derive(Clone, Copy, Debug)]
pub struct EngineRun {
    /// Messages sent.
    pub messages: u64,
    /// Events the engine processed.
    pub events: u64,
    /// The simulated length in seconds, as asked for.
    pub simulated_s: u64,
}

/// Builds and runs the standard workload for `simulated_s` seconds with `seed`.
pub fn run_engine_workload(seed: u64, simulated_s: u64) -> EngineRun {
    let mut names = Vec::new();
    let mut nodes = Vec::new();
    for i in 0..SERVERS {
        let name = format!("server-{i}");
        nodes.push(Node::new(
            Behaviour::Service(Box::new(Server { holder: None })),
            NodeClock::new(0.0, 0),
            stream(seed, &name, "model"),
        ));
        names.push((name, NodeKind::Server));
    }
    for i in 0..CLIENTS {
        let name = format!("client-{i}");
        nodes.push(Node::new(
            Behaviour::Service(Box::new(Client { server: 0, timeout: None })),
            NodeClock::new(0.0, 0),
            stream(seed, &name, "model"),
        ));
        names.push((name, NodeKind::Client));
    }
    let base = LinkParams { latency_ms: Dist::Uniform(1.0, 10.0), loss: 0.0, duplicate: 0.0 };
    let mut world: World<Bench> = World::new(
        Directory::new(&names),
        nodes,
        WorldConfig {
            end_ns: simulated_s * NS_PER_SEC,
            network: Network::new(names.len(), base, vec![], false),
            net_rng: stream(seed, "network", "latency"),
            fault_rng: stream(seed, "faults", "selection"),
            faults: vec![],
            occurrences: vec![],
            // Five independent lock servers: no leader, so the engine asks none after a handler.
            leaderless: true,
            tracing: false,
        },
    );
    world.run();
    let r = world.finish();
    EngineRun { messages: r.messages, events: r.events_processed, simulated_s }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn the_workload_is_busy_and_deterministic() {
        let a = run_engine_workload(1, 2);
        let b = run_engine_workload(1, 2);
        assert_eq!(a.messages, b.messages);
        assert_eq!(a.events, b.events);
        // 20 clients with ~10 ms round trips for 2 s: thousands of messages.
        assert!(a.messages > 5_000, "{a:?}");
    }
}
