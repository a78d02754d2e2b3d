//! The workload driver (workload.rs) over a fake lock library that grants and releases at once,
//! for the rules `cargo mutants` found no test pinning (docs/testing.md, "Mutation testing"):
//! the per-client quota, the key and mode draws. Each test says which mutant it kills.

use crate::common;

use common::Fake;
use locksim_simulator::batch::run_seed;
use locksim_simulator::history::{FailReason, History, HistoryEvent, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::model::DynModel;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, Protocol, TimerId};
use locksim_simulator::run::RunOptions;
use locksim_simulator::scenario::parse_str;

/// The fake's protocol: no messages, no timers.
struct Instant;
impl Protocol for Instant {
    type Msg = ();
    type Timer = ();
}

/// Grants every acquire at once with the next token, releases at once.
#[derive(Clone, Debug, Default)]
struct InstantClient {
    next_token: u64,
}

locksim_simulator::durable_whole!(InstantClient);
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
}

/// Grants and releases at once.
static INSTANT: Fake<Instant> =
    Fake { name: "instant", library: || Box::new(InstantClient::default()), server: None, fenced: true };

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
#[derive(Clone, Debug, Copy)]
enum Stray {
    /// A grant of the other key (of two) first, as a late answer to an abandoned call would be.
    OtherKeyFirst,
    /// The grant twice, as a library that answered one call two times would.
    Twice,
    /// A failure of the other key first, as a late answer to an abandoned call would be.
    OtherKeyFailsFirst,
}

/// Grants at once like [`InstantClient`], with a stray grant around each real one.
#[derive(Clone, Debug)]
struct StrayClient {
    stray: Stray,
    next_token: u64,
}

locksim_simulator::durable_whole!(StrayClient);
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
            Stray::OtherKeyFailsFirst => {
                out.push(LockEvent::Failed { key: 1 - key, reason: FailReason::Unavailable });
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
}

fn stray(stray: Stray) -> Box<dyn LockClient<Instant>> {
    Box::new(StrayClient { stray, next_token: 0 })
}

static OTHER_KEY_FIRST: Fake<Instant> =
    Fake { name: "other-key-first", library: || stray(Stray::OtherKeyFirst), server: None, fenced: true };
static TWICE: Fake<Instant> = Fake { name: "twice", library: || stray(Stray::Twice), server: None, fenced: true };
static OTHER_KEY_FAILS_FIRST: Fake<Instant> =
    Fake { name: "other-key-fails-first", library: || stray(Stray::OtherKeyFailsFirst), server: None, fenced: true };

