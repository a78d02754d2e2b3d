//! Checkers: every metric of the results format computed from a run's recorded history, on true
//! time. They read only [`crate::history::History`], never model internals.
//!
//! - [`metrics`]: the per-seed result type
//! - [`intervals`]: holder intervals and waits rebuilt from the history (what every check reads)
//! - `overlap`: V1, overlapping holds on one key
//! - `stale`: V2, writes accepted from a superseded grant, unfenced and fenced
//! - `lost_updates`: increments missing from the final counter
//! - `tokens`: fencing tokens that went backwards, and leaked locks re-granted to their holder
//! - `liveness`: acquisitions, failures, releases, acquire latency, event counters
//! - `wait`: first acquire call of a section to its grant, failed calls included
//! - `fairness`: Jain's index of completed sections per client
//! - `handoff`: release-to-next-grant time when someone was waiting
//! - `unavailable`: time with a waiter and no holder, summed and longest (outage)
//! - `scheduled`: a scheduled job's runs beyond the first in one period (`double_executions`)
//! - [`check`]: history to metrics

pub mod intervals;
pub mod metrics;

mod fairness;
mod handoff;
mod liveness;
mod lost_updates;
pub mod overlap;
pub mod scheduled;
mod stale;
mod tokens;
mod unavailable;
mod wait;

pub use intervals::{Interval, Timeline};
pub use metrics::{SeedMetrics, Violation, ViolationSink, MAX_STORED_VIOLATIONS};

use crate::history::{History, LockMode};
use crate::time::{ns_to_ms, Nanos};

/// Computes every metric of one seed from its history, with every violation's text.
pub fn check(seed: u64, history: &History) -> SeedMetrics {
    check_keeping(seed, history, usize::MAX)
}

/// Computes every metric of one seed from its history, keeping the text of only the first
/// `limit` violations in true-time order (the counts stay exact).
pub fn check_keeping(seed: u64, history: &History, limit: usize) -> SeedMetrics {
    let mut m = SeedMetrics::empty(seed, history.duration_ns, history.fenced);
    let timeline = Timeline::from_history(history);
    let mut violations = ViolationSink::keeping(limit);

    for kt in timeline.keys.values() {
        m.overlap_events += overlap::check_key(kt, &mut violations);
        let tokens = tokens::check_key(kt, &mut violations, &mut m.first_leaked_regrant);
        m.token_regressions += tokens.regressions;
        m.leaked_regrants += tokens.leaked_regrants;
        handoff::check_key(kt, &mut m.handoff_us);
        let unavailable = unavailable::check_key(kt);
        m.unavailable_ns = m.unavailable_ns.saturating_add(unavailable.total_ns);
        m.outage_ns = m.outage_ns.max(unavailable.longest_ns);
    }
    let stale = stale::check(history, &timeline, &mut violations);
    m.stale_unfenced_events = stale.unfenced;
    if history.fenced {
        m.stale_fenced_events = Some(stale.fenced);
    }
    m.lost_updates = lost_updates::check(history, &mut violations);
    m.double_executions = scheduled::check(history, &timeline, &mut violations);

    liveness::count(history, &timeline, &mut m);
    liveness::latency(&timeline, &mut m);
    wait::record(history, &mut m.wait_us);
    m.fairness = fairness::jain(history, &timeline);

    // Each check offers in its own order; reports want true-time order. Ties keep the order
    // offered (by key, then check), so the output stays deterministic.
    let mut violations = violations.into_sorted();
    if !history.node_names.is_empty() {
        for v in &mut violations {
            v.detail = name_clients(&v.detail, history);
        }
    }
    m.violations = violations;
    if !history.node_names.is_empty() {
        if let Some(v) = &mut m.first_leaked_regrant {
            v.detail = name_clients(&v.detail, history);
        }
    }
    m
}

/// The checks write `client <node id>`; people read node names (`client-1`), so the ids are
/// swapped for names in one place rather than in every check.
fn name_clients(detail: &str, history: &History) -> String {
    let mut out = String::with_capacity(detail.len());
    let mut rest = detail;
    while let Some(pos) = rest.find("client ") {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + "client ".len()..];
        let digits = after.bytes().take_while(|b| b.is_ascii_digit()).count();
        match after[..digits].parse::<usize>() {
            Ok(id) if digits > 0 => {
                out.push_str(&history.client_name(id));
                rest = &after[digits..];
            }
            _ => {
                out.push_str("client ");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A true time for a violation's detail, in milliseconds.
pub(crate) fn ms(ns: Nanos) -> String {
    format!("{:.3} ms", ns_to_ms(ns))
}

/// A token for a violation's detail.
pub(crate) fn token(t: Option<u64>) -> String {
    match t {
        Some(t) => format!("token {t}"),
        None => "no token".to_string(),
    }
}

/// A holder interval for a violation's detail: who, how, with what token, from when to when.
pub(crate) fn describe(iv: &Interval) -> String {
    let mode = match iv.mode {
        LockMode::Exclusive => "exclusive",
        LockMode::Shared => "shared",
    };
    let end = match iv.end {
        intervals::EndCause::Released => "released",
        intervals::EndCause::Abandoned => "abandoned",
        intervals::EndCause::Crashed => "crashed",
        intervals::EndCause::RunEnd => "held to end of run",
    };
    format!(
        "client {} ({mode}, grant {}, {}, {} to {}, {end})",
        iv.client,
        iv.grant,
        token(iv.token),
        ms(iv.start_ns),
        ms(iv.end_ns)
    )
}
