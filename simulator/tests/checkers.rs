//! The checkers on hand-written histories. Each test pins one rule of the results format and
//! would fail on a checker that got that rule wrong (the comment says which wrong way).

use locksim_simulator::checker::{check, SeedMetrics};
use locksim_simulator::history::{FailReason, History, HistoryEvent, LockKey, LockMode, Stamped};
use locksim_simulator::process::NodeId;
use locksim_simulator::time::{Nanos, NS_PER_MS};

use HistoryEvent::*;
use LockMode::{Exclusive, Shared};

const A: NodeId = 1;
const B: NodeId = 2;
const C: NodeId = 3;
const RES: NodeId = 9;

/// Builds a history event by event, in true-time order, with times in milliseconds.
struct Hist {
    h: History,
    /// Next grant number per client, as the workload numbers them.
    grants: Vec<u64>,
}

impl Hist {
    fn new(duration_ms: u64) -> Hist {
        Hist {
            h: History {
                duration_ns: duration_ms * NS_PER_MS,
                clients: vec![A, B, C],
                fenced: true,
                ..History::default()
            },
            grants: vec![0; 16],
        }
    }
    fn unfenced(mut self) -> Hist {
        self.h.fenced = false;
        self
    }
    fn ev(&mut self, at_ms: u64, node: NodeId, event: HistoryEvent) -> &mut Hist {
        self.ev_ns(at_ms * NS_PER_MS, node, event)
    }
    fn ev_ns(&mut self, at_ns: Nanos, node: NodeId, event: HistoryEvent) -> &mut Hist {
        self.h.events.push(Stamped { at_ns, node, event });
        self
    }
    fn start(&mut self, at: u64, c: NodeId, key: LockKey, mode: LockMode) -> &mut Hist {
        self.ev(at, c, AcquireStart { key, mode })
    }
    /// A grant with the client's next grant number.
    fn grant_tok(
        &mut self,
        at: u64,
        c: NodeId,
        key: LockKey,
        mode: LockMode,
        token: Option<u64>,
        nested: bool,
    ) -> &mut Hist {
        self.grants[c] += 1;
        let grant = self.grants[c];
        self.ev(at, c, Granted { key, mode, token, grant, nested })
    }
    fn grant(&mut self, at: u64, c: NodeId, key: LockKey, mode: LockMode) -> &mut Hist {
        self.grant_tok(at, c, key, mode, None, false)
    }
    fn release(&mut self, at: u64, c: NodeId, key: LockKey) -> &mut Hist {
        self.ev(at, c, Released { key, nested: false })
    }
    /// An exclusive hold of key 0 from `from` to `to`, ended by a release.
    fn hold(&mut self, c: NodeId, from: u64, to: u64) -> &mut Hist {
        self.grant(from, c, 0, Exclusive).release(to, c, 0)
    }
    fn write(
        &mut self,
        at: u64,
        client: NodeId,
        grant: u64,
        token: Option<u64>,
        value: u64,
        fenced_accepted: bool,
    ) -> &mut Hist {
        self.ev(at, RES, ResourceWrite { client, key: 0, grant, token, value, fenced_accepted })
    }
    /// Checks the history after a stable sort by time: the engine records in time order, and
    /// tests may write events out of order across instants, but never within one.
    fn check(&mut self) -> SeedMetrics {
        self.h.events.sort_by_key(|e| e.at_ns);
        check(7, &self.h)
    }
}

fn kinds(m: &SeedMetrics, kind: &str) -> usize {
    m.violations.iter().filter(|v| v.kind == kind).count()
}

// ---- V1: overlap ----

/// A `<=` instead of `<` in the overlap test would count a hand-over at the same instant.
#[test]
fn back_to_back_intervals_do_not_overlap() {
    let m = Hist::new(100).hold(A, 0, 10).hold(B, 10, 20).hold(C, 20, 30).check();
    assert_eq!(m.overlap_events, 0);
    assert!(m.violations.is_empty());
    assert_eq!(m.acquisitions, 3);
    assert_eq!(m.completed_sections, 3);
    assert_eq!(m.releases, 3);
}

/// Counting from both intervals' point of view would give 2; an interval-end event would too.
#[test]
fn overlap_is_counted_once_per_pair() {
    let m =
        Hist::new(100).grant(0, A, 0, Exclusive).grant(10, B, 0, Exclusive).release(20, A, 0).release(30, B, 0).check();
    assert_eq!(m.overlap_events, 1);
    assert_eq!(kinds(&m, "overlap"), 1);
    let v = &m.violations[0];
    assert_eq!(v.at_ns, 10 * NS_PER_MS);
    assert!(
        v.detail.contains("key 0") && v.detail.contains("client 1") && v.detail.contains("client 2"),
        "{}",
        v.detail
    );
    assert!(v.detail.contains("10.000 ms"), "{}", v.detail);
    assert!(m.has_violation());
}

