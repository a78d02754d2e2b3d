//! The simulated network: per-link latency, loss and duplication (with `[[network.links]]`
//! overrides), optional FIFO order per directed pair (TCP), and an ordered chain of fault rules
//! (partitions, isolation, slow links, loss) that each give a verdict on every message, as
//! turmoil's rules do. A message whose link is cut while it is in flight is dropped on arrival.
//!
//! Ordered links are TCP connections, and TCP does not lose or duplicate what the application
//! sent: a lost segment is sent again after the retransmission timeout, and a duplicate segment
//! is discarded by the receiver. So on an ordered link `loss` (the link's, or a `loss` fault's)
//! delays a message by Linux's retransmission back-off instead of dropping it, later messages
//! wait behind it (head-of-line blocking), and `duplicate` does nothing. Only after the retries
//! Linux makes (`tcp_retries2`) does the connection die, and the sender's library sees an error.
//! Unordered links keep datagram behaviour (loss drops, duplicates arrive twice) for a future
//! UDP model. A cut link (partition, isolation) still drops: the simulated partitions are
//! shorter than the minutes TCP would keep retrying, but the endpoints' own timeouts, which
//! the models have, fire long before.

use std::hash::Hasher;

use rand::Rng;

use super::fingerprint::StableHasher;
use super::pairs::{PairIndex, PairTable};
use crate::dist::{Dist, Sampler};
use crate::process::NodeId;
use crate::rng::ChaCha8Rng;
use crate::time::{ms_to_ns, Nanos};

/// Latency, loss and duplication of one class of links.
#[derive(Clone, Debug)]
pub struct LinkParams {
    /// One-way delay of each message, drawn per message (and per duplicate copy).
    pub latency_ms: Dist,
    /// Probability that a message is dropped.
    pub loss: f64,
    /// Probability that a delivered message arrives a second time, with its own latency draw.
    pub duplicate: f64,
}

/// A fault acting on the network: asked about every message as it is sent, in the order the
/// faults started (as turmoil's `Rule`). A new network fault is one new type implementing this.
pub trait Rule: Send + std::fmt::Debug + CloneRule {
    /// The rule's verdict on a message from `from` to `to` sent now; it may draw from the
    /// network's random stream.
    fn verdict(&self, from: NodeId, to: NodeId, rng: &mut ChaCha8Rng) -> Verdict;
    /// Whether the rule cuts the directed link (a message in flight on it is dropped on arrival).
    fn cuts(&self, from: NodeId, to: NodeId) -> bool {
        let _ = (from, to);
        false
    }
}

/// A boxed copy of a rule (given to every `Clone` rule), so a network can be copied.
pub trait CloneRule {
    /// A copy of this rule, boxed.
    fn box_clone(&self) -> Box<dyn Rule>;
}

impl<T: Rule + Clone + 'static> CloneRule for T {
    fn box_clone(&self) -> Box<dyn Rule> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn Rule> {
    fn clone(&self) -> Self {
        self.box_clone()
    }
}

/// One rule's say on one message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    /// This rule does not touch it: ask the next.
    Pass,
    /// It arrives this much later than it otherwise would.
    Delay(Nanos),
    /// It never arrives.
    Drop(DropReason),
}

/// A partition or isolation: `group_of[node]` is the group a node is in (None: keeps all links).
/// Two-way: a link between different groups is cut. One-way: only from group 0 to the others.
#[derive(Clone, Debug)]
pub struct Cut {
    /// Each node's group, by node id; `None`: the node is in no group and keeps every link.
    pub group_of: Vec<Option<u16>>,
    /// Cut only the links from group 0 to the other groups (none into group 0, none between
    /// the others).
    pub one_way: bool,
}

impl Rule for Cut {
    fn verdict(&self, from: NodeId, to: NodeId, _rng: &mut ChaCha8Rng) -> Verdict {
        if self.cuts(from, to) {
            Verdict::Drop(DropReason::Partition)
        } else {
            Verdict::Pass
        }
    }
    fn cuts(&self, from: NodeId, to: NodeId) -> bool {
        match (self.group_of[from], self.group_of[to]) {
            (Some(a), Some(b)) if a != b => !self.one_way || a == 0,
            _ => false,
        }
    }
}

