//! Setting a swept value in the scenario file, and building the scenario of one sweep point.
//!
//! A key path addresses the TOML document as it is written: table keys by name, arrays (inline
//! arrays and `[[faults]]` / `[[variants]]` / `[[network.links]]` blocks) by index from 0, so
//! `faults.0.duration_ms` is the `duration_ms` of the first `[[faults]]` block and
//! `workload.hold_ms.uniform.1` the upper end of a uniform distribution. A key missing from an
//! existing table is added (a model parameter left at its default, a fault without
//! `duration_ms`), and missing tables are created (`[models.redis]`); a missing array element is
//! an error. Whether the key means anything, and whether the value is in range, is the scenario
//! parser's call: the edited document is written back to text and parsed like any file, so a
//! sweep accepts exactly what a hand-edited file would. The parser's errors are reported against
//! the original file and the `--param` (the generated text's line numbers would mislead); their
//! key paths count array elements from 0 too, so they name the `--param` keys as given.

use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::{parse_str, Scenario, ScenarioError};
use toml_edit::{DocumentMut, InlineTable, Item, Table, Value};

use crate::sweep::values::{SweepParam, SweepValue};

/// Keys a sweep refuses before trying them, and why.
pub fn refused(key: &str) -> Option<&'static str> {
    match key.split('.').next().unwrap_or("") {
        "seeds" => Some("the seeds are the same at every point; choose them with --seeds N or --seeds A..B"),
        "expect" => Some("[expect] blocks are not judged in a sweep"),
        _ => None,
    }
}

/// Sets `value` at the dotted `key` in `doc` (see the module documentation).
pub fn set(doc: &mut DocumentMut, key: &str, value: Value) -> Result<(), String> {
    let segs: Vec<&str> = key.split('.').collect();
    in_table(doc.as_table_mut(), &segs, 0, value)
}

fn path(segs: &[&str], upto: usize) -> String {
    segs[..=upto.min(segs.len() - 1)].join(".")
}

fn is_index(seg: &str) -> bool {
    !seg.is_empty() && seg.chars().all(|c| c.is_ascii_digit())
}

/// The element index `segs[i]` of an array of `len` elements at `segs[..i]`.
fn index(segs: &[&str], i: usize, len: usize, blocks: bool) -> Result<usize, String> {
    let array = path(segs, i - 1);
    let what = if blocks {
        format!("the file has {len} [[{array}]] block{}", if len == 1 { "" } else { "s" })
    } else {
        format!("`{array}` has {len} element{}", if len == 1 { "" } else { "s" })
    };
    let range = match len {
        0 => String::new(),
        1 => format!(", {array}.0 only"),
        _ => format!(", {array}.0 to {array}.{}", len - 1),
    };
    let Ok(idx) = segs[i].parse::<usize>() else {
        return Err(format!(
            "`{array}` is an array, so the next part of the key must be an index counting from 0, not `{}`; {what}{range}",
            segs[i]
        ));
    };
    if idx >= len {
        return Err(format!("`{}` does not exist: {what}{range} (indexes count from 0)", path(segs, i)));
    }
    Ok(idx)
}

/// Replaces a value, keeping the spaces and comment around it.
fn replace_value(old: &mut Value, new: Value) {
    let decor = old.decor().clone();
    *old = new;
    *old.decor_mut() = decor;
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("the string \"{}\"", s.value()),
        Value::Integer(i) => format!("the integer {}", i.value()),
        Value::Float(f) => format!("the number {}", f.value()),
        Value::Boolean(b) => format!("the boolean {}", b.value()),
        Value::Datetime(d) => format!("the date-time {}", d.value()),
        Value::Array(_) => "an array".to_string(),
        Value::InlineTable(_) => "a table".to_string(),
    }
}

fn in_table(t: &mut Table, segs: &[&str], i: usize, value: Value) -> Result<(), String> {
    let k = segs[i];
    let last = i + 1 == segs.len();
    if !t.contains_key(k) {
        if last {
            t.insert(k, Item::Value(value));
            return Ok(());
        }
        if is_index(segs[i + 1]) {
            return Err(format!("`{}` is not in the file, so `{}` does not exist", path(segs, i), path(segs, i + 1)));
        }
        let mut new = Table::new();
        new.set_implicit(true);
        new.set_dotted(t.is_dotted());
        t.insert(k, Item::Table(new));
    }
    let item = t.get_mut(k).expect("present or just inserted");
    in_item(item, segs, i + 1, value)
}