/// Counting "times the lock was doubly held" or holders minus one would give 2, not 3 pairs.
#[test]
fn three_mutually_overlapping_exclusive_holds_are_three_pairs() {
    let m = Hist::new(100)
        .grant(0, A, 0, Exclusive)
        .grant(5, B, 0, Exclusive)
        .grant(8, C, 0, Exclusive)
        .release(20, A, 0)
        .release(21, B, 0)
        .release(22, C, 0)
        .check();
    assert_eq!(m.overlap_events, 3);
    assert_eq!(kinds(&m, "overlap"), 3);
}

/// Holds on different keys never conflict.
#[test]
fn different_keys_do_not_overlap() {
    let m =
        Hist::new(100).grant(0, A, 0, Exclusive).grant(5, B, 1, Exclusive).release(20, A, 0).release(21, B, 1).check();
    assert_eq!(m.overlap_events, 0);
}

/// Readers may share; a writer among them may not.
#[test]
fn shared_holds_overlap_only_with_exclusive_ones() {
    let shared_only =
        Hist::new(100).grant(0, A, 0, Shared).grant(5, B, 0, Shared).release(20, A, 0).release(25, B, 0).check();
    assert_eq!(shared_only.overlap_events, 0);

    let mixed =
        Hist::new(100).grant(0, A, 0, Shared).grant(5, B, 0, Exclusive).release(20, A, 0).release(25, B, 0).check();
    assert_eq!(mixed.overlap_events, 1);
}

/// A reentrant grant is part of the outer hold: it neither overlaps it (a checker treating it as
/// a second interval of the same client would only be saved by the same-client rule; one treating
/// the nested release as the end would miss B's overlap below).
#[test]
fn nested_grants_do_not_create_overlaps_or_end_the_hold() {
    let alone = Hist::new(100)
        .grant(0, A, 0, Exclusive)
        .grant_tok(5, A, 0, Exclusive, None, true)
        .ev(10, A, Released { key: 0, nested: true })
        .release(30, A, 0)
        .check();
    assert_eq!(alone.overlap_events, 0);
    assert_eq!(alone.acquisitions, 1, "nested grants are not acquisitions");
    assert_eq!(alone.releases, 1, "nested releases are not releases");
    assert_eq!(alone.completed_sections, 1);

    // B is granted after the nested release but while A still holds the outer lock.
    let raced = Hist::new(100)
        .grant(0, A, 0, Exclusive)
        .grant_tok(5, A, 0, Exclusive, None, true)
        .ev(10, A, Released { key: 0, nested: true })
        .grant(20, B, 0, Exclusive)
        .release(30, A, 0)
        .release(40, B, 0)
        .check();
    assert_eq!(raced.overlap_events, 1);
}

/// A client cannot race itself: a duplicate non-nested grant to the same client (a library that
/// re-granted without a release) is not an overlap, though each is an acquisition. Another
/// client's hold over both counts once per pair.
#[test]
fn one_clients_own_holds_never_overlap_each_other() {
    let m =
        Hist::new(100).grant(0, A, 0, Exclusive).grant(5, A, 0, Exclusive).release(10, A, 0).release(20, A, 0).check();
    assert_eq!(m.overlap_events, 0);
    assert_eq!(m.acquisitions, 2);
    assert_eq!(m.completed_sections, 2);

    let with_b = Hist::new(100)
        .grant(0, A, 0, Exclusive)
        .grant(5, A, 0, Exclusive)
        .grant(7, B, 0, Exclusive)
        .release(10, A, 0)
        .release(20, A, 0)
        .release(30, B, 0)
        .check();
    assert_eq!(with_b.overlap_events, 2);
}

/// A crashed client holds nothing: B's grant after the crash is not an overlap, and the crashed
/// section is not completed.
#[test]
fn crash_ends_an_interval() {
    let mut h = Hist::new(100);
    h.grant(0, A, 0, Exclusive)
        .grant(1, A, 1, Exclusive)
        .ev(10, A, ClientCrashed)
        .grant(15, B, 0, Exclusive)
        .grant(15, C, 1, Exclusive)
        .release(20, B, 0)
        .release(20, C, 1);
    let m = h.check();
    assert_eq!(m.overlap_events, 0, "the crash must end both of A's holds");
    assert_eq!(m.acquisitions, 4);
    assert_eq!(m.completed_sections, 2);

    // Without the crash, both would overlap.
    h.h.events.retain(|e| e.event != ClientCrashed);
    assert_eq!(h.check().overlap_events, 2);
}

