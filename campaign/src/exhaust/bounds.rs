//! The bounds of a systematic search, read from the command line's words against one row: the
//! workload bound (clients N, acquisitions A), the fault budget K and its menu, the delays a
//! message may take, the property judged, the depth and memory limits. Every value given in terms
//! of the row's parameters (`ttl_ms+1`) is resolved here, so the search sees only numbers.

use locksim_simulator::model::{ParamValue, Params};
use locksim_simulator::process::CrashKind;
use locksim_simulator::setup::{FaultKind, NetworkSpec};
use locksim_simulator::time::{ms_to_ns, Nanos};

/// Which violation the search looks for, judged by the project's checkers on the history so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Property {
    /// V1: two clients hold one key at once.
    Overlap,
    /// V2 unfenced: a write from a superseded grant that an unfenced resource accepts.
    StaleWrite,
    /// V2 fenced: a stale write the fenced resource still accepted.
    FencedStaleWrite,
    /// A grant whose fencing token is not above the highest granted before it on the key (the
    /// `token_regressions` metric). What a fenced resource rests on: with tokens monotone in
    /// grant order it never accepts a write after a newer holder's write (docs/exhaustive.md).
    TokenRegression,
}

impl Property {
    /// Every property's name on the command line.
    pub const NAMES: &'static [&'static str] = &["overlap", "stale-write", "fenced-stale-write", "token-regression"];

    /// Parses a name of [`Property::NAMES`].
    pub fn parse(text: &str) -> Result<Property, String> {
        match text {
            "overlap" => Ok(Property::Overlap),
            "stale-write" => Ok(Property::StaleWrite),
            "fenced-stale-write" => Ok(Property::FencedStaleWrite),
            "token-regression" => Ok(Property::TokenRegression),
            other => Err(format!("--property {other}: expected one of {}", Property::NAMES.join(", "))),
        }
    }

    /// The name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Property::Overlap => "overlap",
            Property::StaleWrite => "stale-write",
            Property::FencedStaleWrite => "fenced-stale-write",
            Property::TokenRegression => "token-regression",
        }
    }

    /// The `[expect]` metric that shows it in `sim run`'s results.
    pub fn metric(self) -> &'static str {
        match self {
            Property::Overlap => "overlap",
            Property::StaleWrite => "stale_unfenced",
            Property::FencedStaleWrite => "stale_fenced",
            Property::TokenRegression => "token_regressions",
        }
    }
}

/// Which nodes a menu fault may hit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Targets {
    /// Every client.
    Clients,
    /// A client with an acquire call outstanding at that moment.
    Waiters,
    /// A waiter whose library is blocked on the service's notification (etcd: watching the key
    /// before its own), with no request of its own in flight.
    Blocked,
    /// A client that holds: its library has answered its acquire (the grant learned, no answer
    /// in flight), so a pause hits the holder and never a grant on its way to it.
    Holders,
    /// Every server (and sentinel).
    Servers,
    /// The server claiming leadership at that moment.
    Leader,
    /// One node by name.
    Named(String),
}

/// One entry of the fault menu: a kind, the nodes it may hit, and the lengths (or, for a clock
/// jump, the steps) it may take.
#[derive(Clone, Debug, PartialEq)]
pub struct MenuFault {
    /// What it does (for a clock jump the step comes from `values`).
    pub kind: FaultKind,
    /// Who it may hit.
    pub targets: Targets,
    /// Each length it may last (`None`: until the end of the run); for a clock jump, one entry
    /// per step, with the step in `jumps_ms`.
    pub lengths_ns: Vec<Option<Nanos>>,
    /// A clock jump's steps, ms (empty for other kinds).
    pub jumps_ms: Vec<f64>,
    /// As written, for the certificate.
    pub text: String,
}