/// Messages to and from these nodes take this much longer.
#[derive(Clone, Debug)]
pub struct Slow {
    /// By node id: whether the node is slowed.
    pub nodes: Vec<bool>,
    /// The added delay, drawn per message (negative draws count as 0).
    pub extra_ms: Dist,
}

impl Rule for Slow {
    fn verdict(&self, from: NodeId, to: NodeId, rng: &mut ChaCha8Rng) -> Verdict {
        if self.nodes[from] || self.nodes[to] {
            Verdict::Delay(ms_to_ns(self.extra_ms.sample_non_negative(rng)))
        } else {
            Verdict::Pass
        }
    }
}

/// Messages to and from these nodes are dropped with this probability.
#[derive(Clone, Debug)]
pub struct Loss {
    /// By node id: whether the node's messages are affected.
    pub nodes: Vec<bool>,
    /// Probability that each affected message is dropped.
    pub rate: f64,
}

impl Rule for Loss {
    fn verdict(&self, from: NodeId, to: NodeId, rng: &mut ChaCha8Rng) -> Verdict {
        if (self.nodes[from] || self.nodes[to]) && rng.gen::<f64>() < self.rate {
            Verdict::Drop(DropReason::FaultLoss)
        } else {
            Verdict::Pass
        }
    }
}

/// Why a message did not arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// A partition or isolation fault cuts the link.
    Partition,
    /// A `loss` fault dropped it.
    FaultLoss,
    /// The link's own `loss` probability dropped it.
    Loss,
}

impl DropReason {
    /// How the trace names the reason.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Partition => "link cut",
            DropReason::FaultLoss => "loss fault",
            DropReason::Loss => "network loss",
        }
    }
}

/// Linux's minimum retransmission timeout (`TCP_RTO_MIN`, HZ/5 = 200 ms: include/net/tcp.h). On
/// a LAN the smoothed RTT is far below it, so the first retransmission waits about this plus one
/// round trip (`__tcp_set_rto` in net/ipv4/tcp_input.c: srtt + rttvar, rttvar floored at the
/// minimum). With one segment in flight, as in request-response traffic, the tail-loss probe
/// waits the same (`tcp_schedule_loss_probe`: 1.5 RTT + `TCP_DELACK_MAX` 200 ms).
pub const TCP_RTO_MIN_NS: Nanos = 200 * crate::time::NS_PER_MS;
/// Linux's maximum retransmission timeout (`TCP_RTO_MAX`, 120 s: include/net/tcp.h); each
/// retransmission doubles the timeout up to it.
pub const TCP_RTO_MAX_NS: Nanos = 120_000 * crate::time::NS_PER_MS;
/// Retransmissions before the connection is declared dead (`net.ipv4.tcp_retries2`, default 15:
/// Documentation/networking/ip-sysctl.rst; about 924.6 s with a 200 ms RTO).
pub const TCP_RETRIES2: u32 = 15;

/// What the network does with one send: zero, one or two deliveries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Route {
    /// The message is lost.
    Drop(DropReason),
    /// The message arrives, maybe twice.
    Deliver {
        /// True time of arrival.
        at_ns: Nanos,
        /// True time at which a duplicate copy arrives; `None`: no duplicate.
        duplicate_at_ns: Option<Nanos>,
        /// On a TCP link: how many times the segment was lost and sent again.
        retransmits: u32,
    },
    /// A TCP link lost every retransmission: the sender's stack gives up on the connection at
    /// `dead_at_ns` (its library then sees an error) and the message is never delivered.
    Dead {
        /// When the sender's stack declares the connection dead.
        dead_at_ns: Nanos,
    },
}

