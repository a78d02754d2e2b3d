//! The space-time diagram's data, from an explanation's facts and the trace's messages: which
//! nodes get a lane, which stretches are drawn to scale (the busy ones around the facts) and
//! which quiet ones are elided, and every message, fault window and mark on those lanes.

use std::collections::BTreeMap;

use locksim_charts::{Elided, MarkKind, SpaceMark, SpaceMessage, SpaceWindow, SpacetimeChart, Span};
use locksim_simulator::history::History;
use locksim_simulator::time::{ns_to_ms, Nanos};
use locksim_simulator::trace::Trace;

use super::fmt::{fmt_span, fmt_wall};
use super::recorded::{self, Message};
use super::story::{Fact, FactKind};

/// At most this many server lanes (those that exchanged the most messages with the parties).
const MAX_SERVER_LANES: usize = 5;
/// At most this many arrows (the first ones in time).
const MAX_MESSAGES: usize = 400;
/// The least padding around a busy stretch.
const MIN_PAD_NS: Nanos = 1_000_000;

/// The stretches drawn to scale: the facts' times grouped where they are close, each group padded.
/// Two groups are apart when more than a twentieth of the whole story (and at least 5 ms) lies
/// between them: that stretch is elided.
pub fn busy_stretches(times: &[Nanos]) -> Vec<(Nanos, Nanos)> {
    let mut times: Vec<Nanos> = times.to_vec();
    times.sort_unstable();
    let (Some(&first), Some(&last)) = (times.first(), times.last()) else { return Vec::new() };
    let gap = ((last - first) / 20).max(5_000_000);
    let mut groups: Vec<(Nanos, Nanos)> = Vec::new();
    for t in times {
        match groups.last_mut() {
            Some((_, end)) if t - *end <= gap => *end = t,
            _ => groups.push((t, t)),
        }
    }
    let mut padded: Vec<(Nanos, Nanos)> = Vec::new();
    for (a, b) in groups {
        let pad = ((b - a) / 4).max(MIN_PAD_NS);
        let (a, b) = (a.saturating_sub(pad), b + pad);
        match padded.last_mut() {
            Some((_, end)) if a <= *end => *end = (*end).max(b),
            _ => padded.push((a, b)),
        }
    }
    padded
}

