//! A checker violation as structured facts: which two holds (or writes) it is about, on which
//! key, and from when to when. The checker's [`Violation`] carries only its kind, time and text,
//! so the parties are found again from the history with the same rules the checks apply (the
//! overlap check's own pairing, the stale-write rule, the token bar, the clobbering write).

use locksim_simulator::checker::{overlap, Interval, Timeline, Violation};
use locksim_simulator::directory::NodeId;
use locksim_simulator::history::{History, HistoryEvent, LockKey};
use locksim_simulator::time::Nanos;

/// A resource write as the history recorded it.
#[derive(Clone, Debug, PartialEq)]
pub struct Write {
    /// When it reached the resource (true time).
    pub at_ns: Nanos,
    /// Who wrote.
    pub client: NodeId,
    /// The writer's grant number.
    pub grant: u64,
    /// The writer's token.
    pub token: Option<u64>,
    /// The value written.
    pub value: u64,
    /// What the fenced resource decided.
    pub fenced_accepted: bool,
}

/// What a violation is about, found again in the history.
#[derive(Clone, Debug, PartialEq)]
pub enum Parties {
    /// Two holds of one key at once: `earlier` was still held when `later` was granted.
    Overlap {
        /// The hold granted first.
        earlier: Interval,
        /// The hold granted while `earlier` was held.
        later: Interval,
    },
    /// A write from a superseded grant: `writer`'s hold, `next` the other client's grant that
    /// superseded it, and the write.
    Stale {
        /// The writer's hold.
        writer: Interval,
        /// The grant that superseded it.
        next: Interval,
        /// The stale write.
        write: Write,
    },
    /// A grant whose token is not above the highest granted before it (`bar`).
    TokenRegression {
        /// The latest earlier grant of the highest token.
        bar: Interval,
        /// The grant that went back.
        regressed: Interval,
    },
    /// A write that did not raise the counter: `clobber` wrote over the value `previous` wrote.
    LostUpdate {
        /// The write that set the counter `clobber` overwrote, if any.
        previous: Option<Write>,
        /// The first write that did not raise the counter.
        clobber: Write,
    },
    /// A violation kind this module does not know: only its recorded text is explained.
    Unknown,
}

/// A violation with its parties.
#[derive(Clone, Debug, PartialEq)]
pub struct Incident {
    /// The checker's violation (kind, time, text).
    pub violation: Violation,
    /// The key, when known.
    pub key: Option<LockKey>,
    /// Who and what it is about.
    pub parties: Parties,
}

impl Incident {
    /// The two clients involved, earlier party first (one, or none, for some lost updates).
    pub fn clients(&self) -> Vec<NodeId> {
        let mut out = match &self.parties {
            Parties::Overlap { earlier, later } => vec![earlier.client, later.client],
            Parties::Stale { writer, next, .. } => vec![writer.client, next.client],
            Parties::TokenRegression { bar, regressed } => vec![bar.client, regressed.client],
            Parties::LostUpdate { previous, clobber } => {
                previous.iter().map(|w| w.client).chain(std::iter::once(clobber.client)).collect()
            }
            Parties::Unknown => Vec::new(),
        };
        out.dedup();
        out
    }

    /// When the story starts: the earlier grant (or write), never after the violation.
    pub fn start_ns(&self, timeline: &Timeline) -> Nanos {
        let at = self.violation.at_ns;
        let start = match &self.parties {
            Parties::Overlap { earlier, .. } => earlier.start_ns,
            Parties::Stale { writer, .. } => writer.start_ns,
            Parties::TokenRegression { bar, .. } => bar.start_ns,
            Parties::LostUpdate { previous, clobber } => {
                let grant_of = |w: &Write| timeline.grant_at.get(w.client, w.grant).unwrap_or(w.at_ns);
                previous.as_ref().map_or(grant_of(clobber), |p| grant_of(p).min(grant_of(clobber)))
            }
            Parties::Unknown => at,
        };
        start.min(at)
    }
}

