//! The scenario parser against the contract (docs/scenario-format.md): the format's own
//! example with every default, every section and fault kind, and one test per class of error,
//! each checking that the message names the file, line:column, key and what was expected.
//! Fake models stand in for the real ones so these tests pin the parser alone.

use locksim_simulator::dist::Dist;
use locksim_simulator::model::{Cluster, DynModel, Model, ParamKind, ParamSpec, ParamValue, Params, Topology};
use locksim_simulator::process::{CrashKind, NodeKind};
use locksim_simulator::scenario::{
    load_file, parse_str, CompareOp, ExpectOp, FaultKind, Scenario, ScenarioError, Selector,
};
use locksim_simulator::setup::WorkloadSpec;

// ---------------------------------------------------------------- fake models

use crate::parse_fake;
use parse_fake::{NoWire, ParseFake};

const ANY_MS: ParamKind = ParamKind::Dist { min: 0.0, max: 1e9 };

static REDIS: &[ParamSpec] = &[
    ParamSpec { name: "ttl_ms", kind: ParamKind::Dist { min: 1.0, max: 1e9 }, default: "30000", meaning: "lease" },
    ParamSpec {
        name: "unlock",
        kind: ParamKind::Choice(&["compare_and_delete", "del"]),
        default: "\"compare_and_delete\"",
        meaning: "release",
    },
    ParamSpec { name: "retry_ms", kind: ANY_MS, default: "{ uniform = [50, 250] }", meaning: "retry" },
    ParamSpec { name: "watchdog", kind: ParamKind::Bool, default: "false", meaning: "Redisson" },
    ParamSpec { name: "replicas", kind: ParamKind::Int { min: 0, max: 5 }, default: "0", meaning: "replicas" },
    ParamSpec { name: "replica_ack", kind: ParamKind::Bool, default: "false", meaning: "WAIT" },
    ParamSpec { name: "sentinels", kind: ParamKind::Int { min: 1, max: 9 }, default: "3", meaning: "sentinels" },
    ParamSpec { name: "quorum", kind: ParamKind::Int { min: 1, max: 9 }, default: "2", meaning: "quorum" },
    ParamSpec {
        name: "drift_factor",
        kind: ParamKind::Number { min: 0.0, max: 1.0 },
        default: "0.01",
        meaning: "drift",
    },
];

static DB: &[ParamSpec] = &[
    ParamSpec { name: "mode", kind: ParamKind::Choice(&["table", "get_lock"]), default: "\"table\"", meaning: "mode" },
    ParamSpec { name: "poll_ms", kind: ANY_MS, default: "200", meaning: "poll" },
    ParamSpec {
        name: "expire_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "30_000",
        meaning: "expiry",
    },
    ParamSpec { name: "reentrant", kind: ParamKind::Bool, default: "true", meaning: "nesting" },
];

static REDLOCK: &[ParamSpec] = &[
    ParamSpec { name: "masters", kind: ParamKind::Int { min: 1, max: 9 }, default: "5", meaning: "masters" },
    ParamSpec { name: "ttl_ms", kind: ParamKind::Dist { min: 1.0, max: 1e9 }, default: "10000", meaning: "lease" },
];

static CONSENSUS: &[ParamSpec] =
    &[ParamSpec { name: "servers", kind: ParamKind::Int { min: 1, max: 7 }, default: "3", meaning: "ensemble" }];

/// A model with no service nodes at all (everything it has is its clients).
struct Serverless;
impl Model for Serverless {
    type Protocol = NoWire;
    fn name(&self) -> &'static str {
        "serverless"
    }
    fn summary(&self) -> &'static str {
        "clients only"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }
    fn fenced(&self, _: &Params) -> bool {
        false
    }
    fn services(&self, _: &Params) -> Vec<(String, NodeKind)> {
        Vec::new()
    }
    fn topology(&self, _: &Params) -> Topology {
        Topology { ordered_links: false, leaderless: false }
    }
    fn build(&self, _: &Params, _: &WorkloadSpec) -> Cluster<NoWire> {
        unreachable!("the parser builds nothing")
    }
}

static FAKES: [ParseFake; 5] = [
    ParseFake::new("db", DB),
    ParseFake::new("redis", REDIS),
    ParseFake::new("redlock", REDLOCK),
    ParseFake::new("zookeeper", CONSENSUS),
    ParseFake::new("etcd", CONSENSUS),
];

fn models() -> Vec<&'static dyn DynModel> {
    let mut v: Vec<&'static dyn DynModel> = FAKES.iter().map(|m| m as &dyn DynModel).collect();
    v.push(&Serverless);
    v
}

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    parse_str("test.toml", text, &models())
}

fn ok(text: &str) -> Scenario {
    parse(text).unwrap_or_else(|e| panic!("expected a valid scenario, got: {e}"))
}

/// 1-based line:column of the first occurrence of `marker` (after `skip` earlier occurrences).
fn pos_nth(text: &str, marker: &str, skip: usize) -> String {
    let offset = text.match_indices(marker).nth(skip).unwrap_or_else(|| panic!("marker {marker:?} not in text")).0;
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count() + 1;
    format!("{line}:{column}")
}

fn pos(text: &str, marker: &str) -> String {
    pos_nth(text, marker, 0)
}

/// Position just after the first occurrence of `marker` (the value after `key = `).
fn val(text: &str, marker: &str) -> String {
    let offset = text.find(marker).unwrap_or_else(|| panic!("marker {marker:?} not in text")) + marker.len();
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count() + 1;
    format!("{line}:{column}")
}

