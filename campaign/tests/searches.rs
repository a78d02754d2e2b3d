//! The campaign's searches and replays, in process: a seed the reports tell is replayed by the
//! campaign (the reports run none), the folding of counted events is a run option that changes
//! memory and never a result and does not leak out of the campaign, and a shrink stopped in the
//! middle of a candidate returns within a second with the edits it had kept, marked interrupted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use locksim_campaign::replay::{explain, record, recordings};
use locksim_campaign::seed::replay;
use locksim_campaign::shrink::{shrink, NotShrunk, Request};
use locksim_campaign::{thread_pool, Campaign, RunMode};
use locksim_reports::explain::ExplainError;
use locksim_reports::recording::Wanted;
use locksim_reports::ResultsJson;
use locksim_simulator::history::{folds_counted_events, HistoryEvent};
use locksim_simulator::scenario::{parse_str, Scenario};

/// Redlock (no token) with its holder paused past the TTL, beside the database lock, and a
/// Redisson-style watchdog row whose waiters are woken by notifications (the kind folded).
const SCENARIO: &str = concat!(
    "name = \"searches-test\"\nduration_ms = 3000\nseeds = 6\nalgorithms = [\"redlock\", \"db\"]\n\n",
    paused_redlock_beside_db!(),
    r#"
[[variants]]
name = "redisson"
model = "redis"
watchdog = true
"#
);

fn scenario() -> Scenario {
    parse_str("searches-test.toml", SCENARIO, &locksim_algorithms::registry()).expect("the test scenario parses")
}

fn results(scenario: &Scenario, mode: RunMode) -> String {
    let pool = thread_pool(Some(2)).expect("pool");
    let never = AtomicBool::new(false);
    let outcome = Campaign::whole(scenario).recorded_as(mode).run(&pool, &never, |_| {});
    ResultsJson::from_scenario(scenario, outcome.seeds.clone(), &outcome.totals, Vec::new()).to_pretty_string()
}

/// Folding on or off gives the same results to the byte; folding keeps fewer history events
/// (the notifications are counted, not kept); and a campaign's choice stays inside it: the
/// thread that ran it still records every event afterwards.
#[test]
fn folding_is_a_run_option_that_changes_memory_not_results() {
    let sc = scenario();
    assert!(!folds_counted_events(), "a library caller records every event by default");
    let folded = results(&sc, RunMode { fold_counted: true });
    assert!(!folds_counted_events(), "the campaign's folding does not leak out of it");
    let whole = results(&sc, RunMode { fold_counted: false });
    assert_eq!(folded, whole, "folding changes no result");

    let run = sc.runs.iter().find(|r| r.label == "redisson").expect("the watchdog row");
    let never = AtomicBool::new(false);
    let kept = |fold_counted| {
        let out = replay(&sc, run, 1, false, Some(&never), RunMode { fold_counted }).expect("runs");
        let notifications =
            out.history.events.iter().filter(|e| matches!(e.event, HistoryEvent::Notification { .. })).count();
        (notifications, out.history.folded.notifications, format!("{:?}", out.metrics))
    };
    let (kept_on, counted_on, metrics_on) = kept(true);
    let (kept_off, counted_off, metrics_off) = kept(false);
    assert_eq!((kept_on, counted_off), (0, 0), "folded: counted, not kept; recorded: kept, not counted");
    assert!(kept_off > 0 && counted_on as usize == kept_off, "{kept_off} kept, {counted_on} counted");
    assert_eq!(metrics_on, metrics_off);
}

