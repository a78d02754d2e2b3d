//! The application's own check of its lock, made where the application makes it: just before
//! the critical section writes (`LockClient::check_before_write`), not by a timer racing the
//! write. A toy lease lock (a server granting 100 ms leases, a client that knows when its lease
//! ends on its own monotonic clock) shows the three cases: a client that does not check writes
//! after a long pause (a stale write); one that checks skips the write; one that checks but
//! pauses between the check and the write (`check_to_write_ms`: Kleppmann's case) writes late
//! all the same.

use crate::common;

use common::{run_row, Fake};
use locksim_simulator::history::{HistoryEvent, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::model::DynModel;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, Protocol, TimerId};

const LEASE_NS: u64 = 100_000_000;
const RETRY_NS: u64 = 5_000_000;

#[derive(Clone, Debug)]
enum Msg {
    Acquire,
    Granted,
    Busy,
    Release,
}

/// The toy's protocol: a lease server and its clients; the client's one timer is its retry.
struct Lease;

impl Protocol for Lease {
    type Msg = Msg;
    type Timer = ();
}

/// Grants a 100 ms lease to one client at a time (its own clock decides expiry).
#[derive(Clone, Debug)]
struct Server {
    holder: Option<(NodeId, u64)>,
}

locksim_simulator::durable_whole!(Server);
impl Process<Lease> for Server {
    fn on_start(&mut self, _: &mut Ctx<Lease>) {}
    fn on_message(&mut self, ctx: &mut Ctx<Lease>, from: NodeId, msg: Msg) {
        let now = ctx.now_mono_ns();
        match msg {
            Msg::Acquire => match self.holder {
                Some((h, until)) if h != from && now < until => ctx.send(from, Msg::Busy),
                _ => {
                    self.holder = Some((from, now + LEASE_NS));
                    ctx.send(from, Msg::Granted);
                }
            },
            Msg::Release => {
                if self.holder.is_some_and(|(h, _)| h == from) {
                    self.holder = None;
                }
            }
            Msg::Granted | Msg::Busy => {}
        }
    }
    fn on_timer(&mut self, _: &mut Ctx<Lease>, _: TimerId, _: ()) {}
}

/// Asks until granted; believes its lease ends 100 ms after it asked (the safe side).
#[derive(Clone, Debug)]
struct Client {
    checks: bool,
    asked_at_ns: u64,
    lease_end_ns: Option<u64>,
}

impl locksim_simulator::durable::Durable for Client {
    /// All but the lease it believed it had.
    type Disk = Client;
    fn into_disk(self, _: &Crash) -> Client {
        Client { lease_end_ns: None, ..self }
    }
    fn from_disk(disk: Client) -> Client {
        disk
    }
}

impl LockClient<Lease> for Client {
    fn on_start(&mut self, _: &mut Ctx<Lease>, _: &mut LockEvents) {}
    fn acquire(&mut self, ctx: &mut Ctx<Lease>, _: &mut LockEvents, _: LockKey, _: LockMode) {
        self.asked_at_ns = ctx.now_mono_ns();
        let server = ctx.node_named("server-0").expect("server");
        ctx.send(server, Msg::Acquire);
    }
    fn release(&mut self, ctx: &mut Ctx<Lease>, out: &mut LockEvents, key: LockKey) {
        self.lease_end_ns = None;
        let server = ctx.node_named("server-0").expect("server");
        ctx.send(server, Msg::Release);
        out.push(LockEvent::Released { key });
    }
    fn cancel(&mut self, _: &mut Ctx<Lease>, _: &mut LockEvents, _: LockKey) {}
    fn on_message(&mut self, ctx: &mut Ctx<Lease>, out: &mut LockEvents, from: NodeId, msg: Msg) {
        match msg {
            Msg::Granted => {
                self.lease_end_ns = Some(self.asked_at_ns + LEASE_NS);
                out.push(LockEvent::Granted { key: 0, token: None });
            }
            Msg::Busy => {
                ctx.set_timer(RETRY_NS, ());
                let _ = from;
            }
            Msg::Acquire | Msg::Release => {}
        }
    }
    fn on_timer(&mut self, ctx: &mut Ctx<Lease>, _: &mut LockEvents, _: TimerId, _: ()) {
        self.asked_at_ns = ctx.now_mono_ns();
        let server = ctx.node_named("server-0").expect("server");
        ctx.send(server, Msg::Acquire);
    }
    fn check_before_write(&mut self, ctx: &mut Ctx<Lease>, _: &mut LockEvents, _: LockKey) -> bool {
        !self.checks || self.lease_end_ns.is_some_and(|end| ctx.now_mono_ns() < end)
    }
}

/// The toy as a model whose client does not check its lease before writing, and one whose does.
static TRUSTING: Fake<Lease> = Fake {
    name: "trusting",
    library: || Box::new(Client { checks: false, asked_at_ns: 0, lease_end_ns: None }),
    server: Some(|| Box::new(Server { holder: None })),
    fenced: false,
};
static CHECKING: Fake<Lease> = Fake {
    name: "checking",
    library: || Box::new(Client { checks: true, asked_at_ns: 0, lease_end_ns: None }),
    server: Some(|| Box::new(Server { holder: None })),
    fenced: false,
};

/// Seeds (of 30) with a stale write, and abandoned sections, for a row; the holder pauses for
/// 300 ms (three leases) at a random moment.
fn run(model: &'static Fake<Lease>, check_to_write_ms: u32) -> (usize, usize) {
    let models: Vec<&'static dyn DynModel> = vec![&TRUSTING, &CHECKING];
    let text = format!(
        "name = \"t\"\nduration_ms = 2000\nalgorithms = [\"{}\"]\n[network]\nlatency_ms = 0.5\n\
         [workload]\nclients = 2\nhold_ms = 5\nthink_ms = 1\ncheck_to_write_ms = {check_to_write_ms}\n\
         [[faults]]\nkind = \"pause\"\ntarget = \"holder\"\nat_ms = {{ uniform = [100, 1000] }}\nduration_ms = 300\n",
        model.name
    );
    let (mut stale, mut abandoned) = (0, 0);
    for seed in 0..30 {
        let out = run_row(&models, &text, seed, false);
        if out.metrics.stale_unfenced_events > 0 {
            stale += 1;
        }
        abandoned += out.history.events.iter().filter(|e| matches!(e.event, HistoryEvent::Abandoned { .. })).count();
    }
    (stale, abandoned)
}

#[test]
fn without_a_check_a_paused_holder_writes_stale() {
    let (stale, abandoned) = run(&TRUSTING, 0);
    assert!(stale >= 15, "most pauses land in a 5 ms hold of a 6 ms loop: {stale}");
    assert_eq!(abandoned, 0);
}

#[test]
fn a_check_just_before_the_write_skips_it_after_a_long_pause() {
    let (stale, abandoned) = run(&CHECKING, 0);
    assert_eq!(stale, 0, "the check sees the lease is over");
    assert!(abandoned >= 15, "{abandoned}");
}

#[test]
fn a_pause_between_the_check_and_the_write_defeats_the_check() {
    // 5 ms of work, then check, then 20 ms to the write: most pauses land after the check.
    let (stale, _) = run(&CHECKING, 20);
    assert!(stale >= 10, "Kleppmann's case: {stale}");
}
