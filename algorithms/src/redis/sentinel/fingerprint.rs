//! [`Fingerprint`] for a Redis Sentinel: every field destructured (a new one is a compile error
//! here); servers, sentinels and clients through the renaming.

use locksim_simulator::fingerprint::{AsNode, Fingerprint, Renaming, StableHasher};
use locksim_simulator::process::NodeId;
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{Failover, Instance, Peer, Sentinel, SentinelConfig, Volatile};

fingerprint_struct!(SentinelConfig { servers, sentinels, clients, quorum, down_after_ms });
fingerprint_struct!(Instance {
    @node id,
    last_ping_sent,
    act_ping,
    last_avail,
    sdown,
    down_changed_at,
    role,
    role_reported_at,
    offset,
    run_id,
    last_reconf_sent,
    announced_up,
});
fingerprint_enum!(Failover { None, WaitStart, WaitPromotion { @node replica, since } });

/// A vote or a leader as (sentinel, epoch): the sentinel through the renaming.
fn voted(h: &mut StableHasher, ids: &Renaming, vote: &Option<(NodeId, u64)>) {
    vote.map(|(node, epoch)| (AsNode(node), epoch)).fingerprint(h, ids);
}

impl Fingerprint for Peer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Peer { id, master_down, reply_at, leader, last_ask } = self;
        ids.node(h, *id);
        (master_down, reply_at).fingerprint(h, ids);
        voted(h, ids, leader);
        last_ask.fingerprint(h, ids);
    }
}

impl Fingerprint for Volatile {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Volatile {
            me,
            instances,
            peers,
            clients,
            odown,
            failover,
            failover_epoch,
            failover_start,
            last_hello,
            pings,
        } = self;
        ids.node(h, *me);
        (instances, peers).fingerprint(h, ids);
        // Every client the run has, told about failovers each in turn: a set (a send to each
        // client is its own event in flight, hashed as a multiset).
        ids.node_set(h, clients.iter());
        (odown, failover, failover_epoch, failover_start, last_hello).fingerprint(h, ids);
        // Ping sequence number → index into `instances` (not a node id).
        pings.fingerprint(h, ids);
    }
}

impl Fingerprint for Sentinel {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Sentinel { cfg, primary, config_epoch, current_epoch, vote, ping_seq, v } = self;
        cfg.fingerprint(h, ids);
        ids.opt_node(h, *primary);
        (config_epoch, current_epoch).fingerprint(h, ids);
        voted(h, ids, vote);
        (ping_seq, v).fingerprint(h, ids);
    }
}
