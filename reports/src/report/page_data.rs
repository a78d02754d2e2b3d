//! The recorded histories the report was given, as the JSON the page's interactive timeline
//! reads: per row and seed, each client's holds and waits (the checker's own intervals), the
//! writes the resource saw, the faults, the overlaps and stale writes with the checker's words,
//! every node's wall clock as segments, each server's claim to lead as it changed, and, for a row whose first violation is explained, the
//! narrative and the messages its diagram draws. Nothing here runs a seed or a checker: it reads
//! histories and the violations the caller's check found in them.
//!
//! Times are true-time milliseconds rounded to the microsecond; arrays, not objects, keep a
//! 60 s run of ten clients near a megabyte. `timeline.js` documents the same layout.

use serde_json::{json, Value};

use locksim_simulator::checker::intervals::{EndCause, WaitOutcome};
use locksim_simulator::checker::{overlap, Timeline, Violation};
use locksim_simulator::history::{History, HistoryEvent, LockMode};
use locksim_simulator::time::Nanos;

use super::explained::RowExplanation;
use crate::recording::VIOLATIONS_KEPT;

/// One recorded run for the page.
pub struct PageRun<'a> {
    /// The row.
    pub label: &'a str,
    /// The seed.
    pub seed: u64,
    /// What it recorded.
    pub history: &'a History,
    /// The violations the caller's check found in it, in true-time order (only the first
    /// [`VIOLATIONS_KEPT`] are shown).
    pub violations: &'a [Violation],
    /// The row's explained first violation, when it is of this seed.
    pub explained: Option<&'a RowExplanation>,
    /// The command that tells violation `{index}` of this run (`None`: a live run, no replay).
    pub explain_command: Option<String>,
}

/// Nanoseconds as milliseconds rounded to the microsecond.
fn ms(ns: Nanos) -> f64 {
    (ns as f64 / 1e3).round() / 1e3
}

fn end_code(e: EndCause) -> u8 {
    match e {
        EndCause::Released => 0,
        EndCause::Abandoned => 1,
        EndCause::Crashed => 2,
        EndCause::RunEnd => 3,
    }
}

fn wait_code(o: WaitOutcome) -> u8 {
    match o {
        WaitOutcome::Granted | WaitOutcome::GrantedNested => 0,
        WaitOutcome::Failed => 1,
        WaitOutcome::Crashed => 2,
        WaitOutcome::RunEnd => 3,
        WaitOutcome::Superseded => 4,
    }
}

/// The index of the first violation of `kind` (or any of `kinds`) at `at_ns` not yet taken.
fn take_violation(violations: &[Violation], taken: &mut [bool], kinds: &[&str], at_ns: Nanos) -> i64 {
    for (i, v) in violations.iter().enumerate() {
        if !taken[i] && v.at_ns == at_ns && kinds.contains(&v.kind) {
            taken[i] = true;
            return i as i64;
        }
    }
    -1
}

/// One run as page JSON.
pub fn run_json(run: &PageRun) -> Value {
    let h = run.history;
    let timeline = Timeline::from_history(h);
    let violations = &run.violations[..run.violations.len().min(VIOLATIONS_KEPT)];
    let mut taken = vec![false; violations.len()];
    let mut holds = Vec::new();
    let mut waits = Vec::new();
    let mut overlaps = Vec::new();
    for kt in timeline.keys.values() {
        for iv in &kt.intervals {
            holds.push(json!([
                iv.client,
                iv.key,
                ms(iv.start_ns),
                ms(iv.end_ns),
                iv.token,
                iv.grant,
                u8::from(iv.mode == LockMode::Shared),
                end_code(iv.end)
            ]));
        }
        for w in &kt.waits {
            waits.push(json!([w.client, w.key, ms(w.start_ns), ms(w.end_ns), wait_code(w.outcome)]));
        }
        overlap::for_each_pair(kt, |a, b| {
            let vi = take_violation(violations, &mut taken, &["overlap"], b.start_ns);
            overlaps.push(json!([a.client, b.client, a.key, ms(b.start_ns), ms(a.end_ns.min(b.end_ns)), vi]));
        });
    }
    let mut writes = Vec::new();
    for e in &h.events {
        if let HistoryEvent::ResourceWrite { client, key, grant, token, value, fenced_accepted } = &e.event {
            let vi = take_violation(violations, &mut taken, &["stale_unfenced", "stale_fenced"], e.at_ns);
            writes.push(json!([client, key, ms(e.at_ns), token, value, u8::from(*fenced_accepted), grant, vi]));
        }
    }
    let faults: Vec<Value> = h
        .faults
        .iter()
        .map(|f| {
            json!([
                f.kind,
                f.targets,
                ms(f.start_ns),
                ms(f.end_ns.unwrap_or(h.duration_ns)),
                u8::from(f.end_ns.is_none())
            ])
        })
        .collect();
    let clocks: Vec<Value> =
        h.clocks.iter().map(|c| json!([c.node, ms(c.at_ns), c.offset_ns as f64 / 1e6, c.drift_ppm])).collect();
    // A server's claim to lead as it changed: [node, at, term or null (it stopped)].
    let leaders: Vec<Value> = h.leaders.iter().map(|l| json!([l.node, ms(l.at_ns), l.term])).collect();
    let violation_rows: Vec<Value> = violations.iter().map(|v| json!([v.kind, ms(v.at_ns), v.detail])).collect();
    let explain = run.explained.map(|e| {
        let vi = violations.iter().position(|v| v.kind == e.violation.0 && v.at_ns == e.violation.1);
        json!({
            "vi": vi.map_or(-1, |i| i as i64),
            "title": e.title,
            "anchor": e.anchor,
            "sentences": e.sentences,
        })
    });
    let messages: Vec<Value> = run.explained.map_or(Vec::new(), |e| {
        let name = |i: usize| e.lanes.get(i).cloned().unwrap_or_default();
        e.messages
            .iter()
            .map(|m| json!([name(m.from), name(m.to), m.sent_ms, m.arrive_ms, u8::from(m.lost), m.label]))
            .collect()
    });
    json!({
        "label": run.label,
        "seed": run.seed,
        "dur": ms(h.duration_ns),
        "nodes": h.node_names,
        "clients": h.clients,
        "fenced": h.fenced,
        "holds": holds,
        "waits": waits,
        "writes": writes,
        "faults": faults,
        "overlaps": overlaps,
        "violations": violation_rows,
        // Only the first VIOLATIONS_KEPT have their text (and a mark's click its words).
        "violations_capped": violations.len() >= VIOLATIONS_KEPT,
        "clocks": clocks,
        "leaders": leaders,
        "messages": messages,
        "explain": explain,
        "explain_command": run.explain_command,
    })
}

