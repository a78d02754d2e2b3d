//! The lock table (`server-0`): DynamoDB as one linearizable conditional-write service. A call
//! takes effect when it reaches the table, and its answer leaves `service_ms` later (a
//! DynamoDB call's own latency).
//!
//! What this leaves out: DynamoDB is a replicated, partitioned service; its conditional writes
//! and consistent reads are linearizable per item, which is all the lock uses, so one node
//! stands for it. Not modelled: throttling, eventually consistent reads (the lock client reads
//! consistently), the SDK's own retries, and an outage of the service (a crash of `server-0`
//! loses nothing: the table is durable, but nobody is answered while it is down).

use std::collections::BTreeMap;

use locksim_simulator::dist::Dist;
use locksim_simulator::durable::Durable;
use locksim_simulator::history::LockKey;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::ms_to_ns;

use super::protocol::{Answer, Call, ConditionFailed, DynamoMsg, DynamoTimer, Item};
use super::Dynamo;

mod fingerprint;

/// The table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    items: BTreeMap<LockKey, Item>,
}

impl Table {
    /// Applies one call: the item after it, or a failed condition.
    pub fn apply(&mut self, call: &Call) -> Result<Option<Item>, ConditionFailed> {
        match *call {
            Call::Get { key } => Ok(self.items.get(&key).copied()),
            Call::Put { key, expected, item } => {
                let ok = match (expected, self.items.get(&key)) {
                    (None, None) => true,
                    (Some(e), Some(cur)) => cur.rvn == e,
                    _ => false,
                };
                if !ok {
                    return Err(ConditionFailed);
                }
                self.items.insert(key, item);
                Ok(Some(item))
            }
            Call::Heartbeat { key, expected, rvn, owner } => match self.items.get_mut(&key) {
                Some(cur) if cur.rvn == expected && cur.owner == owner => {
                    cur.rvn = rvn;
                    Ok(Some(*cur))
                }
                _ => Err(ConditionFailed),
            },
            Call::Delete { key, expected, owner } => match self.items.get(&key) {
                Some(cur) if cur.rvn == expected && cur.owner == owner => {
                    self.items.remove(&key);
                    Ok(None)
                }
                _ => Err(ConditionFailed),
            },
        }
    }
}

/// The table's node.
#[derive(Clone, Debug)]
pub struct DynamoTable {
    service_ms: Dist,
    /// Durable.
    table: Table,
}

impl DynamoTable {
    /// An empty table.
    pub fn new(service_ms: Dist) -> Self {
        DynamoTable { service_ms, table: Table::default() }
    }
}

impl Durable for DynamoTable {
    /// The table is the service's durable store: all of it survives.
    type Disk = DynamoTable;
    fn into_disk(self, _crash: &Crash) -> DynamoTable {
        self
    }
    fn from_disk(disk: DynamoTable) -> DynamoTable {
        disk
    }
}

impl Process<Dynamo> for DynamoTable {
    fn on_start(&mut self, _ctx: &mut Ctx<Dynamo>) {}

    fn on_message(&mut self, ctx: &mut Ctx<Dynamo>, from: NodeId, msg: DynamoMsg) {
        if let DynamoMsg::Request(r) = msg {
            let result = self.table.apply(&r.call);
            let after = ms_to_ns(self.service_ms.sample_non_negative(ctx.rng()));
            ctx.send_after(after, from, Answer { id: r.id, result });
        }
    }

    fn on_timer(&mut self, _ctx: &mut Ctx<Dynamo>, _timer: TimerId, _tag: DynamoTimer) {}

    fn leadership(&self) -> Option<u64> {
        Some(1)
    }

    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(owner: u32, rvn: u64) -> Item {
        Item { owner, rvn, lease_ms: 20_000, released: false }
    }

    /// Conditions on existence, RVN and owner, as the lock client writes them.
    #[test]
    fn conditional_writes_check_the_rvn() {
        let mut t = Table::default();
        assert_eq!(t.apply(&Call::Put { key: 0, expected: None, item: item(1, 7) }), Ok(Some(item(1, 7))));
        assert_eq!(t.apply(&Call::Put { key: 0, expected: None, item: item(2, 8) }), Err(ConditionFailed));
        assert_eq!(t.apply(&Call::Heartbeat { key: 0, expected: 7, rvn: 9, owner: 1 }), Ok(Some(item(1, 9))));
        assert_eq!(
            t.apply(&Call::Heartbeat { key: 0, expected: 7, rvn: 10, owner: 1 }),
            Err(ConditionFailed),
            "an old RVN"
        );
        assert_eq!(t.apply(&Call::Put { key: 0, expected: Some(9), item: item(2, 11) }), Ok(Some(item(2, 11))));
        assert_eq!(t.apply(&Call::Delete { key: 0, expected: 9, owner: 1 }), Err(ConditionFailed));
        assert_eq!(t.apply(&Call::Delete { key: 0, expected: 11, owner: 2 }), Ok(None));
        assert_eq!(t.apply(&Call::Get { key: 0 }), Ok(None));
    }
}
