//! The values of a swept parameter: `--param KEY=FROM..TO:STEP` (a range, both ends included when
//! the steps land on TO) or `--param KEY=a,b,c` (a list), and the points of a sweep.
//!
//! A range is of integers when FROM, TO and STEP are all integers, else of floats. Float values
//! are computed from an integer step count (FROM + i × STEP, never by accumulating) and rounded to
//! the decimals written in FROM and STEP, so `0.1..0.3:0.1` gives exactly 0.1, 0.2, 0.3. List
//! elements are integers, floats (all floats when any is), `true`/`false`, or strings (bare or
//! quoted), so `models.redis.persistence=none,everysec,always` sweeps a choice.

use std::fmt;

/// The most points (value combinations) one sweep may have.
pub const MAX_POINTS: u64 = 10_000;

/// One value of a swept parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepValue {
    /// An integer.
    Int(i64),
    /// A number written as a float (`0.5`, `1e3`), or any number of a range or list that has one.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// Text: a list element that is neither a number nor a boolean (quotes removed).
    Str(String),
}

impl SweepValue {
    /// The value as the TOML document gets it.
    pub fn to_toml(&self) -> toml_edit::Value {
        match self {
            SweepValue::Int(i) => toml_edit::Value::from(*i),
            SweepValue::Float(f) => toml_edit::Value::from(*f),
            SweepValue::Bool(b) => toml_edit::Value::from(*b),
            SweepValue::Str(s) => toml_edit::Value::from(s.as_str()),
        }
    }

    /// The value in the sweep JSON.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            SweepValue::Int(i) => serde_json::Value::from(*i),
            SweepValue::Float(f) => serde_json::Value::from(*f),
            SweepValue::Bool(b) => serde_json::Value::from(*b),
            SweepValue::Str(s) => serde_json::Value::from(s.as_str()),
        }
    }

    /// The value on a chart's x axis, when it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            SweepValue::Int(i) => Some(*i as f64),
            SweepValue::Float(f) => Some(*f),
            _ => None,
        }
    }
}

/// Numbers as written back to a person (`500`, `0.5`, `2`); strings unquoted.
impl fmt::Display for SweepValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SweepValue::Int(i) => write!(f, "{i}"),
            SweepValue::Float(x) => write!(f, "{x}"),
            SweepValue::Bool(b) => write!(f, "{b}"),
            SweepValue::Str(s) => write!(f, "{s}"),
        }
    }
}

/// One `--param`: the key path and its values, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepParam {
    /// The dotted key path, as given (`models.redis.ttl_ms`).
    pub key: String,
    /// The values to sweep, in order.
    pub values: Vec<SweepValue>,
    /// The whole option as given (`models.redis.ttl_ms=1000..5000:1000`), for messages.
    pub text: String,
}

const SYNTAX: &str = "expected KEY=FROM..TO:STEP (e.g. models.redlock.ttl_ms=1000..10000:1000, \
                      workload.hold_ms=0.5..2.0:0.5) or KEY=a,b,c (e.g. workload.clients=2,5,10)";

/// Parses one `--param` option.
pub fn parse_param(text: &str) -> Result<SweepParam, String> {
    let bad = |why: String| format!("--param {text}: {why}");
    let Some((key, spec)) = text.split_once('=') else {
        return Err(bad(format!("no `=`: {SYNTAX}")));
    };
    let key = key.trim();
    check_key(key).map_err(|why| bad(format!("key `{key}`: {why}")))?;
    let spec = spec.trim();
    let values =
        if spec.contains("..") { range(spec) } else { list(spec) }.map_err(|why| bad(format!("key `{key}`: {why}")))?;
    Ok(SweepParam { key: key.to_string(), values, text: text.to_string() })
}