/// Seed 0 of one client on two locks under `model`.
fn run_stray(model: &'static Fake<Instant>) -> History {
    let models: Vec<&'static dyn DynModel> = vec![model];
    let text = format!(
        "name = \"t\"\nduration_ms = 2000\nalgorithms = [\"{}\"]\n\n[workload]\nclients = 1\nlocks = 2\nhold_ms = 5\nthink_ms = 5\n",
        model.name
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

/// What the scripted fake does beyond granting at once.
#[derive(Clone, Debug, Copy, Default)]
struct Script {
    /// It is reentrant: a nested acquire is granted (or failed, below) at once.
    reentrant: bool,
    /// A nested acquire fails instead.
    nested_fails: bool,
    /// Every other outer acquire fails (the first fails).
    every_other_fails: bool,
    /// Right after each grant it reports the lock lost, with this `honour`.
    lost: Option<bool>,
    /// It never answers an acquire.
    silent: bool,
}

/// A library following a [`Script`]; it counts the releases it is asked for.
#[derive(Clone, Debug)]
struct Scripted {
    script: Script,
    holds: u32,
    asked: u64,
    next_token: u64,
}

impl locksim_simulator::durable::Durable for Scripted {
    /// All but what it held, which is gone with the process.
    type Disk = Scripted;
    fn into_disk(self, _: &Crash) -> Scripted {
        Scripted { holds: 0, ..self }
    }
    fn from_disk(disk: Scripted) -> Scripted {
        disk
    }
}

impl LockClient<Instant> for Scripted {
    fn on_start(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents) {}
    fn acquire(&mut self, ctx: &mut Ctx<Instant>, out: &mut LockEvents, key: LockKey, _: LockMode) {
        if self.script.silent {
            return;
        }
        let nested = self.holds > 0;
        if nested && self.script.nested_fails {
            out.push(LockEvent::Failed { key, reason: FailReason::Refused });
            return;
        }
        if !nested && self.script.every_other_fails {
            self.asked += 1;
            if self.asked % 2 == 1 {
                out.push(LockEvent::Failed { key, reason: FailReason::Unavailable });
                return;
            }
        }
        self.holds += 1;
        self.next_token += 1;
        out.push(LockEvent::Granted { key, token: Some(self.next_token) });
        if let (Some(honour), false) = (self.script.lost, nested) {
            out.push(LockEvent::Lost { key, honour });
        }
        ctx.note(|| format!("holds {}", self.holds));
    }
    fn release(&mut self, ctx: &mut Ctx<Instant>, out: &mut LockEvents, key: LockKey) {
        self.holds = self.holds.saturating_sub(1);
        ctx.note(|| "release asked".to_string());
        out.push(LockEvent::Released { key });
    }
    fn cancel(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: LockKey) {}
    fn on_message(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: NodeId, _: ()) {}
    fn on_timer(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: TimerId, _: ()) {}
    fn reentrant(&self) -> bool {
        self.script.reentrant
    }
}

/// The script that only grants and releases; the others change one thing.
const PLAIN: Script =
    Script { reentrant: false, nested_fails: false, every_other_fails: false, lost: None, silent: false };

fn scripted(script: Script) -> Box<dyn LockClient<Instant>> {
    Box::new(Scripted { script, holds: 0, asked: 0, next_token: 0 })
}

static REENTRANT: Fake<Instant> =
    Fake { name: "reentrant", library: || scripted(Script { reentrant: true, ..PLAIN }), server: None, fenced: true };
static NOT_REENTRANT: Fake<Instant> =
    Fake { name: "not-reentrant", library: || scripted(PLAIN), server: None, fenced: true };
static NESTED_FAILS: Fake<Instant> = Fake {
    name: "nested-fails",
    library: || scripted(Script { reentrant: true, nested_fails: true, ..PLAIN }),
    server: None,
    fenced: true,
};
static FLAKY: Fake<Instant> = Fake {
    name: "flaky",
    library: || scripted(Script { every_other_fails: true, ..PLAIN }),
    server: None,
    fenced: true,
};
static LOST_HONOURED: Fake<Instant> = Fake {
    name: "lost-honoured",
    library: || scripted(Script { lost: Some(true), ..PLAIN }),
    server: None,
    fenced: true,
};
static LOST_IGNORED: Fake<Instant> = Fake {
    name: "lost-ignored",
    library: || scripted(Script { lost: Some(false), ..PLAIN }),
    server: None,
    fenced: true,
};
static SILENT: Fake<Instant> =
    Fake { name: "silent", library: || scripted(Script { silent: true, ..PLAIN }), server: None, fenced: true };

/// Seed 0 of one client under `model`, with `workload` lines added.
fn run_scripted(model: &'static Fake<Instant>, workload: &str) -> (History, Vec<String>) {
    run_scripted_with(model, workload, "")
}

/// As [`run_scripted`], with `more` (faults, say) after the `[workload]` table.
fn run_scripted_with(model: &'static Fake<Instant>, workload: &str, more: &str) -> (History, Vec<String>) {
    let models: Vec<&'static dyn DynModel> = vec![model];
    let text = format!(
        "name = \"t\"\nduration_ms = 2000\nalgorithms = [\"{}\"]\n\n[workload]\nclients = 1\nthink_ms = 5\n{}{workload}\n{more}\n",
        model.name,
        if workload.contains("hold_ms") { "" } else { "hold_ms = 5\n" }
    );
    let scenario = parse_str("t.toml", &text, &models).expect("valid scenario");
    let out = run_seed(&scenario, &scenario.runs[0], 0, &RunOptions { trace: true }).expect("no panic");
    // The library's notes, and the fault lines (as "fault: …").
    let notes = out
        .trace
        .map(|t| {
            t.entries
                .into_iter()
                .filter(|e| e.kind == "note" || e.kind == "fault")
                .map(|e| if e.kind == "fault" { format!("fault: {}", e.detail) } else { e.detail })
                .collect()
        })
        .unwrap_or_default();
    (out.history, notes)
}

fn count(h: &History, f: impl Fn(&HistoryEvent) -> bool) -> usize {
    h.events.iter().filter(|e| f(&e.event)).count()
}

/// Grants after true time `after_ms`.
fn grants_after(h: &History, after_ms: u64) -> usize {
    h.events
        .iter()
        .filter(|e| e.at_ns > after_ms * 1_000_000 && matches!(e.event, HistoryEvent::Granted { .. }))
        .count()
}

/// With `reentry = 1` and a reentrant library every section takes the lock twice: a nested grant
/// is recorded after the outer one, both are released (the nested first), and the library is
/// asked for two releases per section. Kills the reentry draw's `<` made `==`, `>` or `<=`
/// (the last only with `reentry = 0`, below), `nest`'s `&&` made `||`, `on_granted`'s nested
/// guard made `false` or with `==` as `!=` or `&&` as `||`, and `release`'s `1 + nested` made
/// `1 - nested` (an overflow) and its `!h.abandoned` made `h.abandoned`.
#[test]
fn a_reentrant_section_takes_and_releases_the_lock_twice() {
    let (h, notes) = run_scripted(&REENTRANT, "resource = false\nreentry = 1.0");
    let sections = count(&h, |e| matches!(e, HistoryEvent::Granted { nested: false, .. }));
    assert!(sections > 50, "{sections} sections");
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::Granted { nested: true, .. })), sections);
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::Released { nested: true, .. })), sections);
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::Released { nested: false, .. })), sections);
    let releases = notes.iter().filter(|n| *n == "release asked").count();
    assert!((2 * sections..=2 * sections + 2).contains(&releases), "{releases} releases for {sections} sections");
    // With reentry 0 nothing nests, reentrant or not; with reentry 1 a library that is not
    // reentrant is never asked to nest.
    let (h, _) = run_scripted(&REENTRANT, "resource = false\nreentry = 0.0");
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::Granted { nested: true, .. })), 0);
    let (h, notes) = run_scripted(&NOT_REENTRANT, "resource = false\nreentry = 1.0");
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::Granted { nested: true, .. })), 0);
    assert!(notes.iter().all(|n| n != "holds 2"), "a non-reentrant library was asked to nest");
}