/// Parses `text`, expects an error at `at` ("line:column") about `key`, whose message contains
/// every one of `needles`; returns the rendered message.
fn fails(text: &str, at: &str, key: Option<&str>, needles: &[&str]) -> String {
    let e = match parse(text) {
        Ok(_) => panic!("expected an error, the scenario parsed:\n{text}"),
        Err(e) => e,
    };
    let shown = e.to_string();
    assert!(shown.starts_with(&format!("test.toml:{at}: ")), "position: want test.toml:{at}, got: {shown}");
    assert_eq!(e.key.as_deref(), key, "key in: {shown}");
    if let Some(k) = key {
        assert!(shown.contains(&format!("`{k}`")), "key `{k}` not shown in: {shown}");
    }
    for n in needles {
        assert!(shown.contains(n), "{n:?} not in: {shown}");
    }
    println!("{shown}"); // shown with --nocapture, to read the messages as a user would
    shown
}

/// A minimal valid head to which tests append one section.
const HEAD: &str = "name = \"t\"\nduration_ms = 1000\nalgorithms = [\"redis\", \"redlock\"]\n";

fn with(extra: &str) -> String {
    format!("{HEAD}{extra}")
}

// ---------------------------------------------------------------- valid files

/// The complete example at the end of docs/scenario-format.md.
const SPEC_EXAMPLE: &str = r#"name = "failover"
description = "The primary or leader crashes while clients hold the lock."
duration_ms = 60_000
seeds = 1000
algorithms = ["db", "redis", "redlock", "zookeeper", "etcd"]

[models.redis]
replicas = 1

[[variants]]
name = "redis-wait"
model = "redis"
replicas = 1
replica_ack = true

[workload]
clients = 10
hold_ms = { uniform = [5, 50] }

[[faults]]
kind = "crash"
target = "leader"
at_ms = { uniform = [5_000, 30_000] }
duration_ms = 20_000

[expect.zookeeper]
overlap = "none"
"#;

#[test]
fn the_spec_example_parses_with_every_default_right() {
    let s = ok(SPEC_EXAMPLE);
    assert_eq!(s.name, "failover");
    assert_eq!(s.description, "The primary or leader crashes while clients hold the lock.");
    assert_eq!(s.file.to_str(), Some("test.toml"));
    assert_eq!(s.setup.duration_ms, 60_000.0);
    assert_eq!(s.seeds, 1000);

    let labels: Vec<&str> = s.runs.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["db", "redis", "redlock", "zookeeper", "etcd", "redis-wait"]);
    let redis = &s.runs[1].params;
    assert_eq!(redis.int("replicas"), 1);
    assert_eq!(redis.values["ttl_ms"], ParamValue::Num(30000.0));
    assert_eq!(redis.str("unlock"), "compare_and_delete");
    assert_eq!(redis.dist("retry_ms"), Dist::Uniform(50.0, 250.0));
    assert!(!redis.bool("watchdog"));
    assert_eq!(redis.f64("drift_factor"), 0.01);
    assert_eq!(redis.values.len(), REDIS.len(), "every schema key filled");
    let db = &s.runs[0].params;
    assert_eq!(db.f64("expire_ms"), 30_000.0);
    assert_eq!(db.str("mode"), "table");
    assert!(db.bool("reentrant"));
    let variant = &s.runs[5];
    assert_eq!(variant.model.name(), "redis");
    assert_eq!(variant.params.int("replicas"), 1);
    assert!(variant.params.bool("replica_ack"));
    assert_eq!(s.runs[2].params.int("masters"), 5);

    assert_eq!(s.setup.network.latency_ms, Dist::LogNormal { median: 0.25, p99: 1.0 });
    assert_eq!((s.setup.network.loss, s.setup.network.duplicate), (0.0, 0.0));
    assert!(s.setup.network.links.is_empty());

    let w = &s.setup.workload;
    assert_eq!((w.clients, w.locks), (10, 1));
    assert_eq!(w.hold_ms, Dist::Uniform(5.0, 50.0));
    assert_eq!(w.think_ms, Dist::Uniform(0.0, 20.0));
    assert_eq!(w.acquire_timeout_ms, None);
    assert_eq!((w.read_fraction, w.reentry, w.resource), (0.0, 0.0, true));
    assert_eq!(w.acquisitions_per_client, None);

    assert_eq!(s.setup.clocks.drift_ppm, Dist::Const(0.0));
    assert_eq!(s.setup.clocks.offset_ms, Dist::Const(0.0));

    assert_eq!(s.setup.faults.len(), 1);
    let f = &s.setup.faults[0];
    assert_eq!(f.kind, FaultKind::Crash { mode: CrashKind::Process });
    assert_eq!(f.targets, vec![Selector::Leader]);
    assert_eq!(f.at_ms, Dist::Uniform(5000.0, 30000.0));
    assert_eq!(f.duration_ms, Some(Dist::Const(20000.0)));
    assert_eq!((f.every_ms.clone(), f.probability), (None, 1.0));

    assert_eq!(s.expect.len(), 1);
    let e = &s.expect[0];
    assert_eq!((e.label.as_str(), e.metric.name(), e.expected.as_str()), ("zookeeper", "overlap", "none"));
    assert_eq!(e.op, ExpectOp::None);
}

#[test]
fn top_level_defaults() {
    let s = ok("name = \"t\"\nduration_ms = 0.5\nalgorithms = [\"db\"]\n");
    assert_eq!((s.description.as_str(), s.seeds, s.setup.duration_ms), ("", 100, 0.5));
    assert!(s.setup.faults.is_empty() && s.expect.is_empty());
}

