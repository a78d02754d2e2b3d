//! The facts an explanation tells, in true-time order: the grants, faults, model notes (expiry,
//! lost sessions), resumes, writes, releases and the violation itself, each with the node it
//! happened on, that node's clock readings, a sentence for the narrative and a short label for
//! the diagram. Every number in them is read from the history or the trace.

use locksim_simulator::checker::intervals::EndCause;
use locksim_simulator::checker::Interval;
use locksim_simulator::directory::NodeId;
use locksim_simulator::history::{FaultWindow, History, HistoryEvent};
use locksim_simulator::time::Nanos;
use locksim_simulator::trace::Trace;

use super::fmt::{fmt_ms, fmt_span, fmt_wall, token_text};
use super::incident::{Incident, Parties, Write};
use super::recorded;

/// What a fact is, for the diagram's marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FactKind {
    /// A grant.
    Grant,
    /// A fault starting (or already on) on a node.
    Fault,
    /// A model's note about an expiry, a lost session or lease.
    Expiry,
    /// A paused node running again.
    Resume,
    /// A write reaching the resource.
    Write,
    /// A hold ending (released, abandoned, crashed) or the library saying it is lost.
    End,
    /// The violation.
    Violation,
}

/// One thing the explanation tells.
#[derive(Clone, Debug, PartialEq)]
pub struct Fact {
    /// True time.
    pub at_ns: Nanos,
    /// The node's name (`-` for the simulator: the violation).
    pub node: String,
    /// What it is.
    pub kind: FactKind,
    /// The narrative's sentence.
    pub sentence: String,
    /// The diagram's label.
    pub label: String,
    /// The node's monotonic and wall clock readings then, when the trace has them.
    pub clocks: Option<(Nanos, i64)>,
    /// After the violation: told as what followed.
    pub after: bool,
}

/// The workload gives up a resource write not answered this long after it was sent.
const WRITE_TIMEOUT_NS: Nanos = locksim_simulator::workload::RESOURCE_TIMEOUT_NS;

/// Words in a model's note that say a lock, session or lease ran out or was taken away.
const EXPIRY_WORDS: [&str; 9] =
    ["expire", "revoke", "lost", "session over", "ran out", "renew deadline", "onstoppedleading", "gone", "deleted"];

fn is_expiry_note(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    EXPIRY_WORDS.iter().any(|w| t.contains(w))
}

/// Words of a note that look like identifiers (a session or lease id): digits in them, 3+ chars.
fn ids(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() >= 3 && w.bytes().any(|b| b.is_ascii_digit()))
        .collect()
}

/// Builds the facts of `incident` over `[start_ns, violation]`, plus what followed for the
/// earlier party until its hold ended.
pub struct StoryInput<'a> {
    /// The run's history.
    pub history: &'a History,
    /// The run's trace.
    pub trace: &'a Trace,
    /// The violation and its parties.
    pub incident: &'a Incident,
    /// Where the story starts.
    pub start_ns: Nanos,
}