/// A nested acquire that fails leaves the section as it was: no nested grant, one release. Kills
/// `on_failed`'s nested guard made `false` (or with `==` as `!=`, `&&` as `||`): the pending
/// nesting would stay and the section would be released twice.
#[test]
fn a_failed_nested_acquire_leaves_one_level_to_release() {
    let (h, notes) = run_scripted(&NESTED_FAILS, "resource = false\nreentry = 1.0");
    let sections = count(&h, |e| matches!(e, HistoryEvent::Granted { nested: false, .. }));
    assert!(sections > 50, "{sections} sections");
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::Granted { nested: true, .. })), 0);
    let releases = notes.iter().filter(|n| *n == "release asked").count();
    assert!((sections..=sections + 1).contains(&releases), "{releases} releases for {sections} sections");
}

/// A failed acquisition is recorded and the client thinks and tries again: every other call
/// fails, so failures and grants alternate. Kills `on_failed` made empty and its waiting guard
/// made `false` or `!=` (the client would wait for ever after the first failure).
#[test]
fn a_failed_acquisition_is_recorded_and_retried() {
    let (h, _) = run_scripted(&FLAKY, "resource = false");
    let failed = count(&h, |e| matches!(e, HistoryEvent::AcquireFailed { .. }));
    let granted = count(&h, |e| matches!(e, HistoryEvent::Granted { .. }));
    assert!(failed > 50 && failed.abs_diff(granted) <= 1, "{failed} failures, {granted} grants");
}

/// A lost lock whose loss the policy honours ends the section at once (abandoned, released, not
/// recorded as released); one it does not honour is only noted. Kills `on_lost` made empty, its
/// `!(holding && honour)` without the `!` or with `||`.
#[test]
fn a_lost_lock_ends_the_section_only_when_honoured() {
    let (h, _) = run_scripted(&LOST_HONOURED, "hold_ms = 100");
    let sections = count(&h, |e| matches!(e, HistoryEvent::Granted { .. }));
    assert!(sections > 50, "{sections} sections: each should end at once, not after 100 ms");
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::Abandoned { .. })), sections);
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::Released { .. })), 0);
    assert_eq!(
        count(&h, |e| matches!(e, HistoryEvent::ResourceWrite { .. })),
        0,
        "an abandoned section writes nothing"
    );
    let (h, _) = run_scripted(&LOST_IGNORED, "hold_ms = 100");
    let sections = count(&h, |e| matches!(e, HistoryEvent::Granted { .. }));
    assert!((10..25).contains(&sections), "{sections} sections of 100 ms in 2 s");
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::LostNotice { .. })), sections);
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::Abandoned { .. })), 0);
}