#[test]
fn every_section_and_fault_kind() {
    let s = ok(r#"
name = "all"
duration_ms = 10_000
algorithms = ["redis"]

[models.redis]
replicas = 2
ttl_ms = { lognormal = { median = 100, p99 = 500 } }
unlock = "del"

[[variants]]
name = "only-variant-db"
model = "db"
poll_ms = { exponential = 50 }

[network]
latency_ms = { normal = { mean = 1, sd = 0.5 } }
loss = 0.01
duplicate = 0.001
[[network.links]]
from = "client-*"
to = "server-0"
latency_ms = { choice = [1, 2, 3.5] }
one_way = true
[[network.links]]
from = "sentinel-*"
to = "*"
loss = 0.5

[workload]
clients = 3
locks = 4
think_ms = 0
acquire_timeout_ms = 5_000
read_fraction = 0.25
reentry = 0.1
resource = false
acquisitions_per_client = 1

[clocks]
drift_ppm = { uniform = [-200, 200] }
offset_ms = { normal = { mean = 0, sd = 5 } }

[[faults]]
kind = "pause"
target = ["holder", "client-2"]
at_ms = 100
duration_ms = { uniform = [10, 20] }
every_ms = { exponential = 1000 }
probability = 0.5
[[faults]]
kind = "partition"
groups = [["resource", "server-9"], ["server-*", "sentinel-*"], ["client-*"]]
one_way = true
at_ms = 1
[[faults]]
kind = "isolate"
target = "random-server"
at_ms = 1
[[faults]]
kind = "clock_jump"
target = "server-0"
at_ms = 1
by_ms = -5000
[[faults]]
kind = "clock_drift"
target = "*"
at_ms = 1
ppm = { normal = { mean = 100, sd = 50 } }
[[faults]]
kind = "slow"
target = "follower"
at_ms = 1
latency_ms = 30
[[faults]]
kind = "loss"
target = "waiter"
at_ms = 1
rate = 1
every_ms = 500

[expect.redis]
overlap = "all"
throughput_per_s = "> 50"
stale_fenced = "<=0.5"
acquire_latency_ms_p99 = "== 1_000"
[expect.only-variant-db]
token_regressions = "some"
"#);
    let redis = &s.runs[0].params;
    assert_eq!(redis.dist("ttl_ms"), Dist::LogNormal { median: 100.0, p99: 500.0 });
    assert_eq!(redis.str("unlock"), "del");
    assert_eq!(s.runs[1].params.dist("poll_ms"), Dist::Exponential(50.0));
    assert_eq!(s.setup.network.latency_ms, Dist::Normal { mean: 1.0, sd: 0.5 });
    assert_eq!(s.setup.network.links.len(), 2);
    let l = &s.setup.network.links[0];
    assert_eq!(
        (l.from.clone(), l.to.clone(), l.one_way),
        (Selector::AllOf(NodeKind::Client), Selector::Named("server-0".into()), true)
    );
    assert_eq!(l.latency_ms, Some(Dist::Choice(vec![1.0, 2.0, 3.5])));
    assert_eq!((s.setup.network.links[1].loss, s.setup.network.links[1].latency_ms.clone()), (Some(0.5), None));
    let w = &s.setup.workload;
    assert_eq!((w.clients, w.locks, w.resource, w.acquisitions_per_client), (3, 4, false, Some(1)));
    assert_eq!(w.acquire_timeout_ms, Some(Dist::Const(5000.0)));
    assert_eq!(s.setup.clocks.drift_ppm, Dist::Uniform(-200.0, 200.0));
    let kinds: Vec<&str> = s.setup.faults.iter().map(|f| f.kind.name()).collect();
    assert_eq!(kinds, ["pause", "partition", "isolate", "clock_jump", "clock_drift", "slow", "loss"]);
    assert_eq!(s.setup.faults[0].targets, vec![Selector::Holder, Selector::Named("client-2".into())]);
    assert_eq!(s.setup.faults[0].probability, 0.5);
    assert_eq!(s.setup.faults[0].every_ms, Some(Dist::Exponential(1000.0)));
    match &s.setup.faults[1].kind {
        FaultKind::Partition { groups, one_way } => {
            assert!(*one_way);
            assert_eq!(groups.len(), 3);
            assert_eq!(groups[1], vec![Selector::AllOf(NodeKind::Server), Selector::AllOf(NodeKind::Sentinel)]);
        }
        other => panic!("{other:?}"),
    }
    assert!(s.setup.faults[1].targets.is_empty());
    assert_eq!(s.setup.faults[3].kind, FaultKind::ClockJump { by_ms: Dist::Const(-5000.0) });
    assert_eq!(s.setup.faults[6].kind, FaultKind::Loss { rate: 1.0 });
    let ops: Vec<ExpectOp> = s.expect.iter().map(|e| e.op.clone()).collect();
    assert_eq!(
        ops,
        [
            ExpectOp::All,
            ExpectOp::Compare { op: CompareOp::Gt, value: 50.0 },
            ExpectOp::Compare { op: CompareOp::Le, value: 0.5 },
            ExpectOp::Compare { op: CompareOp::Eq, value: 1000.0 },
            ExpectOp::Some,
        ]
    );
    assert_eq!(s.expect[2].expected, "<=0.5");
    assert_eq!(s.expect[4].label, "only-variant-db");
}

#[test]
fn variants_start_from_model_defaults_not_from_the_models_table() {
    let s = ok(&with("[models.redis]\nttl_ms = 5\n[[variants]]\nname = \"v\"\nmodel = \"redis\"\n"));
    assert_eq!(s.runs[0].params.f64("ttl_ms"), 5.0);
    assert_eq!(s.runs[2].params.f64("ttl_ms"), 30000.0);
}

#[test]
fn inline_tables_and_arrays_work_like_headers() {
    let s = ok(&with(
        "faults = [{ kind = \"crash\", target = \"server-0\", at_ms = 5 }]\nvariants = [{ name = \"v\", model = \"db\" }]\n",
    ));
    assert_eq!(s.setup.faults.len(), 1);
    assert_eq!(s.runs.len(), 3);
}

#[test]
fn node_names_come_from_the_models_declaration_without_building_it() {
    // `Serverless::build` would panic: the check reads `services()` only.
    let text = "name = \"t\"\nduration_ms = 1\nalgorithms = [\"serverless\"]\n\
                [[faults]]\nkind = \"crash\"\ntarget = \"client-0\"\nat_ms = 1\n";
    assert_eq!(ok(text).setup.faults[0].targets, vec![Selector::Named("client-0".into())]);
    let text = text.replace("client-0", "server-7");
    let e = parse(&text).unwrap_err().to_string();
    assert!(e.contains("`server-7` is not a node of algorithm serverless"), "{e}");
}

// ---------------------------------------------------------------- one test per error class

#[test]
fn syntax_error() {
    let text = with("[[faults]]\nkind = \"crash\"\n[[faults]]\nat_ms = = 3\n");
    fails(&text, &pos(&text, "= 3"), Some("faults.1.at_ms"), &["TOML syntax error: invalid string"]);
    let text = with("[workload\nclients = 3\n");
    fails(&text, &pos(&text, "\nclients"), None, &["TOML syntax error: invalid table header; expected"]);
}

#[test]
fn syntax_error_duplicate_key() {
    let text = with("name = \"again\"\n");
    let e = parse(&text).unwrap_err();
    assert_eq!((e.line, e.key.as_deref()), (Some(4), Some("name")), "{e}");
    assert!(e.to_string().contains("duplicate key"), "{e}");
}

#[test]
fn missing_file() {
    let e = load_file(std::path::Path::new("no/such/scenario.toml"), &models()).unwrap_err();
    let shown = e.to_string();
    assert_eq!(shown, "no/such/scenario.toml: cannot read the scenario file: no such file");
}

#[test]
fn file_that_is_not_utf8() {
    let dir = std::env::temp_dir().join(format!("locksim-parse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("latin1.toml");
    std::fs::write(&path, b"name = \"t\"\ndescription = \"caf\xe9\"\n").unwrap();
    let e = load_file(&path, &models()).unwrap_err();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!((e.line, e.column), (Some(2), Some(19)), "{e}");
    assert!(e.message.contains("not UTF-8"), "{e}");
}

#[test]
fn load_file_reads_a_valid_file() {
    let dir = std::env::temp_dir().join(format!("locksim-parse-ok-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("failover.toml");
    std::fs::write(&path, SPEC_EXAMPLE).unwrap();
    let s = load_file(&path, &models());
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(s.unwrap().file, path);
}

#[test]
fn empty_file() {
    fails("", "1:1", None, &["the scenario file is empty", "`name`", "`duration_ms`"]);
    fails("  \n# only a comment\n", "1:1", None, &["the scenario file is empty"]);
}

#[test]
fn missing_required_key() {
    fails("name = \"t\"\nalgorithms = [\"db\"]\n", "1:1", Some("duration_ms"), &["missing required key `duration_ms`"]);
    let text = with("[[faults]]\nkind = \"crash\"\ntarget = \"leader\"\n");
    fails(&text, &pos(&text, "[[faults]]"), Some("faults.0.at_ms"), &["missing required key `at_ms`", "in `faults.0`"]);
}

#[test]
fn wrong_type() {
    let text = with("[workload]\nclients = \"ten\"\n");
    fails(
        &text,
        &pos(&text, "\"ten\""),
        Some("workload.clients"),
        &["expected an integer in [1, 100000]", "found the string \"ten\""],
    );
    let text = with("[workload]\nclients = 2.5\n");
    fails(&text, &pos(&text, "2.5"), Some("workload.clients"), &["expected an integer", "found the number 2.5"]);
    let text = "name = \"t\"\nduration_ms = 1e13\nalgorithms = [\"db\"]\n";
    fails(text, "2:15", Some("duration_ms"), &["at most 1e12", "found 10000000000000"]);
    let text = "name = 3\nduration_ms = 1\nalgorithms = [\"db\"]\n";
    fails(text, "1:8", Some("name"), &["expected a non-empty string", "found the integer 3"]);
    let text = with("workload = 3\n");
    fails(&text, &val(&text, "workload = "), Some("workload"), &["expected a [workload] table", "found the integer 3"]);
}

#[test]
fn negative_duration() {
    let text = "name = \"t\"\nduration_ms = -5\nalgorithms = [\"db\"]\n";
    fails(text, "2:15", Some("duration_ms"), &["expected a number of milliseconds above 0", "found -5"]);
    let text =
        with("[[faults]]\nkind = \"pause\"\ntarget = \"leader\"\nat_ms = 1\nduration_ms = { uniform = [-10, 10] }\n");
    fails(
        &text,
        &pos(&text, "{ uniform = [-10"),
        Some("faults.0.duration_ms"),
        &["expected a time in milliseconds in [0, 1e12]", "it can draw -10"],
    );
}

/// `read_fraction > 0` with a model that has no shared locks is one error from the parser, at the
/// key the user wrote (`workload.read_fraction`), naming the row that cannot take it.
#[test]
fn read_fraction_on_a_model_without_shared_locks() {
    let text =
        "name = \"t\"\nduration_ms = 1000\nalgorithms = [\"redis\", \"redlock\"]\n[workload]\nread_fraction = 0.5\n";
    fails(
        text,
        &pos(text, "0.5"),
        Some("workload.read_fraction"),
        &["`redlock` (redlock)", "no shared (read) locks", "sim list redlock"],
    );
    let shared_only = "name = \"t\"\nduration_ms = 1000\nalgorithms = [\"redis\"]\n[workload]\nread_fraction = 0.5\n";
    assert_eq!(ok(shared_only).setup.workload.read_fraction, 0.5);
}

/// A link override holds for the whole run, so a role that names different nodes over time is
/// refused where it is written, instead of being pinned to some node.
#[test]
fn a_role_selector_in_a_link_is_refused() {
    let text = with("[[network.links]]\nfrom = \"holder\"\nto = \"*\"\nloss = 0.5\n");
    fails(&text, &val(&text, "from = "), Some("network.links.0.from"), &["`holder`", "whole run", "[[faults]]"]);
}

#[test]
fn unknown_top_level_key() {
    let text = with("seed = 3\n");
    fails(
        &text,
        &pos(&text, "seed ="),
        Some("seed"),
        &["unknown key `seed`", "valid keys here: name, description, duration_ms, seeds"],
    );
}

#[test]
fn unknown_key_in_a_section() {
    let text = with("[workload]\nclient = 3\n");
    fails(
        &text,
        &pos(&text, "client ="),
        Some("workload.client"),
        &["unknown key `client`", "clients", "acquisitions_per_client"],
    );
    let text = with("[[network.links]]\nfrom = \"leader\"\nto = \"*\"\nlatency = 3\n");
    fails(&text, &pos(&text, "latency ="), Some("network.links.0.latency"), &["unknown key `latency`", "latency_ms"]);
}

#[test]
fn unknown_key_in_a_fault() {
    let text = with("[[faults]]\nkind = \"crash\"\ntarget = \"leader\"\nat_ms = 1\nby_ms = 5\n");
    fails(
        &text,
        &pos(&text, "by_ms"),
        Some("faults.0.by_ms"),
        &[
            "`by_ms` belongs to `clock_jump` faults",
            "a `crash` fault takes: kind, target, at_ms, duration_ms, every_ms, probability, mode",
        ],
    );
    let text = with("[[faults]]\nkind = \"crash\"\ntarget = \"leader\"\nat_ms = 1\nwhen = 5\n");
    fails(&text, &pos(&text, "when"), Some("faults.0.when"), &["unknown key `when`", "a `crash` fault takes: kind"]);
    let text = with(
        "[[faults]]\nkind = \"partition\"\ntarget = \"leader\"\nat_ms = 1\ngroups = [[\"server-0\"], [\"server-1\"]]\n",
    );
    fails(&text, &pos(&text, "target"), Some("faults.0.target"), &["a partition fault takes no `target`", "`groups`"]);
    let text = with("[[faults]]\nkind = \"crash\"\ntarget = \"*\"\nat_ms = 1\n[[faults]]\nkind = \"explode\"\n");
    fails(
        &text,
        &pos(&text, "\"explode\""),
        Some("faults.1.kind"),
        &["unknown fault kind \"explode\"", "crash, pause, partition"],
    );
}

#[test]
fn crash_modes() {
    let text = with("[[faults]]\nkind = \"crash\"\ntarget = \"leader\"\nat_ms = 1\nmode = \"machine\"\n");
    let s = ok(&text);
    assert_eq!(s.setup.faults[0].kind, FaultKind::Crash { mode: CrashKind::Machine });
    let text = with("[[faults]]\nkind = \"crash\"\ntarget = \"leader\"\nat_ms = 1\nmode = \"power\"\n");
    fails(
        &text,
        &pos(&text, "\"power\""),
        Some("faults.0.mode"),
        &["unknown crash mode \"power\"", "valid modes: \"process\", \"machine\""],
    );
    let text = with("[[faults]]\nkind = \"pause\"\ntarget = \"leader\"\nat_ms = 1\nmode = \"machine\"\n");
    fails(&text, &pos(&text, "mode"), Some("faults.0.mode"), &["`mode` belongs to `crash` faults"]);
}

#[test]
fn missing_fault_target() {
    let text = with("[[faults]]\nkind = \"crash\"\nat_ms = 1\n");
    fails(
        &text,
        &pos(&text, "[[faults]]"),
        Some("faults.0.target"),
        &["missing required key `target`", "a selector or an array of selectors"],
    );
}

#[test]
fn unknown_selector() {
    let text = with("[[faults]]\nkind = \"crash\"\ntarget = [\"leader\", \"node-1\"]\nat_ms = 1\n");
    fails(
        &text,
        &pos(&text, "\"node-1\""),
        Some("faults.0.target.1"),
        &["unknown selector \"node-1\"", "client-*, server-*, sentinel-*, *, leader, follower, holder, waiter"],
    );
}

#[test]
fn named_node_missing_from_one_run() {
    // redlock has server-0..4; redis (no replicas) only server-0.
    let text = with("[[faults]]\nkind = \"crash\"\ntarget = \"server-3\"\nat_ms = 1\n");
    fails(
        &text,
        &pos(&text, "\"server-3\""),
        Some("faults.0.target"),
        &["`server-3` is not a node of algorithm redis", "server-0, client-0 … client-9, resource"],
    );
    let text = with("[workload]\nclients = 2\n[[network.links]]\nfrom = \"client-2\"\nto = \"*\"\n");
    fails(
        &text,
        &pos(&text, "\"client-2\""),
        Some("network.links.0.from"),
        &["`client-2` is not a node of algorithm redis", "client-0, client-1, resource"],
    );
}

#[test]
fn partition_group_naming_no_node() {
    let text = with(
        "[[faults]]\nkind = \"partition\"\nat_ms = 1\ngroups = [[\"server-0\"], [\"sentinel-*\", \"server-7\"]]\n",
    );
    fails(
        &text,
        &pos(&text, "[\"sentinel-*\""),
        Some("faults.0.groups.1"),
        &["group 1 names no node of algorithm redis", "[sentinel-*, server-7]"],
    );
    let text = with("[[faults]]\nkind = \"partition\"\nat_ms = 1\ngroups = [[\"server-0\"]]\n");
    fails(&text, &pos(&text, "[[\"server-0\"]]"), Some("faults.0.groups"), &["at least 2 groups", "found 1 group(s)"]);
    let text = with("[[faults]]\nkind = \"partition\"\nat_ms = 1\ngroups = [[\"server-0\"], []]\n");
    fails(&text, &pos(&text, "[]"), Some("faults.0.groups.1"), &["group 1 is empty"]);
}

#[test]
fn parameter_of_another_model() {
    let text = "name = \"t\"\nduration_ms = 1\nalgorithms = [\"db\"]\n[models.db]\nttl_ms = 5\n";
    fails(
        text,
        "5:1",
        Some("models.db.ttl_ms"),
        &[
            "unknown parameter `ttl_ms` for model `db`",
            "parameter of redis, redlock",
            "its parameters are: mode, poll_ms, expire_ms, reentrant",
        ],
    );
    let text = with("[[variants]]\nname = \"v\"\nmodel = \"db\"\nreplicas = 2\n");
    fails(
        &text,
        &pos(&text, "replicas"),
        Some("variants.0.replicas"),
        &["unknown parameter `replicas` for model `db`", "(besides name, model)"],
    );
}

#[test]
fn parameter_out_of_range() {
    let text = with("[models.redis]\nreplicas = 9\n");
    fails(
        &text,
        &val(&text, "replicas = "),
        Some("models.redis.replicas"),
        &["expected an integer in [0, 5]", "found 9"],
    );
    let text = with("[models.redis]\nunlock = \"delete\"\n");
    fails(
        &text,
        &pos(&text, "\"delete\""),
        Some("models.redis.unlock"),
        &["expected one of \"compare_and_delete\", \"del\"", "found \"delete\""],
    );
    let text = with("[models.redis]\nretry_ms = { uniform = [-5, 5] }\n");
    fails(
        &text,
        &pos(&text, "{ uniform"),
        Some("models.redis.retry_ms"),
        &["with values in [0, 1000000000]", "it can draw -5"],
    );
    let text = with("[models.redis]\ndrift_factor = { uniform = [0, 1] }\n");
    fails(
        &text,
        &pos(&text, "{ uniform"),
        Some("models.redis.drift_factor"),
        &["a number in [0, 1] (a distribution is not accepted here)"],
    );
}

#[test]
fn model_validation_problem_is_placed_at_its_key() {
    let text = with("[models.redis]\nsentinels = 1\nquorum = 2\n");
    fails(&text, &val(&text, "quorum = "), Some("models.redis.quorum"), &["quorum is above the sentinel count"]);
    // Not written by the file: placed where the model is configured, key path still exact.
    let text = with("[models.redis]\nsentinels = 1\n");
    fails(&text, &pos(&text, "[models.redis]"), Some("models.redis.quorum"), &["quorum is above the sentinel count"]);
}

#[test]
fn unknown_model_name() {
    let text = "name = \"t\"\nduration_ms = 1\nalgorithms = [\"db\", \"chubby\"]\n";
    fails(
        text,
        &pos(text, "\"chubby\""),
        Some("algorithms.1"),
        &["unknown model \"chubby\"", "known models: db, redis, redlock, zookeeper, etcd"],
    );
    let text = with("[models.chubby]\nx = 1\n");
    fails(&text, &pos(&text, "chubby"), Some("models.chubby"), &["unknown model `chubby`", "known models: db, redis"]);
    let text = with("[[variants]]\nname = \"v\"\nmodel = \"chubby\"\n");
    fails(&text, &pos(&text, "\"chubby\""), Some("variants.0.model"), &["unknown model \"chubby\""]);
}

#[test]
fn models_table_for_an_unlisted_algorithm() {
    let text = with("[models.db]\npoll_ms = 5\n");
    fails(
        &text,
        &pos(&text, "db]"),
        Some("models.db"),
        &["`algorithms` does not list", "listed: redis, redlock", "[[variants]]"],
    );
}

#[test]
fn nothing_to_run() {
    fails(
        "name = \"t\"\nduration_ms = 1\nalgorithms = []\n",
        "3:14",
        Some("algorithms"),
        &["nothing to run", "[[variants]]"],
    );
    fails("name = \"t\"\nduration_ms = 1\n", "1:1", Some("algorithms"), &["nothing to run"]);
}

#[test]
fn bad_distribution() {
    let text = with("[workload]\nhold_ms = { uniform = [50, 5] }\n");
    fails(
        &text,
        &pos(&text, "[50, 5]"),
        Some("workload.hold_ms.uniform"),
        &["expected an array [a, b] of two numbers with a <= b", "(a > b)"],
    );
    let text = with("[workload]\nhold_ms = { gaussian = 5 }\n");
    fails(
        &text,
        &pos(&text, "gaussian"),
        Some("workload.hold_ms.gaussian"),
        &["unknown key `gaussian`", "uniform, exponential, lognormal, normal, choice"],
    );
    let text = with("[workload]\nhold_ms = { exponential = 0 }\n");
    fails(&text, &pos(&text, "0 }"), Some("workload.hold_ms.exponential"), &["expected a mean above 0"]);
    let text = with("[network]\nlatency_ms = { lognormal = { median = 2, p99 = 1 } }\n");
    fails(
        &text,
        &pos(&text, "{ median"),
        Some("network.latency_ms.lognormal"),
        &["0 < m < q", "found median = 2, p99 = 1"],
    );
    let text = with("[network]\nlatency_ms = { normal = { mean = 2, sd = -1 } }\n");
    fails(&text, &pos(&text, "-1"), Some("network.latency_ms.normal.sd"), &["standard deviation >= 0"]);
    let text = with("[network]\nlatency_ms = { choice = [] }\n");
    fails(&text, &pos(&text, "[]"), Some("network.latency_ms.choice"), &["a non-empty array of numbers"]);
    let text = with("[network]\nlatency_ms = { uniform = [1, 2], exponential = 3 }\n");
    fails(&text, &pos(&text, "exponential"), Some("network.latency_ms.exponential"), &["exactly one form"]);
    let text = with("[network]\nlatency_ms = \"fast\"\n");
    fails(
        &text,
        &pos(&text, "\"fast\""),
        Some("network.latency_ms"),
        &["expected a number, { uniform = [a, b] }", "found the string \"fast\""],
    );
    let text = with("[network]\nlatency_ms = nan\n");
    fails(&text, &pos(&text, "nan"), Some("network.latency_ms"), &["found the number NaN"]);
}

#[test]
fn bad_fraction_and_recurrence() {
    let text = with("[network]\nloss = 1.5\n");
    fails(&text, &pos(&text, "1.5"), Some("network.loss"), &["expected a number in [0, 1]", "found 1.5"]);
    let text = with("[[faults]]\nkind = \"crash\"\ntarget = \"leader\"\nat_ms = 1\nevery_ms = 0\n");
    fails(&text, &val(&text, "every_ms = "), Some("faults.0.every_ms"), &["an interval above 0"]);
    let text = with("[[faults]]\nkind = \"crash\"\ntarget = \"leader\"\nat_ms = 1\nprobability = 2\n");
    fails(&text, &val(&text, "probability = "), Some("faults.0.probability"), &["[0, 1]"]);
}

#[test]
fn bad_expect_value() {
    let text = with("[expect.redis]\noverlap = \"never\"\n");
    fails(
        &text,
        &pos(&text, "\"never\""),
        Some("expect.redis.overlap"),
        &["expected \"none\", \"some\", \"all\", a comparison", "found \"never\""],
    );
    let text = with("[expect.redis]\nthroughput_per_s = \"all\"\n");
    fails(
        &text,
        &pos(&text, "\"all\""),
        Some("expect.redis.throughput_per_s"),
        &["\"all\" only applies to run-counting metrics"],
    );
    let text = with("[expect.redis]\noverlap = 0\n");
    fails(
        &text,
        &val(&text, "overlap = "),
        Some("expect.redis.overlap"),
        &["expected a string", "found the integer 0"],
    );
    let text = with("[expect.redis]\noverlaps = \"none\"\n");
    fails(
        &text,
        &pos(&text, "overlaps"),
        Some("expect.redis.overlaps"),
        &["unknown key `overlaps`", "overlap, stale_unfenced"],
    );
}

#[test]
fn expect_label_unknown() {
    let text = with("[expect.zookeeper]\noverlap = \"none\"\n");
    fails(
        &text,
        &pos(&text, "zookeeper]"),
        Some("expect.zookeeper"),
        &["unknown label `zookeeper`", "this scenario's labels: `redis`, `redlock`"],
    );
}

#[test]
fn duplicate_variant_name() {
    let text = with("[[variants]]\nname = \"v\"\nmodel = \"db\"\n[[variants]]\nname = \"v\"\nmodel = \"redis\"\n");
    fails(
        &text,
        &pos_nth(&text, "\"v\"", 1),
        Some("variants.1.name"),
        &["variant name `v` is used twice", "first on line 5"],
    );
    let text = with("[[variants]]\nname = \"redis\"\nmodel = \"redis\"\n");
    fails(&text, &pos(&text, "\"redis\"\nmodel"), Some("variants.0.name"), &["already the label of an algorithm"]);
    let text = "name = \"t\"\nduration_ms = 1\nalgorithms = [\"db\", \"db\"]\n";
    fails(text, &pos_nth(text, "\"db\"", 1), Some("algorithms.1"), &["listed twice"]);
}

#[test]
fn errors_in_a_multibyte_line_count_characters() {
    let text = "name = \"ünïcödé\"\nduration_ms = 1\nalgorithms = [\"db\"]\n[workload]\nhold_ms = \"é\" # é\n";
    let e = parse(text).unwrap_err();
    assert_eq!((e.line, e.column), (Some(5), Some(11)), "{e}");
}

/// Found by fuzzing the shipped scenarios (tests/check_mutations.rs): a key with no value got an
/// empty TOML message, huge numbers were printed with hundreds of digits, an integer beyond 64
/// bits said only "number too large", and "a `isolate` fault".
#[test]
fn messages_found_by_fuzzing_say_what_is_wrong() {
    let text = with("[workload]\nhold_ms =\n");
    fails(&text, &val(&text, "hold_ms ="), Some("workload.hold_ms"), &["a value is missing after `=`"]);
    let text = with("[workload]\nhold_ms =");
    fails(&text, &val(&text, "hold_ms ="), Some("workload.hold_ms"), &["a value is missing after `=`"]);
    let text = with("[workload]\nread_fraction = 1e308\n");
    let shown = fails(&text, &val(&text, "read_fraction = "), Some("workload.read_fraction"), &["found 1e308"]);
    assert!(!shown.contains("00000000"), "{shown}");
    let text = with("[workload]\nhold_ms = -1e-300\n");
    fails(&text, &val(&text, "hold_ms = "), Some("workload.hold_ms"), &["found -1e-300"]);
    let text = with("[workload]\nhold_ms = { uniform = [1e300, 2] }\n");
    fails(&text, &val(&text, "uniform = "), Some("workload.hold_ms.uniform"), &["found [1e300, 2] (a > b)"]);
    let text = with("[workload]\nclients = 1e300\n");
    fails(&text, &val(&text, "clients = "), Some("workload.clients"), &["found the number 1e300"]);
    let text = with("[[faults]]\nkind = \"pause\"\ntarget = \"server-0\"\nat_ms = 99999999999999999999\n");
    fails(&text, &val(&text, "at_ms = "), Some("faults.0.at_ms"), &["number too large", "64 bits", "1e20"]);
    let text = with("[[faults]]\nkind = \"isolate\"\ntarget = \"server-0\"\nat_ms = 1\nby_ms = 3\n");
    fails(&text, &pos(&text, "by_ms"), Some("faults.0.by_ms"), &["an `isolate` fault takes"]);
}

// ---------------------------------------------------------------- never panics

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            let _ = parse(&text);
        }

        #[test]
        fn tomlish_text_never_panics(text in "[a-z_\\[\\]{}=\",.\\n0-9 -]{0,300}") {
            let _ = parse(&text);
        }

        #[test]
        fn mutated_valid_files_never_panic(
            base in prop::sample::select(vec![0usize, 1]),
            edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..12, "\\PC{0,6}"), 1..4),
        ) {
            let mut text = [SPEC_EXAMPLE, FULL_FOR_FUZZ][base].to_string();
            for (at, cut, insert) in edits {
                let mut i = at.index(text.len() + 1);
                while !text.is_char_boundary(i) { i -= 1; }
                let mut j = (i + cut).min(text.len());
                while !text.is_char_boundary(j) { j -= 1; }
                text.replace_range(i..j, &insert);
            }
            if let Err(e) = parse(&text) {
                // Every error but an unreadable file carries a position.
                prop_assert!(e.line.is_some() && e.column.is_some(), "{}", e);
            }
        }
    }

    const FULL_FOR_FUZZ: &str = r#"name = "f"
duration_ms = 100
algorithms = ["redis", "redlock"]
[models.redis]
replicas = 1
ttl_ms = { normal = { mean = 10, sd = 1 } }
[[variants]]
name = "v"
model = "db"
[network]
latency_ms = { choice = [1, 2] }
[[network.links]]
from = "server-0"
to = "client-1"
[workload]
clients = 2
[clocks]
drift_ppm = { uniform = [-5, 5] }
[[faults]]
kind = "partition"
at_ms = 1
groups = [["server-0"], ["server-1", "sentinel-*"]]
[[faults]]
kind = "clock_jump"
target = "leader"
at_ms = { exponential = 3 }
by_ms = -3
[expect.v]
overlap = "< 0.5"
"#;
}

