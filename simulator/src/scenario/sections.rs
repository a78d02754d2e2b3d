//! `[network]`, `[workload]` and `[clocks]`, with the defaults of docs/scenario-format.md.

use crate::dist::Dist;
use crate::scenario::nodes::{selector, Mentions};
use crate::scenario::types::{ClockSpec, LinkSpec, NetworkSpec, WorkloadSpec};
use crate::scenario::values::{fraction, int_in, number_in, ppm, signed_time, time};
use crate::scenario::walk::{quote, Node, Res, Source, Tab};
use crate::setup::{Schedule, Selector};
use crate::time::MAX_TIME_MS;

/// Upper bounds that keep a typo (`clients = 1000000000`) from building a cluster that would
/// exhaust memory; far above any scenario this simulator is meant for.
pub(crate) const MAX_CLIENTS: i64 = 100_000;
pub(crate) const MAX_LOCKS: i64 = 1_000_000;

/// The section's table, if present (`None` when absent: all defaults).
fn section<'a>(src: &Source, root: &Tab<'a>, key: &str, valid: &[&str]) -> Res<Option<Tab<'a>>> {
    let Some(node) = root.get(key) else {
        return Ok(None);
    };
    let tab = node.as_table(src, &format!("a [{key}] table with keys {}", valid.join(", ")))?;
    tab.check_keys(src, valid)?;
    Ok(Some(tab))
}

const NETWORK_KEYS: &[&str] = &["latency_ms", "loss", "duplicate", "links"];
const LINK_KEYS: &[&str] = &["from", "to", "latency_ms", "loss", "duplicate", "one_way"];

pub(crate) fn network(src: &Source, root: &Tab, mentions: &mut Mentions) -> Res<NetworkSpec> {
    let mut spec = NetworkSpec {
        latency_ms: Dist::LogNormal { median: 0.25, p99: 1.0 },
        loss: 0.0,
        duplicate: 0.0,
        links: Vec::new(),
    };
    let Some(tab) = section(src, root, "network", NETWORK_KEYS)? else {
        return Ok(spec);
    };
    if let Some(n) = tab.get("latency_ms") {
        spec.latency_ms = time(src, n)?;
    }
    if let Some(n) = tab.get("loss") {
        spec.loss = fraction(src, n)?;
    }
    if let Some(n) = tab.get("duplicate") {
        spec.duplicate = fraction(src, n)?;
    }
    if let Some(n) = tab.get("links") {
        for item in n.as_array(src, "an array of tables ([[network.links]])")? {
            let link = item.as_table(src, "a link table with `from`, `to` and overrides")?;
            link.check_keys(src, LINK_KEYS)?;
            let from = link_end(src, link.required(src, "from", "a selector")?, mentions)?;
            let to = link_end(src, link.required(src, "to", "a selector")?, mentions)?;
            spec.links.push(LinkSpec {
                from,
                to,
                latency_ms: link.get("latency_ms").map(|n| time(src, n)).transpose()?,
                loss: link.get("loss").map(|n| fraction(src, n)).transpose()?,
                duplicate: link.get("duplicate").map(|n| fraction(src, n)).transpose()?,
                one_way: link.get("one_way").map(|n| n.as_bool(src)).transpose()?.unwrap_or(false),
            });
        }
    }
    Ok(spec)
}

/// `acquisitions_per_client` is an extension of the format: each client stops after that many
/// acquisitions (for schedules such as "each client acquires once"); absent, clients loop until
/// the end of the run.
const WORKLOAD_KEYS: &[&str] = &[
    "clients",
    "locks",
    "hold_ms",
    "think_ms",
    "acquire_timeout_ms",
    "read_fraction",
    "reentry",
    "resource",
    "acquisitions_per_client",
    "check_to_write_ms",
    "kind",
    "period_ms",
];

/// The workload kinds: the loop (think, acquire, hold, release, again) and the scheduled job.
pub(crate) const WORKLOAD_KINDS: &[&str] = &["loop", "scheduled"];

/// Keys of the loop that mean nothing to a scheduled job: it fires on its period rather than
/// after a think time, runs until the end, takes the one job lock exclusively and not nested.
const NOT_SCHEDULED_KEYS: &[&str] = &["think_ms", "acquisitions_per_client", "read_fraction", "reentry"];