/// Everything that bounds one search.
#[derive(Clone, Debug)]
pub struct Bounds {
    /// Clients (N).
    pub clients: usize,
    /// Acquisitions per client (A).
    pub acquisitions: u64,
    /// Faults a path may inject (K).
    pub faults: u32,
    /// Whether a path may take each menu entry at most once (two pauses of one entry, on two
    /// clients or one twice, are then out of bounds).
    pub distinct_faults: bool,
    /// Whether the visited set keys states by the client-symmetric fingerprint (states that
    /// differ only by a renaming of interchangeable clients are explored once).
    pub symmetry: bool,
    /// The fault menu.
    pub menu: Vec<MenuFault>,
    /// The latencies a message may take, ns, in the order tried (the first is the default).
    pub delays_ns: Vec<Nanos>,
    /// The delays as written, for the certificate.
    pub delays_text: String,
    /// How many messages of a path may take a delay other than the first (each message's delay
    /// is a choice; this budget keeps their product bounded, as K does for faults).
    pub slow_messages: u32,
    /// What is judged a violation.
    pub property: Property,
    /// The longest path (steps) searched.
    pub max_depth: u32,
    /// The first depth limit of iterative deepening (doubled each round up to `max_depth`;
    /// equal to it: one round, as [`Bounds::with_start_depth`] allows).
    pub start_depth: u32,
    /// At most this many fingerprints in the visited set; past it the search stops, incomplete.
    pub max_visited: usize,
    /// The seed of the random streams the models and the workload still draw from.
    pub seed: u64,
    /// Hold times, ms: with more than one, each grant's hold is chosen from them (`times`); one:
    /// every acquisition's; empty: the workload's own.
    pub holds_ms: Vec<f64>,
    /// Think times, ms, likewise for each think.
    pub thinks_ms: Vec<f64>,
}

/// The bounds as the command line gives them, before they are read against the row.
#[derive(Clone, Debug)]
pub struct BoundWords {
    /// `--clients`.
    pub clients: usize,
    /// `--acquisitions`.
    pub acquisitions: u64,
    /// `--faults` (default: 1 with a menu, else 0).
    pub faults: Option<u32>,
    /// `--distinct-faults` / `[exhaust] distinct_faults`: each menu entry at most once a path.
    pub distinct_faults: bool,
    /// `--symmetry` / `[exhaust] symmetry`: interchangeable clients merged in the visited set.
    pub symmetry: bool,
    /// Each `--fault`.
    pub menu: Vec<String>,
    /// `--delays`.
    pub delays: String,
    /// `--slow-messages`.
    pub slow_messages: u32,
    /// `--property` (default: fenced-stale-write on a fenced row, else overlap).
    pub property: Option<String>,
    /// `--max-depth`.
    pub max_depth: u32,
    /// `--max-states`.
    pub max_states: usize,
    /// `--seed`.
    pub seed: u64,
    /// Where each menu entry was written when it came from the scenario's `[exhaust]` table
    /// (`file:line:col: \`exhaust.menu.0\``), by index; missing or `None`: the command line.
    pub menu_at: Vec<Option<String>>,
    /// Where `delays` was written, when it came from the table.
    pub delays_at: Option<String>,
    /// `--hold-ms` / `[exhaust] hold_ms`.
    pub holds_ms: Vec<f64>,
    /// `--think-ms` / `[exhaust] think_ms`.
    pub thinks_ms: Vec<f64>,
}

/// The first depth limit of iterative deepening.
pub const START_DEPTH: u32 = 64;

/// The most menu entries `--distinct-faults` tracks (one bit each in a path's budget).
pub const MAX_DISTINCT_MENU: usize = 64;

impl Bounds {
    /// These bounds with each menu entry allowed at most once a path (`on`), or as often as K
    /// allows; `Err` for a menu too long to track.
    pub fn with_distinct_faults(mut self, on: bool) -> Result<Bounds, String> {
        if on && self.menu.len() > MAX_DISTINCT_MENU {
            return Err(format!(
                "--distinct-faults: a menu of {} entries; at most {MAX_DISTINCT_MENU} can be told apart",
                self.menu.len()
            ));
        }
        self.distinct_faults = on;
        Ok(self)
    }

