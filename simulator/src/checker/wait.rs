//! Wait for a critical section: from the first acquire call of a section to its grant, failed
//! calls included.
//!
//! The workload's loop is think, acquire, hold, release; an acquire call that fails (a timeout,
//! an error, the service unavailable) sends the client back to think and then to a fresh acquire
//! call (its key and mode drawn again). For the application those calls are one attempt at its
//! next critical section, so a client's *section attempt* begins at its first `AcquireStart`
//! after its previous non-nested grant (or after its start or restart) and ends at its next
//! non-nested `Granted`, whatever failed in between. Nested (reentrant) grants do not end one.
//!
//! In a scheduled workload a failed try skips that tick's run: the attempt ends there and records
//! no wait (the node did not wait for the lock; its next tick starts a new attempt).
//!
//! An attempt still waiting when the run ends counts with its wait so far (a lower bound): a
//! client starved to the end by a leaked lock is the wait this metric exists to show. An attempt
//! cut short by the client's own crash is dropped: the application that waited is gone, and its
//! restart begins a new attempt.

use hdrhistogram::Histogram;

use super::intervals::ordered;
use super::metrics::record_ns;
use crate::history::{History, HistoryEvent};
use crate::time::Nanos;

/// Records every section attempt's wait in `hist` (µs).
pub fn record(history: &History, hist: &mut Histogram<u64>) {
    // The pending attempt's start, per node.
    let mut since: Vec<Option<Nanos>> = Vec::new();
    for e in ordered(history) {
        if since.len() <= e.node {
            since.resize(e.node + 1, None);
        }
        match e.event {
            HistoryEvent::AcquireStart { .. } => {
                since[e.node].get_or_insert(e.at_ns);
            }
            HistoryEvent::Granted { nested: false, .. } => {
                if let Some(start) = since[e.node].take() {
                    record_ns(hist, e.at_ns - start);
                }
            }
            HistoryEvent::ClientCrashed => since[e.node] = None,
            HistoryEvent::AcquireFailed { .. } if history.schedule_period_ns.is_some() => since[e.node] = None,
            _ => {}
        }
    }
    for start in since.into_iter().flatten() {
        record_ns(hist, history.duration_ns.saturating_sub(start));
    }
}
