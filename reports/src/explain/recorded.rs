//! What the trace recorded, read back as typed facts: messages (sent, delivered, lost), notes,
//! resumes, and each node's clock readings at an instant. The trace is text meant for people
//! (`→ server-0 Set{…} (arrives 12.345 ms)`); this module is the one place that reads that form,
//! and it reads only what the engine writes (`simulator/src/engine/mod.rs`).

use locksim_simulator::time::Nanos;
use locksim_simulator::trace::{Trace, TraceEntry};

/// A message between two nodes as the trace recorded it.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// The sender's name.
    pub from: String,
    /// The receiver's name.
    pub to: String,
    /// When it was sent (true time).
    pub sent_ns: Nanos,
    /// When it reached the receiver, as the send recorded it; `None` when it never left the
    /// sender's side (lost on the way, a cut link).
    pub arrive_ns: Option<Nanos>,
    /// It never got through: dropped on the way or refused at the receiver.
    pub lost: bool,
    /// The message, shortened for a label (`Write { key: 0, … }` → `Write`).
    pub label: String,
}

/// A `note` a model wrote, or a `resume` of a paused node.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    /// True time.
    pub at_ns: Nanos,
    /// The node.
    pub node: String,
    /// The text.
    pub text: String,
}

/// The part of a `send`/`drop` detail after the arrow: `(peer, message, suffix in parentheses)`.
fn split_detail(detail: &str) -> Option<(&str, &str, &str)> {
    let rest = detail.strip_prefix("→ ").or_else(|| detail.strip_prefix("← "))?;
    let (peer, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    match rest.rfind(" (") {
        Some(i) if rest.ends_with(')') => Some((peer, &rest[..i], &rest[i + 2..rest.len() - 1])),
        _ => Some((peer, rest, "")),
    }
}

/// `12.345 ms` as written by the engine (`{:.3}`), in nanoseconds.
fn parse_ms(text: &str) -> Option<Nanos> {
    let ms: f64 = text.trim().strip_suffix("ms")?.trim().parse().ok()?;
    (ms.is_finite() && ms >= 0.0).then(|| (ms * 1e6).round() as Nanos)
}

/// A message's text cut to a short label: its first word (two when the first is a sequence
/// number such as ZooKeeper's `#3`), without the fields.
pub fn short_label(msg: &str) -> String {
    let mut words = msg.split_whitespace();
    let first = words.next().unwrap_or("");
    let word = if first.starts_with('#') { words.next().unwrap_or(first) } else { first };
    let cut = word.find(['{', '(', '[']).unwrap_or(word.len());
    let label = word[..cut].trim_end_matches([',', ':']);
    if label.is_empty() {
        msg.chars().take(16).collect()
    } else {
        label.chars().take(24).collect()
    }
}

/// Every message sent in `[from_ns, to_ns]`, in trace order. A send the receiver dropped (host
/// down, process down, link cut in flight) is marked lost at its arrival.
pub fn messages(trace: &Trace, from_ns: Nanos, to_ns: Nanos) -> Vec<Message> {
    let entries = window(trace, from_ns, to_ns.saturating_add(60_000_000_000));
    let mut out = Vec::new();
    for e in entries.iter().filter(|e| e.at_ns <= to_ns) {
        let Some((peer, msg, suffix)) = split_detail(&e.detail) else { continue };
        if !e.detail.starts_with('→') {
            continue;
        }
        let label = if msg.starts_with("connection reset") { "reset".to_string() } else { short_label(msg) };
        match e.kind {
            "send" | "reset" => {
                let arrive_ns =
                    suffix.strip_prefix("arrives ").and_then(|s| parse_ms(s.split(',').next().unwrap_or("")));
                let lost = arrive_ns.is_some_and(|at| dropped_at_receiver(entries, &e.node, peer, at));
                out.push(Message {
                    from: e.node.clone(),
                    to: peer.to_string(),
                    sent_ns: e.at_ns,
                    arrive_ns,
                    lost,
                    label,
                });
            }
            "drop" => out.push(Message {
                from: e.node.clone(),
                to: peer.to_string(),
                sent_ns: e.at_ns,
                arrive_ns: None,
                lost: true,
                label,
            }),
            _ => {}
        }
    }
    out
}

/// Whether `to` dropped a message from `from` arriving at `at_ns` (the send's arrival is written
/// to the microsecond, so within half a microsecond).
fn dropped_at_receiver(entries: &[TraceEntry], from: &str, to: &str, at_ns: Nanos) -> bool {
    let lo = entries.partition_point(|e| e.at_ns + 500 < at_ns);
    entries[lo..].iter().take_while(|e| e.at_ns <= at_ns + 500).any(|e| {
        e.kind == "drop"
            && e.node == to
            && e.detail.starts_with('←')
            && split_detail(&e.detail).is_some_and(|(peer, _, _)| peer == from)
    })
}

/// The trace entries in `[from_ns, to_ns]` (the trace is in true-time order).
pub fn window(trace: &Trace, from_ns: Nanos, to_ns: Nanos) -> &[TraceEntry] {
    let lo = trace.entries.partition_point(|e| e.at_ns < from_ns);
    let hi = trace.entries.partition_point(|e| e.at_ns <= to_ns);
    &trace.entries[lo..hi.max(lo)]
}

/// Every `note` in `[from_ns, to_ns]`.
pub fn notes(trace: &Trace, from_ns: Nanos, to_ns: Nanos) -> Vec<Note> {
    of_kind(trace, "note", from_ns, to_ns)
}

/// Every `resume` (a paused node running again) in `[from_ns, to_ns]`.
pub fn resumes(trace: &Trace, from_ns: Nanos, to_ns: Nanos) -> Vec<Note> {
    of_kind(trace, "resume", from_ns, to_ns)
}

/// Messages that reached `node` while it was paused (`queued`), in `[from_ns, to_ns]`.
pub fn queued(trace: &Trace, node: &str, from_ns: Nanos, to_ns: Nanos) -> Vec<Note> {
    of_kind(trace, "queued", from_ns, to_ns).into_iter().filter(|n| n.node == node).collect()
}

fn of_kind(trace: &Trace, kind: &str, from_ns: Nanos, to_ns: Nanos) -> Vec<Note> {
    window(trace, from_ns, to_ns)
        .iter()
        .filter(|e| e.kind == kind)
        .map(|e| Note { at_ns: e.at_ns, node: e.node.clone(), text: e.detail.clone() })
        .collect()
}

/// `node`'s monotonic and wall clock readings at `at_ns`, from any entry of that node at that
/// instant (every entry records both).
pub fn clocks(trace: &Trace, node: &str, at_ns: Nanos) -> Option<(Nanos, i64)> {
    window(trace, at_ns, at_ns).iter().find(|e| e.node == node).map(|e| (e.mono_ns, e.wall_ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(at_ns: Nanos, node: &str, kind: &'static str, detail: &str) -> TraceEntry {
        let subject = locksim_simulator::traced::Subject::None;
        TraceEntry {
            at_ns,
            node: node.into(),
            mono_ns: at_ns,
            wall_ns: at_ns as i64,
            kind,
            detail: detail.into(),
            subject,
        }
    }

    #[test]
    fn sends_drops_and_refusals_are_read_as_messages() {
        let trace = Trace {
            entries: vec![
                entry(1_000_000, "client-1", "send", "→ server-0 Set { key: 0 } (arrives 1.500 ms)"),
                entry(1_200_000, "client-1", "drop", "→ server-1 Ping (link cut)"),
                entry(1_300_000, "client-1", "send", "→ server-2 #4 Create(x) z1 (arrives 2.000 ms, duplicated)"),
                entry(1_500_000, "server-0", "deliver", "← client-1 Set { key: 0 }"),
                entry(2_000_000, "server-2", "drop", "← client-1 #4 Create(x) z1 (host down)"),
            ],
        };
        let m = messages(&trace, 0, 10_000_000);
        assert_eq!(m.len(), 3);
        assert_eq!(
            (m[0].to.as_str(), m[0].arrive_ns, m[0].lost, m[0].label.as_str()),
            ("server-0", Some(1_500_000), false, "Set")
        );
        assert_eq!(
            (m[1].to.as_str(), m[1].arrive_ns, m[1].lost, m[1].label.as_str()),
            ("server-1", None, true, "Ping")
        );
        assert_eq!((m[2].arrive_ns, m[2].lost, m[2].label.as_str()), (Some(2_000_000), true, "Create"));
    }
}
