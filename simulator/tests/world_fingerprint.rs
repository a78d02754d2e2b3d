//! A world's fingerprint is the state, not the path: two worlds that reach the same state by
//! events in different orders (and so with different queue sequence numbers and timer slots)
//! have the same fingerprint, and a one-field difference (a node's state, a message in flight,
//! a timer's due time) gives another.

mod common;

use locksim_simulator::engine::World;
use locksim_simulator::process::{Crash, Ctx, Process, Protocol, TimerId};

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
    fn on_crash(&mut self, _crash: &Crash) {}
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
