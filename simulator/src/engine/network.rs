//! The simulated network: per-link latency, loss and duplication (with `[[network.links]]`
//! overrides), optional FIFO order per directed pair (TCP), and an ordered chain of fault rules
//! (partitions, isolation, slow links, loss) that each give a verdict on every message, as
//! turmoil's rules do. A message whose link is cut while it is in flight is dropped on arrival.

use rand::Rng;

use crate::dist::{Dist, Sampler};
use crate::process::NodeId;
use crate::rng::ChaCha8Rng;
use crate::time::{ms_to_ns, Nanos};

/// Latency, loss and duplication of one class of links.
#[derive(Clone, Debug)]
pub struct LinkParams {
    pub latency_ms: Dist,
    pub loss: f64,
    pub duplicate: f64,
}

/// A fault rule active on the network.
#[derive(Clone, Debug)]
pub enum Rule {
    /// `group_of[node]`: the partition group a node is in (None: keeps all links). Two-way: a link
    /// between different groups is cut. One-way: only from group 0 to the other groups.
    Cut { group_of: Vec<Option<u16>>, one_way: bool },
    /// Messages to and from these nodes take this much longer.
    Slow { nodes: Vec<bool>, extra_ms: Dist },
    /// Messages to and from these nodes are dropped with this probability.
    Loss { nodes: Vec<bool>, rate: f64 },
}

impl Rule {
    fn cuts(&self, from: NodeId, to: NodeId) -> bool {
        match self {
            Rule::Cut { group_of, one_way } => match (group_of[from], group_of[to]) {
                (Some(a), Some(b)) if a != b => !*one_way || a == 0,
                _ => false,
            },
            _ => false,
        }
    }
}

/// Why a message did not arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    Partition,
    FaultLoss,
    Loss,
}

impl DropReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Partition => "link cut",
            DropReason::FaultLoss => "loss fault",
            DropReason::Loss => "network loss",
        }
    }
}

/// What the network does with one send: zero, one or two deliveries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    Drop(DropReason),
    Deliver { at_ns: Nanos, duplicate_at_ns: Option<Nanos> },
}

pub struct Network {
    nodes: usize,
    classes: Vec<LinkParams>,
    /// Each class's latency, prepared for drawing.
    latency: Vec<Sampler>,
    /// `class_of[from * nodes + to]`: index into `classes`.
    class_of: Vec<u16>,
    /// FIFO per directed pair when the model declares its links ordered.
    ordered: bool,
    last_delivery_ns: Vec<Nanos>,
    rules: Vec<(usize, Rule)>,
}

impl Network {
    /// `overrides`: (from set, to set, params) in file order; the last matching one wins.
    pub fn new(
        nodes: usize,
        base: LinkParams,
        overrides: Vec<(Vec<bool>, Vec<bool>, LinkParams)>,
        ordered: bool,
    ) -> Self {
        let mut classes = vec![base];
        let mut class_of = vec![0u16; nodes * nodes];
        for (from_set, to_set, params) in overrides {
            classes.push(params);
            let c = (classes.len() - 1) as u16;
            for f in 0..nodes {
                for t in 0..nodes {
                    if from_set[f] && to_set[t] {
                        class_of[f * nodes + t] = c;
                    }
                }
            }
        }
        let latency = classes.iter().map(|c| Sampler::new(&c.latency_ms)).collect();
        Network {
            nodes,
            classes,
            latency,
            class_of,
            ordered,
            last_delivery_ns: if ordered { vec![0; nodes * nodes] } else { Vec::new() },
            rules: Vec::new(),
        }
    }

    pub fn add_rule(&mut self, owner: usize, rule: Rule) {
        self.rules.push((owner, rule));
    }

    pub fn remove_rules(&mut self, owner: usize) {
        self.rules.retain(|(o, _)| *o != owner);
    }

    /// Whether a fault currently cuts the directed link.
    pub fn is_cut(&self, from: NodeId, to: NodeId) -> bool {
        self.rules.iter().any(|(_, r)| r.cuts(from, to))
    }