#[test]
fn an_expectation_may_bound_a_value_on_both_sides() {
    use locksim_simulator::scenario::expect::parse_expected;
    assert_eq!(
        parse_expected("> 0.2 and <= 0.6"),
        Some(ExpectOp::Both { first: (CompareOp::Gt, 0.2), second: (CompareOp::Le, 0.6) })
    );
    assert_eq!(parse_expected("some and < 3"), None, "only comparisons join");
    assert_eq!(parse_expected("> 1 and"), None);
}

// ---------------------------------------------------------------- the scheduled-job workload

#[test]
fn a_scheduled_workload_reads_its_period_and_refuses_the_loops_keys() {
    let sc = ok(&with("[workload]\nkind = \"scheduled\"\nperiod_ms = 60_000\nclients = 3\nhold_ms = 500\n"));
    let schedule = sc.setup.workload.schedule.as_ref().expect("scheduled");
    assert_eq!(schedule.period_ms, 60_000.0);
    assert_eq!(sc.setup.workload.clients, 3);
    assert!(ok(&with("[workload]\nkind = \"loop\"\n")).setup.workload.schedule.is_none());
    assert!(ok(&with("[workload]\nclients = 2\n")).setup.workload.schedule.is_none());

    let text = with("[workload]\nkind = \"cron\"\n");
    fails(
        &text,
        &val(&text, "kind = "),
        Some("workload.kind"),
        &["unknown workload kind \"cron\"", "\"loop\", \"scheduled\""],
    );
    let text = with("[workload]\nkind = \"scheduled\"\nclients = 2\n");
    fails(&text, &pos(&text, "[workload]"), Some("workload.period_ms"), &["missing required key `period_ms`"]);
    let text = with("[workload]\nkind = \"scheduled\"\nperiod_ms = 0\n");
    fails(&text, &val(&text, "period_ms = "), Some("workload.period_ms"), &["a number in [0.001"]);
    let text = with("[workload]\nkind = \"scheduled\"\nperiod_ms = 1000\nthink_ms = 5\n");
    fails(
        &text,
        &pos(&text, "think_ms"),
        Some("workload.think_ms"),
        &["think_ms does not apply to kind = \"scheduled\""],
    );
    let text = with("[workload]\nkind = \"scheduled\"\nperiod_ms = 1000\nlocks = 3\n");
    fails(&text, &val(&text, "locks = "), Some("workload.locks"), &["expected locks = 1"]);
    let text = with("[workload]\nperiod_ms = 1000\n");
    fails(&text, &pos(&text, "period_ms"), Some("workload.period_ms"), &["applies to kind = \"scheduled\" only"]);
}
