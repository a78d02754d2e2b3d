//! `sim explore --scheduler pct` (docs/exhaustive.md, "PCT"): on the Redlock clock-jump fixture
//! PCT finds the overlap within a small budget; the same seeds give the same schedules (the
//! failures and the files that replay them are identical run to run); and the files carry the
//! path PCT took, whose latencies spread over the network's bounds by node priority.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use locksim_campaign::explore::{explore, Explored, Scheduler};
use locksim_simulator::scenario::parse_str;

const FIXTURE: &str = "../tests/fixtures/explore-redlock-clocks.toml";

fn run(scheduler: Scheduler, seeds: u64) -> Explored {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let text = std::fs::read_to_string(&path).unwrap();
    let models = locksim_algorithms::registry();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let stop = AtomicBool::new(false);
    explore(&path.display().to_string(), &text, &models, &[], seeds, scheduler, &pool, &stop, &mut |_, _| {})
        .expect("explores")
}

#[test]
fn pct_finds_the_redlock_overlap_within_30_schedules_and_repeats_itself() {
    let pct = Scheduler::Pct { depth: 3 };
    let a = run(pct, 30);
    let first = a.rows[0].first_failure.expect("PCT finds an overlap within 30 schedules");
    assert!(a.found.iter().any(|f| f.kind == "overlap"), "{:?}", a.found.iter().map(|f| f.kind).collect::<Vec<_>>());

    // Same seeds, same schedules: the same failures, and files identical to the byte.
    let b = run(pct, 30);
    assert_eq!(b.rows[0].first_failure, Some(first));
    let texts = |e: &Explored| e.found.iter().map(|f| (f.seed, f.text.clone())).collect::<Vec<_>>();
    assert_eq!(texts(&a), texts(&b), "PCT is deterministic per seed");

    // The file holds the path PCT took: a [replay] table the parser accepts, with latencies
    // from the network's default bounds (1 to 3 ms... as drawn by priority, several values).
    let f = &a.found[0];
    assert!(f.text.contains("[replay]"), "{}", f.text);
    let models = locksim_algorithms::registry();
    let sc = parse_str("found.toml", &f.text, &models).expect("the failure's file parses");
    let replay = sc.setup.replay.as_ref().expect("a [replay] table");
    assert!(!replay.events.is_empty());
    let lo = sc.setup.network.latency_ms.min_value();
    let hi = sc.setup.network.latency_ms.max_value();
    assert!(replay.delays_ms.iter().all(|d| (lo - 1e-6..=hi + 1e-6).contains(d)), "{lo}..{hi}");
    let mut distinct: Vec<u64> = replay.delays_ms.iter().map(|d| (d * 1e6) as u64).collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(distinct.len() > 2, "latencies follow node priorities, several of them: {distinct:?}");
}

#[test]
fn pct_and_the_default_scheduler_give_different_runs_of_the_same_seeds() {
    // The drawn faults are the same (the seed's "explore"/"schedule" stream); only the
    // scheduling differs, so the failing seeds do too.
    let random = run(Scheduler::Random, 60);
    let pct = run(Scheduler::Pct { depth: 3 }, 60);
    let seeds = |e: &Explored| e.found.iter().map(|f| f.seed).collect::<Vec<_>>();
    assert_ne!(seeds(&random), seeds(&pct));
    assert!(random.found.iter().all(|f| !f.text.contains("[replay]")), "the default scheduler's files need none");
}
