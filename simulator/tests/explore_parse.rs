//! The `[explore]` table (docs/scenario-format.md): its defaults, every key read, and each class
//! of error with the file, line:column, key and the valid choices in the message. A fake model
//! (three servers) stands in for the real ones, so these tests pin the parser alone.

use locksim_simulator::model::{DynModel, ParamKind, ParamSpec};
use locksim_simulator::scenario::explore::{DEFAULT_TARGETS, EXPLORE_KINDS};
use locksim_simulator::scenario::{parse_str, ExploreSpec, Scenario, ScenarioError, Selector};

use crate::parse_fake;
use parse_fake::ParseFake;

static PARAMS: &[ParamSpec] =
    &[ParamSpec { name: "servers", kind: ParamKind::Int { min: 1, max: 7 }, default: "3", meaning: "members" }];

/// A model with `server-0 … server-2`; never run.
static FAKE: ParseFake = ParseFake::new("etcd", PARAMS);

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    let models: Vec<&'static dyn DynModel> = vec![&FAKE];
    parse_str("test.toml", text, &models)
}

const HEAD: &str = "name = \"t\"\nduration_ms = 20_000\nalgorithms = [\"etcd\"]\n\n[explore]\n";

/// The error for `[explore]` body `body`, which must sit at `line:column` and name `key`.
fn fails(body: &str, at: &str, key: &str, needles: &[&str]) {
    parse_fake::assert_fails_at(parse, &format!("{HEAD}{body}"), at, key, needles);
}

#[test]
fn no_table_means_none_and_an_empty_table_means_the_defaults() {
    let without = parse("name = \"t\"\nduration_ms = 20_000\nalgorithms = [\"etcd\"]\n").unwrap();
    assert_eq!(without.explore, None);
    let empty = parse(HEAD).unwrap().explore.expect("an [explore] table");
    assert_eq!(empty, ExploreSpec::defaults(20_000.0));
    assert_eq!(empty.kinds, EXPLORE_KINDS);
    assert!(!empty.kinds.contains(&"partition"));
    assert_eq!(empty.max_faults, 3);
    assert_eq!(empty.max_duration_ms, 5_000.0, "a quarter of the run");
    assert_eq!(empty.targets.len(), DEFAULT_TARGETS.len());
}

#[test]
fn every_key_is_read() {
    let body = "kinds = [\"pause\", \"clock_jump\", \"pause\"]\nmax_faults = 5\nmax_duration_ms = 2_500\n\
                targets = [\"server-2\", \"holder\"]\nmax_jump_ms = 12_000\nmax_drift_ppm = 200\n\
                max_latency_ms = 300\nmax_loss = 0.25\n";
    let spec = parse(&format!("{HEAD}{body}")).unwrap().explore.unwrap();
    assert_eq!(spec.kinds, vec!["pause", "clock_jump"], "a repeated kind counts once");
    assert_eq!(spec.max_faults, 5);
    assert_eq!(spec.max_duration_ms, 2_500.0);
    assert_eq!(spec.targets, vec![Selector::Named("server-2".into()), Selector::Holder]);
    assert_eq!(spec.max_jump_ms, 12_000.0);
    assert_eq!(spec.max_drift_ppm, 200.0);
    assert_eq!(spec.max_latency_ms, 300.0);
    assert_eq!(spec.max_loss, 0.25);
}

#[test]
fn an_unknown_key_lists_the_valid_ones() {
    fails(
        "max_fault = 2\n",
        "6:1",
        "explore.max_fault",
        &["unknown key `max_fault`", "kinds, max_faults, max_duration_ms"],
    );
}

#[test]
fn kinds_are_checked_and_partition_is_refused_with_a_reason() {
    fails(
        "kinds = [\"pause\", \"crsh\"]\n",
        "6:19",
        "explore.kinds.1",
        &["unknown fault kind", "valid kinds here: crash, pause"],
    );
    fails("kinds = [\"partition\"]\n", "6:10", "explore.kinds.0", &["not drawn by sim explore", "isolate"]);
    fails("kinds = []\n", "6:9", "explore.kinds", &["at least one fault kind"]);
}

#[test]
fn bounds_are_checked() {
    fails("max_faults = 0\n", "6:14", "explore.max_faults", &["an integer in [1, 100]", "found 0"]);
    fails("max_duration_ms = 30_000\n", "6:19", "explore.max_duration_ms", &["[1, 20000]", "found 30000"]);
    fails("max_loss = 2\n", "6:12", "explore.max_loss", &["[0, 1]"]);
}

#[test]
fn targets_must_be_selectors_of_existing_nodes() {
    fails("targets = [\"leader\", \"boss\"]\n", "6:22", "explore.targets.1", &["unknown selector", "valid selectors"]);
    fails("targets = [\"server-5\"]\n", "6:12", "explore.targets.0", &["server-5", "is not a node of"]);
    fails("targets = []\n", "6:11", "explore.targets", &["at least one selector"]);
}
