//! `[exhaust]`: the bounds `sim exhaust` searches a row within, written in the scenario (the
//! command line's flags override each key): the workload bound (clients, acquisitions, the hold
//! and think times to try), the fault budget K and its menu (each entry at most once a path with
//! `distinct_faults`), the delays, the property, the depth limits (the longest path, the first
//! round's) and the memory limit. `sim run` ignores the table.
//!
//! A menu entry's kind and targets are checked here; its lengths may name the row's parameters
//! (`ttl_ms+1`), which only the search can read against a row: each entry keeps where it was
//! written, so an error found then still names the file, line and column.

use crate::scenario::values::{int_in, number_in};
use crate::scenario::walk::{quote, Node, Res, Source, Tab};
use crate::time::MAX_TIME_MS;

const KEYS: &[&str] = &[
    "clients",
    "acquisitions",
    "faults",
    "distinct_faults",
    "symmetry",
    "menu",
    "delays",
    "slow_messages",
    "hold_ms",
    "think_ms",
    "property",
    "max_depth",
    "start_depth",
    "max_states",
];

/// The fault kinds a menu entry may name.
pub const MENU_KINDS: &[&str] = &["pause", "crash", "crash-machine", "isolate", "clock_jump"];

/// The target groups a menu entry may name (or one node by name).
pub const MENU_TARGETS: &[&str] = &["clients", "waiters", "blocked", "holders", "servers", "leader"];

/// The properties a search may look for.
pub const PROPERTIES: &[&str] = &["overlap", "stale-write", "fenced-stale-write", "token-regression"];

/// A value written in the file with where it was: `file:line:col`, for errors found later.
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    /// As written (a menu entry, or the delays joined with commas).
    pub text: String,
    /// `file:line:col: \`exhaust.menu.0\``, the prefix of a message about it.
    pub at: String,
}

/// The `[exhaust]` table; every key optional (the command line's defaults fill the rest).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExhaustSpec {
    /// Clients (N).
    pub clients: Option<usize>,
    /// Acquisitions per client (A).
    pub acquisitions: Option<u64>,
    /// Faults a path may take from the menu (K).
    pub faults: Option<u32>,
    /// Whether a path may take each menu entry at most once (`--distinct-faults`).
    pub distinct_faults: Option<bool>,
    /// Whether interchangeable clients are merged in the visited set (`--symmetry`).
    pub symmetry: Option<bool>,
    /// The fault menu, `KIND@TARGETS:V,…` each, as `--fault` takes them.
    pub menu: Vec<Located>,
    /// The delays a message may take (`min`, `max`, ms, `KEY±MS`), joined with commas.
    pub delays: Option<Located>,
    /// Messages of a path that may take a delay other than the first.
    pub slow_messages: Option<u32>,
    /// Hold times to search, ms, each in turn (every client the same); empty: the workload's.
    pub hold_ms: Vec<f64>,
    /// Think times to search, ms, likewise.
    pub think_ms: Vec<f64>,
    /// The property, one of [`PROPERTIES`].
    pub property: Option<&'static str>,
    /// The longest path searched, in steps.
    pub max_depth: Option<u32>,
    /// The first round's depth limit, in steps (`--start-depth`; at `max_depth`: one round).
    pub start_depth: Option<u32>,
    /// The visited set's bound, in states.
    pub max_states: Option<usize>,
}

fn located(src: &Source, node: &Node, text: String) -> Located {
    let (line, col) = src.line_col(node.at.start);
    Located { text, at: format!("{}:{line}:{col}: `{}`", src.file, node.path) }
}