/// Without the resource a section is released when its hold ends, whatever its mode. Kills
/// `end_of_hold`'s `!resource || shared` made `&&` (an exclusive section would wait 1 s for a
/// read it never sent).
#[test]
fn without_the_resource_a_section_ends_with_its_hold() {
    let (h, _) = run_scripted(&NOT_REENTRANT, "resource = false");
    let sections = count(&h, |e| matches!(e, HistoryEvent::Granted { .. }));
    assert!(sections > 150, "{sections} sections of 5 ms (+5 ms thinking) in 2 s");
}

/// A library that never answers: with `acquire_timeout_ms = 50` each call is given up after
/// 50 ms, recorded as a timeout, and tried again after thinking. Kills the deletion of
/// `on_timer`'s `AcquireTimeout` arm and its `*timeout == Some(timer)` made `!=`.
#[test]
fn an_acquisition_nobody_answers_times_out_and_is_retried() {
    let (h, _) = run_scripted(&SILENT, "resource = false\nacquire_timeout_ms = 50");
    let timeouts = count(&h, |e| matches!(e, HistoryEvent::AcquireFailed { reason: FailReason::Timeout, .. }));
    assert!((30..=40).contains(&timeouts), "{timeouts} timeouts of 50 ms (+5 ms thinking) in 2 s");
}

/// A client waiting for the lock is a `waiter`: a pause aimed at one starts on it. Kills the
/// deletion of `client_state`'s `Phase::Waiting` arm (the fault would wait for ever).
#[test]
fn a_waiting_client_is_a_waiter() {
    let (_, notes) = run_scripted_with(
        &SILENT,
        "resource = false",
        "[[faults]]\nkind = \"pause\"\ntarget = \"waiter\"\nat_ms = 100\nduration_ms = 10",
    );
    assert!(notes.iter().any(|n| n.starts_with("fault: pause starts on [client-0]")), "{notes:?}");
}

/// A resource that does not answer a read within 1 s: the section is released without writing,
/// and the next one begins. Kills the deletion of `on_timer`'s `ResourceTimeout` arm (the section
/// would never end).
#[test]
fn a_section_whose_read_is_not_answered_ends_after_a_second() {
    let (h, notes) =
        run_scripted_with(&NOT_REENTRANT, "", "[[faults]]\nkind = \"isolate\"\ntarget = \"resource\"\nat_ms = 0");
    let sections = count(&h, |e| matches!(e, HistoryEvent::Granted { .. }));
    assert_eq!(sections, 2, "two sections of 1 s in 2 s");
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::ResourceWrite { .. })), 0);
    assert!(notes.iter().any(|n| n == "resource did not answer: releasing without writing"), "{notes:?}");
}

/// A client crashed and restarted takes up its loop again. Kills `on_restart` made empty (the
/// client would never acquire again).
#[test]
fn a_restarted_client_acquires_again() {
    let (h, _) = run_scripted_with(
        &NOT_REENTRANT,
        "resource = false",
        "[[faults]]\nkind = \"crash\"\ntarget = \"client-0\"\nat_ms = 500\nduration_ms = 100",
    );
    let after = grants_after(&h, 700);
    assert!(after > 50, "{after} grants after the restart");
}

/// Tokens shared by every client of [`SHARED_TOKENS`]: one counter, so a later grant always has
/// a higher token, whoever gets it.
static NEXT_TOKEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Grants at once (no exclusion at all) with tokens from one shared counter, releases at once.
#[derive(Clone, Debug)]
struct SharedTokenClient;

locksim_simulator::durable_whole!(SharedTokenClient);
impl LockClient<Instant> for SharedTokenClient {
    fn on_start(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents) {}
    fn acquire(&mut self, _: &mut Ctx<Instant>, out: &mut LockEvents, key: LockKey, _: LockMode) {
        let token = NEXT_TOKEN.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        out.push(LockEvent::Granted { key, token: Some(token) });
    }
    fn release(&mut self, _: &mut Ctx<Instant>, out: &mut LockEvents, key: LockKey) {
        out.push(LockEvent::Released { key });
    }
    fn cancel(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: LockKey) {}
    fn on_message(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: NodeId, _: ()) {}
    fn on_timer(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: TimerId, _: ()) {}
}

/// Grants everyone at once, with tokens from one counter.
static SHARED_TOKENS: Fake<Instant> =
    Fake { name: "shared-tokens", library: || Box::new(SharedTokenClient), server: None, fenced: true };

