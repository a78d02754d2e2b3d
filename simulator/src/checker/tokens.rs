//! Token regressions: a non-nested grant whose fencing token is not above every token granted
//! earlier on the same key. A token source that goes backwards (a failover that lost the
//! counter, a revision reused) lets a fenced resource accept a superseded holder's writes.
//! Grants without a token are neither judged nor raise the bar.

use super::intervals::KeyTimeline;
use super::{ms, Violation};
use crate::process::NodeId;
use crate::time::Nanos;

pub fn check_key(kt: &KeyTimeline, violations: &mut Vec<Violation>) -> u64 {
    let mut count = 0;
    // The highest token so far, with who got it and when, for the detail.
    let mut best: Option<(u64, NodeId, Nanos)> = None;
    for iv in &kt.intervals {
        let Some(t) = iv.token else { continue };
        match best {
            Some((max, holder, at)) if t <= max => {
                count += 1;
                violations.push(Violation {
                    at_ns: iv.start_ns,
                    kind: "token_regression",
                    detail: format!(
                        "key {}: client {} granted token {t} at {}, not above token {max} \
                         granted to client {holder} at {}",
                        iv.key,
                        iv.client,
                        ms(iv.start_ns),
                        ms(at)
                    ),
                });
            }
            _ => best = Some((t, iv.client, iv.start_ns)),
        }
    }
    count
}