/// Reads `[exhaust]`; `None` when the file has no such table.
pub(crate) fn exhaust(src: &Source, root: &Tab) -> Res<Option<ExhaustSpec>> {
    let Some(node) = root.get("exhaust") else {
        return Ok(None);
    };
    let tab = node.as_table(src, &format!("an [exhaust] table with keys {}", KEYS.join(", ")))?;
    tab.check_keys(src, KEYS)?;
    let mut spec = ExhaustSpec::default();
    if let Some(n) = tab.get("clients") {
        spec.clients = Some(int_in(src, n, 1, 1_000)? as usize);
    }
    if let Some(n) = tab.get("acquisitions") {
        spec.acquisitions = Some(int_in(src, n, 1, 1_000_000)? as u64);
    }
    if let Some(n) = tab.get("faults") {
        spec.faults = Some(int_in(src, n, 0, 16)? as u32);
    }
    if let Some(n) = tab.get("distinct_faults") {
        spec.distinct_faults = Some(n.as_bool(src)?);
    }
    if let Some(n) = tab.get("symmetry") {
        spec.symmetry = Some(n.as_bool(src)?);
    }
    if let Some(n) = tab.get("menu") {
        for item in n.as_array(src, "an array of menu entries (strings such as \"pause@clients:ttl_ms-1,ttl_ms+1\")")? {
            let text = item.as_str(src, "a menu entry KIND@TARGETS:V,V,... (e.g. \"crash@leader:1000\")")?;
            check_menu_entry(src, &item, text)?;
            spec.menu.push(located(src, &item, text.to_string()));
        }
    }
    if let Some(n) = tab.get("delays") {
        let expected = "a delay: \"min\", \"max\", a number of ms or \"KEY+MS\" / \"KEY-MS\"";
        let items =
            n.as_array(src, "an array of delays (e.g. [\"min\", \"max\"]); the first is every message's default")?;
        if items.is_empty() {
            return Err(n.err(src, "expected at least one delay, found an empty array"));
        }
        let mut words = Vec::new();
        for item in &items {
            if item.is_number() {
                words.push(crate::scenario::show_number(number_in(src, item, 0.0, MAX_TIME_MS)?));
            } else {
                let w = item.as_str(src, expected)?;
                if w.trim().is_empty() || w.contains(',') {
                    return Err(item.err(src, format!("expected {expected}, found {}", quote(w))));
                }
                words.push(w.trim().to_string());
            }
        }
        spec.delays = Some(located(src, n, words.join(",")));
    }
    if let Some(n) = tab.get("slow_messages") {
        spec.slow_messages = Some(int_in(src, n, 0, 1_000)? as u32);
    }
    spec.hold_ms = times(src, tab.get("hold_ms"))?;
    spec.think_ms = times(src, tab.get("think_ms"))?;
    if let Some(n) = tab.get("property") {
        let valid = PROPERTIES.join(", ");
        let p = n.as_str(src, &format!("a property ({valid})"))?;
        let Some(known) = PROPERTIES.iter().find(|k| **k == p) else {
            return Err(n.err(src, format!("unknown property {}; valid properties: {valid}", quote(p))));
        };
        spec.property = Some(known);
    }
    if let Some(n) = tab.get("max_depth") {
        spec.max_depth = Some(int_in(src, n, 1, 100_000_000)? as u32);
    }
    if let Some(n) = tab.get("start_depth") {
        let most = spec.max_depth.unwrap_or(100_000_000);
        spec.start_depth = Some(int_in(src, n, 1, i64::from(most))? as u32);
    }
    if let Some(n) = tab.get("max_states") {
        spec.max_states = Some(int_in(src, n, 1, 1_000_000_000)? as usize);
    }
    Ok(Some(spec))
}

/// A non-empty array of times in ms (the hold or think times to search), each once.
fn times(src: &Source, node: Option<&Node>) -> Res<Vec<f64>> {
    let Some(n) = node else { return Ok(Vec::new()) };
    let items = n.as_array(src, "an array of times in ms (each searched in turn)")?;
    if items.is_empty() {
        return Err(n.err(src, "expected at least one time in ms, found an empty array"));
    }
    let mut out: Vec<f64> = Vec::new();
    for item in &items {
        let v = number_in(src, item, 0.0, MAX_TIME_MS)?;
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

/// The kind and targets of a menu entry (its lengths are read against the row by the search).
fn check_menu_entry(src: &Source, node: &Node, text: &str) -> Res<()> {
    let head = text.split_once(':').map_or(text, |(h, _)| h);
    let Some((kind, targets)) = head.split_once('@') else {
        return Err(node.err(
            src,
            format!(
                "expected a menu entry KIND@TARGETS:V,V,... (e.g. \"pause@clients:ttl_ms-1,ttl_ms+1\"), found {}",
                quote(text)
            ),
        ));
    };
    if !MENU_KINDS.contains(&kind) {
        return Err(node.err(
            src,
            format!("unknown fault kind {} in {}; valid kinds: {}", quote(kind), quote(text), MENU_KINDS.join(", ")),
        ));
    }
    if targets.trim().is_empty() {
        return Err(node.err(
            src,
            format!("no targets in {}; valid targets: {}, or a node name", quote(text), MENU_TARGETS.join(", ")),
        ));
    }
    Ok(())
}