/// The network of one run: each directed link's parameters, FIFO state, and the fault rules in
/// force.
#[derive(Clone, Debug)]
pub struct Network {
    classes: Vec<LinkParams>,
    /// Each class's latency, prepared for drawing.
    latency: Vec<Sampler>,
    /// Each class's first TCP retransmission timeout: `TCP_RTO_MIN` plus twice the mean latency
    /// (a round trip), computed once because the mean of a log-normal costs a `ln` and an `exp`.
    first_rto_ns: Vec<Nanos>,
    /// The `[[network.links]]` overrides in file order, as (from set, to set) by node id: the
    /// last that matches a link gives its class (override `i` is class `i + 1`). Kept as sets
    /// and matched per message, not as a class per pair: a table per pair grows with the square
    /// of the nodes.
    overrides: Vec<(Vec<bool>, Vec<bool>)>,
    /// FIFO per directed pair when the model declares its links ordered.
    ordered: bool,
    last_delivery_ns: PairTable<Nanos>,
    /// Active fault rules with the fault occurrence that owns each, in the order they started.
    rules: Vec<(usize, Box<dyn Rule>)>,
    /// Delays chosen instead of drawn (a search's choices, or a scenario's `[replay]`); `None` in
    /// a normal run, where every latency is drawn from the link's distribution.
    feed: Option<Box<DelayFeed>>,
}

/// Latencies given to the network in the order it needs them, instead of drawn: every latency a
/// send, a duplicate or a connection reset would draw takes the next one. What a search chooses
/// at a step, or what a `[replay]`'s `delays_ms` replays.
#[derive(Clone, Debug, Default)]
pub struct DelayFeed {
    /// The delays to use, in the order latencies are needed.
    pub script_ns: Vec<Nanos>,
    /// How many latencies were needed so far (script used and past it).
    pub taken: usize,
    /// Past the script: `Some(ns)`, use this delay (a search's first choice); `None`, draw from
    /// the link's distribution as a normal run does (a replay after its list ends).
    pub fallback_ns: Option<Nanos>,
}

impl DelayFeed {
    /// The next latency, or `None` to draw it.
    fn next(&mut self) -> Option<Nanos> {
        let ns = self.script_ns.get(self.taken).copied().or(self.fallback_ns);
        self.taken += 1;
        ns
    }
}

impl Network {
    /// `nodes`: the node count (a square table per pair) or a [`PairIndex`] that tells the hubs
    /// (memory linear in the nodes). `overrides`: (from set, to set, params) in file order; the
    /// last matching one wins.
    pub fn new(
        nodes: impl Into<PairIndex>,
        base: LinkParams,
        overrides: Vec<(Vec<bool>, Vec<bool>, LinkParams)>,
        ordered: bool,
    ) -> Self {
        let index = nodes.into();
        let mut classes = vec![base];
        let mut sets = Vec::with_capacity(overrides.len());
        for (from_set, to_set, params) in overrides {
            classes.push(params);
            sets.push((from_set, to_set));
        }
        let latency = classes.iter().map(|c| Sampler::new(&c.latency_ms)).collect();
        let first_rto_ns = classes
            .iter()
            .map(|c| TCP_RTO_MIN_NS.saturating_add(ms_to_ns(2.0 * c.latency_ms.mean().max(0.0))))
            .collect();
        let last_delivery_ns = PairTable::new(if ordered { index } else { PairIndex::all_hubs(0) });
        Network {
            classes,
            latency,
            first_rto_ns,
            overrides: sets,
            ordered,
            last_delivery_ns,
            rules: Vec::new(),
            feed: None,
        }
    }

    /// Gives latencies instead of drawing them (see [`DelayFeed`]); `None`: draw again.
    pub fn set_feed(&mut self, feed: Option<DelayFeed>) {
        self.feed = feed.map(Box::new);
    }

    /// The delay feed in use, if any (how many latencies it gave).
    pub fn feed(&self) -> Option<&DelayFeed> {
        self.feed.as_deref()
    }

