//! Checker rules that `cargo mutants` found no test pinning (docs/testing.md, "Mutation
//! testing"): the node names in violation texts, the grant-time index the stale-write check
//! looks grants up in, and the edges named in each test. Each test says which mutant it kills.

use locksim_simulator::checker::intervals::GrantTimes;
use locksim_simulator::checker::{check, SeedMetrics};
use locksim_simulator::history::{FailReason, History, HistoryEvent, LockKey, LockMode, Stamped};
use locksim_simulator::process::NodeId;
use locksim_simulator::time::NS_PER_MS;

use HistoryEvent::*;
use LockMode::Exclusive;

const A: NodeId = 1;
const B: NodeId = 2;

/// A history of `duration_ms` from `(at_ms, node, event)` triples, in the order given.
fn history(duration_ms: u64, events: Vec<(u64, NodeId, HistoryEvent)>) -> History {
    History {
        duration_ns: duration_ms * NS_PER_MS,
        clients: vec![A, B],
        fenced: true,
        events: events
            .into_iter()
            .map(|(at_ms, node, event)| Stamped { at_ns: at_ms * NS_PER_MS, node, event })
            .collect(),
        ..History::default()
    }
}

fn grant(key: LockKey, token: u64, grant: u64) -> HistoryEvent {
    Granted { key, mode: Exclusive, token: Some(token), grant, nested: false }
}

fn release(key: LockKey) -> HistoryEvent {
    Released { key, nested: false }
}

/// Node names for ids 0..=2: `server-0`, `client-1`, `client-2`.
fn named(mut h: History) -> History {
    h.node_names = vec!["server-0".into(), "client-1".into(), "client-2".into()];
    h
}

// ---- node names in the texts (checker/mod.rs: check_keeping, name_clients) ----

/// An overlap between clients 1 and 2, with names: the violation says `client-1` and `client-2`.
/// Kills `delete !` in the `node_names.is_empty()` test before the violations, and every
/// mutant of `name_clients` that drops the text or never takes the digits (`digits > 0` made
/// `false`, `== 0` or `< 0`).
#[test]
fn violation_texts_name_the_clients() {
    let h = named(history(
        100,
        vec![(0, A, grant(0, 1, 1)), (10, B, grant(0, 2, 1)), (20, A, release(0)), (30, B, release(0))],
    ));
    let m = check(0, &h);
    assert_eq!(m.overlap_events, 1);
    let detail = &m.violations[0].detail;
    assert!(detail.starts_with("key 0: client-1 (exclusive, grant 1, token 1, 0.000 ms to 20.000 ms"), "{detail}");
    assert!(detail.contains(" and client-2 (exclusive, grant 1, token 2, 10.000 ms"), "{detail}");
    assert!(!detail.contains("client 1") && !detail.contains("client 2"), "{detail}");
}

/// Without names the ids stay, and text that is not `client <digits>` is copied as it is.
#[test]
fn without_names_the_ids_stay() {
    let h =
        history(100, vec![(0, A, grant(0, 1, 1)), (10, B, grant(0, 2, 1)), (20, A, release(0)), (30, B, release(0))]);
    let m = check(0, &h);
    assert!(m.violations[0].detail.starts_with("key 0: client 1 (exclusive"), "{}", m.violations[0].detail);
}

/// The leaked re-grant's description is named too. Kills `delete !` in the second
/// `node_names.is_empty()` test (the one before `first_leaked_regrant`).
#[test]
fn leaked_regrant_text_names_the_client() {
    let h = named(history(
        100,
        vec![(0, A, grant(0, 5, 1)), (5, A, release(0)), (10, A, grant(0, 5, 2)), (15, A, release(0))],
    ));
    let m: SeedMetrics = check(0, &h);
    assert_eq!(m.leaked_regrants, 1);
    let leak = m.first_leaked_regrant.as_ref().expect("a leaked re-grant");
    assert!(leak.detail.starts_with("key 0: client-1 granted token 5 at 10.000 ms"), "{}", leak.detail);
}

// ---- the grant-time index (checker/intervals.rs: GrantTimes) ----

/// Grant numbers recorded out of order, and one recorded again (a nested grant repeats its
/// outer grant's number; the later time wins), are all found; an absent one is not. Kills the
/// mutants of the append test (`g < grant` as `==`, `>`, `<=`), of the search
/// (`partition_point(g < grant)` as `==`, `>`, `<=`) and the match guard made `true`.
#[test]
fn grant_times_take_any_order_and_keep_the_latest() {
    let mut t = GrantTimes::default();
    for (grant, at) in [(1, 10), (2, 20), (4, 40), (3, 30), (2, 25), (4, 45), (0, 5)] {
        t.insert(A, grant, at);
    }
    assert_eq!(t.get(A, 0), Some(5));
    assert_eq!(t.get(A, 1), Some(10));
    assert_eq!(t.get(A, 2), Some(25));
    assert_eq!(t.get(A, 3), Some(30));
    assert_eq!(t.get(A, 4), Some(45));
    assert_eq!(t.get(A, 5), None);
    assert_eq!(t.get(B, 1), None);
}