fn in_item(item: &mut Item, segs: &[&str], i: usize, value: Value) -> Result<(), String> {
    if i == segs.len() {
        match item {
            Item::Value(old) => replace_value(old, value),
            Item::ArrayOfTables(_) => {
                return Err(format!(
                    "`{}` is the list of [[{0}]] blocks, not one value; name a key inside one, e.g. {0}.0.KEY",
                    path(segs, i - 1)
                ))
            }
            other => *other = Item::Value(value),
        }
        return Ok(());
    }
    match item {
        Item::Table(t) => in_table(t, segs, i, value),
        Item::ArrayOfTables(a) => {
            let idx = index(segs, i, a.len(), true)?;
            if i + 1 == segs.len() {
                return Err(format!(
                    "`{}` is a whole [[{}]] block, not one value; name one of its keys, e.g. {0}.KEY",
                    path(segs, i),
                    path(segs, i - 1)
                ));
            }
            in_table(a.get_mut(idx).expect("index checked"), segs, i + 1, value)
        }
        Item::Value(v) => in_value(v, segs, i, value),
        Item::None => Err(format!("`{}` has no value", path(segs, i - 1))),
    }
}

fn in_value(v: &mut Value, segs: &[&str], i: usize, value: Value) -> Result<(), String> {
    if i == segs.len() {
        replace_value(v, value);
        return Ok(());
    }
    let here = describe(v);
    match v {
        Value::InlineTable(t) => {
            let k = segs[i];
            if t.get(k).is_none() {
                if i + 1 == segs.len() {
                    t.insert(k, value);
                    return Ok(());
                }
                if is_index(segs[i + 1]) {
                    return Err(format!(
                        "`{}` is not in the file, so `{}` does not exist",
                        path(segs, i),
                        path(segs, i + 1)
                    ));
                }
                t.insert(k, Value::InlineTable(InlineTable::new()));
            }
            in_value(t.get_mut(k).expect("present or just inserted"), segs, i + 1, value)
        }
        Value::Array(a) => {
            let idx = index(segs, i, a.len(), false)?;
            in_value(a.get_mut(idx).expect("index checked"), segs, i + 1, value)
        }
        _ => Err(format!(
            "`{}` is {here}, not a table or an array, so `{}` does not exist",
            path(segs, i - 1),
            path(segs, i)
        )),
    }
}