/// A key path: dot-separated non-empty segments of letters, digits, `_` and `-`.
fn check_key(key: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err(format!("the key is empty; {SYNTAX}"));
    }
    for seg in key.split('.') {
        if seg.is_empty() {
            return Err("a key path is dot-separated names and indexes, with nothing empty between the dots \
                        (e.g. faults.0.duration_ms)"
                .to_string());
        }
        if !seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(format!(
                "`{seg}` is not a plain key name or index (letters, digits, `_`, `-`); \
                 the path is dot-separated, e.g. models.redis.ttl_ms"
            ));
        }
    }
    Ok(())
}

/// A number as written: an integer, or else a finite float. `_` separators are allowed.
#[derive(Clone, Copy, Debug)]
enum Num {
    Int(i64),
    Float(f64),
}

fn number(what: &str, s: &str) -> Result<Num, String> {
    let t = s.trim().replace('_', "");
    if t.is_empty() {
        return Err(format!("{what} is missing; {SYNTAX}"));
    }
    if let Ok(i) = t.parse::<i64>() {
        return Ok(Num::Int(i));
    }
    match t.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(Num::Float(x)),
        _ => Err(format!("{what} `{}` is not a number; {SYNTAX}", s.trim())),
    }
}

fn as_f64(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(x) => x,
    }
}

/// Decimals written in a number (`0.25` → 2, `1.5e-3` → 4, `100` → 0).
fn decimals(s: &str) -> i32 {
    let t = s.trim().replace('_', "").to_ascii_lowercase();
    let (mant, exp) = match t.split_once('e') {
        Some((m, e)) => (m.to_string(), e.parse::<i32>().unwrap_or(0)),
        None => (t.clone(), 0),
    };
    let frac = mant.split_once('.').map_or(0, |(_, f)| f.len() as i32);
    (frac - exp).max(0)
}

/// `FROM..TO:STEP`.
fn range(spec: &str) -> Result<Vec<SweepValue>, String> {
    let (from_s, rest) = spec.split_once("..").expect("caller checked for `..`");
    let Some((to_s, step_s)) = rest.split_once(':') else {
        return Err(format!("the range `{spec}` has no `:STEP`; {SYNTAX}"));
    };
    let (from, to, step) = (number("FROM", from_s)?, number("TO", to_s)?, number("STEP", step_s)?);
    let (f, t, s) = (as_f64(from), as_f64(to), as_f64(step));
    if s == 0.0 {
        return Err(format!("the step of `{spec}` is 0; it must be above 0"));
    }
    if s < 0.0 {
        return Err(format!("the step of `{spec}` is negative; write the range upwards, FROM..TO with FROM <= TO"));
    }
    if f > t {
        return Err(format!("`{spec}` runs from {} down to {}: FROM must not be above TO", from_s.trim(), to_s.trim()));
    }
    let too_many = |count: f64| {
        format!("`{spec}` gives {count} values, more than a sweep may have ({MAX_POINTS}); use a larger step")
    };
    if let (Num::Int(f), Num::Int(t), Num::Int(s)) = (from, to, step) {
        let count = (t as i128 - f as i128) / s as i128 + 1;
        if count > MAX_POINTS as i128 {
            return Err(too_many(count as f64));
        }
        return Ok((0..count).map(|i| SweepValue::Int((f as i128 + i * s as i128) as i64)).collect());
    }
    // Floats: an integer step count, values rounded to the decimals FROM and STEP were written with.
    let n = (t - f) / s;
    let steps = (n + 1e-9 * n.abs().max(1.0)).floor();
    if steps + 1.0 > MAX_POINTS as f64 {
        return Err(too_many(steps + 1.0));
    }
    let d = decimals(from_s).max(decimals(step_s));
    let values: Vec<SweepValue> = (0..=steps as u64)
        .map(|i| {
            let x = f + i as f64 * s;
            let x = if d <= 15 { format!("{:.*}", d as usize, x).parse().unwrap_or(x) } else { x };
            SweepValue::Float(if x == 0.0 { 0.0 } else { x })
        })
        .collect();
    if values.is_empty() {
        return Err(format!("the range `{spec}` yields no value"));
    }
    Ok(values)
}