// ---- waits (checker/intervals.rs: Builder::apply) ----

/// A call that failed ends its wait there: the client is not waiting when the holder releases
/// later, so the holder's own next grant is no handoff. Kills deleting the `AcquireFailed` arm
/// (the wait would run to the end of the run, and 10 ms of handoff would be recorded).
#[test]
fn a_failed_call_is_not_waiting_at_a_later_release() {
    let h = history(
        100,
        vec![
            (0, A, grant(0, 1, 1)),
            (1, B, AcquireStart { key: 0, mode: Exclusive }),
            (5, B, AcquireFailed { key: 0, reason: FailReason::Timeout }),
            (20, A, release(0)),
            (30, A, grant(0, 2, 2)),
            (40, A, release(0)),
        ],
    );
    let m = check(0, &h);
    assert_eq!(m.failed_acquisitions, 1);
    assert_eq!(m.handoff_us.len(), 0, "B gave up at 5 ms, before A's release at 20 ms");
}

// ---- what counts as a violation (checker/metrics.rs: SeedMetrics::has_violation) ----

/// A stale write that the fenced resource rejected is still a violation (of the unfenced
/// resource), with no overlap, lost update or regression beside it. Kills the `||` after the
/// overlap count, and the one after the unfenced count, made `&&`.
#[test]
fn a_stale_write_alone_is_a_violation() {
    let mut h = history(
        100,
        vec![
            (0, A, grant(0, 1, 1)),
            (10, A, Abandoned { key: 0 }),
            (20, B, grant(0, 2, 1)),
            (25, B, release(0)),
            (30, 9, ResourceWrite { client: A, key: 0, grant: 1, token: Some(1), value: 1, fenced_accepted: false }),
        ],
    );
    h.final_counter = vec![1];
    let m = check(0, &h);
    assert_eq!((m.overlap_events, m.stale_unfenced_events, m.stale_fenced_events), (0, 1, Some(0)));
    assert_eq!((m.lost_updates, m.token_regressions), (0, 0));
    assert!(m.has_violation());
}

/// A lost update alone (two sections in turn that both wrote 1, no overlap, no stale write, no
/// token regression) is a violation. Kills `lost_updates > 0` made `<` in `has_violation`.
#[test]
fn a_lost_update_alone_is_a_violation() {
    let write = |client, grant, token| ResourceWrite {
        client,
        key: 0,
        grant,
        token: Some(token),
        value: 1,
        fenced_accepted: true,
    };
    let mut h = history(
        100,
        vec![
            (0, A, grant(0, 1, 1)),
            (5, 9, write(A, 1, 1)),
            (10, A, release(0)),
            (20, B, grant(0, 2, 1)),
            (25, 9, write(B, 1, 2)),
            (30, B, release(0)),
        ],
    );
    h.final_counter = vec![1];
    let m = check(0, &h);
    assert_eq!((m.overlap_events, m.stale_unfenced_events, m.token_regressions), (0, 0, 0));
    assert_eq!(m.lost_updates, 1);
    assert!(m.has_violation());
}

// ---- handoff (checker/handoff.rs) ----

/// Two readers waiting through an exclusive hold are both granted at the instant it is
/// released: two handoffs of zero. Kills `r > g` made `>=` (a release at the grant's own
/// instant would not count: none) and `end < r` made `<=` (waits that ended at the release, by
/// these very grants, would not count as waiting: none). It also pins `start_ns < g`: as `<=`
/// the second reader would count the first, granted at the same instant, as a holder before it.
#[test]
fn readers_granted_at_the_release_are_each_a_zero_handoff() {
    const C: NodeId = 3;
    let shared = |token, grant| Granted { key: 0, mode: LockMode::Shared, token: Some(token), grant, nested: false };
    let mut h = history(
        100,
        vec![
            (0, A, grant(0, 1, 1)),
            (5, B, AcquireStart { key: 0, mode: LockMode::Shared }),
            (5, C, AcquireStart { key: 0, mode: LockMode::Shared }),
            (10, A, release(0)),
            (10, B, shared(2, 1)),
            (10, C, shared(3, 1)),
            (20, B, release(0)),
            (20, C, release(0)),
        ],
    );
    h.clients.push(C);
    let m = check(0, &h);
    assert_eq!(m.overlap_events, 0);
    assert_eq!(m.handoff_us.len(), 2);
    assert_eq!(m.handoff_us.max(), 1, "a zero handoff is recorded as the histogram's lowest value, 1 µs");
}

// ---- lost updates (checker/lost_updates.rs) ----

/// Two clobbering writes: the violation is placed at, and describes, the first. Kills the `&&`
/// of `value <= counter && first_clobber.is_none()` made `||` (the last clobber would replace it).
#[test]
fn a_lost_update_is_described_by_its_first_clobber() {
    let write = |client, value| ResourceWrite { client, key: 0, grant: 1, token: None, value, fenced_accepted: true };
    let mut h =
        history(100, vec![(5, 9, write(A, 1)), (15, 9, write(B, 1)), (25, 9, write(A, 2)), (35, 9, write(B, 2))]);
    h.final_counter = vec![2];
    let m = check(0, &h);
    assert_eq!(m.lost_updates, 2);
    let v = &m.violations[0];
    assert_eq!((v.kind, v.at_ns), ("lost_update", 15 * NS_PER_MS));
    assert!(v.detail.ends_with("first at 15.000 ms: client 2 wrote 1 over 1 (written by client 1)"), "{}", v.detail);
}

