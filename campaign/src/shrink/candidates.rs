//! The edits a shrink tries, one family at a time, in a fixed order: fewer faults, fewer clients,
//! a shorter run, faults earlier and shorter (and simpler: no recurrence, no probability, fewer
//! targets), distributions replaced by constants, fewer servers where the model has a count,
//! model parameters back to their defaults, workload keys back to theirs, `[network]` and
//! `[clocks]` entries removed, then rounder constants. Each family looks at the current document
//! and lists its candidates, the most drastic first; each candidate says what it changed. No
//! family touches the row's `client` (the library preset): the failure of another library is
//! another failure, so a shrink keeps the one it was given (the trial also refuses any candidate
//! whose row ends up on another preset, whichever key did it). Nor does any family touch a key
//! whose line carries a `# … shrink: keep` comment ([`doc::KEEP_MARK`]): the setting an incident
//! is about, which a shrink would otherwise trade for a cheaper failure.

use locksim_simulator::model::{ParamKind, ParamSpec};
use toml_edit::{DocumentMut, Item, Table, Value};

use crate::shrink::doc::{self, dotted, number, number_value, path, Path, Seg};
use crate::shrink::numbers::{ceil_sig, round_sig, rounder, smaller, smaller_int};

/// One edited document, and what the edit did in words (`workload.clients 3 → 2`).
pub struct Candidate {
    /// What changed.
    pub what: String,
    /// The edited document.
    pub doc: DocumentMut,
}

/// What the families need besides the document.
pub struct Context<'a> {
    /// Where the row's parameters are written: `models.LABEL` or `variants.0`.
    pub row_table: Path,
    /// The row's model's parameters (for defaults and server counts).
    pub params: &'a [ParamSpec],
    /// When the current witness seed first showed the violation (ms of true time), if known.
    pub witness_at_ms: Option<f64>,
}

/// A family of edits.
pub type Family = fn(&DocumentMut, &Context) -> Vec<Candidate>;

/// The family that must remove a node to count (see [`FAMILIES`]).
pub const FEWER_SERVERS: &str = "fewer servers";

/// Every family, in the order a shrink pass tries them.
pub const FAMILIES: &[(&str, Family)] = &[
    ("fewer faults", fewer_faults),
    ("fewer clients", fewer_clients),
    ("shorter run", shorter_run),
    ("faults earlier, shorter, simpler", simpler_faults),
    ("distributions to constants", constants),
    (FEWER_SERVERS, fewer_servers),
    ("parameters to defaults", params_to_defaults),
    ("workload keys to defaults", workload_to_defaults),
    ("network and clocks entries removed", network_and_clocks),
    ("rounder constants", rounder_constants),
];

/// Row keys a shrink never removes: the row's name and model, and `client`, the library preset
/// (its default is another library, which fails, if at all, by another mechanism).
const KEPT_ROW_KEYS: &[&str] = &["name", "model", "client"];

/// Model parameters that count servers of some kind, which a shrink may lower.
const SERVER_COUNTS: &[&str] = &["servers", "masters", "replicas", "sentinels"];

/// Workload keys whose default is the simpler setting (no timeout, one lock, no reads or
/// re-entry, no check-to-write gap, the resource on, clients that loop).
const WORKLOAD_DEFAULTABLE: &[&str] = &[
    "locks",
    "acquire_timeout_ms",
    "read_fraction",
    "reentry",
    "check_to_write_ms",
    "resource",
    "acquisitions_per_client",
];

/// Top-level keys whose numbers a shrink may change.
const NUMERIC_ROOTS: &[&str] = &["duration_ms", "workload", "network", "clocks", "faults", "models", "variants"];

const DIST_FORMS: &[&str] = &["uniform", "exponential", "lognormal", "normal", "choice"];

fn edited(d: &DocumentMut, what: String, edit: impl FnOnce(&mut DocumentMut) -> bool) -> Option<Candidate> {
    let mut doc = d.clone();
    // An edit that removes a kept line (its key, its link, its table) is no candidate.
    let marks = |doc: &DocumentMut| doc.to_string().matches(doc::KEEP_MARK).count();
    (edit(&mut doc) && marks(&doc) == marks(d)).then_some(Candidate { what, doc })
}

