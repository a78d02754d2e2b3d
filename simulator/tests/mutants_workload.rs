//! The workload driver (workload.rs) over a fake lock library that grants and releases at once,
//! for the rules `cargo mutants` found no test pinning (docs/testing.md, "Mutation testing"):
//! the per-client quota, the key and mode draws. Each test says which mutant it kills.

use locksim_simulator::batch::run_seed;
use locksim_simulator::history::{History, HistoryEvent, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::model::{Cluster, DynModel, Model, ParamSpec, Params, Topology};
use locksim_simulator::process::{Crash, Ctx, NodeId, NodeKind, Protocol, TimerId};
use locksim_simulator::run::RunOptions;
use locksim_simulator::scenario::parse_str;
use locksim_simulator::setup::WorkloadSpec;

/// The fake's protocol: no messages, no timers.
struct Instant;
impl Protocol for Instant {
    type Msg = ();
    type Timer = ();
}

/// Grants every acquire at once with the next token, releases at once.
#[derive(Default)]
struct InstantClient {
    next_token: u64,
}

impl LockClient<Instant> for InstantClient {
    fn on_start(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents) {}
    fn acquire(&mut self, _: &mut Ctx<Instant>, out: &mut LockEvents, key: LockKey, _: LockMode) {
        self.next_token += 1;
        out.push(LockEvent::Granted { key, token: Some(self.next_token) });
    }
    fn release(&mut self, _: &mut Ctx<Instant>, out: &mut LockEvents, key: LockKey) {
        out.push(LockEvent::Released { key });
    }
    fn cancel(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: LockKey) {}
    fn on_message(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: NodeId, _: ()) {}
    fn on_timer(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: TimerId, _: ()) {}
    fn on_crash(&mut self, _: &Crash) {}
}

struct InstantModel;

impl Model for InstantModel {
    type Protocol = Instant;
    fn name(&self) -> &'static str {
        "instant"
    }
    fn summary(&self) -> &'static str {
        "a lock library that grants and releases at once"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }
    fn fenced(&self, _: &Params) -> bool {
        true
    }
    fn shared_locks(&self, _: &Params) -> bool {
        true
    }
    fn services(&self, _: &Params) -> Vec<(String, NodeKind)> {
        Vec::new()
    }
    fn topology(&self, _: &Params) -> Topology {
        Topology { ordered_links: false, leaderless: false }
    }
    fn build(&self, _: &Params, w: &WorkloadSpec) -> Cluster<Instant> {
        let clients =
            (0..w.clients).map(|_| Box::new(InstantClient::default()) as Box<dyn LockClient<Instant>>).collect();
        Cluster { services: Vec::new(), clients }
    }
}

static INSTANT: InstantModel = InstantModel;

/// Seed 0 of a scenario running the fake, with `workload` as its `[workload]` table.
fn run(workload: &str) -> History {
    let models: Vec<&'static dyn DynModel> = vec![&INSTANT];
    let text = format!("name = \"t\"\nduration_ms = 2000\nalgorithms = [\"instant\"]\n\n[workload]\n{workload}\n");
    let scenario = parse_str("t.toml", &text, &models).expect("valid scenario");
    run_seed(&scenario, &scenario.runs[0], 0, &RunOptions { trace: false }).expect("no panic").history
}

/// Each client's non-nested grants, as (key, mode).
fn grants(h: &History, client: NodeId) -> Vec<(LockKey, LockMode)> {
    h.events
        .iter()
        .filter(|e| e.node == client)
        .filter_map(|e| match e.event {
            HistoryEvent::Granted { key, mode, nested: false, .. } => Some((key, mode)),
            _ => None,
        })
        .collect()
}

/// `acquisitions_per_client = 3`: every client makes exactly three sections in a run long
/// enough for hundreds. Kills `completed >= limit` made `<` in `think`.
#[test]
fn each_client_stops_after_its_quota() {
    let h = run("clients = 2\nhold_ms = 5\nthink_ms = 5\nacquisitions_per_client = 3");
    assert_eq!(h.clients.len(), 2);
    for &c in &h.clients {
        assert_eq!(grants(&h, c).len(), 3, "client {c}");
    }
}