/// Builds the diagram. `parties` are the clients' names, earlier party first.
pub fn build(title: String, history: &History, trace: &Trace, facts: &[Fact], parties: &[String]) -> SpacetimeChart {
    let times: Vec<Nanos> = facts.iter().map(|f| f.at_ns).collect();
    let stretches = busy_stretches(&times);
    let (Some(&(from_ns, _)), Some(&(_, to_ns))) = (stretches.first(), stretches.last()) else {
        return SpacetimeChart { title, ..SpacetimeChart::default() };
    };
    let in_shown = |t: Nanos| stretches.iter().any(|&(a, b)| t >= a && t <= b);
    let messages = recorded::messages(trace, from_ns, to_ns);

    // Lanes: the parties, the servers they talked to in the shown stretches (busiest first) and
    // nodes with a fact of their own, then the resource.
    let mut talk: BTreeMap<&str, usize> = BTreeMap::new();
    for m in messages.iter().filter(|m| in_shown(m.sent_ns)) {
        for (a, b) in [(&m.from, &m.to), (&m.to, &m.from)] {
            if parties.contains(a) && !parties.contains(b) && b != "resource" {
                *talk.entry(b.as_str()).or_default() += 1;
            }
        }
    }
    let mut servers: Vec<(&str, usize)> = talk.into_iter().collect();
    servers.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut middle: Vec<String> = servers.iter().take(MAX_SERVER_LANES).map(|(s, _)| s.to_string()).collect();
    for f in facts {
        let own = f.node != "-" && f.node != "resource" && !parties.contains(&f.node);
        if own && !middle.contains(&f.node) && history.node_names.contains(&f.node) {
            middle.push(f.node.clone());
        }
    }
    middle.sort();
    let mut lanes: Vec<String> = Vec::new();
    lanes.extend(parties.first().cloned());
    lanes.extend(middle);
    lanes.extend(parties.iter().skip(1).cloned());
    let resource_used = facts.iter().any(|f| f.node == "resource")
        || messages.iter().any(|m| in_shown(m.sent_ns) && (m.to == "resource" || m.from == "resource"));
    if resource_used {
        lanes.push("resource".to_string());
    }
    let lane_of = |name: &str| lanes.iter().position(|l| l == name);

    // Messages between lanes: drawn where both ends are shown; the others are counted in the break.
    // Traffic among servers (replication, heartbeats) is drawn only where a server recorded an
    // expiry: there it carries the news; elsewhere it buries the clients' messages.
    let expiry_stretch = |t: Nanos| {
        stretches.iter().any(|&(a, b)| {
            t >= a && t <= b && facts.iter().any(|f| f.kind == FactKind::Expiry && f.at_ns >= a && f.at_ns <= b)
        })
    };
    let involves_party = |m: &Message| [&m.from, &m.to].iter().any(|n| parties.contains(n) || n.as_str() == "resource");
    let mut drawn = Vec::new();
    let mut skipped = vec![0usize; stretches.len().saturating_sub(1)];
    for m in &messages {
        let (Some(from), Some(to)) = (lane_of(&m.from), lane_of(&m.to)) else { continue };
        if !involves_party(m) && !expiry_stretch(m.sent_ns) {
            continue;
        }
        let ends_shown = in_shown(m.sent_ns) && m.arrive_ns.is_none_or(in_shown);
        if ends_shown && drawn.len() < MAX_MESSAGES {
            drawn.push(space_message(m, from, to));
        } else if let Some(i) = stretches.windows(2).position(|w| m.sent_ns > w[0].1 && m.sent_ns < w[1].0) {
            skipped[i] += 1;
        }
    }
    let elided = stretches
        .windows(2)
        .zip(&skipped)
        .map(|(w, &n)| {
            let mut note = format!("{} elided: nothing told", fmt_span(w[1].0 - w[0].1));
            if n > 0 {
                note.push_str(&format!("; {n} message(s) between these lanes not drawn"));
            }
            Elided { span: Span::new(ns_to_ms(w[0].1), ns_to_ms(w[1].0)), note }
        })
        .collect();

    let windows = history
        .faults
        .iter()
        .flat_map(|f| {
            let end = f.end_ns.unwrap_or(history.duration_ns).min(to_ns);
            let start = f.start_ns.max(from_ns);
            let targets: Vec<&str> = f.targets.split([',', ' ', '[', ']', '|']).filter(|w| !w.is_empty()).collect();
            let lanes = targets.into_iter().filter_map(&lane_of).collect::<Vec<_>>();
            let kind = f.kind.to_string();
            lanes.into_iter().filter(move |_| start <= end).map(move |lane| SpaceWindow {
                lane,
                kind: kind.clone(),
                span: Span::new(ns_to_ms(start), ns_to_ms(end)),
            })
        })
        .collect();

    let marks = facts
        .iter()
        .filter_map(|f| {
            let kind = match f.kind {
                FactKind::Grant => MarkKind::Grant,
                FactKind::Fault => MarkKind::Fault,
                FactKind::Expiry => MarkKind::Expiry,
                FactKind::Resume => MarkKind::Resume,
                FactKind::Write => MarkKind::Write,
                FactKind::End => MarkKind::End,
                FactKind::Violation => MarkKind::Violation,
            };
            let lane = if kind == MarkKind::Violation { 0 } else { lane_of(&f.node)? };
            Some(SpaceMark {
                lane,
                at_ms: ns_to_ms(f.at_ns),
                kind,
                label: f.label.clone(),
                clock: f.clocks.map(|(_, wall)| format!("wall {}", fmt_wall(wall))),
            })
        })
        .collect();

    SpacetimeChart {
        title,
        lanes,
        shown: stretches.iter().map(|&(a, b)| Span::new(ns_to_ms(a), ns_to_ms(b))).collect(),
        elided,
        messages: drawn,
        windows,
        marks,
    }
}

fn space_message(m: &Message, from: usize, to: usize) -> SpaceMessage {
    SpaceMessage {
        from,
        to,
        sent_ms: ns_to_ms(m.sent_ns),
        arrive_ms: m.arrive_ns.map(ns_to_ms),
        lost: m.lost,
        label: m.label.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn quiet_stretches_between_busy_ones_are_left_out() {
        let s = busy_stretches(&[306 * MS, 307 * MS, 42_000 * MS, 42_001 * MS]);
        assert_eq!(s.len(), 2, "{s:?}");
        assert!(s[0].0 < 306 * MS && s[0].1 > 307 * MS && s[0].1 < 1_000 * MS, "{s:?}");
        assert!(s[1].0 < 42_000 * MS && s[1].1 > 42_001 * MS);
        // Evenly spread facts: one stretch, nothing elided.
        let even: Vec<Nanos> = (0..30).map(|i| i * 10 * MS).collect();
        assert_eq!(busy_stretches(&even).len(), 1);
        assert!(busy_stretches(&[]).is_empty());
    }
}