/// The fenced resource accepts a write whose token is at least the highest it accepted for the
/// key, and refuses a lower one; the unfenced one takes every write. Three clients hold at once
/// with tokens from one counter, their holds drawn, so writes arrive out of token order: the
/// recorded verdicts are checked against that rule, write by write. Kills the deletion of the
/// resource's `(Some(t), Some(h))` arm (every write accepted) and its `t >= h` made `<`.
#[test]
fn the_fenced_resource_refuses_a_token_below_the_highest_it_accepted() {
    NEXT_TOKEN.store(0, std::sync::atomic::Ordering::SeqCst);
    let models: Vec<&'static dyn DynModel> = vec![&SHARED_TOKENS];
    let text = "name = \"t\"\nduration_ms = 2000\nalgorithms = [\"shared-tokens\"]\n\n[workload]\nclients = 3\nhold_ms = { uniform = [1, 20] }\nthink_ms = 1\n";
    let scenario = parse_str("t.toml", text, &models).expect("valid scenario");
    let h = run_seed(&scenario, &scenario.runs[0], 0, &RunOptions { trace: false }).expect("no panic").history;
    let mut highest: Option<u64> = None;
    let (mut accepted, mut refused) = (0, 0);
    for e in &h.events {
        if let HistoryEvent::ResourceWrite { token: Some(t), fenced_accepted, .. } = e.event {
            let expected = highest.is_none_or(|h| t >= h);
            assert_eq!(fenced_accepted, expected, "token {t} against highest {highest:?}");
            if expected {
                highest = Some(highest.map_or(t, |h| h.max(t)));
                accepted += 1;
            } else {
                refused += 1;
            }
        }
    }
    assert!(accepted > 100 && refused > 20, "{accepted} writes accepted, {refused} refused");
}

/// A failure for a key the client is not waiting for is not taken as the answer: no failure is
/// recorded, and every section is granted. Kills `on_failed`'s `Phase::Waiting` guard `*k == key`
/// made `true`.
#[test]
fn a_failure_of_another_key_is_not_taken_as_the_answer() {
    let h = run_stray(&OTHER_KEY_FAILS_FIRST);
    let failed = h.events.iter().filter(|e| matches!(e.event, HistoryEvent::AcquireFailed { .. })).count();
    let granted = h.events.iter().filter(|e| matches!(e.event, HistoryEvent::Granted { .. })).count();
    assert_eq!(failed, 0, "{failed} failures recorded ({granted} grants)");
    assert!(granted > 100, "{granted} grants");
}

// ---- answers that come later: a fake with timers ----

/// The timed fake's protocol: no messages; a timer carries the answer it will give.
struct Clocked;
impl Protocol for Clocked {
    type Msg = ();
    type Timer = Later;
}

/// An answer the timed fake gives when its timer fires.
#[derive(Clone, Copy, Debug)]
enum Later {
    Granted(LockKey),
    Released(LockKey),
}

/// What the timed fake does.
#[derive(Clone, Debug, Copy)]
enum Plan {
    /// Each section's release sends a stray grant of the key at once, and answers 10 ms later;
    /// the release asked for because of that grant answers 30 ms later.
    StrayGrantInRelease,
    /// Reentrant: a nested acquire fails, and a grant of it comes 1 ms later anyway.
    NestedFailsThenGrants,
    /// Reentrant: a nested acquire is answered with a failure of the other key at once, then
    /// granted 1 ms later.
    OtherKeyFailsWhileNesting,
}

#[derive(Clone, Debug)]
struct TimedClient {
    plan: Plan,
    holds: u32,
    releasing: bool,
    next_token: u64,
}

