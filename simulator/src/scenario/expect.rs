//! `[expect.LABEL]`: assertions on aggregated results, per algorithm or variant label.

use crate::metric::{Metric, MetricKind};
use crate::scenario::types::{CompareOp, ExpectOp, Expectation};
use crate::scenario::walk::{quote, Res, Source, Tab};

const VALUE_FORMS: &str = "\"none\", \"some\", \"all\", a comparison such as \"< 0.05\" or \">= 100\" \
(operators <, <=, >, >=, ==), or two joined by `and` (\"> 0.2 and < 0.6\")";

/// Reads an expected value as written (`"none"`, `"< 0.05"`); `None` if it is no valid form.
/// Whether `"all"` suits the metric is the caller's check.
pub fn parse_expected(text: &str) -> Option<ExpectOp> {
    let t = text.trim();
    match t {
        "none" => return Some(ExpectOp::None),
        "some" => return Some(ExpectOp::Some),
        "all" => return Some(ExpectOp::All),
        _ => {}
    }
    if let Some((a, b)) = t.split_once(" and ") {
        return match (parse_expected(a)?, parse_expected(b)?) {
            (ExpectOp::Compare { op: o1, value: v1 }, ExpectOp::Compare { op: o2, value: v2 }) => {
                Some(ExpectOp::Both { first: (o1, v1), second: (o2, v2) })
            }
            _ => None,
        };
    }
    // Two-character operators first, so "<=" is not read as "<" followed by "=…".
    let ops = [
        ("<=", CompareOp::Le),
        (">=", CompareOp::Ge),
        ("==", CompareOp::Eq),
        ("<", CompareOp::Lt),
        (">", CompareOp::Gt),
    ];
    let (rest, op) = ops.iter().find_map(|(s, op)| t.strip_prefix(s).map(|rest| (rest, *op)))?;
    let value: f64 = rest.trim().replace('_', "").parse().ok()?;
    value.is_finite().then_some(ExpectOp::Compare { op, value })
}

pub(crate) fn expectations(src: &Source, root: &Tab, labels: &[String]) -> Res<Vec<Expectation>> {
    let Some(node) = root.get("expect") else {
        return Ok(Vec::new());
    };
    let tab = node.as_table(src, "a table of [expect.LABEL] tables")?;
    let mut out = Vec::new();
    for (label, block) in tab.entries() {
        if !labels.contains(label) {
            return Err(block.key_err(
                src,
                // The labels are the file's own names, which may hold any character (a name
                // ending in `:` too): quoted, so each reads as what it is.
                format!(
                    "unknown label `{label}` in [expect.{label}]; this scenario's labels: {}",
                    labels.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let block = block.as_table(src, &format!("a table of metric = expectation for {label}"))?;
        block.check_keys(src, Metric::NAMES)?;
        for (metric, v) in block.entries() {
            let text = v.as_str(src, &format!("a string: {VALUE_FORMS}"))?;
            let op = parse_expected(text)
                .ok_or_else(|| v.err(src, format!("expected {VALUE_FORMS}, found {}", quote(text))))?;
            let metric = Metric::parse(metric).expect("keys were checked against Metric::NAMES");
            if op == ExpectOp::All && metric.kind() != MetricKind::Runs {
                let run_counting: Vec<&str> =
                    Metric::ALL.iter().filter(|m| m.kind() == MetricKind::Runs).map(|m| m.name()).collect();
                return Err(v.err(
                    src,
                    format!(
                        "\"all\" only applies to run-counting metrics ({}); for `{metric}` use \"none\", \"some\" or a comparison",
                        run_counting.join(", "),
                        metric = metric.name()
                    ),
                ));
            }
            out.push(Expectation { label: label.clone(), metric, expected: text.to_string(), op });
        }
    }
    Ok(out)
}