/// An interval still open when the run stops counts as held to the end.
#[test]
fn interval_open_at_end_of_run_is_held_to_the_end() {
    let m = Hist::new(100).grant(0, A, 0, Exclusive).grant(99, B, 0, Exclusive).check();
    assert_eq!(m.overlap_events, 1);
    assert_eq!(m.completed_sections, 0);
    assert_eq!(m.releases, 0);
}

/// Abandoning ends the hold like a release, but the section is not completed.
#[test]
fn abandon_ends_an_interval_without_completing_it() {
    let m = Hist::new(100).grant(0, A, 0, Exclusive).ev(10, A, Abandoned { key: 0 }).hold(B, 12, 20).check();
    assert_eq!(m.overlap_events, 0);
    assert_eq!(m.completed_sections, 1);
    assert_eq!(m.releases, 1);
}

/// Zero-length holds only overlap holds that strictly contain their instant.
#[test]
fn zero_length_hold_overlaps_only_a_hold_around_it() {
    // B granted and crashed at 10 while A held [0, 20]: a real overlap.
    let inside = Hist::new(100).hold(A, 0, 20).grant(10, B, 0, Exclusive).ev(10, B, ClientCrashed).check();
    assert_eq!(inside.overlap_events, 1);
    // B's empty hold at A's start instant: a.start < b.end fails, no overlap.
    let at_start = Hist::new(100).grant(10, B, 0, Exclusive).ev(10, B, ClientCrashed).hold(A, 10, 20).check();
    assert_eq!(at_start.overlap_events, 0);
}

// ---- V2: stale writes ----

/// A holds key 0 (grant 1, token 1) from 0; its lease lapses and B is granted at 20 (token 2);
/// A's write arrives at `arrive`.
fn stale_history(arrive: u64, fenced_accepted: bool) -> Hist {
    let mut h = Hist::new(100);
    h.grant_tok(0, A, 0, Exclusive, Some(1), false)
        .ev(0, RES, ResourceRead { client: A, key: 0, value: 0 })
        .grant_tok(20, B, 0, Exclusive, Some(2), false)
        .write(arrive, A, 1, Some(1), 1, fenced_accepted)
        .release(40, B, 0)
        .release(50, A, 0);
    h
}

#[test]
fn stale_write_accepted_by_the_fenced_resource_counts_both() {
    let m = stale_history(25, true).check();
    assert_eq!(m.stale_unfenced_events, 1);
    assert_eq!(m.stale_fenced_events, Some(1));
    assert_eq!(kinds(&m, "stale_unfenced"), 1);
    assert_eq!(kinds(&m, "stale_fenced"), 1);
    let v = m.violations.iter().find(|v| v.kind == "stale_unfenced").unwrap();
    assert_eq!(v.at_ns, 25 * NS_PER_MS);
    assert!(
        v.detail.contains("client 1") && v.detail.contains("client 2") && v.detail.contains("token 2"),
        "{}",
        v.detail
    );
}

/// Fencing worked: stale for the unfenced resource, not for the fenced one (reported as 0).
#[test]
fn stale_write_rejected_by_the_fenced_resource_counts_unfenced_only() {
    let m = stale_history(25, false).check();
    assert_eq!(m.stale_unfenced_events, 1);
    assert_eq!(m.stale_fenced_events, Some(0));
}

/// Arrival at exactly the other grant's instant is already stale ("at or before the arrival");
/// arrival before it is not; a write long after (B released) is still from a superseded grant.
#[test]
fn stale_write_boundaries() {
    assert_eq!(stale_history(20, true).check().stale_unfenced_events, 1);
    assert_eq!(stale_history(19, true).check().stale_unfenced_events, 0);
    assert_eq!(stale_history(45, true).check().stale_unfenced_events, 1);
}

/// Only another client's grant supersedes; a grant in the same instant as the writer's does not.
#[test]
fn own_regrant_and_simultaneous_grant_do_not_supersede() {
    let mut own = Hist::new(100);
    own.grant_tok(0, A, 0, Exclusive, Some(1), false)
        .release(5, A, 0)
        .grant_tok(10, A, 0, Exclusive, Some(2), false)
        .write(12, A, 1, Some(1), 1, true);
    assert_eq!(own.check().stale_unfenced_events, 0);

    let mut same_instant = Hist::new(100);
    same_instant.grant_tok(10, B, 0, Shared, Some(1), false).grant_tok(10, A, 0, Shared, Some(1), false).write(
        12,
        A,
        1,
        Some(1),
        1,
        true,
    );
    assert_eq!(same_instant.check().stale_unfenced_events, 0);
}

