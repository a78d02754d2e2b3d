//! The scenario parser's checks at their boundaries, for the rules `cargo mutants` found no test
//! pinning (docs/testing.md, "Mutation testing"): the comparison operators of `[expect]`, which
//! expectations "all" applies to, the edges of `duration_ms` and of the distributions, which
//! partition groups name a node, the node list in a message, and a model's panicking check.
//! Each test names the mutants it kills. A fake model with `servers` servers stands in for the
//! real ones.

use locksim_simulator::model::{DynModel, ParamKind, ParamSpec};
use locksim_simulator::scenario::{parse_str, CompareOp, Scenario, ScenarioError};

use crate::parse_fake;
use parse_fake::ParseFake;

static PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "servers", kind: ParamKind::Int { min: 1, max: 20 }, default: "3", meaning: "servers" },
    ParamSpec { name: "wait_ms", kind: ParamKind::Dist { min: 1.0, max: 100.0 }, default: "10", meaning: "a wait" },
];

/// `servers` servers; `FALLS_OVER`'s parameter check panics.
static FAKE: ParseFake = ParseFake::new("fake", PARAMS);
static FALLS_OVER: ParseFake = ParseFake { name: "falls-over", params: PARAMS, check_panics: true };

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    let models: Vec<&'static dyn DynModel> = vec![&FAKE, &FALLS_OVER];
    parse_str("t.toml", text, &models)
}

/// A scenario of the fake with `extra` appended.
fn with(extra: &str) -> Result<Scenario, ScenarioError> {
    parse(&format!("name = \"t\"\nduration_ms = 1000\nalgorithms = [\"fake\"]\n{extra}\n"))
}