    /// One latency on a link of `class`: from the feed when one is set, else drawn. A normal run
    /// pays one test of the feed per latency.
    #[inline(always)]
    fn latency_ns(&mut self, class: usize, rng: &mut ChaCha8Rng) -> Nanos {
        match self.feed.as_deref_mut().and_then(DelayFeed::next) {
            Some(ns) => ns,
            None => self.latency[class].sample_ns(rng),
        }
    }

    /// The class of the directed link: the last override that matches it, or the base (0).
    #[inline(always)]
    fn class_of(&self, from: NodeId, to: NodeId) -> usize {
        match self.overrides.iter().rposition(|(f, t)| f[from] && t[to]) {
            Some(i) => i + 1,
            None => 0,
        }
    }

    /// Puts a fault rule in force, after those already in force; `owner` is the fault occurrence
    /// whose end removes it.
    pub fn add_rule(&mut self, owner: usize, rule: impl Rule + 'static) {
        self.rules.push((owner, Box::new(rule)));
    }

    /// Hashes what of the network's state counts for its future (`World::fingerprint`), the
    /// nodes taken in the order `perm` gives (old id `perm[k]` as node `k`): the rules in force,
    /// in order, and per ordered link how long after `now_ns` its last delivery is due (0 once
    /// past: a later message arrives after now anyway). Rules are hashed as their `Debug` text:
    /// the nodes they name are never renamed ([`Network::rule_owners`]).
    pub(crate) fn fingerprint_renamed(&self, now_ns: Nanos, h: &mut StableHasher, perm: &[NodeId]) {
        h.write_usize(self.rules.len());
        for (owner, rule) in &self.rules {
            h.write_usize(*owner);
            h.debug(rule);
        }
        if self.ordered {
            for &a in perm {
                for &b in perm {
                    h.write_u64(self.last_delivery_ns.get(a, b).saturating_sub(now_ns));
                }
            }
        }
    }