/// A model without tokens reports stale_fenced as null ("cannot be fenced"), never 0.
#[test]
fn stale_fenced_is_none_for_an_unfenced_model() {
    let mut h = stale_history(25, true).unfenced();
    let m = h.check();
    assert_eq!(m.stale_unfenced_events, 1);
    assert_eq!(m.stale_fenced_events, None);
    assert_eq!(kinds(&m, "stale_fenced"), 0);
    let clean = Hist::new(10).unfenced().check();
    assert_eq!(clean.stale_fenced_events, None);
}

// ---- lost updates ----

/// A and B both read 0 and both write 1: two writes, counter 1, one increment lost.
#[test]
fn interleaved_read_modify_writes_lose_one_update() {
    let mut h = Hist::new(100);
    h.grant(0, A, 0, Exclusive)
        .ev(1, RES, ResourceRead { client: A, key: 0, value: 0 })
        .grant(5, B, 0, Exclusive)
        .ev(6, RES, ResourceRead { client: B, key: 0, value: 0 })
        .write(8, A, 1, None, 1, true)
        .write(9, B, 1, None, 1, true)
        .release(10, A, 0)
        .release(10, B, 0);
    h.h.final_counter = vec![1];
    let m = h.check();
    assert_eq!(m.lost_updates, 1);
    let v = m.violations.iter().find(|v| v.kind == "lost_update").unwrap();
    assert_eq!(v.at_ns, 9 * NS_PER_MS);
    assert!(v.detail.contains("client 2 wrote 1 over 1 (written by client 1)"), "{}", v.detail);

    // Serialised, the same two sections lose nothing.
    let mut ok = Hist::new(100);
    ok.hold(A, 0, 10).write(8, A, 1, None, 1, true).hold(B, 20, 30).write(28, B, 1, None, 2, true);
    ok.h.final_counter = vec![2];
    assert_eq!(ok.check().lost_updates, 0);
}

// ---- token regressions ----

/// Tokens 1, 3, 2, 3, 4 on one key: 2 and the repeated 3 regress (not above 3); 4 does not.
/// Comparing with the previous token only would miss the second 3 (it is above 2). Nested
/// grants and tokenless grants are not judged.
#[test]
fn token_regression_is_judged_against_the_highest_earlier_token() {
    let mut h = Hist::new(100);
    for (i, t) in [1, 3, 2, 3, 4].into_iter().enumerate() {
        let at = 10 * i as u64;
        let c = [A, B][i % 2];
        h.grant_tok(at, c, 0, Exclusive, Some(t), false);
        if i == 1 {
            h.grant_tok(at + 1, c, 0, Exclusive, Some(1), true).ev(at + 2, c, Released { key: 0, nested: true });
        }
        h.release(at + 5, c, 0);
    }
    h.grant_tok(60, C, 0, Exclusive, None, false).release(65, C, 0);
    h.grant_tok(70, C, 1, Exclusive, Some(1), false).release(75, C, 1); // another key starts over
    let m = h.check();
    assert_eq!(m.token_regressions, 2);
    let v: Vec<_> = m.violations.iter().filter(|v| v.kind == "token_regression").collect();
    assert_eq!(v[0].at_ns, 20 * NS_PER_MS);
    assert!(v[0].detail.contains("token 2") && v[0].detail.contains("token 3"), "{}", v[0].detail);
}

/// Readers granted together (a read-write recipe grants the whole queue of readers at once) may
/// get their tokens in any order: tokens 5 then 4 for two concurrent readers are not a
/// regression. A reader below an earlier writer's token is, and so is a writer not above a
/// reader's token.
#[test]
fn concurrent_readers_may_be_granted_out_of_token_order() {
    let mut h = Hist::new(200);
    h.grant_tok(0, A, 0, Exclusive, Some(3), false).release(5, A, 0);
    h.grant_tok(10, B, 0, Shared, Some(5), false);
    h.grant_tok(10, C, 0, Shared, Some(4), false);
    h.release(20, B, 0).release(20, C, 0);
    assert_eq!(h.check().token_regressions, 0, "readers out of order among themselves");

    h.grant_tok(30, A, 0, Shared, Some(2), false).release(35, A, 0);
    assert_eq!(h.check().token_regressions, 1, "a reader below the earlier writer's token 3");

    h.grant_tok(40, B, 0, Exclusive, Some(5), false).release(45, B, 0);
    assert_eq!(h.check().token_regressions, 2, "a writer not above a reader's token 5");
}