/// Finds the parties of `violations[index]` (a seed's violations in the order the checker lists
/// them). Several violations of one kind at one instant are told apart by their order, which the
/// checks and this module both take from the history.
pub fn locate(history: &History, violations: &[Violation], index: usize) -> Option<Incident> {
    let v = violations.get(index)?;
    let timeline = Timeline::from_history(history);
    let candidates = candidates(history, &timeline, v.kind);
    // The how-many-th violation of this kind at this instant it is.
    let nth = violations[..index].iter().filter(|w| w.kind == v.kind && w.at_ns == v.at_ns).count();
    let found = candidates.into_iter().filter(|(at, _, _)| *at == v.at_ns).nth(nth);
    let (key, parties) = match found {
        Some((_, key, parties)) => (Some(key), parties),
        None => (None, Parties::Unknown),
    };
    Some(Incident { violation: v.clone(), key, parties })
}

/// Every violation of `kind` as (time, key, parties), in the order the checks offer them.
fn candidates(history: &History, timeline: &Timeline, kind: &str) -> Vec<(Nanos, LockKey, Parties)> {
    let mut out = Vec::new();
    match kind {
        "overlap" => {
            for (&key, kt) in &timeline.keys {
                overlap::for_each_pair(kt, |a, b| {
                    out.push((b.start_ns, key, Parties::Overlap { earlier: a.clone(), later: b.clone() }));
                });
            }
        }
        "stale_unfenced" | "stale_fenced" => {
            for e in &history.events {
                let HistoryEvent::ResourceWrite { client, key, grant, token, value, fenced_accepted } = e.event else {
                    continue;
                };
                if kind == "stale_fenced" && !(history.fenced && fenced_accepted) {
                    continue;
                }
                let (Some(granted), Some(kt)) = (timeline.grant_at.get(client, grant), timeline.keys.get(&key)) else {
                    continue;
                };
                let from = kt.intervals.partition_point(|iv| iv.start_ns <= granted);
                let Some(next) =
                    kt.intervals[from..].iter().take_while(|iv| iv.start_ns <= e.at_ns).find(|iv| iv.client != client)
                else {
                    continue;
                };
                // The writer's hold: the latest of its non-nested grants at or before `granted`.
                let Some(writer) = kt.intervals[..from].iter().rev().find(|iv| iv.client == client) else {
                    continue;
                };
                let write = Write { at_ns: e.at_ns, client, grant, token, value, fenced_accepted };
                out.push((e.at_ns, key, Parties::Stale { writer: writer.clone(), next: next.clone(), write }));
            }
        }
        "token_regression" => {
            for (&key, kt) in &timeline.keys {
                regressions(kt.intervals.as_slice(), key, &mut out);
            }
        }
        "lost_update" => lost_updates(history, &mut out),
        _ => {}
    }
    out
}

/// The token check's bar, replayed: each grant judged against the highest earlier token (shared
/// grants only against exclusive ones), leaked re-grants set apart.
fn regressions(intervals: &[Interval], key: LockKey, out: &mut Vec<(Nanos, LockKey, Parties)>) {
    use locksim_simulator::history::LockMode;
    let mut best_any: Option<(u64, usize)> = None;
    let mut best_exclusive: Option<(u64, usize)> = None;
    let mut previous: Option<NodeId> = None;
    for (i, iv) in intervals.iter().enumerate() {
        let last = previous.replace(iv.client);
        let Some(t) = iv.token else { continue };
        let bar = if iv.mode == LockMode::Shared { best_exclusive } else { best_any };
        match bar {
            Some((max, j)) if t == max && intervals[j].client == iv.client && last == Some(iv.client) => {}
            Some((max, j)) if t <= max => {
                out.push((
                    iv.start_ns,
                    key,
                    Parties::TokenRegression { bar: intervals[j].clone(), regressed: iv.clone() },
                ));
                if t < max {
                    continue;
                }
            }
            _ => {}
        }
        let raise = |bar: &mut Option<(u64, usize)>| {
            if bar.is_none_or(|(m, _)| t >= m) {
                *bar = Some((t, i));
            }
        };
        raise(&mut best_any);
        if iv.mode == LockMode::Exclusive {
            raise(&mut best_exclusive);
        }
    }
}