    /// The fault occurrences whose rules are in force.
    pub(crate) fn rule_owners(&self) -> impl Iterator<Item = usize> + '_ {
        self.rules.iter().map(|(owner, _)| *owner)
    }

    /// Which `[[network.links]]` overrides `node` is in, as (from, to) per override: two nodes
    /// with the same answer have the same links to every other node.
    pub(crate) fn link_class(&self, node: NodeId) -> Vec<(bool, bool)> {
        self.overrides.iter().map(|(f, t)| (f[node], t[node])).collect()
    }

    /// Removes every rule that fault occurrence `owner` added.
    pub fn remove_rules(&mut self, owner: usize) {
        self.rules.retain(|(o, _)| *o != owner);
    }

    /// Whether a fault currently cuts the directed link.
    pub fn is_cut(&self, from: NodeId, to: NodeId) -> bool {
        self.rules.iter().any(|(_, r)| r.cuts(from, to))
    }

    /// When the closing of a TCP connection (the FIN or RST its end's OS sends) from `from`
    /// reaches `to`: a link's latency and the slow rules apply, and it stays behind the data
    /// sent before it on an ordered link; a cut link stops it (`None`). Loss does not: the FIN
    /// is retransmitted like data (the retransmission delay is not modelled).
    pub fn route_reset(&mut self, from: NodeId, to: NodeId, now_ns: Nanos, rng: &mut ChaCha8Rng) -> Option<Nanos> {
        if from == to {
            return Some(now_ns);
        }
        let mut extra_ns: Nanos = 0;
        for (_, rule) in &self.rules {
            match rule.verdict(from, to, rng) {
                Verdict::Pass => {}
                Verdict::Delay(ns) => extra_ns = extra_ns.saturating_add(ns),
                Verdict::Drop(DropReason::Partition) => return None,
                Verdict::Drop(_) => {}
            }
        }
        let class = self.class_of(from, to);
        let mut at_ns = now_ns.saturating_add(extra_ns).saturating_add(self.latency_ns(class, rng));
        if self.ordered {
            let last = self.last_delivery_ns.get_mut(from, to);
            at_ns = at_ns.max(*last);
            *last = at_ns;
        }
        Some(at_ns)
    }

    /// Decides the fate of a message sent now.
    pub fn route(&mut self, from: NodeId, to: NodeId, now_ns: Nanos, rng: &mut ChaCha8Rng) -> Route {
        if from == to {
            return Route::Deliver { at_ns: now_ns, duplicate_at_ns: None, retransmits: 0 };
        }
        if self.ordered {
            return self.route_tcp(from, to, now_ns, rng);
        }
        let mut extra_ns: Nanos = 0;
        for (_, rule) in &self.rules {
            match rule.verdict(from, to, rng) {
                Verdict::Pass => {}
                Verdict::Delay(ns) => extra_ns = extra_ns.saturating_add(ns),
                Verdict::Drop(reason) => return Route::Drop(reason),
            }
        }
        let class = self.class_of(from, to);
        let params = &self.classes[class];
        if params.loss > 0.0 && rng.gen::<f64>() < params.loss {
            return Route::Drop(DropReason::Loss);
        }
        let duplicate = params.duplicate;
        let mut at_ns = now_ns.saturating_add(extra_ns).saturating_add(self.latency_ns(class, rng));
        let mut duplicate_at_ns = if duplicate > 0.0 && rng.gen::<f64>() < duplicate {
            Some(now_ns.saturating_add(extra_ns).saturating_add(self.latency_ns(class, rng)))
        } else {
            None
        };
        if self.ordered {
            // A TCP stream never delivers a later segment before an earlier one; a duplicate copy
            // is held back the same way, so it cannot overtake messages sent before it.
            let last = self.last_delivery_ns.get_mut(from, to);
            at_ns = at_ns.max(*last);
            *last = at_ns;
            if let Some(d) = duplicate_at_ns.as_mut() {
                *d = (*d).max(*last);
                *last = *d;
            }
        }
        Route::Deliver { at_ns, duplicate_at_ns, retransmits: 0 }
    }

    /// A send on a TCP connection: each transmission may be lost (the link's `loss`, the `loss`
    /// faults in force now: each retransmission is drawn against the same ones) and is then sent
    /// again after the back-off; a cut link drops it; duplicates are discarded by the receiver.
    fn route_tcp(&mut self, from: NodeId, to: NodeId, now_ns: Nanos, rng: &mut ChaCha8Rng) -> Route {
        let class = self.class_of(from, to);
        let link_loss = self.classes[class].loss;
        let mut rto_ns = self.first_rto_ns[class];
        let mut waited_ns: Nanos = 0;
        let mut retransmits = 0;
        let extra_ns = loop {
            let mut extra_ns: Nanos = 0;
            let mut lost = false;
            for (_, rule) in &self.rules {
                match rule.verdict(from, to, rng) {
                    Verdict::Pass => {}
                    Verdict::Delay(ns) => extra_ns = extra_ns.saturating_add(ns),
                    Verdict::Drop(DropReason::Partition) => return Route::Drop(DropReason::Partition),
                    Verdict::Drop(_) => lost = true,
                }
            }
            if !lost && link_loss > 0.0 && rng.gen::<f64>() < link_loss {
                lost = true;
            }
            if !lost {
                break extra_ns;
            }
            if retransmits == TCP_RETRIES2 {
                return Route::Dead { dead_at_ns: now_ns.saturating_add(waited_ns).saturating_add(rto_ns) };
            }
            waited_ns = waited_ns.saturating_add(rto_ns);
            rto_ns = rto_ns.saturating_mul(2).min(TCP_RTO_MAX_NS);
            retransmits += 1;
        };
        let mut at_ns =
            now_ns.saturating_add(waited_ns).saturating_add(extra_ns).saturating_add(self.latency_ns(class, rng));
        // A TCP stream never delivers a later segment before an earlier one.
        let last = self.last_delivery_ns.get_mut(from, to);
        at_ns = at_ns.max(*last);
        *last = at_ns;
        Route::Deliver { at_ns, duplicate_at_ns: None, retransmits }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    fn net(ordered: bool) -> Network {
        let base = LinkParams { latency_ms: Dist::Uniform(1.0, 10.0), loss: 0.0, duplicate: 0.0 };
        Network::new(4, base, vec![], ordered)
    }

    #[test]
    fn two_way_partition_cuts_between_groups_only() {
        let mut n = net(false);
        n.add_rule(0, Cut { group_of: vec![Some(0), Some(0), Some(1), None], one_way: false });
        assert!(n.is_cut(0, 2) && n.is_cut(2, 0));
        assert!(!n.is_cut(0, 1));
        assert!(!n.is_cut(0, 3) && !n.is_cut(3, 2), "nodes in no group keep their links");
        let mut rng = stream(1, "net", "t");
        assert_eq!(n.route(2, 1, 0, &mut rng), Route::Drop(DropReason::Partition));
        n.remove_rules(0);
        assert!(!n.is_cut(0, 2));
    }

    #[test]
    fn one_way_partition_cuts_only_from_the_first_group() {
        let mut n = net(false);
        n.add_rule(0, Cut { group_of: vec![Some(0), Some(1), Some(1), None], one_way: true });
        assert!(n.is_cut(0, 1) && n.is_cut(0, 2));
        assert!(!n.is_cut(1, 0) && !n.is_cut(2, 0));
    }

    #[test]
    fn ordered_links_never_reorder() {
        let mut n = net(true);
        let mut rng = stream(2, "net", "t");
        let mut last = 0;
        for i in 0..1000 {
            if let Route::Deliver { at_ns, .. } = n.route(0, 1, i * 100_000, &mut rng) {
                assert!(at_ns >= last);
                last = at_ns;
            }
        }
        // Unordered links do reorder with these delays.
        let mut u = net(false);
        let times: Vec<Nanos> = (0..100)
            .filter_map(|i| match u.route(0, 1, i * 100_000, &mut rng) {
                Route::Deliver { at_ns, .. } => Some(at_ns),
                _ => None,
            })
            .collect();
        assert!(times.windows(2).any(|w| w[1] < w[0]));
    }

    #[test]
    fn tcp_links_discard_duplicates_and_datagram_links_deliver_them() {
        let base = LinkParams { latency_ms: Dist::Uniform(1.0, 10.0), loss: 0.0, duplicate: 0.5 };
        let mut tcp = Network::new(2, base.clone(), vec![], true);
        let mut udp = Network::new(2, base, vec![], false);
        let mut rng = stream(5, "net", "t");
        let (mut tcp_dups, mut udp_dups) = (0, 0);
        for i in 0..2000 {
            if let Route::Deliver { duplicate_at_ns: Some(_), .. } = tcp.route(0, 1, i * 100_000, &mut rng) {
                tcp_dups += 1;
            }
            if let Route::Deliver { duplicate_at_ns: Some(_), .. } = udp.route(0, 1, i * 100_000, &mut rng) {
                udp_dups += 1;
            }
        }
        assert_eq!(tcp_dups, 0, "TCP discards duplicate segments");
        assert!(udp_dups > 800, "{udp_dups}");
    }

    #[test]
    fn tcp_loss_is_retransmission_delay_with_linux_back_off() {
        let base = LinkParams { latency_ms: Dist::Const(1.0), loss: 0.3, duplicate: 0.0 };
        let mut n = Network::new(2, base, vec![], true);
        let mut rng = stream(6, "net", "t");
        let rto_ns = TCP_RTO_MIN_NS + 2 * crate::time::NS_PER_MS;
        let mut by_retransmits = [0u32; 4];
        let mut last = 0;
        for i in 0..4000u64 {
            let sent = i * 1_000_000_000_000; // 1000 s apart: no head-of-line blocking between them
            match n.route(0, 1, sent, &mut rng) {
                Route::Deliver { at_ns, duplicate_at_ns: None, retransmits } => {
                    assert!(at_ns >= last);
                    last = at_ns;
                    // 1 ms latency after 0, 1, 2, 3 back-offs of 202, 404, 808 ms.
                    let waited: u64 = (0..retransmits).map(|k| rto_ns << k).sum();
                    assert_eq!(at_ns, sent + waited + crate::time::NS_PER_MS, "retransmits {retransmits}");
                    if (retransmits as usize) < by_retransmits.len() {
                        by_retransmits[retransmits as usize] += 1;
                    }
                }
                other => panic!("a 30% loss never kills a connection here: {other:?}"),
            }
        }
        // Geometric: about 70%, 21%, 6.3%, 1.9% of 4000.
        assert!((2650..2950).contains(&by_retransmits[0]), "{by_retransmits:?}");
        assert!((700..980).contains(&by_retransmits[1]), "{by_retransmits:?}");
        assert!((170..340).contains(&by_retransmits[2]), "{by_retransmits:?}");
    }

    #[test]
    fn a_lost_tcp_segment_holds_back_later_ones() {
        let base = LinkParams { latency_ms: Dist::Const(1.0), loss: 0.0, duplicate: 0.0 };
        let mut n = Network::new(2, base, vec![], true);
        let mut rng = stream(7, "net", "t");
        n.add_rule(1, Loss { nodes: vec![true, false], rate: 1.0 });
        // Every transmission lost: the connection dies after tcp_retries2 back-offs (~925 s).
        match n.route(0, 1, 0, &mut rng) {
            Route::Dead { dead_at_ns } => {
                assert!((900..960).contains(&(dead_at_ns / 1_000_000_000)), "{dead_at_ns}")
            }
            other => panic!("{other:?}"),
        }
        n.remove_rules(1);
        n.add_rule(2, Loss { nodes: vec![true, false], rate: 0.5 });
        let mut t = 0;
        let first = loop {
            t += 2_000_000_000_000; // far after the previous one
            let r = n.route(0, 1, t, &mut rng);
            if matches!(r, Route::Deliver { retransmits: 1.., .. }) {
                break r;
            }
        };
        n.remove_rules(2);
        let second = n.route(0, 1, t + 1_000_000, &mut rng);
        match (first, second) {
            (Route::Deliver { at_ns: a, retransmits, .. }, Route::Deliver { at_ns: b, retransmits: 0, .. }) => {
                assert!(retransmits > 0);
                assert!(b >= a, "the second segment waits for the first");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn slow_rule_adds_latency_and_loss_rule_drops() {
        let base = LinkParams { latency_ms: Dist::Const(1.0), loss: 0.0, duplicate: 0.0 };
        let mut n = Network::new(2, base, vec![], false);
        let mut rng = stream(3, "net", "t");
        n.add_rule(7, Slow { nodes: vec![false, true], extra_ms: Dist::Const(4.0) });
        assert_eq!(
            n.route(0, 1, 0, &mut rng),
            Route::Deliver { at_ns: 5_000_000, duplicate_at_ns: None, retransmits: 0 }
        );
        n.add_rule(8, Loss { nodes: vec![true, false], rate: 1.0 });
        assert_eq!(n.route(0, 1, 0, &mut rng), Route::Drop(DropReason::FaultLoss));
    }

    #[test]
    fn link_overrides_apply_to_matching_pairs() {
        let base = LinkParams { latency_ms: Dist::Const(1.0), loss: 0.0, duplicate: 0.0 };
        let slow = LinkParams { latency_ms: Dist::Const(9.0), loss: 0.0, duplicate: 0.0 };
        let mut n = Network::new(3, base, vec![(vec![true, false, false], vec![false, false, true], slow)], false);
        let mut rng = stream(4, "net", "t");
        assert_eq!(
            n.route(0, 2, 0, &mut rng),
            Route::Deliver { at_ns: 9_000_000, duplicate_at_ns: None, retransmits: 0 }
        );
        assert_eq!(
            n.route(2, 0, 0, &mut rng),
            Route::Deliver { at_ns: 1_000_000, duplicate_at_ns: None, retransmits: 0 }
        );
    }
}