impl StoryInput<'_> {
    fn name(&self, id: NodeId) -> String {
        self.history.client_name(id)
    }

    fn fact(&self, at_ns: Nanos, node: &str, kind: FactKind, sentence: String, label: String) -> Fact {
        let clocks = recorded::clocks(self.trace, node, at_ns);
        Fact {
            at_ns,
            node: node.to_string(),
            kind,
            sentence,
            label,
            clocks,
            after: at_ns > self.incident.violation.at_ns,
        }
    }

    fn grant(&self, iv: &Interval, extra: &str) -> Fact {
        let who = self.name(iv.client);
        let sentence = format!(
            "{who} was granted key {} at {} (grant {}, {}){extra}.",
            iv.key,
            fmt_ms(iv.start_ns),
            iv.grant,
            token_text(iv.token)
        );
        let label = format!("granted, {}", token_text(iv.token));
        self.fact(iv.start_ns, &who, FactKind::Grant, sentence, label)
    }

    fn write(&self, w: &Write, tail: &str) -> Fact {
        let who = self.name(w.client);
        let fenced = if !self.history.fenced {
            "there is no token to fence it with".to_string()
        } else if w.fenced_accepted {
            "the fenced resource accepted it too".to_string()
        } else {
            "the fenced resource rejected it".to_string()
        };
        let sentence = format!(
            "{who}'s write of {} under grant {} ({}) reached the resource at {}{tail}; the unfenced resource \
             accepted it, {fenced}.",
            w.value,
            w.grant,
            token_text(w.token),
            fmt_ms(w.at_ns)
        );
        let label = format!("write {} ({})", w.value, token_text(w.token));
        self.fact(w.at_ns, "resource", FactKind::Write, sentence, label)
    }

    fn fault(&self, f: &FaultWindow) -> Fact {
        let verb = match f.kind {
            "pause" => "was paused",
            "crash (process)" => "had its process killed",
            "crash (machine)" | "crash" => "went down (host failure)",
            "clock_jump" => "had its clock stepped",
            "clock_drift" => "started drifting",
            "isolate" => "was isolated from the network",
            "slow" => "got a slow network",
            "loss" => "started losing messages",
            "partition" => "was partitioned",
            _ => "had a fault",
        };
        let who = if f.kind == "partition" { format!("The network ({})", f.targets) } else { f.targets.clone() };
        let when = match f.end_ns {
            Some(end) if end > f.start_ns => {
                format!("at {} for {} (to {})", fmt_ms(f.start_ns), fmt_span(end - f.start_ns), fmt_ms(end))
            }
            Some(_) => format!("at {}", fmt_ms(f.start_ns)),
            None => format!("at {} to the end of the run", fmt_ms(f.start_ns)),
        };
        let node = f.targets.split([',', ' ', '[', ']', '|']).find(|w| !w.is_empty()).unwrap_or("-").to_string();
        let label = format!("{} starts", f.kind);
        self.fact(f.start_ns, &node, FactKind::Fault, format!("{who} {verb} {when}."), label)
    }

    fn hold_end(&self, iv: &Interval) -> Option<Fact> {
        let who = self.name(iv.client);
        let how = match iv.end {
            EndCause::Released => "released it",
            EndCause::Abandoned => "gave it up as lost (abandoned)",
            EndCause::Crashed => "crashed holding it",
            EndCause::RunEnd => return None,
        };
        let sentence = format!("{who}'s hold of key {} ended at {}: it {how}.", iv.key, fmt_ms(iv.end_ns));
        Some(self.fact(iv.end_ns, &who, FactKind::End, sentence, how.replace(" it", "").to_string()))
    }

    /// Every fact, in true-time order (ties in the order found: the earlier party first).
    pub fn facts(&self) -> Vec<Fact> {
        let v = &self.incident.violation;
        let at = v.at_ns;
        let clients = self.incident.clients();
        let names: Vec<String> = clients.iter().map(|&c| self.name(c)).collect();
        let mut facts = Vec::new();
        // What the violation is about; how far "what followed" goes.
        let mut follow_to = at;
        let mut stale_grant = None;
        let mut hold_end = None;
        match &self.incident.parties {
            Parties::Overlap { earlier, later } => {
                facts.push(self.grant(earlier, ""));
                let still = format!(" while {} still held it", self.name(earlier.client));
                facts.push(self.grant(later, &still));
                // The resource answers a write within 1 s or it is given up: a write of the earlier
                // grant can still land that long after its hold ended.
                follow_to = earlier.end_ns;
                stale_grant = Some((earlier.client, earlier.grant));
                // Told after the party's own events of that instant (its library's lost notice).
                hold_end = self.hold_end(earlier).filter(|f| f.at_ns > at);
            }
            Parties::Stale { writer, next, write } => {
                facts.push(self.grant(writer, ""));
                facts.push(self.grant(next, ""));
                facts.push(self.write(write, " after that later grant"));
            }
            Parties::TokenRegression { bar, regressed } => {
                facts.push(self.grant(bar, ""));
                let extra = format!(", not above {} granted to {}", token_text(bar.token), self.name(bar.client));
                facts.push(self.grant(regressed, &extra));
            }
            Parties::LostUpdate { previous, clobber } => {
                if let Some(p) = previous {
                    facts.push(self.write(p, ""));
                }
                let over = previous.as_ref().map_or(String::new(), |p| format!(" over the {} already there", p.value));
                facts.push(self.write(clobber, &over));
            }
            Parties::Unknown => {}
        }
        let window_end = follow_to.max(at);

        // Faults on the parties (or the whole network) that were on at some point of the window.
        for f in &self.history.faults {
            let end = f.end_ns.unwrap_or(Nanos::MAX);
            let on_party = names.iter().any(|n| f.targets.split([',', ' ', '[', ']', '|']).any(|w| w == n));
            if (on_party || f.kind == "partition") && f.start_ns <= at && end >= self.start_ns {
                facts.push(self.fault(f));
            }
        }
        // A paused party running again.
        for r in recorded::resumes(self.trace, self.start_ns, window_end) {
            if names.contains(&r.node) {
                let sentence = format!("{} resumed at {} ({}).", r.node, fmt_ms(r.at_ns), r.text);
                facts.push(self.fact(r.at_ns, &r.node, FactKind::Resume, sentence, "resumes".to_string()));
            }
        }
        // Messages that reached a paused party.
        for n in &names {
            let q = recorded::queued(self.trace, n, self.start_ns, at);
            if let (Some(first), Some(last)) = (q.first(), q.last()) {
                let what = first.text.trim_start_matches("← ").trim_end_matches(" (queued: paused)");
                let sentence = if q.len() == 1 {
                    format!(
                        "A message reached {n} at {} while it was paused (from {what}) and waited for the resume.",
                        fmt_ms(first.at_ns)
                    )
                } else {
                    format!(
                        "{} messages reached {n} while it was paused, from {} (the first from {what}) to {}, and \
                         waited for the resume.",
                        q.len(),
                        fmt_ms(first.at_ns),
                        fmt_ms(last.at_ns)
                    )
                };
                facts.push(self.fact(
                    first.at_ns,
                    n,
                    FactKind::End,
                    sentence,
                    format!("{} message(s) queued while paused", q.len()),
                ));
            }
        }
        facts.extend(self.expiry_notes(&names, window_end));
        facts.extend(self.party_events(&clients, at, follow_to, stale_grant));
        facts.extend(hold_end);
        let detail = v.detail.clone();
        let what = match v.kind {
            "overlap" => "two clients held the lock at once".to_string(),
            "stale_unfenced" => "a superseded holder's write was accepted by the unfenced resource".to_string(),
            "stale_fenced" => "a superseded holder's write was accepted even by the fenced resource".to_string(),
            "token_regression" => "a fencing token went backwards".to_string(),
            "lost_update" => "an increment was lost".to_string(),
            other => other.replace('_', " "),
        };
        facts.push(Fact {
            at_ns: at,
            node: "-".to_string(),
            kind: FactKind::Violation,
            sentence: format!("Violation ({}) at {}: {what}. The checker: {detail}.", v.kind, fmt_ms(at)),
            label: v.kind.to_string(),
            clocks: None,
            after: false,
        });
        // In time order; the violation after what happened at its instant, what followed last.
        facts.sort_by_key(|f| (f.at_ns, rank(f.kind)));
        let mut seen = std::collections::BTreeSet::new();
        facts.retain(|f| seen.insert(f.sentence.clone()));
        facts
    }

    /// Model notes on the parties and servers saying something ran out (a session, a lease, a
    /// key's validity). A server's note naming an id (a session or lease number) is kept only
    /// when a party's own notes name the same id, so another client's expiry is not told.
    fn expiry_notes(&self, names: &[String], to_ns: Nanos) -> Vec<Fact> {
        let party_notes: Vec<recorded::Note> =
            recorded::notes(self.trace, 0, to_ns).into_iter().filter(|n| names.contains(&n.node)).collect();
        let mut out = Vec::new();
        for n in recorded::notes(self.trace, self.start_ns, to_ns) {
            if !is_expiry_note(&n.text) {
                continue;
            }
            let party = names.contains(&n.node);
            let node_ids = ids(&n.text);
            let link = if party {
                None
            } else {
                if n.node.starts_with("client-") {
                    continue; // another client's own troubles
                }
                let link = node_ids.iter().find_map(|id| {
                    party_notes.iter().find(|p| p.at_ns <= n.at_ns && ids(&p.text).contains(id)).map(|p| (id, p))
                });
                if link.is_none() && !node_ids.is_empty() {
                    continue;
                }
                link
            };
            let mut sentence = format!("{} recorded at {}: “{}”", n.node, fmt_ms(n.at_ns), n.text);
            if let Some((id, p)) = link {
                sentence.push_str(&format!(
                    " ({id} is {}'s: {} recorded “{}” at {})",
                    p.node,
                    p.node,
                    p.text,
                    fmt_ms(p.at_ns)
                ));
            }
            sentence.push('.');
            out.push(self.fact(n.at_ns, &n.node, FactKind::Expiry, sentence, n.text.clone()));
        }
        // A busy library can repeat itself: the first few tell the story.
        out.truncate(8);
        out
    }

    /// The parties' own history events in the window that bear on the lock: lost notices,
    /// failed releases, crashes; and, after the violation, the earlier party's writes until its
    /// hold ended.
    fn party_events(
        &self,
        clients: &[NodeId],
        at: Nanos,
        follow_to: Nanos,
        stale_grant: Option<(NodeId, u64)>,
    ) -> Vec<Fact> {
        let key = self.incident.key;
        let mut out = Vec::new();
        for e in &self.history.events {
            // A write of the stale grant may land up to the resource's time-out after its hold ended.
            let is_write = matches!(e.event, HistoryEvent::ResourceWrite { .. });
            let until = if is_write { follow_to.saturating_add(WRITE_TIMEOUT_NS) } else { follow_to };
            if e.at_ns < self.start_ns || e.at_ns > until.max(at) {
                continue;
            }
            let who = self.name(e.node);
            match &e.event {
                HistoryEvent::LostNotice { key: k } if clients.contains(&e.node) && Some(*k) == key => {
                    let sentence = format!("{who}'s lock library reported key {k} lost at {}.", fmt_ms(e.at_ns));
                    out.push(self.fact(e.at_ns, &who, FactKind::End, sentence, "told: lock lost".to_string()));
                }
                HistoryEvent::ReleaseFailed { key: k, reason } if clients.contains(&e.node) && Some(*k) == key => {
                    let sentence = format!("{who}'s release of key {k} failed at {} ({reason:?}).", fmt_ms(e.at_ns));
                    out.push(self.fact(e.at_ns, &who, FactKind::End, sentence, "release failed".to_string()));
                }
                HistoryEvent::ClientCrashed if clients.contains(&e.node) => {
                    let sentence = format!("{who} crashed at {}.", fmt_ms(e.at_ns));
                    out.push(self.fact(e.at_ns, &who, FactKind::End, sentence, "crashed".to_string()));
                }
                HistoryEvent::ResourceWrite { client, key: k, grant, token, value, fenced_accepted }
                    if e.at_ns > at && Some(*k) == key && stale_grant == Some((*client, *grant)) =>
                {
                    let w = Write {
                        at_ns: e.at_ns,
                        client: *client,
                        grant: *grant,
                        token: *token,
                        value: *value,
                        fenced_accepted: *fenced_accepted,
                    };
                    out.push(self.write(&w, ""));
                }
                _ => {}
            }
        }
        out
    }
}