/// A client granted again the token it held last on the key, with nobody else granted the key
/// in between (its release never took effect, so it re-entered its own lock), is a leaked
/// re-grant: counted apart, and not a violation. A checker that still called it a regression
/// would flag db and Kubernetes as fencing failures; one that ignored it would hide the leak.
#[test]
fn own_token_regranted_is_a_leaked_regrant_not_a_regression() {
    let mut h = Hist::new(100);
    h.grant_tok(0, A, 0, Exclusive, Some(5), false).release(5, A, 0);
    h.grant_tok(10, A, 0, Exclusive, Some(5), false).release(15, A, 0);
    h.grant_tok(20, A, 0, Exclusive, Some(5), false).release(25, A, 0);
    let m = h.check();
    assert_eq!((m.token_regressions, m.leaked_regrants), (0, 2));
    assert_eq!(kinds(&m, "token_regression"), 0);
    assert!(!m.has_violation(), "a leaked lock is not a safety violation");
    // The first one is described for the notes' replay line.
    let first = m.first_leaked_regrant.as_ref().expect("described");
    assert_eq!((first.at_ns, first.kind), (10 * NS_PER_MS, "leaked_regrant"));
    assert!(first.detail.contains("token 5") && first.detail.contains("0.000 ms"), "{}", first.detail);
}

/// The same token granted to another client is a regression: both carry it, so the fenced
/// resource cannot tell the superseded holder's writes from the new one's.
#[test]
fn another_clients_equal_token_is_a_regression() {
    let mut h = Hist::new(100);
    h.grant_tok(0, A, 0, Exclusive, Some(5), false).release(5, A, 0);
    h.grant_tok(10, B, 0, Exclusive, Some(5), false).release(15, B, 0);
    let m = h.check();
    assert_eq!((m.token_regressions, m.leaked_regrants), (1, 0));
    assert!(m.has_violation());
    assert!(m.first_leaked_regrant.is_none());
    // A granted 5 again after B: B carries 5 too, so that is a regression, not A's leak.
    h.grant_tok(20, A, 0, Exclusive, Some(5), false).release(25, A, 0);
    assert_eq!((h.check().token_regressions, h.check().leaked_regrants), (2, 0));
}

/// A lower token is a regression whoever gets it, the same client included; and a client's own
/// token granted again after another client held the key in between (with a lower token) is a
/// regression too: the lock did leave it, so this is no leaked lock re-entered.
#[test]
fn a_lower_token_or_a_regrant_after_another_holder_is_a_regression() {
    let mut h = Hist::new(100);
    h.grant_tok(0, A, 0, Exclusive, Some(5), false).release(5, A, 0);
    h.grant_tok(10, A, 0, Exclusive, Some(4), false).release(15, A, 0);
    assert_eq!((h.check().token_regressions, h.check().leaked_regrants), (1, 0), "same client, lower token");
    h.grant_tok(20, B, 0, Exclusive, Some(3), false).release(25, B, 0);
    h.grant_tok(30, A, 0, Exclusive, Some(5), false).release(35, A, 0);
    let m = h.check();
    assert_eq!((m.token_regressions, m.leaked_regrants), (3, 0), "B held the key between A's grants of 5");
    assert_eq!(kinds(&m, "token_regression"), 3);
}

// ---- liveness ----

/// Latencies 1..=100 ms, one per acquisition: p50 is 50 ms, max 100 ms. A checker measuring from
/// the previous release, or counting failed and nested acquires, would be off.
#[test]
fn acquire_latency_percentiles() {
    let mut h = Hist::new(300_000);
    for i in 1..=100u64 {
        let t0 = i * 1000;
        h.start(t0, A, 0, Exclusive).grant(t0 + i, A, 0, Exclusive).release(t0 + 200, A, 0);
    }
    // A failed acquire and a nested one add no latency sample.
    h.start(200_000, B, 0, Exclusive).ev(200_500, B, AcquireFailed { key: 0, reason: FailReason::Timeout });
    h.grant(201_000, C, 0, Exclusive).start(201_001, C, 0, Exclusive).grant_tok(201_400, C, 0, Exclusive, None, true);
    let m = h.check();
    assert_eq!(m.acquisitions, 101);
    assert_eq!(m.failed_acquisitions, 1);
    assert_eq!(m.acquire_latency_us.len(), 100);
    let p50 = m.acquire_latency_us.value_at_quantile(0.5);
    assert!((49_950..=50_050).contains(&p50), "p50 {p50} us");
    let max = m.acquire_latency_us.max();
    assert!((99_900..=100_100).contains(&max), "max {max} us");
}

