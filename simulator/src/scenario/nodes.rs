//! Selectors, and the check that the nodes a scenario names exist: a named node (`server-4`) must
//! exist in EVERY run's cluster (a fault that silently hits nothing in one row would make the rows
//! incomparable), each partition group must name at least one node of every run, and a partition
//! must be able to separate two nodes of every run (groups that all end up as one cut nothing).
//! Node names
//! come from each model's own `services`, the list the engine also builds the run from, so the
//! check cannot drift from what the engine will run.

use std::ops::Range;

use crate::directory::NodeKind;
use crate::scenario::runs::Run;
use crate::scenario::walk::{quote, Node, Res, Source};
use crate::setup::{Selector, SELECTOR_FORMS};

/// Where a selector was written.
pub(crate) struct Place {
    at: Range<usize>,
    path: String,
}

impl Place {
    fn of(node: &Node) -> Self {
        Place { at: node.at.clone(), path: node.path.clone() }
    }
}

/// Every selector the file wrote, kept for the check against the clusters.
#[derive(Default)]
pub(crate) struct Mentions {
    /// Fault targets and link ends: named nodes must exist in every run.
    singles: Vec<(Selector, Place)>,
    /// Partition groups (0-based index, as in key paths): each must name some node of every run.
    groups: Vec<(Vec<Selector>, usize, Place)>,
    /// Whole partitions (their groups, `one_way`, where `groups` is written): each must cut a
    /// link in every run.
    partitions: Vec<(Vec<Vec<Selector>>, bool, Place)>,
}

impl Mentions {
    pub fn group(&mut self, selectors: Vec<Selector>, number: usize, node: &Node) {
        self.groups.push((selectors, number, Place::of(node)));
    }

    pub fn partition(&mut self, groups: Vec<Vec<Selector>>, one_way: bool, node: &Node) {
        self.partitions.push((groups, one_way, Place::of(node)));
    }
}

/// One selector string. `mentions`: record it for the existence check (None for group members,
/// which only the group as a whole must satisfy).
pub(crate) fn selector(src: &Source, node: &Node, mentions: Option<&mut Mentions>) -> Res<Selector> {
    let text = node.as_str(src, &format!("a selector ({SELECTOR_FORMS})"))?;
    let sel = Selector::parse(text)
        .ok_or_else(|| node.err(src, format!("unknown selector {}; valid selectors: {SELECTOR_FORMS}", quote(text))))?;
    if let Some(m) = mentions {
        m.singles.push((sel.clone(), Place::of(node)));
    }
    Ok(sel)
}

/// A selector string or a non-empty array of them.
pub(crate) fn selectors(src: &Source, node: &Node, mut mentions: Option<&mut Mentions>) -> Res<Vec<Selector>> {
    if !node.is_array() {
        return Ok(vec![selector(src, node, mentions)?]);
    }
    let items = node.as_array(src, "a selector or an array of selectors")?;
    if items.is_empty() {
        return Err(node.err(src, format!("expected at least one selector ({SELECTOR_FORMS}), found an empty array")));
    }
    items.iter().map(|n| selector(src, n, mentions.as_deref_mut())).collect()
}

/// The nodes of one run's cluster.
struct Census {
    what: String,
    services: Vec<(String, NodeKind)>,
    clients: usize,
}

impl Census {
    /// The run's node names, as its model declares them (nothing is built).
    fn take(run: &Run, clients: usize) -> Census {
        Census { what: run.describe(), services: run.model.services(&run.spec.params), clients }
    }

    fn has_named(&self, name: &str) -> bool {
        if name == "resource" {
            return true;
        }
        if let Some(n) = name.strip_prefix("client-") {
            // Leading zeros (`client-03`) are not the engine's spelling of a node name.
            return n.parse::<usize>().is_ok_and(|i| i < self.clients && n == i.to_string());
        }
        self.services.iter().any(|(s, _)| s == name)
    }

    fn has_kind(&self, kind: NodeKind) -> bool {
        match kind {
            NodeKind::Client => self.clients > 0,
            NodeKind::Resource => true,
            k => self.services.iter().any(|(_, sk)| *sk == k),
        }
    }

    /// Whether the selector can name at least one node of this run.
    fn covers(&self, sel: &Selector) -> bool {
        match sel {
            Selector::Named(_) | Selector::AllOf(_) | Selector::All => {
                self.nodes().any(|(name, kind)| sel.fixed_match(&name, kind) == Some(true))
            }
            Selector::Leader | Selector::RandomServer => self.has_kind(NodeKind::Server),
            // A follower is a server other than the leader: it takes two servers.
            Selector::Follower => self.services.iter().filter(|(_, k)| *k == NodeKind::Server).count() >= 2,
            Selector::Holder | Selector::Waiter | Selector::RandomClient => self.clients > 0,
        }
    }

    /// Node indexes of this census: services in order, then clients, then the resource.
    fn size(&self) -> usize {
        self.services.len() + self.clients + 1
    }

