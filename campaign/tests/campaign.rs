//! A campaign's orchestration, in process: the totals do not depend on the thread count, a stop
//! leaves a prefix of the seeds folded, `--verify` finds no difference on a shipped scenario,
//! shards merged equal one run (of a sweep's points too), an interrupted shard writes its finished
//! prefix marked and merges into a marked outcome, a resumed sweep runs only the points
//! not recorded, `--trace` records every row's seed, and the expectations are judged (and
//! filtered) as `sim run` reports them.

use std::sync::atomic::{AtomicBool, Ordering};

use locksim_campaign::shard::{merge_run_parts, merge_sweep_parts};
use locksim_campaign::sweep::{run_points, Point};
use locksim_campaign::{thread_pool, Campaign, Class, Outcome};
use locksim_reports::shard::{check_parts, read_part, Origin, Shard};
use locksim_reports::ResultsJson;
use locksim_simulator::scenario::{load_file, parse_str, Scenario};

/// Redlock (no token) and the database lock, four clients, the holder paused past Redlock's TTL:
/// most Redlock seeds overlap, so its failing-seed list fills up; the database lock never does.
const SCENARIO: &str = concat!(
    "name = \"campaign-test\"\nduration_ms = 2000\nseeds = 24\nalgorithms = [\"redlock\", \"db\"]\n\n",
    paused_redlock_beside_db!(),
    r#"
[expect.redlock]
overlap = "none"

[expect.db]
overlap = "none"
"#
);

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
        assert!(!ran.partial.interrupted && ran.partial.seeds_finished.is_empty(), "a whole part is not marked");
        std::fs::write(&path, ran.partial.to_text()).expect("part written");
        parts.push(read_part(&path).expect("part reads back"));
    }
    let sorted = check_parts(&parts).expect("the parts belong together");
    let merged = merge_run_parts(&s, &sorted).expect("the parts merge");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(merged.finished, whole.finished);
    assert_eq!(json(&s, &merged), json(&s, &whole));
}

#[test]
fn a_shard_stopped_before_its_first_seed_writes_a_marked_empty_part() {
    let s = scenario();
    let origin = Origin::new("test", "campaign-test.toml", SCENARIO, 0..24, &[], &[]);
    let ran =
        Campaign::whole(&s).run_shard(Shard { index: 0, count: 2 }, origin, &pool(1), &AtomicBool::new(true), |_| {});
    assert!(ran.outcome.interrupted);
    assert!(ran.partial.interrupted);
    assert_eq!(ran.partial.seeds_finished, [0, 0]);
    assert_eq!(ran.partial.missing_seeds(0), 0..12);
}