fn show(x: f64) -> String {
    number_value(x).to_string().trim().to_string()
}

fn fewer_faults(d: &DocumentMut, _: &Context) -> Vec<Candidate> {
    (0..doc::len(d, &path("faults")))
        .filter_map(|i| {
            let p = path(&format!("faults.{i}"));
            let kind = doc::value(d, &path(&format!("faults.{i}.kind")))
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            edited(d, format!("removed fault {i} ({kind})"), |doc| doc::remove(doc, &p))
        })
        .collect()
}

fn fewer_clients(d: &DocumentMut, _: &Context) -> Vec<Candidate> {
    let p = path("workload.clients");
    let Some(n) = doc::value(d, &p).map_or(Some(10.0), |v| number(&v)) else { return Vec::new() };
    smaller_int(n as i64, 1)
        .into_iter()
        .filter_map(|c| {
            edited(d, format!("workload.clients {n} → {c}"), |doc| {
                if doc::value(doc, &p).is_some() {
                    return doc::set(doc, &p, Value::from(c));
                }
                if doc.get("workload").is_none() {
                    doc.insert("workload", Item::Table(Table::new()));
                }
                doc::table_mut(doc, &path("workload")).map(|t| t.insert("clients", toml_edit::value(c))).is_some()
            })
        })
        .collect()
}

fn shorter_run(d: &DocumentMut, cx: &Context) -> Vec<Candidate> {
    let p = path("duration_ms");
    let Some(v) = doc::value(d, &p).and_then(|v| number(&v)) else { return Vec::new() };
    let mut values = smaller(v, 1.0, false);
    // Just past the witness's violation: most runs need nothing after it.
    if let Some(at) = cx.witness_at_ms {
        let just_after = ceil_sig(at + 1.0, 2);
        if just_after < v {
            values.insert(0, just_after);
        }
    }
    let mut seen = Vec::new();
    values
        .into_iter()
        .filter(|x| {
            let fresh = *x > 0.0 && !seen.contains(x);
            seen.push(*x);
            fresh
        })
        .filter_map(|x| {
            edited(d, format!("duration_ms {} → {}", show(v), show(x)), |doc| doc::set(doc, &p, number_value(x)))
        })
        .collect()
}

fn simpler_faults(d: &DocumentMut, _: &Context) -> Vec<Candidate> {
    let mut out = Vec::new();
    for i in 0..doc::len(d, &path("faults")) {
        let at = path(&format!("faults.{i}.at_ms"));
        if let Some(v) = doc::value(d, &at).and_then(|v| number(&v)).filter(|_| !doc::kept(d, &at)) {
            for x in smaller(v, 0.0, true) {
                out.extend(edited(d, format!("faults.{i}.at_ms {} → {} (earlier)", show(v), show(x)), |doc| {
                    doc::set(doc, &at, number_value(x))
                }));
            }
        }
        let len = path(&format!("faults.{i}.duration_ms"));
        if let Some(v) = doc::value(d, &len).and_then(|v| number(&v)).filter(|_| !doc::kept(d, &len)) {
            for x in smaller(v, 1.0, true) {
                out.extend(edited(d, format!("faults.{i}.duration_ms {} → {} (shorter)", show(v), show(x)), |doc| {
                    doc::set(doc, &len, number_value(x))
                }));
            }
        }
        for key in ["every_ms", "probability"] {
            let p = path(&format!("faults.{i}.{key}"));
            if doc::value(d, &p).is_some() {
                out.extend(edited(d, format!("removed faults.{i}.{key}"), |doc| doc::remove(doc, &p)));
            }
        }
        let target = path(&format!("faults.{i}.target"));
        let targets = doc::len(d, &target);
        if targets > 1 {
            for j in 0..targets {
                let mut p = target.clone();
                p.push(Seg::Idx(j));
                let name = doc::value(d, &p).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
                out.extend(edited(d, format!("removed target {name} of fault {i}"), |doc| doc::remove(doc, &p)));
            }
        }
    }
    out
}

