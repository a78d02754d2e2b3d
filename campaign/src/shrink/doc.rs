//! Addressing the scenario's TOML document by path (`faults`, 0, `at_ms`), for the edits a shrink
//! tries: read a value, replace it (keeping its spaces and comment), remove a key or an array
//! element, list the elements of a `[[block]]` array whether written as blocks or inline. Works on
//! `toml_edit`'s document, so whatever a shrink does not touch keeps the user's layout.

use toml_edit::{DocumentMut, Item, Table, TableLike, Value};

/// One step of a path: a key of a table, or an index into an array.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Seg {
    /// A table key.
    Key(String),
    /// An array index, from 0.
    Idx(usize),
}

/// A path from the document's root.
pub type Path = Vec<Seg>;

/// Builds a path from keys and indexes written as text (`"faults.0.at_ms"`).
pub fn path(dotted: &str) -> Path {
    dotted.split('.').map(|s| s.parse::<usize>().map(Seg::Idx).unwrap_or_else(|_| Seg::Key(s.to_string()))).collect()
}

/// The path as the format's dotted key (`faults.0.at_ms`), as errors and sweeps write it.
pub fn dotted(p: &[Seg]) -> String {
    p.iter()
        .map(|s| match s {
            Seg::Key(k) => k.clone(),
            Seg::Idx(i) => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

enum Place<'a> {
    Item(&'a mut Item),
    Table(&'a mut Table),
    Value(&'a mut Value),
}

fn step<'a>(place: Place<'a>, seg: &Seg) -> Option<Place<'a>> {
    match (place, seg) {
        (Place::Item(Item::Table(t)), s) => step(Place::Table(t), s),
        (Place::Item(Item::Value(v)), s) => step(Place::Value(v), s),
        (Place::Item(Item::ArrayOfTables(a)), Seg::Idx(i)) => a.get_mut(*i).map(Place::Table),
        (Place::Table(t), Seg::Key(k)) => t.get_mut(k).map(Place::Item),
        (Place::Value(Value::InlineTable(t)), Seg::Key(k)) => t.get_mut(k).map(Place::Value),
        (Place::Value(Value::Array(a)), Seg::Idx(i)) => a.get_mut(*i).map(Place::Value),
        _ => None,
    }
}

fn walk<'a>(doc: &'a mut DocumentMut, p: &[Seg]) -> Option<Place<'a>> {
    p.iter().try_fold(Place::Table(doc.as_table_mut()), step)
}

/// A copy of the value at `p`, if there is one (a number, string, array or inline table).
/// Documents are small, so reading through a copy keeps one navigation for reads and writes.
pub fn value(doc: &DocumentMut, p: &[Seg]) -> Option<Value> {
    let mut copy = doc.clone();
    match walk(&mut copy, p)? {
        Place::Item(Item::Value(v)) | Place::Value(v) => Some(v.clone()),
        _ => None,
    }
}

/// Replaces the value at `p`, keeping the spaces and comment around it. False if there is none.
pub fn set(doc: &mut DocumentMut, p: &[Seg], new: Value) -> bool {
    let slot = match walk(doc, p) {
        Some(Place::Item(Item::Value(v))) | Some(Place::Value(v)) => v,
        _ => return false,
    };
    let decor = slot.decor().clone();
    *slot = new;
    *slot.decor_mut() = decor;
    true
}

/// Removes the key or array element at `p`. False if there is none.
pub fn remove(doc: &mut DocumentMut, p: &[Seg]) -> bool {
    let Some((last, parent)) = p.split_last() else { return false };
    match (walk(doc, parent), last) {
        (Some(Place::Table(t)), Seg::Key(k)) | (Some(Place::Item(Item::Table(t))), Seg::Key(k)) => {
            t.remove(k).is_some()
        }
        (Some(Place::Item(Item::Value(Value::InlineTable(t)))), Seg::Key(k))
        | (Some(Place::Value(Value::InlineTable(t))), Seg::Key(k)) => t.remove(k).is_some(),
        (Some(Place::Item(Item::ArrayOfTables(a))), Seg::Idx(i)) if *i < a.len() => {
            a.remove(*i);
            true
        }
        (Some(Place::Item(Item::Value(Value::Array(a)))), Seg::Idx(i))
        | (Some(Place::Value(Value::Array(a))), Seg::Idx(i))
            if *i < a.len() =>
        {
            a.remove(*i);
            true
        }
        _ => false,
    }
}

/// The table-like thing (a `[table]`, a `[[block]]` element or an inline table) at `p`.
pub fn table_mut<'a>(doc: &'a mut DocumentMut, p: &[Seg]) -> Option<&'a mut dyn TableLike> {
    match walk(doc, p)? {
        Place::Table(t) | Place::Item(Item::Table(t)) => Some(t),
        Place::Item(Item::Value(Value::InlineTable(t))) | Place::Value(Value::InlineTable(t)) => Some(t),
        _ => None,
    }
}