/// With four locks each acquisition draws its key among all four. Kills `locks <= 1` made `>`
/// in `acquire` (every acquisition would take key 0).
#[test]
fn keys_are_drawn_among_the_locks() {
    let h = run("clients = 1\nlocks = 4\nhold_ms = 5\nthink_ms = 5");
    let keys: std::collections::BTreeSet<LockKey> = grants(&h, h.clients[0]).iter().map(|g| g.0).collect();
    assert_eq!(keys.into_iter().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
}

/// With `read_fraction = 0.25` about a quarter of the acquisitions are shared. Kills the `&&` of
/// `read_fraction > 0.0 && draw < read_fraction` made `||` (every one shared), the `>` made
/// `==` or `<` (none shared) and the draw's `<` made `>` (three quarters shared) or `==`.
#[test]
fn read_fraction_is_the_share_of_shared_acquisitions() {
    let h = run("clients = 1\nhold_ms = 5\nthink_ms = 5\nread_fraction = 0.25");
    let g = grants(&h, h.clients[0]);
    let shared = g.iter().filter(|g| g.1 == LockMode::Shared).count() as f64;
    assert!(g.len() > 100, "{} sections", g.len());
    let share = shared / g.len() as f64;
    assert!((0.15..0.35).contains(&share), "{shared} shared of {}", g.len());
}

/// What the stray fake adds to each grant it answers.
#[derive(Clone, Copy)]
enum Stray {
    /// A grant of the other key (of two) first, as a late answer to an abandoned call would be.
    OtherKeyFirst,
    /// The grant twice, as a library that answered one call two times would.
    Twice,
}

/// Grants at once like [`InstantClient`], with a stray grant around each real one.
struct StrayClient {
    stray: Stray,
    next_token: u64,
}

impl LockClient<Instant> for StrayClient {
    fn on_start(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents) {}
    fn acquire(&mut self, _: &mut Ctx<Instant>, out: &mut LockEvents, key: LockKey, _: LockMode) {
        self.next_token += 1;
        let token = Some(self.next_token);
        match self.stray {
            Stray::OtherKeyFirst => {
                out.push(LockEvent::Granted { key: 1 - key, token });
                out.push(LockEvent::Granted { key, token });
            }
            Stray::Twice => {
                out.push(LockEvent::Granted { key, token });
                out.push(LockEvent::Granted { key, token });
            }
        }
    }
    fn release(&mut self, _: &mut Ctx<Instant>, out: &mut LockEvents, key: LockKey) {
        out.push(LockEvent::Released { key });
    }
    fn cancel(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: LockKey) {}
    fn on_message(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: NodeId, _: ()) {}
    fn on_timer(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: TimerId, _: ()) {}
    fn on_crash(&mut self, _: &Crash) {}
}

struct StrayModel(Stray, &'static str);

impl Model for StrayModel {
    type Protocol = Instant;
    fn name(&self) -> &'static str {
        self.1
    }
    fn summary(&self) -> &'static str {
        "a lock library that grants at once and sends a stray grant with each"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }
    fn fenced(&self, _: &Params) -> bool {
        true
    }
    fn services(&self, _: &Params) -> Vec<(String, NodeKind)> {
        Vec::new()
    }
    fn topology(&self, _: &Params) -> Topology {
        Topology { ordered_links: false, leaderless: false }
    }
    fn build(&self, _: &Params, w: &WorkloadSpec) -> Cluster<Instant> {
        let stray = self.0;
        let clients = (0..w.clients)
            .map(|_| Box::new(StrayClient { stray, next_token: 0 }) as Box<dyn LockClient<Instant>>)
            .collect();
        Cluster { services: Vec::new(), clients }
    }
}

static OTHER_KEY_FIRST: StrayModel = StrayModel(Stray::OtherKeyFirst, "other-key-first");
static TWICE: StrayModel = StrayModel(Stray::Twice, "twice");

/// Seed 0 of one client on two locks under `model`.
fn run_stray(model: &'static StrayModel) -> History {
    let models: Vec<&'static dyn DynModel> = vec![model];
    let text = format!(
        "name = \"t\"\nduration_ms = 2000\nalgorithms = [\"{}\"]\n\n[workload]\nclients = 1\nlocks = 2\nhold_ms = 5\nthink_ms = 5\n",
        model.1
    );
    let scenario = parse_str("t.toml", &text, &models).expect("valid scenario");
    run_seed(&scenario, &scenario.runs[0], 0, &RunOptions { trace: false }).expect("no panic").history
}

/// A grant of a key the client is not waiting for is handed back, not taken as the answer:
/// every recorded grant is of the key the client's last acquire call asked for. Kills
/// `on_granted`'s `Phase::Waiting` guard `*k == key` made `true` (workload.rs).
#[test]
fn a_grant_of_another_key_is_not_taken_as_the_answer() {
    let h = run_stray(&OTHER_KEY_FIRST);
    let mut asked = None;
    let mut granted = 0;
    for e in &h.events {
        match e.event {
            HistoryEvent::AcquireStart { key, .. } => asked = Some(key),
            HistoryEvent::Granted { key, .. } => {
                assert_eq!(Some(key), asked, "granted key {key} while waiting for {asked:?}");
                granted += 1;
            }
            _ => {}
        }
    }
    assert!(granted > 100, "{granted} grants");
}

/// A second grant for a call already answered is handed back, not recorded as a nested
/// (reentrant) grant nobody asked for. Kills `on_granted`'s `Phase::Holding` guard
/// `h.key == key && h.nesting_pending` made `true` (workload.rs).
#[test]
fn a_duplicate_grant_is_not_recorded_as_nested() {
    let h = run_stray(&TWICE);
    let nested = h.events.iter().filter(|e| matches!(e.event, HistoryEvent::Granted { nested: true, .. })).count();
    let grants = grants(&h, h.clients[0]).len();
    assert_eq!(nested, 0, "nested grants recorded with reentry 0 ({grants} sections)");
    assert!(grants > 100, "{grants} sections");
}