#[test]
fn an_interrupted_shard_writes_its_prefix_and_merges_into_a_marked_outcome() {
    let s = scenario();
    let campaign = Campaign::whole(&s);
    let dir = std::env::temp_dir().join(format!("locksim-campaign-cut-shard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let origin = || Origin::new("test", "campaign-test.toml", SCENARIO, campaign.seeds.clone(), &[], &[]);
    let mut parts = Vec::new();
    let mut cut_finished = 0;
    for index in 0..3 {
        let shard = Shard { index, count: 3 };
        let stop = AtomicBool::new(false);
        let mut seen = 0u64;
        // Shard 1 (seeds 8..16) is stopped after its third seed of the first row. One thread:
        // its window (4 seeds started ahead) is smaller than the block, so some seed of the
        // block is always unstarted at the stop; on two threads all eight can start at once, and
        // a seed of a few milliseconds may finish before the stop, leaving nothing cut.
        let ran = campaign.run_shard(shard, origin(), &pool(1), &stop, |_| {
            seen += 1;
            if index == 1 && seen == 3 {
                stop.store(true, Ordering::SeqCst);
            }
        });
        if index == 1 {
            assert!(ran.outcome.interrupted);
            assert!(ran.partial.interrupted);
            cut_finished = ran.outcome.finished;
            assert!((3..8).contains(&cut_finished), "finished {cut_finished}");
            assert_eq!(ran.partial.seeds_finished, [cut_finished, 0], "redlock cut, db never started");
            assert_eq!(ran.partial.missing_seeds(0), 8 + cut_finished..16);
            assert_eq!(ran.partial.missing_seeds(1), 8..16);
            // The part holds exactly the block's first seeds: the totals of those seeds alone.
            let prefix = run(&Campaign::new(&s, vec![&s.runs[0]], 8..8 + cut_finished), 1);
            assert_eq!(row_json(&s, &ran.outcome, 0), row_json(&s, &prefix, 0));
        } else {
            assert!(!ran.partial.interrupted);
        }
        let path = dir.join(format!("part-{index}.json"));
        std::fs::write(&path, ran.partial.to_text()).expect("part written");
        parts.push(read_part(&path).expect("part reads back"));
    }
    let sorted = check_parts(&parts).expect("the parts belong together");
    let merged = merge_run_parts(&s, &sorted).expect("a cut part merges");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(merged.interrupted, "the merged run says it was cut");
    // Redlock: 16 seeds of the whole shards and the cut one's prefix; db: 16 seeds.
    assert_eq!(merged.finished, 16 + cut_finished + 16);
    assert_eq!(merged.total, 48);
    let results: serde_json::Value = serde_json::from_str(&json(&s, &merged)).expect("json");
    assert_eq!(results["interrupted"], true);
    assert_eq!(results["algorithms"][0]["seeds_finished"], 16 + cut_finished);
    assert_eq!(results["algorithms"][1]["seeds_finished"], 16);
    assert_eq!(merged.judge(&s, &[]).class, Class::Interrupted);
    let labels = ["redlock".to_string(), "db".to_string()];
    let said = locksim_campaign::shard::cut_parts_text(&sorted, &labels);
    assert!(said.contains("shard 1/3") && said.contains("was interrupted"), "{said}");
    assert!(said.contains(&format!("redlock seeds {}..16, db seeds 8..16", 8 + cut_finished)), "{said}");
    assert!(said.contains("--shard 1/3"), "{said}");
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

/// Two points of a sweep: the scenario as written and with Redlock's TTL doubled.
fn sweep_points() -> Vec<Scenario> {
    let models = locksim_algorithms::registry();
    let other = SCENARIO.replace("ttl_ms = 600", "ttl_ms = 1200");
    vec![scenario(), parse_str("campaign-test.toml", &other, &models).expect("the second point parses")]
}

fn sweep_json(points: &[(Vec<locksim_reports::AlgorithmTotals>, bool)], s: &Scenario) -> Vec<String> {
    points
        .iter()
        .map(|(rows, complete)| {
            assert!(complete);
            let results = ResultsJson::from_scenario(s, 0..24, rows, Vec::new());
            serde_json::to_string(&results.algorithms).expect("rows serialise")
        })
        .collect()
}

#[test]
fn sweep_shards_merged_equal_one_sweep_and_a_resume_runs_only_the_rest() {
    let scenarios = sweep_points();
    let campaigns = || scenarios.iter().map(|s| Point::Run(Campaign::whole(s))).collect::<Vec<_>>();
    let stop = AtomicBool::new(false);
    let mut recorded = Vec::new();
    let whole = run_points(
        campaigns(),
        &pool(2),
        &stop,
        |_| {},
        |i, _| {
            recorded.push(i);
            Ok::<(), String>(())
        },
    )
    .expect("no record error");
    assert_eq!(recorded, [0, 1], "every finished point is recorded, in order");
    assert_ne!(sweep_json(&whole.points, &scenarios[0])[0], sweep_json(&whole.points, &scenarios[0])[1]);

    let dir = std::env::temp_dir().join(format!("locksim-campaign-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut parts = Vec::new();
    for index in [1, 0] {
        let shard = Shard { index, count: 2 };
        let points = scenarios.iter().map(|s| Point::Run(Campaign::whole(s).over(shard.seeds(0..24)))).collect();
        let ran = run_points(points, &pool(2), &stop, |_| {}, |_, _| Ok::<(), String>(())).expect("ran");
        let origin = Origin::new(
            "test",
            "campaign-test.toml",
            SCENARIO,
            0..24,
            &[],
            &["models.redlock.ttl_ms=600,1200".to_string()],
        );
        let path = dir.join(format!("shard-{index}.json"));
        std::fs::write(&path, ran.partial(origin, shard).expect("not interrupted").to_text()).expect("written");
        parts.push(read_part(&path).expect("reads back"));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let sorted = check_parts(&parts).expect("the parts belong together");
    let refs: Vec<&Scenario> = scenarios.iter().collect();
    let merged = merge_sweep_parts(&refs, &sorted).expect("the parts merge");
    assert_eq!(sweep_json(&merged, &scenarios[0]), sweep_json(&whole.points, &scenarios[0]));

    // A resume: the first point is taken as recorded, only the second runs (and is recorded).
    let mut resumed = campaigns();
    resumed[0] = Point::Recorded(whole.points[0].0.clone());
    let mut recorded = Vec::new();
    let again = run_points(
        resumed,
        &pool(2),
        &stop,
        |_| {},
        |i, _| {
            recorded.push(i);
            Ok::<(), String>(())
        },
    )
    .expect("no record error");
    assert_eq!(recorded, [1]);
    assert_eq!(again.finished, 48, "only the second point's seed-runs ran");
    assert_eq!(sweep_json(&again.points, &scenarios[0]), sweep_json(&whole.points, &scenarios[0]));
}

#[test]
fn traced_records_one_seed_of_every_row_with_its_trace() {
    let s = scenario();
    let traced = Campaign::whole(&s).traced(3);
    let labels: Vec<&str> = traced.iter().map(|(run, _)| run.label.as_str()).collect();
    assert_eq!(labels, ["redlock", "db"]);
    for (run, outcome) in traced {
        let outcome = outcome.expect("no panic");
        let trace = outcome.trace.expect("a trace was asked for");
        assert!(!trace.entries.is_empty(), "{}", run.label);
    }
}
