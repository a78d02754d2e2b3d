//! Lost updates: completed read-modify-write sections whose increment is missing from the
//! unfenced resource's final counter.
//!
//! Why "writes minus final counter" counts exactly the missing increments: each critical section
//! reads the counter and writes `read + 1`, and the unfenced resource accepts every write and sets
//! `counter = value`. If every section read the value left by the write before it, the counter
//! would climb by one per write, from 0 to the number of writes. Writing `value` over a counter
//! `c` moves it by `value - c` instead of 1, a deficit of `c + 1 - value`; the deficits telescope,
//! so their sum over a key's writes is `writes - final`. Since every value is some earlier
//! counter plus one, the counter after `n` writes is at most `n`: the difference is never
//! negative for a consistent history (we floor at 0 per key anyway, so one malformed key cannot
//! cancel another's losses). Sections that crashed or abandoned before writing wrote nothing and
//! owe nothing.

use std::collections::BTreeMap;

use super::{ms, ViolationSink};
use crate::directory::NodeId;
use crate::history::{History, HistoryEvent, LockKey};
use crate::time::Nanos;

/// The first write on a key that did not raise the counter, for the violation's detail.
struct Clobber {
    at_ns: Nanos,
    client: NodeId,
    value: u64,
    over: u64,
    over_client: Option<NodeId>,
}

#[derive(Default)]
struct KeyWrites {
    writes: u64,
    /// The unfenced counter as replayed from the writes, and who wrote it last.
    counter: u64,
    last_writer: Option<NodeId>,
    first_clobber: Option<Clobber>,
    last_write_ns: Nanos,
}

pub fn check(history: &History, violations: &mut ViolationSink) -> u64 {
    let mut keys: BTreeMap<LockKey, KeyWrites> = BTreeMap::new();
    for e in super::intervals::ordered(history) {
        let HistoryEvent::ResourceWrite { client, key, value, .. } = e.event else {
            continue;
        };
        let k = keys.entry(key).or_default();
        k.writes += 1;
        if value <= k.counter && k.first_clobber.is_none() {
            k.first_clobber =
                Some(Clobber { at_ns: e.at_ns, client, value, over: k.counter, over_client: k.last_writer });
        }
        k.counter = value;
        k.last_writer = Some(client);
        k.last_write_ns = e.at_ns;
    }

    let mut total = 0;
    for (key, k) in keys {
        let final_counter = history.final_counter.get(key as usize).copied().unwrap_or(0);
        let lost = k.writes.saturating_sub(final_counter);
        if lost == 0 {
            continue;
        }
        total += lost;
        let at_ns = k.first_clobber.as_ref().map_or(k.last_write_ns, |c| c.at_ns);
        violations.offer(at_ns, "lost_update", || {
            let first = match &k.first_clobber {
                Some(c) => format!(
                    "; first at {}: client {} wrote {} over {}{}",
                    ms(c.at_ns),
                    c.client,
                    c.value,
                    c.over,
                    c.over_client.map(|w| format!(" (written by client {w})")).unwrap_or_default()
                ),
                None => String::new(),
            };
            format!("key {key}: {} writes but final counter {final_counter}: {lost} increment(s) lost{first}", k.writes)
        });
    }
    total
}