locksim_simulator::durable_whole!(TimedClient);
impl LockClient<Clocked> for TimedClient {
    fn on_start(&mut self, _: &mut Ctx<Clocked>, _: &mut LockEvents) {}
    fn acquire(&mut self, ctx: &mut Ctx<Clocked>, out: &mut LockEvents, key: LockKey, _: LockMode) {
        self.next_token += 1;
        let nested = self.holds > 0;
        match (self.plan, nested) {
            (Plan::NestedFailsThenGrants, true) => {
                out.push(LockEvent::Failed { key, reason: FailReason::Refused });
                ctx.set_timer(1_000_000, Later::Granted(key));
            }
            (Plan::OtherKeyFailsWhileNesting, true) => {
                out.push(LockEvent::Failed { key: 1 - key, reason: FailReason::Unavailable });
                self.holds += 1;
                ctx.set_timer(1_000_000, Later::Granted(key));
            }
            _ => {
                self.holds += 1;
                out.push(LockEvent::Granted { key, token: Some(self.next_token) });
            }
        }
    }
    fn release(&mut self, ctx: &mut Ctx<Clocked>, out: &mut LockEvents, key: LockKey) {
        self.holds = self.holds.saturating_sub(1);
        match self.plan {
            Plan::StrayGrantInRelease if !self.releasing => {
                self.releasing = true;
                out.push(LockEvent::Granted { key, token: Some(self.next_token) });
                ctx.set_timer(10_000_000, Later::Released(key));
            }
            Plan::StrayGrantInRelease => {
                self.releasing = false;
                ctx.set_timer(30_000_000, Later::Released(key));
            }
            _ => out.push(LockEvent::Released { key }),
        }
    }
    fn cancel(&mut self, _: &mut Ctx<Clocked>, _: &mut LockEvents, _: LockKey) {}
    fn on_message(&mut self, _: &mut Ctx<Clocked>, _: &mut LockEvents, _: NodeId, _: ()) {}
    fn on_timer(&mut self, _: &mut Ctx<Clocked>, out: &mut LockEvents, _: TimerId, later: Later) {
        match later {
            Later::Granted(key) => out.push(LockEvent::Granted { key, token: Some(self.next_token) }),
            Later::Released(key) => out.push(LockEvent::Released { key }),
        }
    }
    fn reentrant(&self) -> bool {
        !matches!(self.plan, Plan::StrayGrantInRelease)
    }
}

fn timed(plan: Plan) -> Box<dyn LockClient<Clocked>> {
    Box::new(TimedClient { plan, holds: 0, releasing: false, next_token: 0 })
}

static STRAY_GRANT_IN_RELEASE: Fake<Clocked> =
    Fake { name: "stray-grant-in-release", library: || timed(Plan::StrayGrantInRelease), server: None, fenced: true };
static NESTED_FAILS_THEN_GRANTS: Fake<Clocked> = Fake {
    name: "nested-fails-then-grants",
    library: || timed(Plan::NestedFailsThenGrants),
    server: None,
    fenced: true,
};
static OTHER_KEY_FAILS_WHILE_NESTING: Fake<Clocked> = Fake {
    name: "other-key-fails-while-nesting",
    library: || timed(Plan::OtherKeyFailsWhileNesting),
    server: None,
    fenced: true,
};

/// Seed 0 of one client on two locks under `model`, with `workload` lines added.
fn run_timed(model: &'static Fake<Clocked>, workload: &str) -> History {
    let models: Vec<&'static dyn DynModel> = vec![model];
    let text = format!(
        "name = \"t\"\nduration_ms = 2000\nalgorithms = [\"{}\"]\n\n[workload]\nclients = 1\nlocks = 2\nthink_ms = 5\nresource = false\n{}{workload}\n",
        model.name,
        if workload.contains("hold_ms") { "" } else { "hold_ms = 5\n" }
    );
    let scenario = parse_str("t.toml", &text, &models).expect("valid scenario");
    run_seed(&scenario, &scenario.runs[0], 0, &RunOptions { trace: false }).expect("no panic").history
}

/// A grant that arrives while the client releases is handed back, and the client waits for
/// that release's answer too (30 ms) before its next section: a section every 40 ms, not
/// every 20. Kills `on_granted`'s `*remaining += 1` made `-=` or `*=`.
#[test]
fn a_grant_during_a_release_is_handed_back_and_waited_for() {
    let h = run_timed(&STRAY_GRANT_IN_RELEASE, "");
    let sections = count(&h, |e| matches!(e, HistoryEvent::Granted { .. }));
    assert!((45..=52).contains(&sections), "{sections} sections of 40 ms in 2 s");
}

/// A nested acquire that failed and is granted later anyway is not taken as the nested grant.
/// Kills `on_failed`'s nested guard made `false` or with `==` as `!=` (the pending nesting
/// would stay and take the late grant).
#[test]
fn a_late_grant_after_a_failed_nested_acquire_is_not_nested() {
    let h = run_timed(&NESTED_FAILS_THEN_GRANTS, "reentry = 1.0\nhold_ms = 10");
    let sections = count(&h, |e| matches!(e, HistoryEvent::Granted { nested: false, .. }));
    assert!(sections > 50, "{sections} sections");
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::Granted { nested: true, .. })), 0);
}