// ---- overlap of holds that begin together (checker/overlap.rs: for_each_pair) ----

/// Two holds granted at the same instant overlap if the later one lasts; one granted and ended
/// in that instant does not (the strict test `a.start < b.end`). Kills `b.end_ns > b.start_ns`
/// made `==` or `<` (the lasting pair would be missed) or `>=`, and `a.start_ns < b.start_ns`
/// made `<=` (the empty hold would be counted).
#[test]
fn holds_that_begin_together_overlap_only_if_the_later_lasts() {
    let h =
        history(100, vec![(10, A, grant(0, 1, 1)), (10, B, grant(0, 2, 1)), (15, B, release(0)), (20, A, release(0))]);
    assert_eq!(check(0, &h).overlap_events, 1);
    let h =
        history(100, vec![(10, A, grant(0, 1, 1)), (10, B, grant(0, 2, 1)), (10, B, release(0)), (20, A, release(0))]);
    assert_eq!(check(0, &h).overlap_events, 0);
}

// ---- the bar's holder after an equal token (checker/tokens.rs) ----

/// B wrongly granted A's token 5 is a regression; B granted 5 again, nobody else in between,
/// is B's own leaked lock: the equal token moved the bar's holder to B. Kills `t < max` before
/// `continue` made `<=` or `==` (the bar would still name A, and B's second grant would be a
/// second regression).
#[test]
fn an_equal_token_moves_the_bar_to_its_new_holder() {
    let h = history(
        100,
        vec![
            (0, A, grant(0, 5, 1)),
            (5, A, release(0)),
            (10, B, grant(0, 5, 1)),
            (15, B, release(0)),
            (20, B, grant(0, 5, 2)),
            (25, B, release(0)),
        ],
    );
    let m = check(0, &h);
    assert_eq!((m.token_regressions, m.leaked_regrants), (1, 1));
}

// ---- which leaked re-grant the notes describe (checker/tokens.rs: check_key) ----

/// Client A leaks key 0 (its own token 5 again at `a_ms`) and client B leaks key 1 (token 7
/// again at `b_ms`).
fn two_leaks(a_ms: u64, b_ms: u64) -> SeedMetrics {
    let mut events = vec![
        (0, A, grant(0, 5, 1)),
        (1, B, grant(1, 7, 1)),
        (2, A, release(0)),
        (3, B, release(1)),
        (a_ms, A, grant(0, 5, 2)),
        (b_ms, B, grant(1, 7, 2)),
        (50, A, release(0)),
        (50, B, release(1)),
    ];
    // The history is in time order (a stable sort: A's re-grant first on a tie).
    events.sort_by_key(|e| e.0);
    check(0, &history(100, events))
}

/// Two keys leaked at the same instant: the note keeps the first key judged (key 0), as a tie
/// must not move it. Kills `iv.start_ns < v.at_ns` made `<=` in `check_key`.
#[test]
fn of_two_leaks_at_one_instant_the_first_key_is_described() {
    let m = two_leaks(10, 10);
    assert_eq!(m.leaked_regrants, 2);
    let leak = m.first_leaked_regrant.as_ref().expect("a leaked re-grant");
    assert!(leak.detail.starts_with("key 0: client 1 granted token 5 at 10.000 ms"), "{}", leak.detail);
}

/// A later key's earlier leak replaces the first key's later one: the note is the earliest.
/// Kills `iv.start_ns < v.at_ns` made `==` (and `>`) in `check_key`.
#[test]
fn the_earliest_leak_is_described_whatever_its_key() {
    let m = two_leaks(20, 10);
    assert_eq!(m.leaked_regrants, 2);
    let leak = m.first_leaked_regrant.as_ref().expect("a leaked re-grant");
    assert!(leak.detail.starts_with("key 1: client 2 granted token 7 at 10.000 ms"), "{}", leak.detail);
    assert_eq!(leak.at_ns, 10 * NS_PER_MS);
}

// ---- the longest outage (checker/unavailable.rs: check_key) ----

/// B waits from 0 to 100 ms while A holds for no time at all at 50 ms (granted and released in
/// the same instant): the outage is not broken, it lasts the whole 100 ms. Kills the sweep's
/// `at > prev` made `>=` (the empty hold's second boundary would end the stretch at 50 ms).
#[test]
fn an_empty_hold_does_not_break_an_outage() {
    let h = history(
        200,
        vec![
            (0, B, AcquireStart { key: 0, mode: Exclusive }),
            (50, A, grant(0, 1, 1)),
            (50, A, release(0)),
            (100, B, grant(0, 2, 1)),
            (150, B, release(0)),
        ],
    );
    let m = check(0, &h);
    assert_eq!(m.unavailable_ns, 100 * NS_PER_MS);
    assert_eq!(m.outage_ns, 100 * NS_PER_MS);
}
