//! Values as the scenario format writes them: plain numbers and integers with ranges, and the
//! number-or-distribution form ([`Dist`]) accepted wherever the format takes a distribution.

use crate::dist::Dist;
use crate::scenario::walk::{show_number as num, Node, Res, Source};
use crate::time::MAX_TIME_MS;

/// Every distribution form, for error messages.
pub(crate) const DIST_FORMS: &str = "a number, { uniform = [a, b] }, { exponential = mean }, \
{ lognormal = { median = m, p99 = q } }, { normal = { mean = m, sd = s } } or { choice = [a, b, …] }";

const FORM_KEYS: &[&str] = &["uniform", "exponential", "lognormal", "normal", "choice"];

/// A number or a distribution, each form checked for its own sense (a <= b, mean > 0, …).
pub(crate) fn dist(src: &Source, node: &Node) -> Res<Dist> {
    if node.is_number() {
        return Ok(Dist::Const(node.as_number(src, DIST_FORMS)?));
    }
    if !node.is_table() {
        return Err(node.mismatch(src, DIST_FORMS));
    }
    let tab = node.as_table(src, DIST_FORMS)?;
    tab.check_keys(src, FORM_KEYS)?;
    let (form, v) = match tab.entries() {
        [(form, v)] => (form.as_str(), v),
        [] => return Err(node.mismatch(src, DIST_FORMS)),
        [_, (second, n), ..] => {
            return Err(n.key_err(
                src,
                format!("a distribution takes exactly one form, found a second one `{second}`; forms: {DIST_FORMS}"),
            ))
        }
    };
    match form {
        "uniform" => {
            let expected = "an array [a, b] of two numbers with a <= b";
            let items = v.as_array(src, expected)?;
            if items.len() != 2 {
                return Err(v.err(src, format!("expected {expected}, found an array of {} values", items.len())));
            }
            let a = items[0].as_number(src, "a number")?;
            let b = items[1].as_number(src, "a number")?;
            if a > b {
                return Err(v.err(src, format!("expected {expected}, found [{}, {}] (a > b)", num(a), num(b))));
            }
            if !(b - a).is_finite() {
                // Drawing from a range wider than f64 can hold panics in `rand`.
                return Err(
                    v.err(src, format!("expected {expected}, found [{}, {}] (too wide a range)", num(a), num(b)))
                );
            }
            Ok(Dist::Uniform(a, b))
        }
        "exponential" => {
            let mean = v.as_number(src, "a mean above 0")?;
            if mean <= 0.0 {
                return Err(v.err(src, format!("expected a mean above 0, found {}", num(mean))));
            }
            Ok(Dist::Exponential(mean))
        }
        "lognormal" => {
            let expected = "{ median = m, p99 = q } with 0 < m < q";
            let t = v.as_table(src, expected)?;
            t.check_keys(src, &["median", "p99"])?;
            let median = t.required(src, "median", "a number above 0")?.as_number(src, "a number above 0")?;
            let p99 =
                t.required(src, "p99", "a number above the median")?.as_number(src, "a number above the median")?;
            if median <= 0.0 || p99 <= median {
                return Err(
                    v.err(src, format!("expected {expected}, found median = {}, p99 = {}", num(median), num(p99)))
                );
            }
            Ok(Dist::LogNormal { median, p99 })
        }
        "normal" => {
            let t = v.as_table(src, "{ mean = m, sd = s } with s >= 0")?;
            t.check_keys(src, &["mean", "sd"])?;
            let mean = t.required(src, "mean", "a number")?.as_number(src, "a number")?;
            let sd_node = t.required(src, "sd", "a number >= 0")?;
            let sd = sd_node.as_number(src, "a number >= 0")?;
            if sd < 0.0 {
                return Err(sd_node.err(src, format!("expected a standard deviation >= 0, found {}", num(sd))));
            }
            Ok(Dist::Normal { mean, sd })
        }
        _ => {
            let expected = "a non-empty array of numbers";
            let items = v.as_array(src, expected)?;
            if items.is_empty() {
                return Err(v.err(src, format!("expected {expected}, found an empty array")));
            }
            let values = items.iter().map(|n| n.as_number(src, "a number")).collect::<Res<Vec<f64>>>()?;
            Ok(Dist::Choice(values))
        }
    }
}

/// The bounds a distribution is judged by: its true bounds where it has them (constant, uniform,
/// choice); a distribution with an unbounded tail by its centre instead (a normal by its mean, as
/// it is clamped at 0 for times when drawn; an exponential by its mean; a log-normal from its
/// median to its mean), else none of them could ever fit a range such as [1, 1e9].
fn judged_bounds(d: &Dist) -> (f64, f64) {
    match d {
        Dist::Normal { mean, .. } | Dist::Exponential(mean) => (*mean, *mean),
        Dist::LogNormal { median, .. } => (*median, d.mean()),
        _ => (d.min_value(), d.max_value()),
    }
}

/// Checks that a distribution stays within [min, max] (see [`judged_bounds`]).
pub(crate) fn check_dist(src: &Source, node: &Node, d: &Dist, min: f64, max: f64, expected: &str) -> Res<()> {
    let (lo, hi) = judged_bounds(d);
    let what = if lo < min {
        lo
    } else if hi > max {
        hi
    } else {
        return Ok(());
    };
    let detail = match d {
        Dist::Const(_) => String::new(),
        Dist::Uniform(..) | Dist::Choice(_) => format!(" (it can draw {})", num(what)),
        Dist::LogNormal { .. } if what == lo => format!(" (its median is {})", num(what)),
        _ => format!(" (its mean is {})", num(what)),
    };
    Err(node.err(src, format!("expected {expected}, found {}{detail}", show_dist(d))))
}

