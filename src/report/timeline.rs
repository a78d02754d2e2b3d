//! The timeline of one seed: every row of the results re-run at that seed (runs are exact
//! replays), and each run's history turned into lanes (a client's waiting and holding), the
//! fault windows, and the overlaps, for `locksim_charts::timeline_chart`.

use std::collections::BTreeMap;

use locksim_charts::{FaultWindow, Hold, Lane, Span, TimelineChart, TimelinePanel};
use locksim_simulator::batch::run_seed;
use locksim_simulator::history::{History, HistoryEvent, LockKey, LockMode};
use locksim_simulator::process::NodeId;
use locksim_simulator::run::RunOptions;
use locksim_simulator::scenario::Scenario;
use locksim_simulator::time::{ns_to_ms, Nanos};

/// One hold of a key, as the overlap search needs it.
struct KeyHold {
    client: NodeId,
    start_ns: Nanos,
    end_ns: Nanos,
    shared: bool,
}

/// Lanes, overlaps and faults of one run.
pub fn panel(label: &str, seed: u64, h: &History) -> TimelinePanel {
    let end_ns = h.duration_ns;
    let mut lanes: BTreeMap<NodeId, Lane> =
        h.clients.iter().map(|&c| (c, Lane { name: h.client_name(c), ..Lane::default() })).collect();
    // Per client: when its current acquire started, and its open holds per key (outermost only).
    let mut waiting_since: BTreeMap<(NodeId, LockKey), Nanos> = BTreeMap::new();
    let mut open: BTreeMap<(NodeId, LockKey), (Nanos, bool)> = BTreeMap::new();
    let mut holds: Vec<(LockKey, KeyHold)> = Vec::new();
    let close = |open: &mut BTreeMap<(NodeId, LockKey), (Nanos, bool)>,
                 holds: &mut Vec<(LockKey, KeyHold)>,
                 client: NodeId,
                 key: LockKey,
                 at: Nanos| {
        if let Some((start_ns, shared)) = open.remove(&(client, key)) {
            holds.push((key, KeyHold { client, start_ns, end_ns: at, shared }));
        }
    };
    for e in &h.events {
        let c = e.node;
        match &e.event {
            HistoryEvent::AcquireStart { key, .. } => {
                waiting_since.entry((c, *key)).or_insert(e.at_ns);
            }
            HistoryEvent::Granted { key, mode, nested, .. } => {
                if let Some(since) = waiting_since.remove(&(c, *key)) {
                    push_wait(&mut lanes, c, since, e.at_ns);
                }
                if !nested {
                    open.insert((c, *key), (e.at_ns, *mode == LockMode::Shared));
                }
            }
            HistoryEvent::AcquireFailed { key, .. } => {
                if let Some(since) = waiting_since.remove(&(c, *key)) {
                    push_wait(&mut lanes, c, since, e.at_ns);
                }
            }
            HistoryEvent::Released { key, nested: false } | HistoryEvent::Abandoned { key } => {
                close(&mut open, &mut holds, c, *key, e.at_ns)
            }
            HistoryEvent::ClientCrashed => {
                let keys: Vec<LockKey> = open.keys().filter(|(n, _)| *n == c).map(|(_, k)| *k).collect();
                for k in keys {
                    close(&mut open, &mut holds, c, k, e.at_ns);
                }
                let waits: Vec<LockKey> = waiting_since.keys().filter(|(n, _)| *n == c).map(|(_, k)| *k).collect();
                for k in waits {
                    let since = waiting_since.remove(&(c, k)).expect("listed");
                    push_wait(&mut lanes, c, since, e.at_ns);
                }
            }
            _ => {}
        }
    }
    // Whatever is still open runs to the end of the run.
    for ((c, _), since) in std::mem::take(&mut waiting_since) {
        push_wait(&mut lanes, c, since, end_ns);
    }
    let still_open: Vec<(NodeId, LockKey)> = open.keys().copied().collect();
    for (c, k) in still_open {
        close(&mut open, &mut holds, c, k, end_ns);
    }
    for (_, hold) in &holds {
        if let Some(lane) = lanes.get_mut(&hold.client) {
            lane.holding.push(Hold { span: span(hold.start_ns, hold.end_ns), shared: hold.shared });
        }
    }
    let overlaps = overlaps(&mut holds);
    let faults = h
        .faults
        .iter()
        .map(|f| FaultWindow {
            kind: f.kind.to_string(),
            targets: f.targets.clone(),
            span: span(f.start_ns, f.end_ns.unwrap_or(end_ns)),
        })
        .collect();
    TimelinePanel { label: label.to_string(), seed, lanes: lanes.into_values().collect(), faults, overlaps }
}

fn span(start_ns: Nanos, end_ns: Nanos) -> Span {
    Span::new(ns_to_ms(start_ns), ns_to_ms(end_ns))
}

fn push_wait(lanes: &mut BTreeMap<NodeId, Lane>, client: NodeId, since: Nanos, until: Nanos) {
    if let Some(lane) = lanes.get_mut(&client) {
        lane.waiting.push(span(since, until));
    }
}

