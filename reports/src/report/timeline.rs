//! The timeline of one seed: every row of the results at that seed, as the campaign recorded it
//! for the report ([`Given`]; runs are exact replays) or as a live run recorded it, and each
//! run's history turned into lanes (a client's waiting and holding), the fault windows, and the
//! overlaps, for `locksim_charts::timeline_chart`.
//!
//! Holds and waits are the checker's own ([`locksim_simulator::checker::Timeline`]): a hold is a
//! holder interval, a wait an acquire call in progress, so the chart shows exactly what the
//! checks judged. An overlap is a pair of holds the overlap check counts (one key, different
//! clients, at least one exclusive), drawn where both are held, on those two clients' lanes.

use std::collections::BTreeMap;

use locksim_charts::{FaultWindow, Hold, Lane, Span, TimelineChart, TimelinePanel};
use locksim_simulator::checker::intervals::WaitOutcome;
use locksim_simulator::checker::{overlap, Timeline};
use locksim_simulator::directory::NodeId;
use locksim_simulator::history::{History, LockMode};
use locksim_simulator::scenario::Scenario;
use locksim_simulator::time::{ns_to_ms, Nanos};

use super::given::Given;

/// One client's lane while it is filled: waits and holds with the time each ended, so they can be
/// put in the order they ended.
struct LaneParts {
    name: String,
    waiting: Vec<(Nanos, Span)>,
    holding: Vec<(Nanos, Hold)>,
}

/// Lanes, overlaps and faults of one run.
pub fn panel(label: &str, seed: u64, h: &History) -> TimelinePanel {
    let end_ns = h.duration_ns;
    let timeline = Timeline::from_history(h);
    let mut lanes: BTreeMap<NodeId, LaneParts> = h
        .clients
        .iter()
        .map(|&c| (c, LaneParts { name: h.client_name(c), waiting: Vec::new(), holding: Vec::new() }))
        .collect();
    let mut overlaps = Vec::new();
    // Lanes are in client-id order.
    let order: Vec<NodeId> = lanes.keys().copied().collect();
    let lane_of = |c: NodeId| order.iter().position(|&k| k == c).unwrap_or(usize::MAX);
    for kt in timeline.keys.values() {
        // A wait superseded by a second acquire of the same key joins the next one without a gap:
        // from the client's side it is one wait, from the first call to the last one's end.
        let mut superseded: BTreeMap<NodeId, Nanos> = BTreeMap::new();
        for w in &kt.waits {
            let start_ns = superseded.remove(&w.client).unwrap_or(w.start_ns);
            if w.outcome == WaitOutcome::Superseded {
                superseded.insert(w.client, start_ns);
            } else if let Some(lane) = lanes.get_mut(&w.client) {
                lane.waiting.push((w.end_ns, span(start_ns, w.end_ns)));
            }
        }
        for iv in &kt.intervals {
            if let Some(lane) = lanes.get_mut(&iv.client) {
                let hold = Hold { span: span(iv.start_ns, iv.end_ns), shared: iv.mode == LockMode::Shared };
                lane.holding.push((iv.end_ns, hold));
            }
        }
        overlap::for_each_pair(kt, |a, b| {
            overlaps.push((span(b.start_ns, a.end_ns.min(b.end_ns)), [lane_of(a.client), lane_of(b.client)]));
        });
    }
    overlaps.sort_by(|x, y| x.0.start_ms.total_cmp(&y.0.start_ms));
    let (overlaps, overlap_lanes) = overlaps.into_iter().unzip();
    // In the order they ended (keys in order at the same instant), as a replay of the history
    // closes them.
    let lanes = lanes
        .into_values()
        .map(|mut l| {
            l.waiting.sort_by_key(|(end, _)| *end);
            l.holding.sort_by_key(|(end, _)| *end);
            Lane {
                name: l.name,
                waiting: l.waiting.into_iter().map(|(_, s)| s).collect(),
                holding: l.holding.into_iter().map(|(_, h)| h).collect(),
            }
        })
        .collect();
    let faults = h
        .faults
        .iter()
        .map(|f| FaultWindow {
            kind: f.kind.to_string(),
            targets: f.targets.clone(),
            span: span(f.start_ns, f.end_ns.unwrap_or(end_ns)),
        })
        .collect();
    TimelinePanel { label: label.to_string(), seed, lanes, faults, overlaps, overlap_lanes, overlap_link: None }
}

fn span(start_ns: Nanos, end_ns: Nanos) -> Span {
    Span::new(ns_to_ms(start_ns), ns_to_ms(end_ns))
}

/// The chart data of `seed` of every row named in `labels` (in that order), from the recordings
/// `given`; draws nothing. Rows the scenario no longer has (or not given) are skipped; a row
/// whose run panicked gets an empty panel titled with the panic. A row's overlaps link to
/// `link_of(label)` when it gives one.
pub fn timeline_chart(
    scenario: &Scenario,
    labels: &[String],
    seed: u64,
    link_of: impl Fn(&str) -> Option<String>,
    given: &Given,
) -> TimelineChart {
    let mut panels = Vec::new();
    for label in labels {
        if !scenario.runs.iter().any(|r| &r.label == label) {
            continue;
        }
        match given.run(label, seed) {
            None => {}
            Some(Ok(r)) => {
                panels.push(TimelinePanel { overlap_link: link_of(label), ..panel(label, seed, &r.history) })
            }
            Some(Err(_)) => panels.push(TimelinePanel {
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

/// The chart of `seed` from histories a live run recorded, one panel per row named in `labels`
/// (in that order); a row with no history recorded for that seed is left out.
pub fn recorded_chart(
    name: &str,
    duration_ms: f64,
    labels: &[String],
    seed: u64,
    histories: &[crate::report::RecordedHistory],
) -> TimelineChart {
    let panels = labels
        .iter()
        .filter_map(|label| histories.iter().find(|r| &r.label == label && r.seed == seed))
        .map(|r| panel(&r.label, seed, &r.history))
        .collect();
    TimelineChart { title: format!("{name}: live run, seed {seed}, one panel per algorithm"), duration_ms, panels }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::history::{FaultWindow as HistoryFault, HistoryEvent, Stamped};

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
        assert_eq!(p.overlap_lanes, vec![[0, 1]], "the overlap is on client-0's and client-1's lanes only");
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