/// A distribution as written in the scenario format, its numbers as [`num`] shows them.
fn show_dist(d: &Dist) -> String {
    match d {
        Dist::Const(v) => num(*v),
        Dist::Uniform(a, b) => format!("{{ uniform = [{}, {}] }}", num(*a), num(*b)),
        Dist::Exponential(m) => format!("{{ exponential = {} }}", num(*m)),
        Dist::LogNormal { median, p99 } => {
            format!("{{ lognormal = {{ median = {}, p99 = {} }} }}", num(*median), num(*p99))
        }
        Dist::Normal { mean, sd } => format!("{{ normal = {{ mean = {}, sd = {} }} }}", num(*mean), num(*sd)),
        Dist::Choice(v) => {
            let items: Vec<String> = v.iter().map(|x| num(*x)).collect();
            format!("{{ choice = [{}] }}", items.join(", "))
        }
    }
}

/// How the time bound reads in messages (`1e12`, as `duration_ms` says it).
pub(crate) const MAX_TIME_TEXT: &str = "1e12";

/// A time in milliseconds: a number or distribution that cannot go negative, and no larger than
/// [`MAX_TIME_MS`] (see [`check_time_dist`]).
pub(crate) fn time(src: &Source, node: &Node) -> Res<Dist> {
    let d = dist(src, node)?;
    check_time_dist(src, node, &d, 0.0, &format!("a time in milliseconds in [0, {MAX_TIME_TEXT}]"))?;
    Ok(d)
}

/// A signed time in milliseconds (a clock's offset, a clock step): within
/// [-[`MAX_TIME_MS`], [`MAX_TIME_MS`]].
pub(crate) fn signed_time(src: &Source, node: &Node, what: &str) -> Res<Dist> {
    let d = dist(src, node)?;
    check_time_dist(
        src,
        node,
        &d,
        -MAX_TIME_MS,
        &format!("{what} in milliseconds in [-{MAX_TIME_TEXT}, {MAX_TIME_TEXT}]"),
    )?;
    Ok(d)
}

/// Checks a time distribution against [`MAX_TIME_MS`]: its values as [`check_dist`] judges them
/// within [min, `MAX_TIME_MS`], and every number written in it too (a normal's `sd`, a
/// log-normal's `p99`), so no parameter of a time is beyond the bound. Nanoseconds of such
/// times fit in 64 bits several times over; a draw beyond the bound (a tail) is clamped to it
/// when converted ([`crate::time::ms_to_ns`]).
pub(crate) fn check_time_dist(src: &Source, node: &Node, d: &Dist, min: f64, expected: &str) -> Res<()> {
    check_dist(src, node, d, min, MAX_TIME_MS, expected)?;
    let beyond = |v: f64| v.abs() > MAX_TIME_MS;
    let too_big = match d {
        Dist::Normal { sd, .. } if beyond(*sd) => Some(("sd", *sd)),
        Dist::LogNormal { p99, .. } if beyond(*p99) => Some(("p99", *p99)),
        _ => None,
    };
    match too_big {
        None => Ok(()),
        Some((key, v)) => Err(node.err(
            src,
            format!(
                "expected {expected}, found {}: its `{key}` is {}, beyond {MAX_TIME_TEXT}, the largest time \
                 (a time's every parameter is within it)",
                show_dist(d),
                num(v)
            ),
        )),
    }
}

/// A plain number (no distribution) within [min, max].
pub(crate) fn number_in(src: &Source, node: &Node, min: f64, max: f64) -> Res<f64> {
    let expected = format!("a number in [{min}, {max}]");
    if node.is_table() {
        return Err(node.mismatch(src, &format!("{expected} (a distribution is not accepted here)")));
    }
    let v = node.as_number(src, &expected)?;
    if v < min || v > max {
        return Err(node.err(src, format!("expected {expected}, found {}", num(v))));
    }
    Ok(v)
}

/// A probability or share.
pub(crate) fn fraction(src: &Source, node: &Node) -> Res<f64> {
    number_in(src, node, 0.0, 1.0)
}

/// An integer within [min, max].
pub(crate) fn int_in(src: &Source, node: &Node, min: i64, max: i64) -> Res<i64> {
    let expected =
        if max == i64::MAX { format!("an integer >= {min}") } else { format!("an integer in [{min}, {max}]") };
    let v = node.as_int(src, &expected)?;
    if v < min || v > max {
        return Err(node.err(src, format!("expected {expected}, found {v}")));
    }
    Ok(v)
}

/// A non-empty string.
pub(crate) fn name<'a>(src: &Source, node: &Node<'a>) -> Res<&'a str> {
    let s = node.as_str(src, "a non-empty string")?;
    if s.trim().is_empty() {
        return Err(node.mismatch(src, "a non-empty string"));
    }
    Ok(s)
}

/// A clock rate error in parts per million; below a million either way keeps the clock running
/// forward.
pub(crate) fn ppm(src: &Source, node: &Node) -> Res<Dist> {
    const LIMIT: f64 = 999_999.0;
    let d = dist(src, node)?;
    check_dist(src, node, &d, -LIMIT, LIMIT, "a clock rate error in ppm within [-999999, 999999]")?;
    Ok(d)
}