pub(crate) fn workload(src: &Source, root: &Tab) -> Res<WorkloadSpec> {
    let mut spec = WorkloadSpec::default();
    let Some(tab) = section(src, root, "workload", WORKLOAD_KEYS)? else {
        return Ok(spec);
    };
    if let Some(n) = tab.get("clients") {
        spec.clients = int_in(src, n, 1, MAX_CLIENTS)? as usize;
    }
    if let Some(n) = tab.get("locks") {
        spec.locks = int_in(src, n, 1, MAX_LOCKS)? as u32;
    }
    if let Some(n) = tab.get("hold_ms") {
        spec.hold_ms = time(src, n)?;
    }
    if let Some(n) = tab.get("think_ms") {
        spec.think_ms = time(src, n)?;
    }
    spec.acquire_timeout_ms = tab.get("acquire_timeout_ms").map(|n| time(src, n)).transpose()?;
    if let Some(n) = tab.get("read_fraction") {
        spec.read_fraction = fraction(src, n)?;
    }
    if let Some(n) = tab.get("reentry") {
        spec.reentry = fraction(src, n)?;
    }
    if let Some(n) = tab.get("resource") {
        spec.resource = n.as_bool(src)?;
    }
    if let Some(n) = tab.get("check_to_write_ms") {
        spec.check_to_write_ms = time(src, n)?;
    }
    spec.acquisitions_per_client =
        tab.get("acquisitions_per_client").map(|n| int_in(src, n, 1, i64::MAX)).transpose()?.map(|v| v as u64);
    spec.schedule = schedule(src, &tab)?;
    Ok(spec)
}

/// `kind` and `period_ms`: the scheduled-job workload, or `None` for the loop.
fn schedule(src: &Source, tab: &Tab) -> Res<Option<Schedule>> {
    let kinds = WORKLOAD_KINDS.iter().map(|k| quote(k)).collect::<Vec<_>>().join(", ");
    let kind = match tab.get("kind") {
        None => "loop",
        Some(n) => {
            let kind = n.as_str(src, &format!("one of {kinds}"))?;
            if !WORKLOAD_KINDS.contains(&kind) {
                return Err(n.err(src, format!("unknown workload kind {}; valid kinds: {kinds}", quote(kind))));
            }
            kind
        }
    };
    if kind != "scheduled" {
        if let Some(n) = tab.get("period_ms") {
            return Err(n.key_err(
                src,
                "period_ms applies to kind = \"scheduled\" only; add kind = \"scheduled\" or remove it",
            ));
        }
        return Ok(None);
    }
    for key in NOT_SCHEDULED_KEYS {
        if let Some(n) = tab.get(key) {
            return Err(n.key_err(
                src,
                format!(
                    "{key} does not apply to kind = \"scheduled\" (each client fires the job every period_ms on its own \
                     wall clock, exclusively, until the end of the run); remove it, or use kind = \"loop\""
                ),
            ));
        }
    }
    if let Some(n) = tab.get("locks") {
        if n.as_int(src, "1")? != 1 {
            return Err(n.err(src, "a scheduled workload runs one job under one lock: expected locks = 1"));
        }
    }
    let n = tab.required(src, "period_ms", "the job's period in milliseconds (a number above 0)")?;
    let period_ms = number_in(src, n, 0.001, MAX_TIME_MS)?;
    Ok(Some(Schedule { period_ms }))
}

/// `offset_ms` may be negative (a clock behind true time); `drift_ppm` must keep clocks running
/// forward.
pub(crate) fn clocks(src: &Source, root: &Tab) -> Res<ClockSpec> {
    let mut spec = ClockSpec { drift_ppm: Dist::Const(0.0), offset_ms: Dist::Const(0.0) };
    let Some(tab) = section(src, root, "clocks", &["drift_ppm", "offset_ms"])? else {
        return Ok(spec);
    };
    if let Some(n) = tab.get("drift_ppm") {
        spec.drift_ppm = ppm(src, n)?;
    }
    if let Some(n) = tab.get("offset_ms") {
        spec.offset_ms = signed_time(src, n, "a clock offset")?;
    }
    Ok(spec)
}

/// One end of a `[[network.links]]` override. Links are fixed for the whole run, so only
/// selectors that always name the same nodes fit; a role (`leader`, `holder`, …) or a random pick
/// is resolved when a fault starts and would mean a different node at each moment.
fn link_end(src: &Source, node: &Node, mentions: &mut Mentions) -> Res<Selector> {
    let sel = selector(src, node, Some(mentions))?;
    if !sel.is_fixed() {
        return Err(node.err(
            src,
            format!(
                "`{sel}` names a different node from moment to moment, but a link override holds for the \
                 whole run; use a node name (client-N, server-N, sentinel-N, resource) or client-*, \
                 server-*, sentinel-*, *; for a fault on a role use [[faults]] with kind = \"slow\" or \"loss\""
            ),
        ));
    }
    Ok(sel)
}
