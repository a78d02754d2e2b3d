//! Liveness and cost counts: acquisitions, failures, completed sections, releases (and failed
//! ones), acquire latency, and the per-event counters (notifications, refused attempts,
//! messages).

use super::intervals::{EndCause, Timeline, WaitOutcome};
use super::metrics::{record_ns, SeedMetrics};
use crate::history::{History, HistoryEvent};

/// Fills the counters that come straight from events or from the timeline.
pub fn count(history: &History, timeline: &Timeline, m: &mut SeedMetrics) {
    // What the engine counted instead of recording, plus what was recorded.
    m.notifications += history.folded.notifications;
    m.refused_attempts += history.folded.refused_attempts;
    for e in &history.events {
        match e.event {
            HistoryEvent::AcquireFailed { .. } => m.failed_acquisitions += 1,
            HistoryEvent::Released { nested: false, .. } => m.releases += 1,
            HistoryEvent::ReleaseFailed { .. } => m.failed_releases += 1,
            HistoryEvent::Notification { .. } => m.notifications += 1,
            HistoryEvent::RefusedAttempt { .. } => m.refused_attempts += 1,
            _ => {}
        }
    }
    m.messages = history.messages;
    m.client_messages = history.client_messages;
    // One interval per non-nested grant, so counting intervals counts acquisitions; only those
    // ended by a release completed their critical section (abandoned, crashed or cut off by the
    // end of the run did not).
    for iv in timeline.intervals() {
        m.acquisitions += 1;
        if iv.end == EndCause::Released {
            m.completed_sections += 1;
        }
    }
}

/// Acquire latency: from the acquire call to its non-nested grant. A grant with no pending
/// `AcquireStart` has no wait and so no latency; reentrant grants are not acquisitions.
pub fn latency(timeline: &Timeline, m: &mut SeedMetrics) {
    for w in timeline.waits() {
        if w.outcome == WaitOutcome::Granted {
            record_ns(&mut m.acquire_latency_us, w.end_ns - w.start_ns);
        }
    }
}