/// Every number and distribution under the numeric roots, with its path (numbers inside a
/// distribution are not listed on their own).
fn sites(d: &DocumentMut) -> Vec<(Path, Value)> {
    let mut out = Vec::new();
    for root in NUMERIC_ROOTS {
        if let Some(item) = d.get(root) {
            let mut p = vec![Seg::Key(root.to_string())];
            item_sites(item, &mut p, &mut out);
        }
    }
    out.retain(|(p, _)| !doc::kept(d, p));
    out
}

fn item_sites(item: &Item, p: &mut Path, out: &mut Vec<(Path, Value)>) {
    match item {
        Item::Table(t) => {
            for (k, i) in t.iter() {
                p.push(Seg::Key(k.to_string()));
                item_sites(i, p, out);
                p.pop();
            }
        }
        Item::ArrayOfTables(a) => {
            for (n, t) in a.iter().enumerate() {
                p.push(Seg::Idx(n));
                for (k, i) in t.iter() {
                    p.push(Seg::Key(k.to_string()));
                    item_sites(i, p, out);
                    p.pop();
                }
                p.pop();
            }
        }
        Item::Value(v) => value_sites(v, p, out),
        Item::None => {}
    }
}

fn value_sites(v: &Value, p: &mut Path, out: &mut Vec<(Path, Value)>) {
    match v {
        Value::Integer(_) | Value::Float(_) => out.push((p.clone(), v.clone())),
        Value::InlineTable(t) if is_dist(v) => {
            let _ = t;
            out.push((p.clone(), v.clone()));
        }
        Value::InlineTable(t) => {
            for (k, i) in t.iter() {
                p.push(Seg::Key(k.to_string()));
                value_sites(i, p, out);
                p.pop();
            }
        }
        Value::Array(a) => {
            for (n, i) in a.iter().enumerate() {
                p.push(Seg::Idx(n));
                value_sites(i, p, out);
                p.pop();
            }
        }
        _ => {}
    }
}

fn is_dist(v: &Value) -> bool {
    v.as_inline_table().is_some_and(|t| t.len() == 1 && t.iter().all(|(k, _)| DIST_FORMS.contains(&k)))
}

/// The constants a distribution could be replaced by, lowest-looking first.
fn dist_constants(v: &Value) -> Vec<f64> {
    let Some(t) = v.as_inline_table() else { return Vec::new() };
    let Some((form, inner)) = t.iter().next() else { return Vec::new() };
    let nums =
        |v: &Value| -> Vec<f64> { v.as_array().map(|a| a.iter().filter_map(number).collect()).unwrap_or_default() };
    let field = |v: &Value, k: &str| v.as_inline_table().and_then(|t| t.get(k)).and_then(number);
    let mut out = match form {
        "uniform" => {
            let ab = nums(inner);
            match ab[..] {
                [a, b] => vec![a, round_sig((a + b) / 2.0, 2), b],
                _ => Vec::new(),
            }
        }
        "exponential" => number(inner).into_iter().collect(),
        "lognormal" => field(inner, "median").into_iter().collect(),
        "normal" => field(inner, "mean").into_iter().collect(),
        "choice" => nums(inner),
        _ => Vec::new(),
    };
    let mut seen = Vec::new();
    out.retain(|x| {
        let fresh = !seen.contains(x);
        seen.push(*x);
        fresh
    });
    out
}

fn constants(d: &DocumentMut, _: &Context) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (p, v) in sites(d).into_iter().filter(|(_, v)| is_dist(v)) {
        let written = v.to_string().trim().to_string();
        for c in dist_constants(&v) {
            out.extend(edited(d, format!("{} {written} → {} (a constant)", dotted(&p), show(c)), |doc| {
                doc::set(doc, &p, number_value(c))
            }));
        }
    }
    out
}

fn int_default(spec: &ParamSpec) -> Option<i64> {
    spec.default.trim().parse().ok()
}

