//! A campaign's orchestration, in process: the totals do not depend on the thread count, a stop
//! leaves a prefix of the seeds folded, `--verify` finds no difference on a shipped scenario,
//! shards merged equal one run, and the expectations are judged (and filtered) as `sim run`
//! reports them.

use std::sync::atomic::{AtomicBool, Ordering};

use locksim_campaign::shard::merge_run_parts;
use locksim_campaign::{thread_pool, Campaign, Class, Outcome};
use locksim_reports::shard::{check_parts, read_part, Origin, Shard};
use locksim_reports::ResultsJson;
use locksim_simulator::scenario::{load_file, parse_str, Scenario};

/// Redlock (no token) and the database lock, four clients, the holder paused past Redlock's TTL:
/// most Redlock seeds overlap, so its failing-seed list fills up; the database lock never does.
const SCENARIO: &str = r#"name = "campaign-test"
duration_ms = 2000
seeds = 24
algorithms = ["redlock", "db"]

[models.redlock]
ttl_ms = 600

[workload]
clients = 4

[[faults]]
kind = "pause"
target = "holder"
at_ms = 300
duration_ms = 900

[expect.redlock]
overlap = "none"

[expect.db]
overlap = "none"
"#;

fn scenario() -> Scenario {
    parse_str("campaign-test.toml", SCENARIO, &locksim_algorithms::registry()).expect("the test scenario parses")
}

fn pool(threads: usize) -> rayon::ThreadPool {
    thread_pool(Some(threads)).expect("pool")
}

/// The results JSON of an outcome: every number, list and failing seed it holds.
fn json(scenario: &Scenario, outcome: &Outcome) -> String {
    let verdict = outcome.judge(scenario, &[]);
    ResultsJson::from_scenario(scenario, outcome.seeds.clone(), &outcome.totals, verdict.expectations)
        .with_interrupted(outcome.interrupted)
        .to_pretty_string()
}

/// Row `i` of an outcome as the results JSON writes it.
fn row_json(scenario: &Scenario, outcome: &Outcome, i: usize) -> String {
    let results = ResultsJson::from_scenario(scenario, outcome.seeds.clone(), &outcome.totals, Vec::new());
    serde_json::to_string(&results.algorithms[i]).expect("a row serialises")
}

fn run(campaign: &Campaign, threads: usize) -> Outcome {
    campaign.run(&pool(threads), &AtomicBool::new(false), |_| {})
}

#[test]
fn the_totals_do_not_depend_on_the_thread_count() {
    let s = scenario();
    let campaign = Campaign::whole(&s);
    let one = run(&campaign, 1);
    assert_eq!(one.finished, 48);
    assert!(!one.interrupted);
    assert!(one.totals[0].failing_runs > 0, "redlock overlaps in some seeds: the failing-seed order is tested");
    for threads in [2, 4] {
        assert_eq!(json(&s, &run(&campaign, threads)), json(&s, &one), "{threads} threads");
    }
}

#[test]
fn a_stop_leaves_a_prefix_of_the_seeds_folded() {
    let s = scenario();
    let campaign = Campaign::whole(&s);
    let stop = AtomicBool::new(false);
    let mut seen = 0u64;
    let outcome = campaign.run(&pool(2), &stop, |p| {
        assert_eq!(p.label, "redlock", "the second row never starts");
        seen += 1;
        if seen == 5 {
            stop.store(true, Ordering::SeqCst);
        }
    });
    assert!(outcome.interrupted);
    assert_eq!(outcome.finished, seen);
    assert!((5..24).contains(&outcome.finished), "finished {}", outcome.finished);
    assert_eq!(outcome.totals[1].runs, 0, "db never started");
    // The seeds folded are exactly 0..finished: the same totals as a run of those seeds alone.
    let prefix = run(&Campaign::new(&s, vec![&s.runs[0]], 0..outcome.finished), 1);
    assert_eq!(row_json(&s, &outcome, 0), row_json(&s, &prefix, 0));
    // After a stop, the expectation about the row that never started is not judged.
    let verdict = outcome.judge(&s, &[]);
    assert_eq!(verdict.class, Class::Interrupted);
    assert_eq!(verdict.unstarted, 1);
    assert_eq!(verdict.expectations.len(), 1);
    assert_eq!(verdict.expectations[0].label, "redlock");
}

#[test]
fn verify_finds_no_difference_on_a_shipped_scenario() {
    let models = locksim_algorithms::registry();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/failover.toml");
    let s = load_file(&path, &models).expect("failover.toml parses");
    let campaign = Campaign::new(&s, s.runs.iter().collect(), 0..2).verified(true);
    let outcome = run(&campaign, 2);
    assert!(outcome.verified);
    assert_eq!(outcome.finished, 2 * s.runs.len() as u64);
    assert!(outcome.differences.is_empty(), "{}", outcome.verify_text());
    assert!(outcome.verify_text().contains("gave the same trace twice"));
    // Verifying changes nothing in the totals.
    let plain = run(&Campaign::new(&s, s.runs.iter().collect(), 0..2), 2);
    assert_eq!(json(&s, &outcome), json(&s, &plain));
}

#[test]
fn shards_merged_equal_one_run() {
    let s = scenario();
    let campaign = Campaign::whole(&s);
    let whole = run(&campaign, 2);
    let dir = std::env::temp_dir().join(format!("locksim-campaign-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut parts = Vec::new();
    // Written out of order: the merge sorts them.
    for index in [2, 0, 1] {
        let origin = Origin::new("test", "campaign-test.toml", SCENARIO, campaign.seeds.clone(), &[], &[]);
        let shard = Shard { index, count: 3 };
        let ran = campaign.run_shard(shard, origin, &pool(2), &AtomicBool::new(false), |_| {});
        assert_eq!(ran.outcome.seeds, shard.seeds(0..24));
        let path = dir.join(format!("part-{index}.json"));
        std::fs::write(&path, ran.partial.expect("not interrupted").to_text()).expect("part written");
        parts.push(read_part(&path).expect("part reads back"));
    }
    let sorted = check_parts(&parts).expect("the parts belong together");
    let merged = merge_run_parts(&s, &sorted).expect("the parts merge");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(merged.finished, whole.finished);
    assert_eq!(json(&s, &merged), json(&s, &whole));
}

#[test]
fn an_interrupted_shard_has_no_part() {
    let s = scenario();
    let origin = Origin::new("test", "campaign-test.toml", SCENARIO, 0..24, &[], &[]);
    let ran =
        Campaign::whole(&s).run_shard(Shard { index: 0, count: 2 }, origin, &pool(1), &AtomicBool::new(true), |_| {});
    assert!(ran.outcome.interrupted);
    assert!(ran.partial.is_none());
}

#[test]
fn expectations_are_judged_and_filtered_by_row() {
    let s = scenario();
    let outcome = run(&Campaign::whole(&s), 2);
    let verdict = outcome.judge(&s, &[]);
    let by_label: Vec<(&str, bool)> = verdict.expectations.iter().map(|e| (e.label.as_str(), e.ok)).collect();
    assert_eq!(by_label, [("redlock", false), ("db", true)]);
    assert_eq!(verdict.class, Class::ExpectationFailed);
    // `--algorithm db`: the Redlock expectation is not judged, and the run passes.
    let only_db = run(&Campaign::new(&s, vec![&s.runs[1]], 0..24), 2);
    let verdict = only_db.judge(&s, &["db".to_string()]);
    assert_eq!(verdict.expectations.len(), 1);
    assert_eq!(verdict.class, Class::Passed);
}