/// `a,b,c`.
fn list(spec: &str) -> Result<Vec<SweepValue>, String> {
    if spec.is_empty() {
        return Err(format!("no value after `=`; {SYNTAX}"));
    }
    let mut values = Vec::new();
    for item in spec.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("the list `{spec}` has an empty element"));
        }
        let v = if let Some(q) = item.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            SweepValue::Str(q.to_string())
        } else if item == "true" || item == "false" {
            SweepValue::Bool(item == "true")
        } else {
            match number("a value", item) {
                Ok(Num::Int(i)) => SweepValue::Int(i),
                Ok(Num::Float(x)) => SweepValue::Float(x),
                Err(_) => SweepValue::Str(item.to_string()),
            }
        };
        if values.contains(&v) {
            return Err(format!("the list `{spec}` names {item} twice"));
        }
        values.push(v);
    }
    // Numbers: all floats when any is.
    let numeric = values.iter().all(|v| matches!(v, SweepValue::Int(_) | SweepValue::Float(_)));
    if numeric && values.iter().any(|v| matches!(v, SweepValue::Float(_))) {
        values = values.into_iter().map(|v| SweepValue::Float(v.as_f64().expect("numeric"))).collect();
    }
    if values.len() as u64 > MAX_POINTS {
        return Err(format!("the list has {} values, more than a sweep may have ({MAX_POINTS})", values.len()));
    }
    Ok(values)
}

/// One point's values as the options that give it: `--param k=v --param k2=v2`.
pub fn describe_point(params: &[SweepParam], values: &[SweepValue]) -> String {
    params.iter().zip(values).map(|(p, v)| format!("--param {}={v}", p.key)).collect::<Vec<_>>().join(" ")
}

