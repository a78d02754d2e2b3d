//! The fake model the parser's tests parse against (`scenario_parse.rs`, `explore_parse.rs`,
//! `parser_boundaries.rs`): it declares parameters and names its nodes as a real model would, and is
//! never run, so those tests pin the parser alone. Each test file includes this one as a module.

use locksim_simulator::model::{Cluster, Model, ParamProblem, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Protocol};
use locksim_simulator::setup::WorkloadSpec;

/// The fakes' protocol: nothing is ever sent.
pub struct NoWire;
impl Protocol for NoWire {
    type Msg = ();
    type Timer = ();
}

/// A model called `name` with `params`. Its nodes are `server-0 …`: one for `db`, `masters` for
/// `redlock`, a primary and `replicas` (with `sentinels` Sentinels) for `redis`, `servers` for
/// any other name. Like the real ones, `redis` refuses a quorum above its Sentinel count and
/// `redlock` (leaderless) has no shared locks; with `check_panics` the parameter check panics.
pub struct ParseFake {
    pub name: &'static str,
    pub params: &'static [ParamSpec],
    pub check_panics: bool,
}

impl ParseFake {
    /// A fake whose check does not panic.
    pub const fn new(name: &'static str, params: &'static [ParamSpec]) -> ParseFake {
        ParseFake { name, params, check_panics: false }
    }
}

impl Model for ParseFake {
    type Protocol = NoWire;
    fn name(&self) -> &'static str {
        self.name
    }
    fn summary(&self) -> &'static str {
        "fake"
    }
    fn params(&self) -> &'static [ParamSpec] {
        self.params
    }
    fn validate(&self, p: &Params, _: &WorkloadSpec) -> Vec<ParamProblem> {
        if self.check_panics {
            panic!("the check fell over");
        }
        if self.name == "redis" && p.int("quorum") > p.int("sentinels") {
            return vec![ParamProblem { key: "quorum".into(), message: "quorum is above the sentinel count".into() }];
        }
        Vec::new()
    }
    fn fenced(&self, _: &Params) -> bool {
        true
    }
    /// Every fake but `redlock` has shared locks, so fixtures may set `read_fraction` and one
    /// model is left to be refused it.
    fn shared_locks(&self, _: &Params) -> bool {
        self.name != "redlock"
    }
    fn services(&self, p: &Params) -> Vec<(String, NodeKind)> {
        let (servers, sentinels) = match self.name {
            "redis" => {
                let r = p.int("replicas") as usize;
                (1 + r, if r > 0 { p.int("sentinels") as usize } else { 0 })
            }
            "redlock" => (p.int("masters") as usize, 0),
            "db" => (1, 0),
            _ => (p.int("servers") as usize, 0),
        };
        let mut services: Vec<(String, NodeKind)> = Vec::new();
        for i in 0..servers {
            services.push((format!("server-{i}"), NodeKind::Server));
        }
        for i in 0..sentinels {
            services.push((format!("sentinel-{i}"), NodeKind::Sentinel));
        }
        services
    }
    fn topology(&self, _: &Params) -> Topology {
        Topology { ordered_links: false, leaderless: self.name == "redlock" }
    }
    fn build(&self, _: &Params, _: &WorkloadSpec) -> Cluster<NoWire> {
        unreachable!("the parser builds nothing")
    }
}

/// Asserts that `parse` refuses `text` at `at` (line:column, in `test.toml`), naming `key`, with
/// every one of `needles` in its message: the shape of every table parser's error tests.
#[allow(dead_code)] // the table parsers' tests use it; not every file that includes this one does
pub fn assert_fails_at(
    parse: impl Fn(&str) -> Result<locksim_simulator::scenario::Scenario, locksim_simulator::scenario::ScenarioError>,
    text: &str,
    at: &str,
    key: &str,
    needles: &[&str],
) {
    let e = parse(text).err().unwrap_or_else(|| panic!("expected an error, the scenario parsed:\n{text}"));
    let shown = e.to_string();
    assert!(shown.starts_with(&format!("test.toml:{at}: ")), "position: want {at}, got: {shown}");
    assert_eq!(e.key.as_deref(), Some(key), "{shown}");
    for n in needles {
        assert!(shown.contains(n), "{n:?} not in: {shown}");
    }
}
