//! `[[faults]]`: each kind with its own keys. A key that belongs to another kind is named as such
//! (writing `by_ms` on a `pause` is a mistake worth a precise message, not "unknown key").

use crate::dist::Dist;
use crate::process::CrashKind;
use crate::scenario::nodes::{selector, selectors, Mentions};
use crate::scenario::types::{FaultKind, FaultSpec, FAULT_KINDS};
use crate::scenario::values::{check_time_dist, dist, fraction, ppm, signed_time, time, MAX_TIME_TEXT};
use crate::scenario::walk::{quote, Node, Res, Source, Tab};

/// Keys every kind takes (`target` is not taken by `partition`).
const COMMON: &[&str] = &["kind", "target", "at_ms", "duration_ms", "every_ms", "probability"];

/// The keys only this kind takes.
fn own_keys(kind: &str) -> &'static [&'static str] {
    match kind {
        "clock_jump" => &["by_ms"],
        "clock_drift" => &["ppm"],
        "slow" => &["latency_ms"],
        "loss" => &["rate"],
        "partition" => &["groups", "one_way"],
        "crash" => &["mode"],
        _ => &[],
    }
}

fn valid_keys(kind: &str) -> Vec<&'static str> {
    COMMON
        .iter()
        .copied()
        .filter(|k| kind != "partition" || *k != "target")
        .chain(own_keys(kind).iter().copied())
        .collect()
}

/// "a" or "an" before a fault kind (`an isolate fault`).
fn article(kind: &str) -> &'static str {
    if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

fn check_keys(src: &Source, tab: &Tab, kind: &str) -> Res<()> {
    let valid = valid_keys(kind);
    for (key, node) in tab.entries() {
        if valid.contains(&key.as_str()) {
            continue;
        }
        let message = if key == "target" {
            "a partition fault takes no `target`: its `groups` say which nodes are cut off from which".to_string()
        } else if let Some(owner) = FAULT_KINDS.iter().find(|k| own_keys(k).contains(&key.as_str())) {
            format!("`{key}` belongs to `{owner}` faults; {} `{kind}` fault takes: {}", article(kind), valid.join(", "))
        } else {
            format!("unknown key `{key}`; {} `{kind}` fault takes: {}", article(kind), valid.join(", "))
        };
        return Err(node.key_err(src, message));
    }
    Ok(())
}

/// The interval of a recurring fault must be above 0, or the fault would recur forever at one
/// instant. Exponential and log-normal draws are positive; a normal can draw 0 once clamped.
fn every(src: &Source, node: &Node) -> Res<Dist> {
    let d = dist(src, node)?;
    check_time_dist(src, node, &d, 0.0, &format!("an interval in milliseconds in [0, {MAX_TIME_TEXT}]"))?;
    let ok = match &d {
        Dist::Exponential(_) | Dist::LogNormal { .. } => true,
        Dist::Normal { .. } => false,
        other => other.min_value() > 0.0,
    };
    if !ok {
        return Err(node.err(
            src,
            format!("expected an interval above 0 (a number, or a distribution that cannot draw 0 or less), found {d}"),
        ));
    }
    Ok(d)
}

/// Reads `faults`, recording every selector in `mentions`.
pub(crate) fn faults(src: &Source, root: &Tab, mentions: &mut Mentions) -> Res<Vec<FaultSpec>> {
    let Some(node) = root.get("faults") else {
        return Ok(Vec::new());
    };
    node.as_array(src, "an array of tables ([[faults]])")?.iter().map(|n| fault(src, n, mentions)).collect()
}

fn fault(src: &Source, node: &Node, mentions: &mut Mentions) -> Res<FaultSpec> {
    let kinds = FAULT_KINDS.join(", ");
    let tab = node.as_table(src, &format!("a fault table with `kind` (one of {kinds}), `target` and `at_ms`"))?;
    let kind_node = tab.required(src, "kind", &format!("one of {kinds}"))?;
    let kind = kind_node.as_str(src, &format!("one of {kinds}"))?;
    if !FAULT_KINDS.contains(&kind) {
        return Err(kind_node.err(src, format!("unknown fault kind {}; valid kinds: {kinds}", quote(kind))));
    }
    check_keys(src, &tab, kind)?;

    let targets = if kind == "partition" {
        Vec::new()
    } else {
        let t = tab.required(src, "target", "a selector or an array of selectors")?;
        selectors(src, t, Some(mentions))?
    };
    let at_ms = time(src, tab.required(src, "at_ms", "a time in milliseconds (number or distribution)")?)?;
    let duration_ms = tab.get("duration_ms").map(|n| time(src, n)).transpose()?;
    let every_ms = tab.get("every_ms").map(|n| every(src, n)).transpose()?;
    let probability = tab.get("probability").map(|n| fraction(src, n)).transpose()?.unwrap_or(1.0);

    let kind = match kind {
        "crash" => {
            let valid = CrashKind::NAMES.iter().map(|m| quote(m)).collect::<Vec<_>>().join(", ");
            let mode = match tab.get("mode") {
                None => CrashKind::default(),
                Some(n) => {
                    let name = n.as_str(src, &format!("one of {valid}"))?;
                    CrashKind::parse(name).ok_or_else(|| {
                        n.err(src, format!("unknown crash mode {}; valid modes: {valid}", quote(name)))
                    })?
                }
            };
            FaultKind::Crash { mode }
        }
        "pause" => FaultKind::Pause,
        "isolate" => FaultKind::Isolate,
        "clock_jump" => {
            let n = tab.required(src, "by_ms", "a clock step in milliseconds (may be negative)")?;
            FaultKind::ClockJump { by_ms: signed_time(src, n, "a clock step")? }
        }
        "clock_drift" => {
            let n = tab.required(src, "ppm", "a clock rate error in ppm")?;
            FaultKind::ClockDrift { ppm: ppm(src, n)? }
        }
        "slow" => {
            let n = tab.required(src, "latency_ms", "the added delay in milliseconds")?;
            FaultKind::Slow { latency_ms: time(src, n)? }
        }
        "loss" => {
            let n = tab.required(src, "rate", "a drop probability in [0, 1]")?;
            FaultKind::Loss { rate: fraction(src, n)? }
        }
        _ => partition(src, &tab, mentions)?,
    };
    Ok(FaultSpec { kind, targets, at_ms, duration_ms, every_ms, probability })
}

fn partition(src: &Source, tab: &Tab, mentions: &mut Mentions) -> Res<FaultKind> {
    let expected = "at least 2 groups, each an array of selectors: [[\"server-0\"], [\"server-1\", \"server-2\"]]";
    let node = tab.required(src, "groups", expected)?;
    let items = node.as_array(src, expected)?;
    if items.len() < 2 {
        return Err(node.err(src, format!("expected {expected}, found {} group(s)", items.len())));
    }
    let mut groups = Vec::new();
    for (i, g) in items.iter().enumerate() {
        let members = g.as_array(src, "a group: an array of selectors")?;
        if members.is_empty() {
            return Err(g.err(src, format!("group {} is empty: expected at least one selector", i)));
        }
        let sels = members.iter().map(|m| selector(src, m, None)).collect::<Res<Vec<_>>>()?;
        mentions.group(sels.clone(), i, g);
        groups.push(sels);
    }
    let one_way = tab.get("one_way").map(|n| n.as_bool(src)).transpose()?.unwrap_or(false);
    mentions.partition(groups.clone(), one_way, node);
    Ok(FaultKind::Partition { groups, one_way })
}