/// A failure of another key while a nested acquire is pending does not cancel it: the nested
/// grant that follows is recorded. Kills `on_failed`'s nested guard made `true` or with `&&` as
/// `||`.
#[test]
fn a_failure_of_another_key_leaves_a_pending_nested_acquire() {
    let h = run_timed(&OTHER_KEY_FAILS_WHILE_NESTING, "reentry = 1.0\nhold_ms = 10");
    let sections = count(&h, |e| matches!(e, HistoryEvent::Granted { nested: false, .. }));
    assert!(sections > 50, "{sections} sections");
    // (The last section's nested grant may fall after the run's end.)
    let nested = count(&h, |e| matches!(e, HistoryEvent::Granted { nested: true, .. }));
    assert!(nested + 1 >= sections && nested <= sections, "{nested} nested grants in {sections} sections");
}

/// Every read and write to the resource 600 ms slower each way: every read is answered after
/// the 1 s time-out, when the client already holds a later grant, and must be ignored: no
/// section ever writes. Kills `on_resource`'s read guard `key == h.key && grant == h.grant`
/// made `true` or with `&&` as `||`.
#[test]
fn a_read_answered_after_its_section_ended_is_ignored() {
    let (h, _) = run_scripted_with(
        &NOT_REENTRANT,
        "",
        "[[faults]]\nkind = \"slow\"\ntarget = \"resource\"\nat_ms = 0\nlatency_ms = 600",
    );
    assert!(count(&h, |e| matches!(e, HistoryEvent::Granted { .. })) >= 1);
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::ResourceWrite { .. })), 0);
}

/// A read answered while the client still works (before its hold ends) does not end the hold
/// early; one answered after the hold ended does end it, and the write follows. With 50 ms holds
/// and a fast resource: about 36 sections in 2 s; with 5 ms holds and a resource 30 ms slower
/// each way, every section still writes. Kills `on_resource`'s `h.step == AwaitRead &&
/// !h.abandoned` with `==` as `!=`, `&&` as `||`, or without the `!`.
#[test]
fn a_read_reply_ends_the_hold_only_when_the_hold_waits_for_it() {
    let (h, _) = run_scripted(&NOT_REENTRANT, "hold_ms = 50");
    let sections = count(&h, |e| matches!(e, HistoryEvent::Granted { .. }));
    assert!((33..=38).contains(&sections), "{sections} sections of 50 ms (+5 ms thinking) in 2 s");
    let (h, _) = run_scripted_with(
        &NOT_REENTRANT,
        "",
        "[[faults]]\nkind = \"slow\"\ntarget = \"resource\"\nat_ms = 0\nlatency_ms = 30",
    );
    let sections = count(&h, |e| matches!(e, HistoryEvent::Granted { .. }));
    let writes = count(&h, |e| matches!(e, HistoryEvent::ResourceWrite { .. }));
    assert!(sections > 10 && writes + 1 >= sections, "{writes} writes in {sections} sections");
}

/// A client crashed in a section restarts with its library's state gone: the library, which
/// fails nested acquires, is not asked to nest after the restart, and every later acquisition is
/// granted. Kills `on_crash` made empty (the library would still count the lost hold, and fail
/// every acquisition as nested).
#[test]
fn a_crash_clears_the_library_state() {
    let (h, _) = run_scripted_with(
        &NESTED_FAILS,
        "resource = false\nhold_ms = 50",
        "[[faults]]\nkind = \"crash\"\ntarget = \"client-0\"\nat_ms = 520\nduration_ms = 100",
    );
    let after = grants_after(&h, 620);
    assert!(after > 20, "{after} grants after the restart");
    assert_eq!(count(&h, |e| matches!(e, HistoryEvent::AcquireFailed { .. })), 0);
}

// ---- a connection reset reaches the library ----

/// A server that does nothing but accept connections.
#[derive(Clone, Debug)]
struct IdleServer;

locksim_simulator::durable_whole!(IdleServer);
impl Process<Instant> for IdleServer {
    fn on_start(&mut self, _: &mut Ctx<Instant>) {}
    fn on_message(&mut self, _: &mut Ctx<Instant>, _: NodeId, _: ()) {}
    fn on_timer(&mut self, _: &mut Ctx<Instant>, _: TimerId, _: ()) {}
}

/// Connects to `server-0` at start (one message) and notes every reset it is told of.
#[derive(Clone, Debug)]
struct ResetWatcher;

