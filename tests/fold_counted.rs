//! Folding the events only counted (notifications, refused attempts) into counters, as the `sim`
//! binary does, keeps every checker's result and the trace the same, and the history holds a
//! fraction of what it held. Its own test binary: the switch is process-wide.

use locksim_simulator::batch::run_seed;
use locksim_simulator::history::{fold_counted_events, HistoryEvent};
use locksim_simulator::outcome::RunOptions;
use locksim_simulator::scenario::parse_str;

/// A poller, a herd and a queue: each records one of the folded kinds, the first two by the
/// thousand.
const SCENARIO: &str = r#"
name = "fold"
duration_ms = 20000
seeds = 1
algorithms = ["redlock", "etcd"]

[workload]
clients = 10
hold_ms = { uniform = [5, 50] }
think_ms = { uniform = [0, 20] }

[[variants]]
name = "zookeeper-herd"
model = "zookeeper"
recipe = "naive"

[[variants]]
name = "redisson"
model = "redis"
watchdog = true
"#;

#[test]
fn folded_events_give_the_same_results_in_less_memory() {
    let models = locksim_algorithms::registry();
    let sc = parse_str("fold.toml", SCENARIO, &models).expect("valid");
    for run in &sc.runs {
        fold_counted_events(false);
        let whole = run_seed(&sc, run, 3, &RunOptions { trace: true }).expect("no panic");
        fold_counted_events(true);
        let folded = run_seed(&sc, run, 3, &RunOptions { trace: true }).expect("no panic");
        fold_counted_events(false);
        let label = &run.label;
        assert_eq!(format!("{:?}", folded.metrics), format!("{:?}", whole.metrics), "{label}: metrics differ");
        assert_eq!(folded.trace_hash, whole.trace_hash, "{label}: the trace differs");
        let counted =
            |e: &HistoryEvent| matches!(e, HistoryEvent::Notification { .. } | HistoryEvent::RefusedAttempt { .. });
        let kept: Vec<_> = whole.history.events.iter().filter(|e| !counted(&e.event)).cloned().collect();
        assert_eq!(folded.history.events, kept, "{label}: every other event is kept, in order");
        let total = folded.history.folded.notifications + folded.history.folded.refused_attempts;
        assert_eq!(total as usize, whole.history.events.len() - kept.len(), "{label}");
        assert!(total > 0, "{label}: the scenario records events of the folded kinds");
        assert!(whole.metrics.notifications + whole.metrics.refused_attempts > 0, "{label}");
    }
}
