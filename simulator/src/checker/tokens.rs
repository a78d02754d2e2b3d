//! Token regressions: a non-nested grant whose fencing token is not above every token granted
//! earlier on the same key. A token source that goes backwards (a failover that lost the
//! counter, a revision reused) lets a fenced resource accept a superseded holder's writes.
//! Grants without a token are neither judged nor raise the bar. Readers granted together may get
//! their tokens in any order (a read-write recipe grants every queued reader at once), so a
//! shared grant is judged only against earlier exclusive grants; an exclusive grant is judged
//! against every earlier grant.

use super::intervals::KeyTimeline;
use super::{ms, ViolationSink};
use crate::directory::NodeId;
use crate::history::LockMode;
use crate::time::Nanos;

pub fn check_key(kt: &KeyTimeline, violations: &mut ViolationSink) -> u64 {
    let mut count = 0;
    // The highest token so far (all grants, and exclusive grants only), with who got it and when.
    let mut best_any: Option<(u64, NodeId, Nanos)> = None;
    let mut best_exclusive: Option<(u64, NodeId, Nanos)> = None;
    for iv in &kt.intervals {
        let Some(t) = iv.token else { continue };
        let bar = if iv.mode == LockMode::Shared { best_exclusive } else { best_any };
        match bar {
            Some((max, holder, at)) if t <= max => {
                count += 1;
                violations.offer(iv.start_ns, "token_regression", || {
                    format!(
                        "key {}: client {} granted token {t} at {}, not above token {max} \
                         granted to client {holder} at {}",
                        iv.key,
                        iv.client,
                        ms(iv.start_ns),
                        ms(at)
                    )
                });
            }
            _ => {
                if best_any.is_none_or(|(m, _, _)| t > m) {
                    best_any = Some((t, iv.client, iv.start_ns));
                }
                if iv.mode == LockMode::Exclusive {
                    best_exclusive = Some((t, iv.client, iv.start_ns));
                }
            }
        }
    }
    count
}
