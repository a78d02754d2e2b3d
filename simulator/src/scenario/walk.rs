//! Walking the parsed TOML tree while keeping, for every item, its dotted key path and where it
//! sits in the file, so that each check can report `file:line:column`, the key, what it expected
//! and what it found. toml_edit gives byte spans; this module turns them into 1-based lines and
//! columns (columns count characters, as editors do).
//!
//! Array elements get 0-based indexes in key paths (`faults.1.target` is the second `[[faults]]`
//! block), the same convention as `sim sweep --param` paths, so a path read in an error message
//! can be used as is in a sweep.

use std::ops::Range;

use toml_edit::{Item, Table, Value};

use crate::scenario::error::ScenarioError;

pub(crate) type Res<T> = Result<T, ScenarioError>;

/// A number as an error message shows it: plain where that is short (`0.5`, `30000`), in
/// exponent form where the plain form would run to hundreds of digits (`1e308`, `1e-320`).
pub fn show_number(v: f64) -> String {
    let magnitude = v.abs();
    if v.is_finite() && v != 0.0 && !(1e-6..1e16).contains(&magnitude) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// The text being parsed, with its label, for turning byte offsets into positions.
pub(crate) struct Source<'s> {
    pub file: &'s str,
    text: &'s str,
    /// Byte offset where each line starts.
    line_starts: Vec<usize>,
}

impl<'s> Source<'s> {
    pub fn new(file: &'s str, text: &'s str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Source { file, text, line_starts }
    }

    /// 1-based line and column (in characters) of a byte offset; offsets past the end or inside a
    /// character are clamped, so a bad span can never panic.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1) - 1;
        let start = self.line_starts[line].min(offset);
        let column = self.text[start..offset].chars().count() + 1;
        (line + 1, column)
    }

    /// An error at the start of `at`, about `key` (empty: no key).
    pub fn error(&self, at: &Range<usize>, key: &str, message: impl Into<String>) -> ScenarioError {
        let (line, column) = self.line_col(at.start);
        ScenarioError {
            file: self.file.to_string(),
            line: Some(line),
            column: Some(column),
            key: if key.is_empty() { None } else { Some(key.to_string()) },
            message: message.into(),
        }
    }
}