/// The stretches where two holds of one key overlap with at least one exclusive (what the
/// overlap checker counts), found by a sweep over holds in start order.
fn overlaps(holds: &mut [(LockKey, KeyHold)]) -> Vec<Span> {
    holds.sort_by_key(|(k, h)| (*k, h.start_ns, h.client));
    let mut out = Vec::new();
    for (i, (key, a)) in holds.iter().enumerate() {
        for (other_key, b) in &holds[i + 1..] {
            if other_key != key || b.start_ns >= a.end_ns {
                break;
            }
            if b.client != a.client && !(a.shared && b.shared) && b.start_ns < a.end_ns {
                out.push(span(b.start_ns, a.end_ns.min(b.end_ns)));
            }
        }
    }
    out.sort_by(|x, y| x.start_ms.total_cmp(&y.start_ms));
    out
}

/// Re-runs `seed` for every row named in `labels` (in that order) and draws nothing: returns the
/// chart data. Rows the scenario no longer has are skipped; a row whose run panics gets an empty
/// panel titled with the panic.
pub fn timeline_chart(scenario: &Scenario, labels: &[String], seed: u64) -> TimelineChart {
    let mut panels = Vec::new();
    for label in labels {
        let Some(run) = scenario.runs.iter().find(|r| &r.label == label) else { continue };
        match run_seed(scenario, run, seed, &RunOptions::default()) {
            Ok(o) => panels.push(panel(label, seed, &o.history)),
            Err(_) => panels.push(TimelinePanel {
                label: format!("{label} (seed {seed} panicked)"),
                seed,
                ..TimelinePanel::default()
            }),
        }
    }
    TimelineChart {
        title: format!("{}: seed {seed}, one panel per algorithm", scenario.name),
        duration_ms: scenario.setup.duration_ms,
        panels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::history::{FaultWindow as HistoryFault, Stamped};

    const MS: Nanos = 1_000_000;

    fn at(ms: u64, node: NodeId, event: HistoryEvent) -> Stamped {
        Stamped { at_ns: ms * MS, node, event }
    }

    fn grant(mode: LockMode, grant: u64) -> HistoryEvent {
        HistoryEvent::Granted { key: 0, mode, token: None, grant, nested: false }
    }

    fn start(mode: LockMode) -> HistoryEvent {
        HistoryEvent::AcquireStart { key: 0, mode }
    }

    fn history(events: Vec<Stamped>) -> History {
        History {
            events,
            duration_ns: 100 * MS,
            clients: vec![1, 2, 3],
            node_names: vec!["server-0".into(), "client-0".into(), "client-1".into(), "client-2".into()],
            faults: vec![HistoryFault { kind: "pause", targets: "client-0".into(), start_ns: 20 * MS, end_ns: None }],
            ..History::default()
        }
    }

    #[test]
    fn lanes_hold_waits_and_holds_and_an_overlap_is_where_two_exclusive_holds_meet() {
        let ex = LockMode::Exclusive;
        let h = history(vec![
            at(0, 1, start(ex)),
            at(5, 1, grant(ex, 1)),
            at(6, 2, start(ex)),
            // client-0 is paused and its lease lapses; client-1 gets in while client-0 still holds.
            at(40, 2, grant(ex, 1)),
            at(50, 1, HistoryEvent::Released { key: 0, nested: false }),
            at(60, 2, HistoryEvent::Released { key: 0, nested: false }),
            at(70, 3, start(ex)),
        ]);
        let p = panel("zk", 9, &h);
        assert_eq!(p.seed, 9);
        let names: Vec<&str> = p.lanes.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["client-0", "client-1", "client-2"]);
        assert_eq!(p.lanes[0].waiting, vec![Span::new(0.0, 5.0)]);
        assert_eq!(p.lanes[0].holding, vec![Hold { span: Span::new(5.0, 50.0), shared: false }]);
        assert_eq!(p.lanes[1].waiting, vec![Span::new(6.0, 40.0)]);
        assert_eq!(p.lanes[2].waiting, vec![Span::new(70.0, 100.0)], "an open wait runs to the end");
        assert_eq!(p.overlaps, vec![Span::new(40.0, 50.0)]);
        assert_eq!(p.faults.len(), 1);
        assert_eq!(p.faults[0].span, Span::new(20.0, 100.0), "an open fault runs to the end");
    }

    #[test]
    fn shared_holds_may_overlap_and_a_crash_ends_a_hold() {
        let rd = LockMode::Shared;
        let h = history(vec![
            at(0, 1, start(rd)),
            at(1, 1, grant(rd, 1)),
            at(2, 2, start(rd)),
            at(3, 2, grant(rd, 1)),
            at(10, 1, HistoryEvent::ClientCrashed),
            at(12, 2, HistoryEvent::Released { key: 0, nested: false }),
        ]);
        let p = panel("zk-rw", 0, &h);
        assert!(p.overlaps.is_empty(), "{:?}", p.overlaps);
        assert_eq!(p.lanes[0].holding, vec![Hold { span: Span::new(1.0, 10.0), shared: true }]);
        assert_eq!(p.lanes[1].holding, vec![Hold { span: Span::new(3.0, 12.0), shared: true }]);
    }
}