    /// Every node's name and kind, by node index (as the engine numbers them).
    fn nodes(&self) -> impl Iterator<Item = (String, NodeKind)> + '_ {
        let clients = (0..self.clients).map(|i| (format!("client-{i}"), NodeKind::Client));
        self.services
            .iter()
            .cloned()
            .chain(clients)
            .chain(std::iter::once(("resource".to_string(), NodeKind::Resource)))
    }

    /// Marks the nodes `sel` may select when the fault starts; `certain`: only those it selects
    /// whatever the run does (a role or a random pick may be any node of its kind, and is
    /// certain to be none in particular).
    fn mark(&self, sel: &Selector, certain: bool, into: &mut [bool]) {
        let s = self.services.len();
        let kind = |k: NodeKind, into: &mut [bool]| match k {
            NodeKind::Client => into[s..s + self.clients].iter_mut().for_each(|b| *b = true),
            NodeKind::Resource => into[s + self.clients] = true,
            k => self.services.iter().enumerate().filter(|(_, (_, sk))| *sk == k).for_each(|(i, _)| into[i] = true),
        };
        match sel {
            Selector::Named(_) | Selector::AllOf(_) | Selector::All => {
                for (i, (name, k)) in self.nodes().enumerate() {
                    if sel.fixed_match(&name, k) == Some(true) {
                        into[i] = true;
                    }
                }
            }
            _ if certain => {}
            Selector::Leader | Selector::Follower | Selector::RandomServer => kind(NodeKind::Server, into),
            Selector::Holder | Selector::Waiter | Selector::RandomClient => kind(NodeKind::Client, into),
        }
    }

    /// Which partition groups can keep a node of this run: a node named in several groups
    /// belongs to the last of them (as the engine assigns it), so a group whose every node is
    /// certainly named by a later group keeps none.
    fn kept_groups(&self, groups: &[Vec<Selector>]) -> Vec<bool> {
        let n = self.size();
        let mut later_certain = vec![false; n];
        let mut kept = vec![false; groups.len()];
        for (i, g) in groups.iter().enumerate().rev() {
            let mut possible = vec![false; n];
            g.iter().for_each(|s| self.mark(s, false, &mut possible));
            kept[i] = possible.iter().zip(&later_certain).any(|(p, c)| *p && !*c);
            g.iter().for_each(|s| self.mark(s, true, &mut later_certain));
        }
        kept
    }

    /// Its node names, shortened for a message.
    fn list(&self) -> String {
        let mut names: Vec<String> = self.services.iter().take(12).map(|(n, _)| n.clone()).collect();
        if self.services.len() > 12 {
            names.push("…".into());
        }
        match self.clients {
            0 => {}
            1 => names.push("client-0".into()),
            2 => names.push("client-0, client-1".into()),
            n => names.push(format!("client-0 … client-{}", n - 1)),
        }
        names.push("resource".into());
        names.join(", ")
    }
}

/// Checks every mention against every run's cluster.
pub(crate) fn check(src: &Source, runs: &[Run], clients: usize, mentions: &Mentions) -> Res<()> {
    if mentions.singles.iter().all(|(s, _)| !matches!(s, Selector::Named(_)))
        && mentions.groups.is_empty()
        && mentions.partitions.is_empty()
    {
        return Ok(()); // nothing to check
    }
    for census in runs.iter().map(|r| Census::take(r, clients)) {
        for (sel, place) in &mentions.singles {
            if let Selector::Named(name) = sel {
                if !census.has_named(name) {
                    return Err(src.error(
                        &place.at,
                        &place.path,
                        format!("`{name}` is not a node of {} (its nodes: {})", census.what, census.list()),
                    ));
                }
            }
        }
        for (group, number, place) in &mentions.groups {
            if !group.iter().any(|s| census.covers(s)) {
                let written: Vec<String> = group.iter().map(|s| s.to_string()).collect();
                return Err(src.error(
                    &place.at,
                    &place.path,
                    format!(
                        "group {number} names no node of {} (the group is [{}]; its nodes: {})",
                        census.what,
                        written.join(", "),
                        census.list()
                    ),
                ));
            }
        }
        for (groups, one_way, place) in &mentions.partitions {
            if let Some(why) = cuts_nothing(&census, groups, *one_way) {
                return Err(src.error(
                    &place.at,
                    &place.path,
                    format!(
                        "this partition cuts no link of {}: {why}. A partition must separate at least two \
                         nodes (a node named in several groups belongs to the last of them); name \
                         different nodes in two groups, e.g. [[\"server-0\"], [\"server-1\", \"server-2\"]]",
                        census.what
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Why a partition's groups cut no link of this run, if they cannot: fewer than two groups keep
/// a node (with `one_way`, group 0 or every other group keeps none). Sound, not complete: a
/// role or a random pick may still resolve to the same node as another group at run time.
fn cuts_nothing(census: &Census, groups: &[Vec<Selector>], one_way: bool) -> Option<String> {
    let kept = census.kept_groups(groups);
    let kept_ids: Vec<usize> = kept.iter().enumerate().filter(|(_, k)| **k).map(|(i, _)| i).collect();
    if one_way {
        if !kept[0] {
            return Some(
                "with one_way = true only links from group 0 are cut, and every node group 0 names is \
                         named again by a later group"
                    .to_string(),
            );
        }
        if kept_ids.len() < 2 {
            return Some(
                "with one_way = true only links from group 0 to the other groups are cut, and no other \
                         group keeps a node of its own"
                    .to_string(),
            );
        }
        return None;
    }
    match kept_ids.as_slice() {
        [only] => Some(format!("every node its groups name ends up in group {only}")),
        [] => Some("its groups name no node".to_string()),
        _ => None,
    }
}