/// A holds [0, 10]; B waits from 5 and is granted at 13: a 3 ms handoff. C is then granted after
/// an idle gap nobody waited through: not a handoff. C re-acquires after its own release with
/// only itself waiting: not a handoff either (the waiter must be another client).
#[test]
fn handoff_is_release_to_next_grant_when_someone_waited() {
    let mut h = Hist::new(100);
    h.grant(0, A, 0, Exclusive)
        .start(5, B, 0, Exclusive)
        .release(10, A, 0)
        .grant(13, B, 0, Exclusive)
        .release(20, B, 0)
        .start(30, C, 0, Exclusive)
        .grant(31, C, 0, Exclusive)
        .release(40, C, 0)
        .start(39, C, 0, Exclusive)
        .grant(45, C, 0, Exclusive)
        .release(50, C, 0);
    let m = h.check();
    assert_eq!(m.handoff_us.len(), 1, "only B's grant was a handoff");
    let v = m.handoff_us.max();
    assert!((2_997..=3_003).contains(&v), "handoff {v} us");
}

/// A grant while the key is still held (an overlap) is not a handoff, even with a waiter: only a
/// grant onto a free key hands over. C, waiting through A's hold, gets a 5 ms handoff after A's
/// release at 20 (B's overlapping hold ended earlier, at 15).
#[test]
fn no_handoff_while_the_key_is_still_held() {
    let m = Hist::new(100)
        .grant(0, A, 0, Exclusive)
        .start(6, C, 0, Exclusive)
        .grant(10, B, 0, Exclusive)
        .release(15, B, 0)
        .release(20, A, 0)
        .grant(25, C, 0, Exclusive)
        .release(30, C, 0)
        .check();
    assert_eq!(m.handoff_us.len(), 1);
    assert!((4_995..=5_005).contains(&m.handoff_us.max()), "handoff {} us", m.handoff_us.max());
}

/// B waits from before A's release, but C barges in and gets the lock: C's grant is still a
/// handoff (someone was waiting at the release), and so is B's later grant after C's release.
#[test]
fn handoff_counts_a_barging_grant_when_another_client_waited() {
    let m = Hist::new(100)
        .grant(0, A, 0, Exclusive)
        .start(2, B, 0, Exclusive)
        .release(10, A, 0)
        .start(11, C, 0, Exclusive)
        .grant(17, C, 0, Exclusive)
        .release(20, C, 0)
        .grant(22, B, 0, Exclusive)
        .release(30, B, 0)
        .check();
    // C's grant (7 ms after A's release, B waiting) and B's grant (2 ms after C's, B waiting).
    assert_eq!(m.handoff_us.len(), 2);
    assert!((6_990..=7_010).contains(&m.handoff_us.max()));
    assert!((1_995..=2_005).contains(&m.handoff_us.min()));
}

/// A holds [0, 10], B waits [5, 13]: 3 ms with a waiter and no holder. C asks for key 1 at 40 and
/// its call fails at 50, but C still wants its section (it asks again after a pause, here after
/// the run): 60 ms more, to the end. D's wait ended by its crash [60, 62] on key 2: 2 ms more.
/// Time waited while the key was held, or held with nobody waiting, counts nothing.
#[test]
fn unavailability_is_waiting_time_with_no_holder() {
    let d: NodeId = 4;
    let m = Hist::new(100)
        .grant(0, A, 0, Exclusive)
        .start(5, B, 0, Exclusive)
        .release(10, A, 0)
        .grant(13, B, 0, Exclusive)
        .release(20, B, 0)
        .start(40, C, 1, Exclusive)
        .ev(50, C, AcquireFailed { key: 1, reason: FailReason::Unavailable })
        .start(60, d, 2, Exclusive)
        .ev(62, d, ClientCrashed)
        .check();
    assert_eq!(m.unavailable_ns, (3 + 60 + 2) * NS_PER_MS);
}

/// Two waiters over the same gap count the gap once; a section attempt still unanswered at the
/// end of the run (its calls failed, or the last still pending) counts to the end: A and B from
/// 10 and 12, C from 90, one stretch of 90 ms.
#[test]
fn unavailability_counts_overlapping_waits_once_and_runs_to_the_end() {
    let m = Hist::new(100)
        .start(10, A, 0, Exclusive)
        .start(12, B, 0, Exclusive)
        .ev(20, A, AcquireFailed { key: 0, reason: FailReason::Timeout })
        .ev(22, B, AcquireFailed { key: 0, reason: FailReason::Timeout })
        .start(90, C, 0, Exclusive)
        .check();
    assert_eq!(m.unavailable_ns, 90 * NS_PER_MS);
}

// ---- outage ----

