//! The `[exhaust]` table (docs/exhaustive.md, docs/scenario-format.md): every key read, the
//! location each menu entry keeps for errors found later against a row, and each class of error
//! with the file, line:column, key, what was expected and the valid choices. A fake model stands
//! in for the real ones, so these tests pin the parser alone.

use locksim_simulator::model::{DynModel, ParamKind, ParamSpec};
use locksim_simulator::scenario::exhaust::{ExhaustSpec, Located};
use locksim_simulator::scenario::{parse_str, Scenario, ScenarioError};

use crate::parse_fake;
use parse_fake::ParseFake;

static PARAMS: &[ParamSpec] =
    &[ParamSpec { name: "servers", kind: ParamKind::Int { min: 1, max: 7 }, default: "3", meaning: "members" }];

static FAKE: ParseFake = ParseFake::new("etcd", PARAMS);

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    let models: Vec<&'static dyn DynModel> = vec![&FAKE];
    parse_str("test.toml", text, &models)
}

const HEAD: &str = "name = \"t\"\nduration_ms = 20_000\nalgorithms = [\"etcd\"]\n\n[exhaust]\n";

/// The error for `[exhaust]` body `body`, which must sit at `line:column` and name `key`.
fn fails(body: &str, at: &str, key: &str, needles: &[&str]) {
    parse_fake::assert_fails_at(parse, &format!("{HEAD}{body}"), at, key, needles);
}

#[test]
fn every_key_is_read_and_each_menu_entry_keeps_its_place() {
    assert_eq!(parse("name = \"t\"\nduration_ms = 1\nalgorithms = [\"etcd\"]\n").unwrap().exhaust, None);
    let body =
        "clients = 3\nacquisitions = 2\nfaults = 2\nmenu = [\"pause@clients:lease_ttl_ms+1\", \"crash@leader:1000\"]\n\
                delays = [\"min\", 5, \"ttl_ms-1\"]\nslow_messages = 0\nhold_ms = [100, 500, 100]\nthink_ms = [0]\n\
                property = \"overlap\"\nmax_depth = 512\nmax_states = 1000\ndistinct_faults = true\nsymmetry = true\n\
                start_depth = 512\n";
    let spec = parse(&format!("{HEAD}{body}")).unwrap().exhaust.expect("the table");
    assert_eq!(
        spec,
        ExhaustSpec {
            clients: Some(3),
            acquisitions: Some(2),
            faults: Some(2),
            distinct_faults: Some(true),
            symmetry: Some(true),
            menu: vec![
                Located { text: "pause@clients:lease_ttl_ms+1".into(), at: "test.toml:9:9: `exhaust.menu.0`".into() },
                Located { text: "crash@leader:1000".into(), at: "test.toml:9:41: `exhaust.menu.1`".into() },
            ],
            delays: Some(Located { text: "min,5,ttl_ms-1".into(), at: "test.toml:10:10: `exhaust.delays`".into() }),
            slow_messages: Some(0),
            hold_ms: vec![100.0, 500.0],
            think_ms: vec![0.0],
            property: Some("overlap"),
            max_depth: Some(512),
            start_depth: Some(512),
            max_states: Some(1000),
        }
    );
}

#[test]
fn errors_name_the_place_the_key_and_the_valid_choices() {
    fails("sizes = 3\n", "6:1", "exhaust.sizes", &["clients", "hold_ms", "max_states"]);
    fails("clients = 0\n", "6:11", "exhaust.clients", &["expected an integer in [1, 1000], found 0"]);
    fails("faults = 17\n", "6:10", "exhaust.faults", &["[0, 16]"]);
    fails(
        "menu = [\"nap@clients:5\"]\n",
        "6:9",
        "exhaust.menu.0",
        &["unknown fault kind \"nap\"", "pause, crash, crash-machine, isolate, clock_jump"],
    );
    fails("menu = [\"pause:5\"]\n", "6:9", "exhaust.menu.0", &["KIND@TARGETS:V,V,..."]);
    fails(
        "menu = [\"pause@:5\"]\n",
        "6:9",
        "exhaust.menu.0",
        &["no targets", "clients, waiters, blocked, holders, servers, leader"],
    );
    fails("menu = \"pause@clients:5\"\n", "6:8", "exhaust.menu", &["expected an array of menu entries"]);
    fails("delays = []\n", "6:10", "exhaust.delays", &["at least one delay"]);
    fails("delays = [\"min,max\"]\n", "6:11", "exhaust.delays.0", &["\"min\", \"max\", a number of ms"]);
    fails("hold_ms = [-1]\n", "6:12", "exhaust.hold_ms.0", &["[0, 1000000000000]"]);
    fails("think_ms = []\n", "6:12", "exhaust.think_ms", &["at least one time"]);
    fails(
        "property = \"safety\"\n",
        "6:12",
        "exhaust.property",
        &["unknown property \"safety\"", "overlap, stale-write, fenced-stale-write"],
    );
    fails("exhaust = 1\n", "6:1", "exhaust.exhaust", &["valid keys"]);
    // The first round's limit is at most the longest path the table allows.
    fails("max_depth = 100\nstart_depth = 101\n", "7:15", "exhaust.start_depth", &["[1, 100], found 101"]);
    fails("start_depth = 0\n", "6:15", "exhaust.start_depth", &["[1, 100000000], found 0"]);
}