/// The first write per key that did not raise the counter, with the write it overwrote.
fn lost_updates(history: &History, out: &mut Vec<(Nanos, LockKey, Parties)>) {
    use std::collections::BTreeMap;
    /// Per key: the counter as replayed, the last write, and the first clobber with what it overwrote.
    type KeyWrites = (u64, Option<Write>, Option<(Write, Option<Write>)>);
    let mut keys: BTreeMap<LockKey, KeyWrites> = BTreeMap::new();
    for e in locksim_simulator::checker::intervals::ordered(history) {
        let HistoryEvent::ResourceWrite { client, key, grant, token, value, fenced_accepted } = e.event else {
            continue;
        };
        let w = Write { at_ns: e.at_ns, client, grant, token, value, fenced_accepted };
        let (counter, last, first) = keys.entry(key).or_default();
        if value <= *counter && first.is_none() {
            *first = Some((w.clone(), last.clone()));
        }
        *counter = value;
        *last = Some(w);
    }
    for (key, (_, _, first)) in keys {
        if let Some((clobber, previous)) = first {
            out.push((clobber.at_ns, key, Parties::LostUpdate { previous, clobber }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::checker::check;
    use locksim_simulator::history::{LockMode, Stamped};

    const MS: Nanos = 1_000_000;

    fn at(ms: u64, node: NodeId, event: HistoryEvent) -> Stamped {
        Stamped { at_ns: ms * MS, node, event }
    }

    fn granted(token: u64) -> HistoryEvent {
        HistoryEvent::Granted { key: 0, mode: LockMode::Exclusive, token: Some(token), grant: 1, nested: false }
    }

    /// client 1 holds from 5 ms; client 2 is granted at 40 ms while it still holds; client 1's
    /// write lands at 60 ms after that grant.
    fn history() -> History {
        History {
            events: vec![
                at(5, 1, granted(7)),
                at(40, 2, granted(8)),
                at(50, 2, HistoryEvent::Released { key: 0, nested: false }),
                at(
                    60,
                    3,
                    HistoryEvent::ResourceWrite {
                        client: 1,
                        key: 0,
                        grant: 1,
                        token: Some(7),
                        value: 1,
                        fenced_accepted: false,
                    },
                ),
                at(61, 1, HistoryEvent::Released { key: 0, nested: false }),
            ],
            duration_ns: 100 * MS,
            clients: vec![1, 2],
            fenced: true,
            final_counter: vec![1],
            ..History::default()
        }
    }

    #[test]
    fn each_violation_is_found_again_with_its_parties() {
        let h = history();
        let violations = check(0, &h).violations.clone();
        let kinds: Vec<&str> = violations.iter().map(|v| v.kind).collect();
        assert_eq!(kinds, ["overlap", "stale_unfenced"]);

        let overlap = locate(&h, &violations, 0).unwrap();
        let Parties::Overlap { earlier, later } = &overlap.parties else { panic!("{overlap:?}") };
        assert_eq!((earlier.client, earlier.start_ns, later.client, later.start_ns), (1, 5 * MS, 2, 40 * MS));
        assert_eq!(overlap.clients(), [1, 2]);
        assert_eq!(overlap.start_ns(&Timeline::from_history(&h)), 5 * MS, "the story starts at the earlier grant");

        let stale = locate(&h, &violations, 1).unwrap();
        let Parties::Stale { writer, next, write } = &stale.parties else { panic!("{stale:?}") };
        assert_eq!((writer.client, next.client, write.at_ns, write.token), (1, 2, 60 * MS, Some(7)));
        assert!(locate(&h, &violations, 2).is_none(), "past the last violation");
    }
}