/// Two gaps with a waiter and no holder on key 0: 3 ms (B waits out A's release) and 15 ms (C
/// waits on a free key until 45). The outage is the longer, unavailability their sum. A checker
/// that summed (or kept the first gap) would be off.
#[test]
fn outage_is_the_longest_gap_and_unavailability_the_sum() {
    let m = Hist::new(100)
        .grant(0, A, 0, Exclusive)
        .start(5, B, 0, Exclusive)
        .release(10, A, 0)
        .grant(13, B, 0, Exclusive)
        .release(20, B, 0)
        .start(30, C, 0, Exclusive)
        .grant(45, C, 0, Exclusive)
        .release(50, C, 0)
        .check();
    assert_eq!(m.outage_ns, 15 * NS_PER_MS);
    assert_eq!(m.unavailable_ns, 18 * NS_PER_MS);
}

/// A free key nobody waits for is idle, not out: A releases at 10 and B only asks at 50 (granted
/// at 52), so the outage is B's 2 ms, not the 40 ms idle gap before it.
#[test]
fn a_gap_with_no_waiter_is_not_outage() {
    let m = Hist::new(100)
        .grant(0, A, 0, Exclusive)
        .release(10, A, 0)
        .start(50, B, 0, Exclusive)
        .grant(52, B, 0, Exclusive)
        .release(60, B, 0)
        .check();
    assert_eq!(m.outage_ns, 2 * NS_PER_MS);
}

/// A stretch is one outage as long as some client waits throughout, whoever it is: A asks at 10
/// and B at 15, B is granted at 30: one 20 ms stretch. A's calls fail at 20 and 50, but it keeps
/// asking (the pause before each new call included, as a client refused at once by a dead server
/// does) until its grant at 60: a second stretch of 28 ms from B's release at 32, the outage.
/// Keys are not added up: key 1's 9 ms gap does not join key 0's stretches.
#[test]
fn outage_runs_across_waiters_and_is_the_longest_over_keys() {
    let m = Hist::new(100)
        .start(10, A, 0, Exclusive)
        .start(15, B, 0, Exclusive)
        .ev(20, A, AcquireFailed { key: 0, reason: FailReason::Unavailable })
        .grant(30, B, 0, Exclusive)
        .release(32, B, 0)
        .start(40, A, 0, Exclusive)
        .ev(50, A, AcquireFailed { key: 0, reason: FailReason::Unavailable })
        .start(55, A, 0, Exclusive)
        .grant(60, A, 0, Exclusive)
        .release(61, A, 0)
        .start(70, C, 1, Exclusive)
        .grant(79, C, 1, Exclusive)
        .release(80, C, 1)
        .check();
    assert_eq!(m.outage_ns, 28 * NS_PER_MS);
    assert_eq!(m.unavailable_ns, (20 + 28 + 9) * NS_PER_MS);
}

/// A section attempt belongs to the key asked for: A asks for key 0 at 10, fails at 12, and its
/// next call at 20 asks for key 1 (granted at 25): key 0 was wanted for 10 ms, key 1 for 5. A
/// crash ends the attempt: B asks at 40, fails at 41 and crashes at 45, and nothing counts after.
#[test]
fn an_attempt_moves_with_the_key_and_ends_at_a_crash() {
    let m = Hist::new(100)
        .start(10, A, 0, Exclusive)
        .ev(12, A, AcquireFailed { key: 0, reason: FailReason::Unavailable })
        .start(20, A, 1, Exclusive)
        .grant(25, A, 1, Exclusive)
        .release(26, A, 1)
        .start(40, B, 0, Exclusive)
        .ev(41, B, AcquireFailed { key: 0, reason: FailReason::Unavailable })
        .ev(45, B, ClientCrashed)
        .check();
    assert_eq!(m.unavailable_ns, (10 + 5 + 5) * NS_PER_MS);
    assert_eq!(m.outage_ns, 10 * NS_PER_MS);
}

// ---- fairness ----

/// Jain's index over the workload's three clients: equal shares give 1; one client completing
/// every section gives 1/3 (the other two count with 0: a checker counting only clients that
/// completed something would report 1 for a starved run); abandoned holds are not completed
/// sections; no section at all has no index.
#[test]
fn fairness_is_jains_index_of_completed_sections() {
    let mut h = Hist::new(100);
    h.hold(A, 0, 5).hold(B, 10, 15).hold(C, 20, 25).hold(A, 30, 35).hold(B, 40, 45).hold(C, 50, 55);
    assert_eq!(h.check().fairness, Some(1.0));

    let mut h = Hist::new(100);
    h.hold(A, 0, 5).hold(A, 10, 15).hold(A, 20, 25).start(1, B, 0, Exclusive);
    h.grant(30, C, 0, Exclusive).ev(35, C, Abandoned { key: 0 });
    let j = h.check().fairness.expect("sections completed");
    assert!((j - 1.0 / 3.0).abs() < 1e-12, "{j}");

    let mut h = Hist::new(100);
    h.start(1, A, 0, Exclusive);
    assert_eq!(h.check().fairness, None);
}

