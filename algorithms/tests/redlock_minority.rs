//! A Redlock client that wins only 2 of 5 masters reports failure and sends the unlock script to
//! all 5, including those that refused it or never answered; compare-and-delete leaves the
//! winner's keys alone. Runs the known-outcome scenario file itself, so the file and the test
//! cannot drift apart. With redlock-rb's 100 ms per-master timeout, client-1 (cut off from
//! server-0 and server-1) times out on each of them and locks server-2, 3 and 4 at about 203 ms;
//! client-0 (45 ms links: a 90 ms round trip, inside the timeout) locks server-0 and server-1
//! and is refused by the other three: the 2-of-5 loser.

use locksim_simulator::history::{FailReason, HistoryEvent};
use locksim_simulator::run::RunOptions;
use locksim_simulator::scenario::load_file;

#[test]
fn a_two_of_five_winner_fails_and_unlocks_all_five() {
    let models = locksim_algorithms::registry();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/known/04-redlock-minority-winner.toml");
    let sc = load_file(std::path::Path::new(path), &models).unwrap_or_else(|e| panic!("{e}"));
    let run = &sc.runs[0];
    let model = run.model;
    for seed in 0..4 {
        let out = model.run_seed(&sc.setup, &run.params, seed, &RunOptions { trace: true });
        let trace = out.trace.as_ref().unwrap();
        // client-0, the loser: its links are slow but inside the timeout, client-1's are cut.
        let c0: Vec<_> = trace.entries.iter().filter(|e| e.node == "client-0").collect();

        // The first attempt: 2 of 5, then the unlock script to every master, then the failure.
        let fail_at = c0
            .iter()
            .position(|e| e.kind == "note" && e.detail.starts_with("redlock attempt 1"))
            .expect("a failed attempt");
        assert!(c0[fail_at].detail.contains("failed: 2/5 masters (quorum 3)"), "{}", c0[fail_at].detail);
        let failed_at = c0
            .iter()
            .position(|e| e.kind == "history" && e.detail.starts_with("AcquireFailed"))
            .expect("the acquire call fails");
        assert!(c0[failed_at].detail.contains("Refused"), "{}", c0[failed_at].detail);
        let value = |d: &str| d.split_whitespace().nth(4).unwrap().to_string();
        let sent = |e: &&&locksim_simulator::trace::TraceEntry| matches!(e.kind, "send" | "drop");
        let sets: Vec<_> = c0[..fail_at].iter().filter(sent).filter(|e| e.detail.contains(" SET ")).collect();
        assert_eq!(sets.len(), 5, "one SET per master");
        let unlocks: Vec<String> = c0[fail_at..failed_at]
            .iter()
            .filter(sent)
            .filter(|e| e.detail.contains(" UNLOCK "))
            .map(|e| {
                assert_eq!(value(&e.detail), value(&sets[0].detail), "the unlock carries the attempt's value");
                e.detail.split_whitespace().nth(1).unwrap().to_string()
            })
            .collect();
        assert_eq!(unlocks, ["server-0", "server-1", "server-2", "server-3", "server-4"], "seed {seed}");

        // server-2's, server-3's and server-4's refusals (client-1 holds them) were reported as
        // refused attempts, before the failure (unlock answers of 0 are not refusals).
        let refused = c0[..failed_at].iter().filter(|e| e.detail.starts_with("RefusedAttempt")).count();
        assert_eq!(refused, 3, "seed {seed}");

        // client-1 got 3 of 5 first and keeps the lock: the unlock did not delete its keys.
        let c0_id = out.history.clients[0];
        let c1 = out.history.clients[1];
        let granted: Vec<_> = out
            .history
            .events
            .iter()
            .filter(|e| matches!(e.event, HistoryEvent::Granted { .. }))
            .map(|e| e.node)
            .collect();
        assert_eq!(granted, [c1], "seed {seed}: only client-1 is granted");
        assert!(
            out.history
                .events
                .iter()
                .any(|e| e.node == c0_id
                    && e.event == HistoryEvent::AcquireFailed { key: 0, reason: FailReason::Refused })
        );
        assert!(!out.history.events.iter().any(|e| matches!(e.event, HistoryEvent::LostNotice { .. })));
        assert_eq!(out.metrics.overlap_events, 0);
        assert_eq!(out.metrics.completed_sections, 1, "client-1 completes its section");
    }
}