fn fewer_servers(d: &DocumentMut, cx: &Context) -> Vec<Candidate> {
    let mut out = Vec::new();
    for spec in cx.params.iter().filter(|s| SERVER_COUNTS.contains(&s.name)) {
        let ParamKind::Int { min, .. } = spec.kind else { continue };
        let mut p = cx.row_table.clone();
        p.push(Seg::Key(spec.name.to_string()));
        if doc::kept(d, &p) {
            continue;
        }
        let written = doc::value(d, &p).and_then(|v| number(&v)).map(|n| n as i64);
        let Some(n) = written.or_else(|| int_default(spec)) else { continue };
        for c in smaller_int(n, min) {
            out.extend(edited(d, format!("{} {n} → {c}", dotted(&p)), |doc| {
                set_or_insert(doc, &cx.row_table, spec.name, c)
            }));
        }
    }
    out
}

/// Sets `key` in the row's table, creating `[models.LABEL]` if the file had none.
fn set_or_insert(doc: &mut DocumentMut, table: &[Seg], key: &str, v: i64) -> bool {
    if doc::table_mut(doc, table).is_none() {
        let [Seg::Key(models), Seg::Key(label)] = table else { return false };
        if doc.get(models).is_none() {
            let mut t = Table::new();
            t.set_implicit(true);
            doc.insert(models, Item::Table(t));
        }
        let Some(m) = doc::table_mut(doc, &table[..1]) else { return false };
        m.insert(label, Item::Table(Table::new()));
    }
    doc::table_mut(doc, table).map(|t| t.insert(key, toml_edit::value(v))).is_some()
}

fn params_to_defaults(d: &DocumentMut, cx: &Context) -> Vec<Candidate> {
    doc::keys(d, &cx.row_table)
        .into_iter()
        .filter(|k| !KEPT_ROW_KEYS.contains(&k.as_str()))
        .filter_map(|k| {
            let mut p = cx.row_table.clone();
            p.push(Seg::Key(k.clone()));
            if doc::kept(d, &p) {
                return None;
            }
            edited(d, format!("{} back to its default", dotted(&p)), |doc| {
                let removed = doc::remove(doc, &p);
                // An emptied [models.LABEL] says nothing: drop it, and an emptied [models] too.
                if cx.row_table.first() == Some(&Seg::Key("models".into())) && doc::keys(doc, &cx.row_table).is_empty()
                {
                    doc::remove(doc, &cx.row_table);
                    if doc::keys(doc, &path("models")).is_empty() {
                        doc.remove("models");
                    }
                }
                removed
            })
        })
        .collect()
}

fn workload_to_defaults(d: &DocumentMut, _: &Context) -> Vec<Candidate> {
    doc::keys(d, &path("workload"))
        .into_iter()
        .filter(|k| WORKLOAD_DEFAULTABLE.contains(&k.as_str()))
        .filter_map(|k| {
            let p = path(&format!("workload.{k}"));
            if doc::kept(d, &p) {
                return None;
            }
            edited(d, format!("workload.{k} back to its default"), |doc| doc::remove(doc, &p))
        })
        .collect()
}

fn network_and_clocks(d: &DocumentMut, _: &Context) -> Vec<Candidate> {
    let mut out = Vec::new();
    for table in ["network", "clocks"] {
        if d.get(table).is_some() {
            out.extend(edited(d, format!("removed [{table}]"), |doc| doc.remove(table).is_some()));
        }
    }
    for i in 0..doc::len(d, &path("network.links")) {
        let p = path(&format!("network.links.{i}"));
        out.extend(edited(d, format!("removed network link {i}"), |doc| doc::remove(doc, &p)));
    }
    for table in ["network", "clocks"] {
        for k in doc::keys(d, &path(table)).into_iter().filter(|k| k != "links") {
            let p = path(&format!("{table}.{k}"));
            out.extend(edited(d, format!("removed {table}.{k}"), |doc| doc::remove(doc, &p)));
        }
    }
    out
}

fn rounder_constants(d: &DocumentMut, _: &Context) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (p, v) in sites(d) {
        let Some(x) = number(&v) else { continue };
        for r in rounder(x) {
            out.extend(edited(d, format!("{} {} → {} (rounder)", dotted(&p), show(x), show(r)), |doc| {
                doc::set(doc, &p, number_value(r))
            }));
        }
    }
    out
}