/// Text safe inside a `<script type="application/json">` element: JSON in which every `<` is
/// written `\u003c`, so no `</script>` (nor `<!--`) can end the element early.
pub fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::history::{ClockSegment, FaultWindow, LeaderChange, Stamped};

    const MS: Nanos = 1_000_000;

    fn at(ms: u64, node: usize, event: HistoryEvent) -> Stamped {
        Stamped { at_ns: ms * MS, node, event }
    }

    /// Two exclusive holds meet (an overlap the checker counts), and client-0's late write is
    /// stale: both carry the index of the checker's violation, which the page's click opens.
    #[test]
    fn holds_writes_overlaps_and_clocks_come_from_the_history() {
        let ex = LockMode::Exclusive;
        let granted =
            |token, grant| HistoryEvent::Granted { key: 0, mode: ex, token: Some(token), grant, nested: false };
        let h = History {
            events: vec![
                at(0, 1, HistoryEvent::AcquireStart { key: 0, mode: ex }),
                at(5, 1, granted(7, 1)),
                at(6, 2, HistoryEvent::AcquireStart { key: 0, mode: ex }),
                at(40, 2, granted(8, 1)),
                at(
                    45,
                    3,
                    HistoryEvent::ResourceWrite {
                        client: 1,
                        key: 0,
                        grant: 1,
                        token: Some(7),
                        value: 1,
                        fenced_accepted: false,
                    },
                ),
                at(50, 1, HistoryEvent::Released { key: 0, nested: false }),
                at(60, 2, HistoryEvent::Released { key: 0, nested: false }),
            ],
            duration_ns: 100 * MS,
            final_counter: vec![1],
            clients: vec![1, 2],
            fenced: true,
            node_names: vec!["server-0".into(), "client-0".into(), "client-1".into(), "resource".into()],
            faults: vec![FaultWindow { kind: "pause", targets: "client-0".into(), start_ns: 20 * MS, end_ns: None }],
            clocks: vec![ClockSegment { node: 0, at_ns: 30 * MS, offset_ns: 15_000 * MS as i64, drift_ppm: 0.0 }],
            leaders: vec![
                LeaderChange { node: 0, at_ns: 0, term: Some(1) },
                LeaderChange { node: 0, at_ns: 20 * MS, term: None },
            ],
            ..History::default()
        };
        let violations = std::mem::take(&mut locksim_simulator::checker::check(4, &h).violations);
        let run = PageRun {
            label: "zk",
            seed: 4,
            history: &h,
            violations: &violations,
            explained: None,
            explain_command: None,
        };
        let v = run_json(&run);
        assert_eq!(v["holds"][0], json!([1, 0, 5.0, 50.0, 7, 1, 0, 0]));
        assert_eq!(v["holds"][1], json!([2, 0, 40.0, 60.0, 8, 1, 0, 0]));
        let kinds: Vec<&str> = v["violations"].as_array().unwrap().iter().map(|r| r[0].as_str().unwrap()).collect();
        let overlap_vi = v["overlaps"][0][5].as_i64().unwrap();
        assert_eq!(kinds[overlap_vi as usize], "overlap");
        assert_eq!(v["overlaps"][0].as_array().unwrap()[..5], json!([1, 2, 0, 40.0, 50.0]).as_array().unwrap()[..]);
        let write_vi = v["writes"][0][7].as_i64().unwrap();
        assert!(write_vi >= 0 && kinds[write_vi as usize].starts_with("stale"), "{v}");
        assert_eq!(v["faults"][0], json!(["pause", "client-0", 20.0, 100.0, 1]));
        assert_eq!(v["clocks"][0], json!([0, 30.0, 15000.0, 0.0]));
        assert_eq!(v["leaders"], json!([[0, 0.0, 1], [0, 20.0, null]]));
    }

    #[test]
    fn embedded_json_cannot_close_its_script_element() {
        let text = serde_json::to_string(&json!({"detail": "</script><!-- x"})).unwrap();
        let safe = script_safe(&text);
        assert!(!safe.contains('<'), "{safe}");
        let back: Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["detail"], "</script><!-- x");
    }
}