    /// These bounds with the first round's depth limit at `depth` (`--start-depth`; `None`: the
    /// default [`START_DEPTH`], or `max_depth` if smaller). At `max_depth` the search is one
    /// round, which saves the shallow rounds when it is expected to end with a certificate (the
    /// limit lowers at each violation, so a counterexample found is still the shortest); `Err`
    /// for 0 or a depth past `max_depth`.
    pub fn with_start_depth(mut self, depth: Option<u32>) -> Result<Bounds, String> {
        self.start_depth = match depth {
            None => START_DEPTH.min(self.max_depth),
            Some(0) => return Err("--start-depth 0: expected at least 1 step".to_string()),
            Some(d) if d > self.max_depth => {
                return Err(format!(
                    "--start-depth {d}: expected at most --max-depth ({}); give both for one round at that depth",
                    self.max_depth
                ))
            }
            Some(d) => d,
        };
        Ok(self)
    }
}

impl BoundWords {
    /// Reads the words against the row's parameters and the network; `Err`: what is wrong, for
    /// the command line's message.
    pub fn resolve(&self, params: &Params, fenced: bool, network: &NetworkSpec) -> Result<Bounds, String> {
        if self.clients == 0 {
            return Err("--clients 0: expected at least 1 client".to_string());
        }
        if self.acquisitions == 0 {
            return Err("--acquisitions 0: expected at least 1 acquisition per client".to_string());
        }
        if self.max_depth == 0 {
            return Err("--max-depth 0: expected at least 1 step".to_string());
        }
        if self.max_states == 0 {
            return Err("--max-states 0: expected room for at least 1 state".to_string());
        }
        // An entry of the scenario's table is named by its place in the file, not as a flag.
        let placed = |at: Option<&String>, flag: &str, e: String| match at {
            Some(at) => format!("{at}: {}", e.strip_prefix(flag).unwrap_or(&e)),
            None => e,
        };
        let menu = self
            .menu
            .iter()
            .enumerate()
            .map(|(i, m)| {
                menu_fault(m, params).map_err(|e| placed(self.menu_at.get(i).and_then(Option::as_ref), "--fault ", e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let faults = self.faults.unwrap_or(if menu.is_empty() { 0 } else { 1 });
        if faults > 0 && menu.is_empty() {
            return Err(format!(
                "--faults {faults}: no fault menu to choose from; give --fault KIND@TARGETS:LENGTHS (e.g. --fault pause@clients:ttl_ms-1,ttl_ms+1)"
            ));
        }
        let property = match &self.property {
            Some(p) => Property::parse(p)?,
            None if fenced => Property::FencedStaleWrite,
            None => Property::Overlap,
        };
        let needs_token = matches!(property, Property::FencedStaleWrite | Property::TokenRegression);
        if needs_token && !fenced {
            return Err(format!(
                "--property {}: this row's grants carry no fencing token (it is not fenced); use overlap or stale-write",
                property.name()
            ));
        }
        Bounds {
            clients: self.clients,
            acquisitions: self.acquisitions,
            faults,
            distinct_faults: false,
            symmetry: self.symmetry,
            menu,
            delays_ns: delays(&self.delays, network, params)
                .map_err(|e| placed(self.delays_at.as_ref(), "--delays ", e))?,
            delays_text: self.delays.clone(),
            slow_messages: self.slow_messages,
            property,
            max_depth: self.max_depth,
            start_depth: START_DEPTH.min(self.max_depth),
            max_visited: self.max_states,
            seed: self.seed,
            holds_ms: self.holds_ms.clone(),
            thinks_ms: self.thinks_ms.clone(),
        }
        .with_distinct_faults(self.distinct_faults)
    }
}

/// A time written against the row: a number of ms, or `KEY`, `KEY+D`, `KEY-D` where `KEY` is a
/// numeric parameter of the row (`ttl_ms-1`: one millisecond under the key's TTL).
pub fn time_ms(text: &str, params: &Params) -> Result<f64, String> {
    let text = text.trim();
    if let Ok(v) = text.replace('_', "").parse::<f64>() {
        return Ok(v);
    }
    let (key, offset) = match text.find(['+', '-']) {
        Some(i) => {
            let d = text[i + 1..]
                .replace('_', "")
                .parse::<f64>()
                .map_err(|_| format!("`{text}`: expected KEY+MS or KEY-MS with MS a number of milliseconds"))?;
            (&text[..i], if text.as_bytes()[i] == b'+' { d } else { -d })
        }
        None => (text, 0.0),
    };
    let base = match params.values.get(key) {
        Some(ParamValue::Num(v)) => *v,
        Some(ParamValue::Int(v)) => *v as f64,
        Some(ParamValue::Dist(d)) if d.min_value() == d.max_value() => d.min_value(),
        Some(other) => return Err(format!("`{text}`: parameter `{key}` is not a plain number ({other:?})")),
        None => {
            let numeric: Vec<&str> = params
                .values
                .iter()
                .filter(|(_, v)| matches!(v, ParamValue::Num(_) | ParamValue::Int(_)))
                .map(|(k, _)| k.as_str())
                .collect();
            return Err(format!(
                "`{text}`: expected a number of milliseconds or KEY±MS with KEY a numeric parameter of this row ({})",
                numeric.join(", ")
            ));
        }
    };
    Ok(base + offset)
}

/// Parses one `--fault` menu entry: `KIND@TARGETS:V,V,…` with KIND one of `pause`, `crash`
/// (process), `crash-machine`, `isolate`, `clock_jump`; TARGETS `clients`, `waiters`, `blocked`, `holders`,
/// `servers`, `leader` or a node name; each V a length (or a clock jump's step) as [`time_ms`] reads it, or `end`
/// (until the end of the run; the default for a crash).
pub fn menu_fault(text: &str, params: &Params) -> Result<MenuFault, String> {
    let bad = |why: String| format!("--fault {text}: {why}");
    let (head, values) = match text.split_once(':') {
        Some((h, v)) => (h, Some(v)),
        None => (text, None),
    };
    let (kind_text, target_text) = head.split_once('@').ok_or_else(|| {
        bad("expected KIND@TARGETS:LENGTHS, e.g. pause@clients:ttl_ms-1,ttl_ms+1 or crash@leader".to_string())
    })?;
    let kind = match kind_text {
        "pause" => FaultKind::Pause,
        "crash" => FaultKind::Crash { mode: CrashKind::Process },
        "crash-machine" => FaultKind::Crash { mode: CrashKind::Machine },
        "isolate" => FaultKind::Isolate,
        "clock_jump" => FaultKind::ClockJump { by_ms: locksim_simulator::dist::Dist::Const(0.0) },
        other => {
            return Err(bad(format!(
                "unknown fault kind `{other}`; valid kinds: pause, crash, crash-machine, isolate, clock_jump"
            )))
        }
    };
    let targets = match target_text {
        "clients" => Targets::Clients,
        "waiters" => Targets::Waiters,
        "blocked" => Targets::Blocked,
        "holders" => Targets::Holders,
        "servers" => Targets::Servers,
        "leader" => Targets::Leader,
        "" => {
            return Err(bad(
                "no targets: expected clients, waiters, blocked, holders, servers, leader or a node name".to_string()
            ))
        }
        name => Targets::Named(name.to_string()),
    };
    let words: Vec<&str> = values.map(|v| v.split(',').map(str::trim).collect()).unwrap_or_default();
    let is_jump = matches!(kind, FaultKind::ClockJump { .. });
    let is_crash = matches!(kind, FaultKind::Crash { .. });
    if words.is_empty() && !is_crash {
        return Err(bad(if is_jump {
            "expected the steps after a colon, e.g. clock_jump@servers:-5000,5000".to_string()
        } else {
            "expected the lengths after a colon, e.g. pause@clients:ttl_ms-1,ttl_ms+1".to_string()
        }));
    }
    let mut lengths_ns = Vec::new();
    let mut jumps_ms = Vec::new();
    for w in if words.is_empty() { vec!["end"] } else { words } {
        if is_jump {
            jumps_ms.push(time_ms(w, params).map_err(bad)?);
            lengths_ns.push(None);
        } else if w == "end" {
            lengths_ns.push(None);
        } else {
            let ms = time_ms(w, params).map_err(bad)?;
            if ms <= 0.0 {
                return Err(bad(format!("a length must be above 0 ms, found {ms} (`{w}`)")));
            }
            lengths_ns.push(Some(ms_to_ns(ms)));
        }
    }
    Ok(MenuFault { kind, targets, lengths_ns, jumps_ms, text: text.to_string() })
}

/// Parses `--delays`: a comma list of `min`, `max` (the network's latency bounds), numbers of ms
/// and `KEY±MS` times of the row. Duplicates are dropped; the first is every message's default.
pub fn delays(text: &str, network: &NetworkSpec, params: &Params) -> Result<Vec<Nanos>, String> {
    let bad = |why: String| format!("--delays {text}: {why}");
    let mut out: Vec<Nanos> = Vec::new();
    for w in text.split(',').map(str::trim) {
        let ms = match w {
            "min" => network.latency_ms.min_value().max(0.0),
            "max" => {
                let m = network.latency_ms.max_value();
                if !m.is_finite() {
                    return Err(bad(format!(
                        "the network's latency {:?} has no largest value; give numbers of ms, or a uniform or constant latency_ms",
                        network.latency_ms
                    )));
                }
                m
            }
            // The words `min` and `max` are valid here too: the message lists them.
            _ => time_ms(w, params).map_err(|e| bad(format!("{e}; or min or max (the network's latency bounds)")))?,
        };
        if ms < 0.0 {
            return Err(bad(format!("a delay must be at least 0 ms, found {ms} (`{w}`)")));
        }
        let ns = ms_to_ns(ms);
        if !out.contains(&ns) {
            out.push(ns);
        }
    }
    if out.is_empty() {
        return Err(bad("expected at least one delay".to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::dist::Dist;

    fn params() -> Params {
        let mut p = Params::default();
        p.values.insert("ttl_ms".into(), ParamValue::Num(10_000.0));
        p.values.insert("client".into(), ParamValue::Str("x".into()));
        p
    }

    #[test]
    fn times_read_numbers_and_parameters() {
        assert_eq!(time_ms("1_500", &params()), Ok(1500.0));
        assert_eq!(time_ms("ttl_ms+1", &params()), Ok(10_001.0));
        assert_eq!(time_ms("ttl_ms-0.5", &params()), Ok(9_999.5));
        assert!(time_ms("client", &params()).unwrap_err().contains("not a plain number"));
        assert!(time_ms("lease_ms", &params()).unwrap_err().contains("ttl_ms"));
    }

    #[test]
    fn a_menu_entry_names_kind_targets_and_lengths() {
        let f = menu_fault("pause@clients:ttl_ms-1,ttl_ms+1", &params()).unwrap();
        assert_eq!(f.kind, FaultKind::Pause);
        assert_eq!(f.targets, Targets::Clients);
        assert_eq!(f.lengths_ns, vec![Some(9_999_000_000), Some(10_001_000_000)]);
        let c = menu_fault("crash@leader", &params()).unwrap();
        assert_eq!(c.lengths_ns, vec![None]);
        assert!(menu_fault("pause@clients", &params()).unwrap_err().contains("lengths"));
        assert!(menu_fault("nap@clients:5", &params()).unwrap_err().contains("valid kinds"));
    }

    #[test]
    fn delays_read_the_network_bounds() {
        let net = NetworkSpec { latency_ms: Dist::Uniform(1.0, 5.0), loss: 0.0, duplicate: 0.0, links: vec![] };
        assert_eq!(delays("min,max,min", &net, &params()), Ok(vec![1_000_000, 5_000_000]));
        let open = NetworkSpec { latency_ms: Dist::Exponential(1.0), ..net };
        assert!(delays("max", &open, &params()).unwrap_err().contains("no largest value"));
    }
}