    /// Decides the fate of a message sent now.
    pub fn route(&mut self, from: NodeId, to: NodeId, now_ns: Nanos, rng: &mut ChaCha8Rng) -> Verdict {
        if from == to {
            return Verdict::Deliver { at_ns: now_ns, duplicate_at_ns: None };
        }
        let mut extra_ns: Nanos = 0;
        for (_, rule) in &self.rules {
            match rule {
                Rule::Cut { .. } => {
                    if rule.cuts(from, to) {
                        return Verdict::Drop(DropReason::Partition);
                    }
                }
                Rule::Loss { nodes, rate } => {
                    if (nodes[from] || nodes[to]) && rng.gen::<f64>() < *rate {
                        return Verdict::Drop(DropReason::FaultLoss);
                    }
                }
                Rule::Slow { nodes, extra_ms } => {
                    if nodes[from] || nodes[to] {
                        extra_ns += ms_to_ns(extra_ms.sample_non_negative(rng));
                    }
                }
            }
        }
        let class = self.class_of[from * self.nodes + to] as usize;
        let params = &self.classes[class];
        if params.loss > 0.0 && rng.gen::<f64>() < params.loss {
            return Verdict::Drop(DropReason::Loss);
        }
        let latency = &self.latency[class];
        let mut at_ns = now_ns + extra_ns + latency.sample_ns(rng);
        let mut duplicate_at_ns = if params.duplicate > 0.0 && rng.gen::<f64>() < params.duplicate {
            Some(now_ns + extra_ns + latency.sample_ns(rng))
        } else {
            None
        };
        if self.ordered {
            // A TCP stream never delivers a later segment before an earlier one; a duplicate copy
            // is held back the same way, so it cannot overtake messages sent before it.
            let last = &mut self.last_delivery_ns[from * self.nodes + to];
            at_ns = at_ns.max(*last);
            *last = at_ns;
            if let Some(d) = duplicate_at_ns.as_mut() {
                *d = (*d).max(*last);
                *last = *d;
            }
        }
        Verdict::Deliver { at_ns, duplicate_at_ns }
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
        n.add_rule(0, Rule::Cut { group_of: vec![Some(0), Some(0), Some(1), None], one_way: false });
        assert!(n.is_cut(0, 2) && n.is_cut(2, 0));
        assert!(!n.is_cut(0, 1));
        assert!(!n.is_cut(0, 3) && !n.is_cut(3, 2), "nodes in no group keep their links");
        let mut rng = stream(1, "net", "t");
        assert_eq!(n.route(2, 1, 0, &mut rng), Verdict::Drop(DropReason::Partition));
        n.remove_rules(0);
        assert!(!n.is_cut(0, 2));
    }

    #[test]
    fn one_way_partition_cuts_only_from_the_first_group() {
        let mut n = net(false);
        n.add_rule(0, Rule::Cut { group_of: vec![Some(0), Some(1), Some(1), None], one_way: true });
        assert!(n.is_cut(0, 1) && n.is_cut(0, 2));
        assert!(!n.is_cut(1, 0) && !n.is_cut(2, 0));
    }

    #[test]
    fn ordered_links_never_reorder() {
        let mut n = net(true);
        let mut rng = stream(2, "net", "t");
        let mut last = 0;
        for i in 0..1000 {
            if let Verdict::Deliver { at_ns, .. } = n.route(0, 1, i * 100_000, &mut rng) {
                assert!(at_ns >= last);
                last = at_ns;
            }
        }
        // Unordered links do reorder with these delays.
        let mut u = net(false);
        let times: Vec<Nanos> = (0..100)
            .filter_map(|i| match u.route(0, 1, i * 100_000, &mut rng) {
                Verdict::Deliver { at_ns, .. } => Some(at_ns),
                _ => None,
            })
            .collect();
        assert!(times.windows(2).any(|w| w[1] < w[0]));
    }

    #[test]
    fn duplicates_on_ordered_links_keep_fifo() {
        let base = LinkParams { latency_ms: Dist::Uniform(1.0, 10.0), loss: 0.0, duplicate: 0.5 };
        let mut n = Network::new(2, base, vec![], true);
        let mut rng = stream(5, "net", "t");
        let mut last = 0;
        let mut dups = 0;
        for i in 0..2000 {
            if let Verdict::Deliver { at_ns, duplicate_at_ns } = n.route(0, 1, i * 100_000, &mut rng) {
                assert!(at_ns >= last, "message {i} overtook an earlier one");
                last = at_ns;
                if let Some(d) = duplicate_at_ns {
                    assert!(d >= last, "duplicate of {i} overtook");
                    last = d;
                    dups += 1;
                }
            }
        }
        assert!(dups > 500);
    }

    #[test]
    fn slow_rule_adds_latency_and_loss_rule_drops() {
        let base = LinkParams { latency_ms: Dist::Const(1.0), loss: 0.0, duplicate: 0.0 };
        let mut n = Network::new(2, base, vec![], false);
        let mut rng = stream(3, "net", "t");
        n.add_rule(7, Rule::Slow { nodes: vec![false, true], extra_ms: Dist::Const(4.0) });
        assert_eq!(n.route(0, 1, 0, &mut rng), Verdict::Deliver { at_ns: 5_000_000, duplicate_at_ns: None });
        n.add_rule(8, Rule::Loss { nodes: vec![true, false], rate: 1.0 });
        assert_eq!(n.route(0, 1, 0, &mut rng), Verdict::Drop(DropReason::FaultLoss));
    }

    #[test]
    fn link_overrides_apply_to_matching_pairs() {
        let base = LinkParams { latency_ms: Dist::Const(1.0), loss: 0.0, duplicate: 0.0 };
        let slow = LinkParams { latency_ms: Dist::Const(9.0), loss: 0.0, duplicate: 0.0 };
        let mut n = Network::new(3, base, vec![(vec![true, false, false], vec![false, false, true], slow)], false);
        let mut rng = stream(4, "net", "t");
        assert_eq!(n.route(0, 2, 0, &mut rng), Verdict::Deliver { at_ns: 9_000_000, duplicate_at_ns: None });
        assert_eq!(n.route(2, 0, 0, &mut rng), Verdict::Deliver { at_ns: 1_000_000, duplicate_at_ns: None });
    }
}