fn message(r: Result<Scenario, ScenarioError>) -> String {
    match r {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

/// Each operator at and either side of its boundary, and `==`'s tolerance (1e-9 of the expected
/// value, or 1e-9 below 1). Kills every mutant of `CompareOp::holds` (the body made `true` or
/// `false`, each operator swapped, and `==`'s `actual - expected` and `1e-9 * max` with `+` or `/`).
#[test]
fn each_comparison_holds_exactly_at_its_boundary() {
    use CompareOp::*;
    let cases = [
        (Lt, 1.0, 2.0, true),
        (Lt, 2.0, 2.0, false),
        (Lt, 3.0, 2.0, false),
        (Le, 2.0, 2.0, true),
        (Le, 1.0, 2.0, true),
        (Le, 3.0, 2.0, false),
        (Gt, 3.0, 2.0, true),
        (Gt, 2.0, 2.0, false),
        (Gt, 1.0, 2.0, false),
        (Ge, 2.0, 2.0, true),
        (Ge, 3.0, 2.0, true),
        (Ge, 1.0, 2.0, false),
        (Eq, 1e9 + 0.5, 1e9, true),
        (Eq, 1e9 - 0.5, 1e9, true),
        (Eq, 1e9 + 2.0, 1e9, false),
        (Eq, 1e9 - 2.0, 1e9, false),
        (Eq, 5e-10, 0.0, true),
        (Eq, 2e-9, 0.0, false),
        (Eq, 2.0, 2.0, true),
        (Eq, 3.0, 2.0, false),
    ];
    for (op, actual, expected, holds) in cases {
        assert_eq!(op.holds(actual, expected), holds, "{actual} {op:?} {expected}");
    }
}

/// "all" is refused for a metric that does not count runs, and a comparison is accepted for
/// one that does not. Kills `op == ExpectOp::All` made `!=` in `expectations` (every comparison
/// on such a metric would be refused, and "all" accepted).
#[test]
fn all_is_only_for_run_counting_metrics() {
    assert!(with("[expect.fake]\nthroughput_per_s = \"> 1\"\noverlap = \"all\"").is_ok());
    let m = message(with("[expect.fake]\nthroughput_per_s = \"all\""));
    assert!(m.contains("\"all\" only applies to run-counting metrics"), "{m}");
    // The metrics it lists are the run-counting ones. Kills `m.kind() == MetricKind::Runs` made
    // `!=` in the list.
    let listed = m.split("metrics (").nth(1).and_then(|r| r.split(')').next()).expect(&m);
    assert!(listed.contains("overlap") && !listed.contains("throughput_per_s"), "{listed}");
}

/// `duration_ms` may be exactly 1e12, not more. Kills `v > MAX_DURATION_MS` made `>=`.
#[test]
fn the_longest_run_is_accepted() {
    assert!(parse("name = \"t\"\nduration_ms = 1e12\nalgorithms = [\"fake\"]\n").is_ok());
    let m = message(parse("name = \"t\"\nduration_ms = 1.1e12\nalgorithms = [\"fake\"]\n"));
    assert!(m.contains("at most 1e12"), "{m}");
}

/// A uniform range may be a single point; one wider than an f64 holds is refused. Kills `a > b`
/// made `>=`, and the width test `!(b - a).is_finite()` with `-` as `+` or `/`.
#[test]
fn uniform_ranges_at_their_edges() {
    assert!(with("[network]\nlatency_ms = { uniform = [5, 5] }").is_ok());
    let m = message(with("[network]\nlatency_ms = { uniform = [-1e308, 1e308] }"));
    assert!(m.contains("too wide a range"), "{m}");
}

/// A normal with a standard deviation of 0 is accepted (a constant), a negative one is not.
/// Kills `sd < 0.0` made `<=`.
#[test]
fn a_normal_may_have_no_spread() {
    assert!(with("[network]\nlatency_ms = { normal = { mean = 5, sd = 0 } }").is_ok());
    assert!(message(with("[network]\nlatency_ms = { normal = { mean = 5, sd = -1 } }")).contains("standard deviation"));
}

/// A partition group of `follower` needs two servers; of `holder`, a client (there always is
/// one). Kills `covers`' `count() >= 2` made `< 2` and its `*k == NodeKind::Server` made `!=`,
/// and the client test `clients > 0` made `== 0` or `< 0`.
#[test]
fn a_group_of_followers_needs_two_servers() {
    let partition = |servers: u32, group: &str| {
        with(&format!(
            "[models.fake]\nservers = {servers}\n\n[[faults]]\nkind = \"partition\"\nat_ms = 10\ngroups = [[\"{group}\"], [\"client-0\"]]"
        ))
    };
    assert!(partition(2, "follower").is_ok());
    let m = message(partition(1, "follower"));
    assert!(m.contains("names no node"), "{m}");
    assert!(partition(1, "holder").is_ok());
}

/// The node list in a message stops at 12 services with "…", and names all 12 when there are
/// exactly 12. Kills `services.len() > 12` made `==` or `>=` in `Census::list`.
#[test]
fn the_node_list_is_cut_after_twelve_services() {
    let unknown = |servers: u32| {
        message(with(&format!(
            "[models.fake]\nservers = {servers}\n\n[[faults]]\nkind = \"pause\"\ntarget = \"server-99\"\nat_ms = 10"
        )))
    };
    let twelve = unknown(12);
    // (Ten clients by default, listed as a range.)
    assert!(
        twelve.contains("(its nodes: server-0, server-1,")
            && twelve.contains("server-11, client-0 … client-9, resource"),
        "{twelve}"
    );
    let thirteen = unknown(13);
    assert!(
        thirteen.contains("server-11, …, client-0 … client-9, resource") && !thirteen.contains("server-12"),
        "{thirteen}"
    );
}

/// A model whose parameter check panics is reported with the panic's text, and the parser goes
/// on. Kills `panic_text` made to return an empty or a fixed string.
#[test]
fn a_panicking_model_check_is_reported_with_its_text() {
    let m = message(parse("name = \"t\"\nduration_ms = 1000\nalgorithms = [\"falls-over\"]\n"));
    assert!(m.contains("model `falls-over` failed while checking its parameters: the check fell over"), "{m}");
}

/// `wait_ms` (a distribution in [1, 100]) set to `value`: the error, or "" when accepted.
fn wait(value: &str) -> String {
    with(&format!("[models.fake]\nwait_ms = {value}")).err().map(|e| e.to_string()).unwrap_or_default()
}

/// A distribution may reach its parameter's maximum, not pass it; the message says what was
/// out of range: nothing more for a constant, the value it can draw for a range, the median of
/// a log-normal whose median is too low and the mean of one whose mean is too high. Kills
/// `check_dist`'s `hi > max` made `==` or `>=`, the deletion of its `Dist::Const` arm, and its
/// log-normal guard `what == lo` made `true`, `false` or `!=`.
#[test]
fn a_distribution_out_of_its_range_says_which_value() {
    assert_eq!(wait("100"), "");
    assert_eq!(wait("{ uniform = [1, 100] }"), "");
    let constant = wait("500");
    assert!(constant.ends_with("found 500"), "{constant}");
    let range = wait("{ uniform = [50, 200] }");
    assert!(range.ends_with("found { uniform = [50, 200] } (it can draw 200)"), "{range}");
    let low_median = wait("{ lognormal = { median = 0.5, p99 = 2 } }");
    assert!(low_median.ends_with("(its median is 0.5)"), "{low_median}");
    // Median 50 (in range), p99 5000: the mean is far above 100.
    let high_mean = wait("{ lognormal = { median = 50, p99 = 5000 } }");
    assert!(high_mean.contains("(its mean is ") && !high_mean.contains("median is"), "{high_mean}");
}

/// A plain number may sit on its lower bound, not below it: a fault's `probability` of 0 is
/// accepted, -0.5 is not. Kills `number_in`'s `v < min` made `<=` or `==`.
#[test]
fn a_number_may_sit_on_its_lower_bound() {
    let fault =
        |p: &str| with(&format!("[[faults]]\nkind = \"pause\"\ntarget = \"server-0\"\nat_ms = 10\nprobability = {p}"));
    assert!(fault("0").is_ok());
    assert!(fault("1").is_ok());
    assert!(message(fault("-0.5")).contains("expected a number in [0, 1], found -0.5"));
}

/// An integer may sit on its upper bound, not above it: `servers = 20` is accepted, 21 is not.
/// Kills `int_in`'s `v > max` made `>=`.
#[test]
fn an_integer_may_sit_on_its_upper_bound() {
    assert!(with("[models.fake]\nservers = 20").is_ok());
    assert!(message(with("[models.fake]\nservers = 21")).contains("expected an integer in [1, 20], found 21"));
}