locksim_simulator::durable_whole!(ResetWatcher);
impl LockClient<Instant> for ResetWatcher {
    fn on_start(&mut self, ctx: &mut Ctx<Instant>, _: &mut LockEvents) {
        let server = ctx.node_named("server-0").expect("server-0");
        ctx.send(server, ());
    }
    fn acquire(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: LockKey, _: LockMode) {}
    fn release(&mut self, _: &mut Ctx<Instant>, out: &mut LockEvents, key: LockKey) {
        out.push(LockEvent::Released { key });
    }
    fn cancel(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: LockKey) {}
    fn on_message(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: NodeId, _: ()) {}
    fn on_timer(&mut self, _: &mut Ctx<Instant>, _: &mut LockEvents, _: TimerId, _: ()) {}
    fn on_reset(&mut self, ctx: &mut Ctx<Instant>, _: &mut LockEvents, peer: NodeId) {
        let name = ctx.name_of(peer).to_string();
        ctx.note(|| format!("library told: reset by {name}"));
    }
}

/// One idle server; the library notes resets.
static WITH_SERVER: Fake<Instant> = Fake {
    name: "with-server",
    library: || Box::new(ResetWatcher),
    server: Some(|| Box::new(IdleServer)),
    fenced: true,
};

/// A server's process killed: the client's library is told its connection was reset. Kills
/// `on_reset` made empty and its resource test `peer == ctx.resource()` made `!=` (the
/// server's reset would be dropped).
#[test]
fn a_reset_from_a_server_reaches_the_library() {
    let models: Vec<&'static dyn DynModel> = vec![&WITH_SERVER];
    let text = "name = \"t\"\nduration_ms = 1000\nalgorithms = [\"with-server\"]\n\n[workload]\nclients = 1\nresource = false\n\n[[faults]]\nkind = \"crash\"\nmode = \"process\"\ntarget = \"server-0\"\nat_ms = 100\n";
    let scenario = parse_str("t.toml", text, &models).expect("valid scenario");
    let out = run_seed(&scenario, &scenario.runs[0], 0, &RunOptions { trace: true }).expect("no panic");
    let told =
        out.trace.expect("trace").entries.iter().filter(|e| e.detail == "library told: reset by server-0").count();
    assert_eq!(told, 1);
}

/// Resource messages slowed by up to 1.5 s each (drawn per message): some writes are answered
/// after the section's 1 s time-out, while the client holds a later grant. Such a late reply must
/// not end that later section: a section released before its own write reached the resource
/// (or that never wrote) was released by a time-out, at least 1 s after its grant. Kills `on_resource`'s write-reply
/// guard (`key == h.key && grant == h.grant && h.step == AwaitWrite`) made `true` or with
/// either `&&` as `||`.
#[test]
fn a_late_write_reply_does_not_end_a_later_section() {
    let models: Vec<&'static dyn DynModel> = vec![&NOT_REENTRANT];
    let text = "name = \"t\"\nduration_ms = 60000\nalgorithms = [\"not-reentrant\"]\n\n[workload]\nclients = 1\nhold_ms = 1\nthink_ms = 1\n\n[[faults]]\nkind = \"slow\"\ntarget = \"resource\"\nat_ms = 0\nlatency_ms = { uniform = [0, 1500] }\n";
    let scenario = parse_str("t.toml", text, &models).expect("valid scenario");
    let h = run_seed(&scenario, &scenario.runs[0], 0, &RunOptions { trace: false }).expect("no panic").history;
    let client = h.clients[0];
    // Each section: its grant time and number, then its release time.
    let mut sections: Vec<(u64, u64, u64)> = Vec::new();
    let mut open: Option<(u64, u64)> = None;
    let mut landed: std::collections::BTreeMap<u64, u64> = Default::default();
    for e in &h.events {
        match e.event {
            HistoryEvent::Granted { grant, nested: false, .. } if e.node == client => open = Some((e.at_ns, grant)),
            HistoryEvent::Released { nested: false, .. } if e.node == client => {
                if let Some((at, grant)) = open.take() {
                    sections.push((at, grant, e.at_ns));
                }
            }
            HistoryEvent::ResourceWrite { grant, .. } => {
                landed.insert(grant, e.at_ns);
            }
            _ => {}
        }
    }
    let late_writes = sections.iter().filter(|(_, g, released)| landed.get(g).is_some_and(|w| w > released)).count();
    assert!(late_writes > 0 && sections.len() > 5, "{late_writes} late writes in {} sections", sections.len());
    // A section that never wrote, or whose write landed after it ended, ended by a time-out.
    for (granted, grant, released) in &sections {
        if landed.get(grant).is_none_or(|w| w > released) {
            assert!(
                released - granted >= 1_000_000_000,
                "grant {grant} released {} ms after it, before its write landed or without one",
                (released - granted) / 1_000_000
            );
        }
    }
}