#[derive(Clone, Copy)]
enum Raw<'a> {
    Item(&'a Item),
    Value(&'a Value),
    Table(&'a Table),
}

/// One item of the tree with its key path and position.
#[derive(Clone)]
pub(crate) struct Node<'a> {
    raw: Raw<'a>,
    /// Dotted key path (`workload.clients`); empty for the root.
    pub path: String,
    /// Where the value is (falls back to the key, then to the enclosing table).
    pub at: Range<usize>,
    /// Where the key is (falls back to the value).
    pub key_at: Range<usize>,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Shortens user text quoted back in a message.
pub(crate) fn quote(s: &str) -> String {
    const MAX: usize = 40;
    if s.chars().count() <= MAX {
        format!("\"{s}\"")
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("\"{head}…\"")
    }
}

impl<'a> Node<'a> {
    pub fn root(table: &'a Table) -> Self {
        Node { raw: Raw::Table(table), path: String::new(), at: 0..0, key_at: 0..0 }
    }

    fn value(&self) -> Option<&'a Value> {
        match self.raw {
            Raw::Item(Item::Value(v)) | Raw::Value(v) => Some(v),
            _ => None,
        }
    }

    /// How the value reads in "found …".
    pub fn found(&self) -> String {
        match self.raw {
            Raw::Table(_) | Raw::Item(Item::Table(_)) => "a table".into(),
            Raw::Item(Item::ArrayOfTables(_)) => "an array of tables".into(),
            Raw::Item(Item::None) => "nothing".into(),
            Raw::Item(Item::Value(v)) | Raw::Value(v) => match v {
                Value::String(s) => format!("the string {}", quote(s.value())),
                Value::Integer(i) => format!("the integer {}", i.value()),
                Value::Float(f) => format!("the number {}", show_number(*f.value())),
                Value::Boolean(b) => format!("the boolean {}", b.value()),
                Value::Datetime(d) => format!("the date-time {}", d.value()),
                Value::Array(_) => "an array".into(),
                Value::InlineTable(_) => "a table".into(),
            },
        }
    }

    /// An error at the value.
    pub fn err(&self, src: &Source, message: impl Into<String>) -> ScenarioError {
        src.error(&self.at, &self.path, message)
    }

    /// An error at the key.
    pub fn key_err(&self, src: &Source, message: impl Into<String>) -> ScenarioError {
        src.error(&self.key_at, &self.path, message)
    }

    /// "expected …, found …" at the value.
    pub fn mismatch(&self, src: &Source, expected: &str) -> ScenarioError {
        self.err(src, format!("expected {expected}, found {}", self.found()))
    }

    pub fn is_table(&self) -> bool {
        matches!(self.raw, Raw::Table(_) | Raw::Item(Item::Table(_)))
            || matches!(self.value(), Some(Value::InlineTable(_)))
    }

    pub fn is_array(&self) -> bool {
        matches!(self.raw, Raw::Item(Item::ArrayOfTables(_))) || matches!(self.value(), Some(Value::Array(_)))
    }

    pub fn is_number(&self) -> bool {
        matches!(self.value(), Some(Value::Integer(_) | Value::Float(_)))
    }

    pub fn as_str(&self, src: &Source, expected: &str) -> Res<&'a str> {
        match self.value() {
            Some(Value::String(s)) => Ok(s.value().as_str()),
            _ => Err(self.mismatch(src, expected)),
        }
    }

    pub fn as_bool(&self, src: &Source) -> Res<bool> {
        match self.value() {
            Some(Value::Boolean(b)) => Ok(*b.value()),
            _ => Err(self.mismatch(src, "true or false")),
        }
    }

    pub fn as_int(&self, src: &Source, expected: &str) -> Res<i64> {
        match self.value() {
            Some(Value::Integer(i)) => Ok(*i.value()),
            _ => Err(self.mismatch(src, expected)),
        }
    }

    /// An integer or a finite float.
    pub fn as_number(&self, src: &Source, expected: &str) -> Res<f64> {
        match self.value() {
            Some(Value::Integer(i)) => Ok(*i.value() as f64),
            Some(Value::Float(f)) if f.value().is_finite() => Ok(*f.value()),
            _ => Err(self.mismatch(src, expected)),
        }
    }

    /// The elements of an inline array or an array of tables.
    pub fn as_array(&self, src: &Source, expected: &str) -> Res<Vec<Node<'a>>> {
        let at = |span: Option<Range<usize>>| span.unwrap_or_else(|| self.at.clone());
        match self.raw {
            Raw::Item(Item::ArrayOfTables(a)) => Ok(a
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let span = at(t.span());
                    Node { raw: Raw::Table(t), path: join(&self.path, &i.to_string()), key_at: span.clone(), at: span }
                })
                .collect()),
            _ => match self.value() {
                Some(Value::Array(a)) => Ok(a
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let span = at(v.span());
                        Node {
                            raw: Raw::Value(v),
                            path: join(&self.path, &i.to_string()),
                            key_at: span.clone(),
                            at: span,
                        }
                    })
                    .collect()),
                _ => Err(self.mismatch(src, expected)),
            },
        }
    }

    /// The entries of a `[table]`, a dotted-key table or an inline `{ … }` table.
    pub fn as_table(&self, src: &Source, expected: &str) -> Res<Tab<'a>> {
        let mut entries = Vec::new();
        // A child's position: its own span, else its key's, else this table's.
        let mut push = |key: &str, key_span: Option<Range<usize>>, raw: Raw<'a>, span: Option<Range<usize>>| {
            let key_at = key_span.clone().or_else(|| span.clone()).unwrap_or_else(|| self.at.clone());
            let at = span.or(key_span).unwrap_or_else(|| self.at.clone());
            entries.push((key.to_string(), Node { raw, path: join(&self.path, key), at, key_at }));
        };
        let table = match self.raw {
            Raw::Table(t) | Raw::Item(Item::Table(t)) => Some(t),
            _ => None,
        };
        if let Some(t) = table {
            for (k, item) in t.iter() {
                push(k, t.key(k).and_then(|k| k.span()), Raw::Item(item), item.span());
            }
        } else if let Some(Value::InlineTable(t)) = self.value() {
            for (k, v) in t.iter() {
                push(k, t.key(k).and_then(|k| k.span()), Raw::Value(v), v.span());
            }
        } else {
            return Err(self.mismatch(src, expected));
        }
        Ok(Tab { node: self.clone(), entries })
    }
}

/// A table's entries, in file order.
pub(crate) struct Tab<'a> {
    pub node: Node<'a>,
    entries: Vec<(String, Node<'a>)>,
}

impl<'a> Tab<'a> {
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, n)| n)
    }

    pub fn entries(&self) -> &[(String, Node<'a>)] {
        &self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry, or an error at the table saying it is missing.
    pub fn required(&self, src: &Source, key: &str, expected: &str) -> Res<&Node<'a>> {
        self.get(key).ok_or_else(|| {
            let where_ = if self.node.path.is_empty() { String::new() } else { format!(" in `{}`", self.node.path) };
            src.error(
                &self.node.at,
                &join(&self.node.path, key),
                format!("missing required key `{key}`{where_}: expected {expected}"),
            )
        })
    }

    /// Every key must be one of `valid`; the error is at the first unknown key and lists them.
    pub fn check_keys(&self, src: &Source, valid: &[&str]) -> Res<()> {
        match self.entries.iter().find(|(k, _)| !valid.contains(&k.as_str())) {
            None => Ok(()),
            Some((k, n)) => Err(n.key_err(src, format!("unknown key `{k}`; valid keys here: {}", valid.join(", ")))),
        }
    }
}