/// The order of facts at one instant: a fault or a resume first (they make the rest happen),
/// the violation last.
fn rank(kind: FactKind) -> u8 {
    match kind {
        FactKind::Fault | FactKind::Resume => 0,
        FactKind::Grant => 1,
        FactKind::Expiry => 2,
        FactKind::End => 3,
        FactKind::Write => 4,
        FactKind::Violation => 5,
    }
}

/// The narrative: numbered sentences, what followed the violation introduced once.
pub fn sentences(facts: &[Fact]) -> Vec<String> {
    let mut out = Vec::new();
    let mut after_said = false;
    for (i, f) in facts.iter().enumerate() {
        let mut s = f.sentence.clone();
        if f.after && !after_said {
            after_said = true;
            s = format!("Afterwards: {s}");
        }
        if let Some((mono, wall)) = f.clocks {
            // A clock that does not read true time (drift, steps, offsets) is part of the story.
            let off = |v: i128| (v - f.at_ns as i128).abs() >= 1_000;
            if off(mono as i128) || off(wall as i128) {
                s.pop();
                s.push_str(&format!(
                    " ({}'s clocks then read mono {} and wall {}).",
                    f.node,
                    fmt_ms(mono),
                    fmt_wall(wall)
                ));
            }
        }
        out.push(format!("{}. {s}", i + 1));
    }
    out
}