/// Every combination of the parameters' values, the first parameter varying slowest. Refuses
/// more than [`MAX_POINTS`] and a key given twice.
pub fn points(params: &[SweepParam]) -> Result<Vec<Vec<SweepValue>>, String> {
    for (i, p) in params.iter().enumerate() {
        if let Some(q) = params[..i].iter().find(|q| q.key == p.key) {
            return Err(format!("--param {}: the key `{}` is already swept by --param {}", p.text, p.key, q.text));
        }
    }
    let total = params.iter().try_fold(1u64, |acc, p| acc.checked_mul(p.values.len() as u64)).unwrap_or(u64::MAX);
    if total > MAX_POINTS {
        let counts: Vec<String> = params.iter().map(|p| format!("{} ({})", p.key, p.values.len())).collect();
        return Err(format!(
            "the sweep has {total} points ({}), more than a sweep may have ({MAX_POINTS}); use larger steps or fewer parameters",
            counts.join(" × ")
        ));
    }
    let mut out: Vec<Vec<SweepValue>> = vec![Vec::new()];
    for p in params {
        out = out
            .into_iter()
            .flat_map(|prefix| p.values.iter().map(move |v| [prefix.clone(), vec![v.clone()]].concat()))
            .collect();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use SweepValue::{Float, Int, Str};

    fn vals(text: &str) -> Vec<SweepValue> {
        parse_param(text).unwrap_or_else(|e| panic!("{e}")).values
    }

    fn err(text: &str) -> String {
        parse_param(text).unwrap_err()
    }

    #[test]
    fn integer_ranges_include_both_ends_when_the_step_lands() {
        assert_eq!(vals("workload.clients=2..10:4"), vec![Int(2), Int(6), Int(10)]);
        assert_eq!(vals("x=1..10:4"), vec![Int(1), Int(5), Int(9)]);
        assert_eq!(vals("x=5..5:1"), vec![Int(5)]);
        assert_eq!(vals("faults.0.by_ms=-500..500:500"), vec![Int(-500), Int(0), Int(500)]);
        assert_eq!(vals("x=1_000..3_000:1_000"), vec![Int(1000), Int(2000), Int(3000)]);
    }

    #[test]
    fn float_ranges_use_a_step_count_and_keep_the_end() {
        assert_eq!(vals("x=0.5..2.0:0.5"), vec![Float(0.5), Float(1.0), Float(1.5), Float(2.0)]);
        assert_eq!(vals("x=0.1..0.3:0.1"), vec![Float(0.1), Float(0.2), Float(0.3)]);
        assert_eq!(vals("x=0..1:0.25"), vec![Float(0.0), Float(0.25), Float(0.5), Float(0.75), Float(1.0)]);
        assert_eq!(vals("x=0..0.001:5e-4"), vec![Float(0.0), Float(0.0005), Float(0.001)]);
        // Ten steps of 0.1 accumulate to 0.9999999999999999; the step count does not.
        let v = vals("x=0..1:0.1");
        assert_eq!(v.len(), 11);
        assert_eq!(v[10], Float(1.0));
        assert_eq!(v[3], Float(0.3));
        // TO that the steps do not land on is not included.
        assert_eq!(vals("x=0.5..1.9:0.5"), vec![Float(0.5), Float(1.0), Float(1.5)]);
    }

    #[test]
    fn lists() {
        assert_eq!(vals("x=2,5,10"), vec![Int(2), Int(5), Int(10)]);
        assert_eq!(vals("x=1, 0.5"), vec![Float(1.0), Float(0.5)]);
        assert_eq!(vals("x=7"), vec![Int(7)]);
        assert_eq!(
            vals("x=none,everysec,\"always\""),
            vec![Str("none".into()), Str("everysec".into()), Str("always".into())]
        );
        assert_eq!(vals("x=true,false"), vec![SweepValue::Bool(true), SweepValue::Bool(false)]);
    }

    #[test]
    fn errors_name_the_option_and_the_problem() {
        assert!(err("workload.clients").contains("no `=`"));
        assert!(err("workload.clients=1..5:0").contains("is 0"));
        assert!(err("workload.clients=1..5:-1").contains("negative"));
        assert!(err("workload.clients=5..1:1").contains("FROM must not be above TO"));
        assert!(err("workload.clients=1..5").contains("no `:STEP`"));
        assert!(err("workload.clients=").contains("no value"));
        assert!(err("workload.clients=1,,2").contains("empty element"));
        assert!(err("workload.clients=1,1").contains("twice"));
        assert!(err("workload.clients=a..5:1").contains("not a number"));
        assert!(err("workload.clients=0..1e12:1").contains("more than a sweep may have"));
        assert!(err("workload.clients=0..1:1e-9").contains("more than a sweep may have"));
        assert!(err("workload..clients=1").contains("nothing empty"));
        assert!(err("=1").contains("key is empty"));
        assert!(err("x=0..inf:1").contains("not a number"));
        for e in [err("workload.clients=1..5:0"), err("workload.clients=5..1:1")] {
            assert!(e.starts_with("--param workload.clients=") && e.contains("key `workload.clients`"), "{e}");
        }
    }

    #[test]
    fn points_are_the_product_first_param_slowest() {
        let a = parse_param("a=1..2:1").unwrap();
        let b = parse_param("b=x,y,z").unwrap();
        let p = points(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(p.len(), 6);
        assert_eq!(p[0], vec![Int(1), Str("x".into())]);
        assert_eq!(p[1], vec![Int(1), Str("y".into())]);
        assert_eq!(p[3], vec![Int(2), Str("x".into())]);
        assert!(points(&[a.clone(), a.clone()]).unwrap_err().contains("already swept"));
        let big = parse_param("c=1..200:1").unwrap();
        let big2 = parse_param("e=1..200:1").unwrap();
        assert!(points(&[big.clone(), big2, a]).unwrap_err().contains("more than a sweep may have"));
        assert!(points(&[big.clone(), parse_param("d=1..50:1").unwrap()]).unwrap().len() == 10_000);
        assert!(points(&[big, parse_param("d=1..51:1").unwrap()]).unwrap_err().contains("10200 points"));
    }
}