/// `sim explain`'s seed is recorded by the campaign and told by the reports: the story of an
/// overlapping Redlock seed names the pause; a clean seed of the database lock is refused as
/// having nothing to explain. The recording the reports are given is the very seed a run counted,
/// with its trace when they ask for it, and only the rows the scenario has.
#[test]
fn explain_tells_a_seed_the_campaign_records() {
    let sc = scenario();
    let redlock = &sc.runs[0];
    let give = |seed, trace| {
        let wanted = Wanted { label: "redlock".into(), seed, trace };
        record(&sc, redlock, &wanted, RunMode::default()).outcome.expect("runs")
    };
    let seed = (0..sc.seeds).find(|s| give(*s, false).metrics.overlap_events > 0).expect("a seed of redlock overlaps");
    let told = explain(&sc, "redlock", seed, 0).expect("an overlap to explain");
    let story = told.narrative.join("\n");
    assert!(told.narrative.len() >= 3 && story.contains("paused"), "{story}");
    assert_eq!(told.incident.violation.kind, "overlap");

    let traced = give(seed, true);
    assert!(traced.trace.is_some() && traced.trace_hash != 0, "asked for, the recording has its trace");
    let untraced = give(seed, false);
    assert!(untraced.trace.is_none());
    assert_eq!(untraced.history.events, traced.history.events, "the trace changes nothing recorded");
    assert_eq!(untraced.metrics.violations[..], traced.metrics.violations[..untraced.metrics.violations.len()]);

    let wanted = vec![
        Wanted { label: "gone".into(), seed, trace: false },
        Wanted { label: "redlock".into(), seed, trace: true },
    ];
    let given: Vec<_> = recordings(&sc, wanted, RunMode::default()).map(|r| (r.label, r.seed)).collect();
    assert_eq!(given, [("redlock".to_string(), seed)], "a row the scenario lacks is not recorded");

    match explain(&sc, "db", 0, 0) {
        Err(ExplainError::NoViolation { label, .. }) => assert_eq!(label, "db"),
        Err(other) => panic!("db seed 0: {other}"),
        Ok(e) => panic!("db seed 0 explained: {:?}", e.narrative),
    }
}

/// A shrink whose seeds each take a second or more, stopped four seconds in (by then the seed's
/// own run and the row alone have shown the overlap, and the first candidate, the run without
/// its pause, is running its seeds): it returns within a second of the stop, not after the
/// candidate, marked interrupted, and the candidate cut short is not taken for a success (the
/// pause is still there). On a machine so loaded that the stop comes before the first witness,
/// the answer is that the search had not started, within the same second.
#[test]
// Real time is the point: the test times how soon the search returns after the stop.
#[allow(clippy::disallowed_methods)]
fn a_stop_inside_a_candidate_ends_the_shrink_within_a_second() {
    let text = SCENARIO.replace("duration_ms = 3000\n", "duration_ms = 3000000\n");
    let models = locksim_algorithms::registry();
    let request = Request {
        file: "slow.toml",
        text: &text,
        models: &models,
        label: "redlock",
        seed: 0,
        kind: Some("overlap"),
        budget: 3_000,
        out_file: "slow.shrunk.toml",
    };
    let pool = thread_pool(Some(2)).expect("pool");
    let stop = AtomicBool::new(false);
    let (shrunk, raised, returned) = std::thread::scope(|s| {
        let stop = &stop;
        let raiser = s.spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            stop.store(true, Ordering::SeqCst);
            Instant::now()
        });
        let shrunk = shrink(&request, &pool, stop, &mut |_| {});
        let returned = Instant::now();
        (shrunk, raiser.join().expect("the stop is raised"), returned)
    });
    assert!(returned > raised, "the shrink ended before the stop: make its seeds longer");
    let took = returned - raised;
    assert!(took < Duration::from_secs(1), "returned {took:?} after the stop");
    match shrunk {
        Ok(shrunk) => {
            assert!(shrunk.interrupted && !shrunk.budget_spent, "{:?}", shrunk.steps);
            let body = &shrunk.text[shrunk.text.find("\nname = ").expect("the scenario")..];
            assert!(body.contains("[[faults]]"), "the cut candidate without the pause was kept:\n{body}");
            assert!(shrunk.text.contains("# Cut short (budget spent or interrupted)"), "{}", shrunk.text);
        }
        Err(NotShrunk::InterruptedBeforeStart) => eprintln!("note: the stop came before the first witness"),
        Err(NotShrunk::Input(e)) => panic!("{e}"),
    }
}