/// One point of a sweep: the scenario with every parameter set to its value, and the text it was
/// parsed from. `file` is the scenario file as the user named it (it stays the scenario's
/// `file`, so results name it).
pub fn point_scenario(
    file: &str,
    base: &DocumentMut,
    params: &[SweepParam],
    values: &[SweepValue],
    models: &[&'static dyn DynModel],
) -> Result<(Scenario, String), String> {
    let mut doc = base.clone();
    for (p, v) in params.iter().zip(values) {
        set(&mut doc, &p.key, v.to_toml()).map_err(|why| format!("--param {}: {why}", p.text))?;
    }
    let text = doc.to_string();
    let scenario = parse_str(file, &text, models).map_err(|e| parse_error(file, params, values, &e))?;
    Ok((scenario, text))
}

/// One point of a sweep, ready to run.
pub struct Point {
    /// The parameters' values, in `--param` order.
    pub values: Vec<SweepValue>,
    /// The scenario with every parameter set to its value.
    pub scenario: Scenario,
    /// The edited scenario text it was parsed from.
    pub text: String,
}

/// Every point of `points`, in order, with its scenario: the scenario file's `text` edited as
/// TOML (see [`point_scenario`]). `file` is the scenario file as the user named it. Fails on the
/// first point the parser refuses.
pub fn point_scenarios(
    file: &str,
    text: &str,
    params: &[SweepParam],
    points: &[Vec<SweepValue>],
    models: &[&'static dyn DynModel],
) -> Result<Vec<Point>, String> {
    let doc: DocumentMut = text.parse().map_err(|e| format!("{file}: cannot be edited as TOML: {e}"))?;
    points
        .iter()
        .map(|values| {
            let (scenario, text) = point_scenario(file, &doc, params, values, models)?;
            Ok(Point { values: values.clone(), scenario, text })
        })
        .collect()
}

/// A parser error on the edited text, told against the original file and the `--param`s.
fn parse_error(file: &str, params: &[SweepParam], values: &[SweepValue], e: &ScenarioError) -> String {
    let key = e.key.as_deref();
    // The --param the error is about: the one whose key is (a prefix of) the error's key, or the
    // other way round (an error about a whole table the key created); else all of them.
    let about = |p: &&SweepParam| {
        key.is_some_and(|k| k == p.key || k.starts_with(&format!("{}.", p.key)) || p.key.starts_with(&format!("{k}.")))
    };
    let named: Vec<&SweepParam> = match params.iter().find(about) {
        Some(p) => vec![p],
        None => params.iter().collect(),
    };
    let head: Vec<String> = named.iter().map(|p| format!("--param {}", p.text)).collect();
    let with: Vec<String> = params.iter().zip(values).map(|(p, v)| format!("--param {}={v}", p.key)).collect();
    let key = key.map(|k| format!("`{k}`: ")).unwrap_or_default();
    format!("{}: in {file} with {}: {key}{}", head.join(" "), with.join(" "), e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"name = "t"
duration_ms = 2000
algorithms = ["redlock"]

[models.redlock]
ttl_ms = 500 # short

[workload]
clients = 3
hold_ms = { uniform = [5, 50] }

[[faults]]
kind = "pause"
target = "holder"
at_ms = 100

[[faults]]
kind = "crash"
target = "server-0"
at_ms = 200
duration_ms = 50
"#;

    fn doc() -> DocumentMut {
        FILE.parse().unwrap()
    }

    fn set_to(key: &str, v: Value) -> Result<toml_edit::ImDocument<String>, String> {
        let mut d = doc();
        set(&mut d, key, v)?;
        Ok(toml_edit::ImDocument::parse(d.to_string()).expect("still TOML"))
    }

    #[test]
    fn sets_existing_values_keeping_comments() {
        let mut d = doc();
        set(&mut d, "models.redlock.ttl_ms", Value::from(900)).unwrap();
        assert!(d.to_string().contains("ttl_ms = 900 # short"), "{d}");
        set(&mut d, "duration_ms", Value::from(1500.5)).unwrap();
        assert_eq!(d["duration_ms"].as_float(), Some(1500.5));
        set(&mut d, "workload.clients", Value::from(7)).unwrap();
        assert_eq!(d["workload"]["clients"].as_integer(), Some(7));
    }

    #[test]
    fn indexes_count_from_zero_into_blocks_and_arrays() {
        let d = set_to("faults.1.duration_ms", Value::from(75)).unwrap();
        assert_eq!(d["faults"][1]["duration_ms"].as_integer(), Some(75));
        // Added where absent.
        let d = set_to("faults.0.duration_ms", Value::from(60)).unwrap();
        assert_eq!(d["faults"][0]["duration_ms"].as_integer(), Some(60));
        assert_eq!(d["faults"][1]["duration_ms"].as_integer(), Some(50));
        // Into an inline distribution.
        let d = set_to("workload.hold_ms.uniform.1", Value::from(80)).unwrap();
        assert_eq!(d["workload"]["hold_ms"]["uniform"][1].as_integer(), Some(80));
        assert_eq!(d["workload"]["hold_ms"]["uniform"][0].as_integer(), Some(5));
    }

    #[test]
    fn creates_missing_keys_and_tables() {
        let d = set_to("models.redlock.retries", Value::from(1)).unwrap();
        assert_eq!(d["models"]["redlock"]["retries"].as_integer(), Some(1));
        assert_eq!(d["models"]["redlock"]["ttl_ms"].as_integer(), Some(500));
        let d = set_to("models.redis.ttl_ms", Value::from(1)).unwrap();
        assert_eq!(d["models"]["redis"]["ttl_ms"].as_integer(), Some(1));
        let d = set_to("clocks.drift_ppm", Value::from(100)).unwrap();
        assert_eq!(d["clocks"]["drift_ppm"].as_integer(), Some(100));
        // Unknown names are created too: the parser then refuses them with its list of valid keys.
        let d = set_to("modles.redis.x", Value::from(1)).unwrap();
        assert_eq!(d["modles"]["redis"]["x"].as_integer(), Some(1));
    }

    #[test]
    fn paths_that_cannot_exist_are_errors() {
        let e = set_to("faults.7.duration_ms", Value::from(1)).unwrap_err();
        assert!(
            e.contains("`faults.7` does not exist") && e.contains("2 [[faults]] blocks, faults.0 to faults.1"),
            "{e}"
        );
        let e = set_to("faults.x.duration_ms", Value::from(1)).unwrap_err();
        assert!(e.contains("must be an index"), "{e}");
        let e = set_to("variants.0.ttl_ms", Value::from(1)).unwrap_err();
        assert!(e.contains("`variants` is not in the file"), "{e}");
        let e = set_to("workload.clients.x", Value::from(1)).unwrap_err();
        assert!(e.contains("`workload.clients` is the integer 3"), "{e}");
        let e = set_to("workload.hold_ms.uniform.2", Value::from(1)).unwrap_err();
        assert!(e.contains("has 2 elements"), "{e}");
        let e = set_to("faults.0", Value::from(1)).unwrap_err();
        assert!(e.contains("whole [[faults]] block"), "{e}");
        let e = set_to("faults", Value::from(1)).unwrap_err();
        assert!(e.contains("list of [[faults]] blocks"), "{e}");
    }

    #[test]
    fn refused_keys() {
        assert!(refused("seeds").unwrap().contains("--seeds"));
        assert!(refused("expect.redis.overlap").unwrap().contains("not judged"));
        assert!(refused("workload.clients").is_none());
    }
}