// ---- wait ----

/// The wait for a section runs from its first acquire call to its grant, failed calls included:
/// A calls at 10, fails at 20, calls again at 30 and is granted at 45: a 35 ms wait (its acquire
/// latency is the last call's 15 ms). B, still waiting when the run ends at 100, counts its 40 ms
/// so far; C's wait cut by its own crash is dropped.
#[test]
fn wait_counts_from_the_first_call_through_failed_ones() {
    let m = Hist::new(100)
        .start(10, A, 0, Exclusive)
        .ev(20, A, AcquireFailed { key: 0, reason: FailReason::Timeout })
        .start(30, A, 0, Exclusive)
        .grant(45, A, 0, Exclusive)
        .release(50, A, 0)
        .start(60, B, 0, Exclusive)
        .start(61, C, 0, Exclusive)
        .ev(62, C, ClientCrashed)
        .check();
    assert_eq!(m.acquire_latency_us.len(), 1);
    assert!((14_990..=15_010).contains(&m.acquire_latency_us.max()));
    assert_eq!(m.wait_us.len(), 2, "A's section and B's unfinished one");
    assert!((34_970..=35_030).contains(&m.wait_us.min()), "A waited 35 ms: {}", m.wait_us.min());
    assert!((39_960..=40_040).contains(&m.wait_us.max()), "B waited 40 ms to the end: {}", m.wait_us.max());
}

/// A failed release is counted; the holder interval ended at the release call (recorded as
/// `Released` before it), so the section completed and the key is free from then on.
#[test]
fn a_failed_release_is_counted_and_the_hold_ended_at_the_call() {
    let m = Hist::new(100)
        .grant(0, A, 0, Exclusive)
        .release(10, A, 0)
        .ev(30, A, ReleaseFailed { key: 0, reason: FailReason::Timeout })
        .start(12, B, 0, Exclusive)
        .grant(14, B, 0, Exclusive)
        .release(20, B, 0)
        .check();
    assert_eq!(m.failed_releases, 1);
    assert_eq!(m.completed_sections, 2);
    assert_eq!(m.overlap_events, 0, "A's hold ended at 10, before B's grant at 14");
}

#[test]
fn event_counters_and_messages() {
    let mut h = Hist::new(100);
    h.ev(1, A, Notification { key: 0 }).ev(2, B, Notification { key: 0 }).ev(3, A, RefusedAttempt { key: 0 }).ev(
        4,
        A,
        LostNotice { key: 0 },
    );
    h.h.messages = 1234;
    let m = h.check();
    assert_eq!((m.notifications, m.refused_attempts, m.messages), (2, 1, 1234));
    assert_eq!(m.seed, 7);
    assert_eq!(m.duration_ns, 100 * NS_PER_MS);
    assert!(!m.has_violation());
}

/// Violations come out in true-time order whichever check found them.
#[test]
fn violations_are_in_time_order() {
    let mut h = stale_history(25, true);
    h.h.events.push(Stamped {
        at_ns: 60 * NS_PER_MS,
        node: C,
        event: Granted { key: 0, mode: Exclusive, token: Some(1), grant: 1, nested: false },
    });
    let m = h.check();
    let times: Vec<_> = m.violations.iter().map(|v| v.at_ns).collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted);
    assert!(m.violations.len() >= 4, "{:?}", m.violations);
}

/// 100k back-to-back holds by 20 clients, with a waiter each and one write each: must check in
/// well under a second (a quadratic overlap or stale scan would take minutes). No timing assert;
/// it just has to finish.
#[test]
fn long_history_checks_quickly() {
    let n = 100_000u64;
    let mut h = Hist::new(n * 10 + 10);
    h.grants = vec![0; 32];
    let mut value = 0;
    for i in 0..n {
        let c = (i % 20) as NodeId + 10;
        let t = i * 10;
        h.start(t, c, 0, Exclusive);
        h.grant_tok(t + 1, c, 0, Exclusive, Some(i + 1), false);
        value += 1;
        let g = h.grants[c];
        h.write(t + 5, c, g, Some(i + 1), value, true);
        h.release(t + 10, c, 0);
    }
    h.h.final_counter = vec![value];
    let m = h.check();
    assert_eq!(m.acquisitions, n);
    assert_eq!(m.completed_sections, n);
    assert_eq!(m.overlap_events, 0);
    assert_eq!(m.stale_unfenced_events, 0);
    assert_eq!(m.lost_updates, 0);
    assert_eq!(m.token_regressions, 0);
    assert_eq!(m.acquire_latency_us.len(), n);
}