/// The keys of the table-like thing at `p`, in file order (empty when there is none).
pub fn keys(doc: &DocumentMut, p: &[Seg]) -> Vec<String> {
    let mut copy = doc.clone();
    table_mut(&mut copy, p).map(|t| t.iter().map(|(k, _)| k.to_string()).collect()).unwrap_or_default()
}

/// How many elements the array at `p` has (`[[faults]]` blocks or an inline array); 0 if none.
pub fn len(doc: &DocumentMut, p: &[Seg]) -> usize {
    let mut copy = doc.clone();
    match walk(&mut copy, p) {
        Some(Place::Item(Item::ArrayOfTables(a))) => a.len(),
        Some(Place::Item(Item::Value(Value::Array(a)))) | Some(Place::Value(Value::Array(a))) => a.len(),
        _ => 0,
    }
}

/// The marker that keeps a key out of a shrink: a comment on its line containing it
/// (`extend_every_ms = 2_000   # the Extend loop (shrink: keep)`).
pub const KEEP_MARK: &str = "shrink: keep";

/// Whether the value at `p` carries [`KEEP_MARK`] in the comment after it.
pub fn kept(doc: &DocumentMut, p: &[Seg]) -> bool {
    value(doc, p).is_some_and(|v| v.decor().suffix().and_then(|s| s.as_str()).is_some_and(|s| s.contains(KEEP_MARK)))
}

/// A number's value, if `v` is one.
pub fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i.value() as f64),
        Value::Float(f) => Some(*f.value()),
        _ => None,
    }
}

/// A number as TOML writes it: an integer when it is whole (times and counts read best so), else
/// a float.
pub fn number_value(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str =
        "name = \"t\" # the name\n\n[workload]\nclients = 10 # many\nhold_ms = { uniform = [5, 50] }\n\n\
                        [[faults]]\nkind = \"pause\"\nat_ms = 100\n\n[[faults]]\nkind = \"crash\"\nat_ms = 200\n";

    fn text_at(d: &DocumentMut, p: &str) -> Option<String> {
        value(d, &path(p)).and_then(|v| v.as_str().map(str::to_string))
    }

    #[test]
    fn edits_keep_the_layout_and_comments_around_them() {
        let mut d: DocumentMut = TEXT.parse().unwrap();
        assert!(set(&mut d, &path("workload.clients"), number_value(2.0)));
        assert!(set(&mut d, &path("workload.hold_ms.uniform.1"), number_value(7.5)));
        let text = d.to_string();
        assert!(text.contains("clients = 2 # many"), "{text}");
        assert!(text.contains("hold_ms = { uniform = [5, 7.5] }"), "{text}");
        assert!(text.starts_with("name = \"t\" # the name\n"), "{text}");
        assert_eq!(keys(&d, &path("workload")), vec!["clients", "hold_ms"]);
    }

    #[test]
    fn a_keep_comment_marks_its_key() {
        let d: DocumentMut = "[m]\na = 1 # shrink: keep\nb = 2 # other\nc = 3\n".parse().unwrap();
        assert!(kept(&d, &path("m.a")));
        assert!(!kept(&d, &path("m.b")) && !kept(&d, &path("m.c")) && !kept(&d, &path("m.z")));
    }

    #[test]
    fn blocks_are_counted_and_removed_one_at_a_time() {
        let mut d: DocumentMut = TEXT.parse().unwrap();
        assert_eq!(len(&d, &path("faults")), 2);
        assert!(remove(&mut d, &path("faults.0")));
        assert_eq!(len(&d, &path("faults")), 1);
        assert_eq!(text_at(&d, "faults.0.kind").as_deref(), Some("crash"));
        assert!(remove(&mut d, &path("faults.0.at_ms")));
        assert_eq!(value(&d, &path("faults.0.at_ms")).map(|v| v.to_string()), None);
        // Paths that lead nowhere change nothing.
        let before = d.to_string();
        assert!(!remove(&mut d, &path("faults.5")));
        assert!(!set(&mut d, &path("nothing.here"), number_value(1.0)));
        assert!(!set(&mut d, &path("workload"), number_value(1.0)), "a table is not a value");
        assert_eq!(d.to_string(), before);
        assert_eq!(dotted(&path("faults.0.at_ms")), "faults.0.at_ms");
    }
}
