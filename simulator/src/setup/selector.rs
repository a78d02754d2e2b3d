//! Node selectors as the scenario format writes them: a name, a kind wildcard, or a role resolved
//! when a fault starts, and the one resolver that says which nodes a selector means (the engine
//! and `sim live` both ask it, each through its own [`SelectorView`]).

use std::fmt;

use rand::Rng;

use crate::directory::{NodeId, NodeKind};
use crate::process::ClientState;

/// Which nodes a fault or a link override means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// One node by name (`client-3`, `server-0`, `sentinel-1`, `resource`).
    Named(String),
    /// Every node of a kind (`client-*`, `server-*`, `sentinel-*`).
    AllOf(NodeKind),
    /// Every node (`*`).
    All,
    /// The server that leads now (highest term among those that believe they lead); `server-0`
    /// for a model with no leader.
    Leader,
    /// One non-leading server, chosen by the seed.
    Follower,
    /// One client that believes it holds a lock now.
    Holder,
    /// One client waiting to acquire now.
    Waiter,
    /// One client, chosen by the seed (crashed ones included).
    RandomClient,
    /// One server, chosen by the seed (crashed ones included).
    RandomServer,
}

/// Every selector form, for error messages.
pub const SELECTOR_FORMS: &str = "a node name (client-N, server-N, sentinel-N, resource), \
client-*, server-*, sentinel-*, *, leader, follower, holder, waiter, random-client, random-server";

impl Selector {
    /// Parses the text form; `None` if it is not a selector at all. Whether a named node exists
    /// is checked later, against the cluster.
    pub fn parse(text: &str) -> Option<Selector> {
        Some(match text {
            "*" => Selector::All,
            "client-*" => Selector::AllOf(NodeKind::Client),
            "server-*" => Selector::AllOf(NodeKind::Server),
            "sentinel-*" => Selector::AllOf(NodeKind::Sentinel),
            "leader" => Selector::Leader,
            "follower" => Selector::Follower,
            "holder" => Selector::Holder,
            "waiter" => Selector::Waiter,
            "random-client" => Selector::RandomClient,
            "random-server" => Selector::RandomServer,
            "resource" => Selector::Named("resource".into()),
            other => {
                let (prefix, num) = other.rsplit_once('-')?;
                if !matches!(prefix, "client" | "server" | "sentinel") {
                    return None;
                }
                if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                Selector::Named(other.to_string())
            }
        })
    }

    /// Whether the selector always means the same nodes (a name, a kind, or everything): those
    /// [`Selector::fixed_match`] answers for.
    pub fn is_fixed(&self) -> bool {
        self.fixed_match("", NodeKind::Resource).is_some()
    }

    /// For a fixed selector, whether it selects the node `name` of kind `kind`; `None` for a role
    /// or a random pick, which depends on the moment. The only place a fixed selector's meaning
    /// is written: the resolver, link ends and the scenario's node check all ask it.
    pub fn fixed_match(&self, name: &str, kind: NodeKind) -> Option<bool> {
        match self {
            Selector::Named(n) => Some(n == name),
            Selector::AllOf(k) => Some(*k == kind),
            Selector::All => Some(true),
            Selector::Leader
            | Selector::Follower
            | Selector::Holder
            | Selector::Waiter
            | Selector::RandomClient
            | Selector::RandomServer => None,
        }
    }

    /// The nodes the selector means now, as `view` sees the run; `None` while a role has no
    /// member (no leader yet, no holder) or a name is no node of the run: the caller waits. A
    /// role or random pick takes one node, drawn as `rng.gen_range(0..candidates)` over the
    /// candidates in the view's order (the engine's golden traces depend on this exact draw).
    pub fn resolve<R: Rng + ?Sized>(&self, view: &impl SelectorView, rng: &mut R) -> Option<Vec<NodeId>> {
        let pick = |rng: &mut R, candidates: Vec<NodeId>| -> Option<Vec<NodeId>> {
            (!candidates.is_empty()).then(|| vec![candidates[rng.gen_range(0..candidates.len())]])
        };
        match self {
            Selector::Named(_) | Selector::AllOf(_) | Selector::All => {
                let ids: Vec<NodeId> = (0..view.node_count())
                    .filter(|&i| self.fixed_match(view.name(i), view.kind(i)) == Some(true))
                    .collect();
                // A name the run lacks waits (a kind it lacks is simply no node).
                (!ids.is_empty() || !matches!(self, Selector::Named(_))).then_some(ids)
            }
            Selector::Leader => view.leader().map(|l| vec![l]),
            Selector::Follower => {
                let leader = view.leader();
                if leader.is_none() && !view.follower_without_leader() {
                    return None;
                }
                let followers = view.servers().into_iter().filter(|&s| Some(s) != leader && view.alive(s)).collect();
                pick(rng, followers)
            }
            Selector::Holder | Selector::Waiter => {
                let want = if *self == Selector::Holder { ClientState::Holding } else { ClientState::Waiting };
                let clients = view
                    .clients()
                    .into_iter()
                    .filter(|&c| view.alive(c) && view.client_state(c) == Some(want))
                    .collect();
                pick(rng, clients)
            }
            Selector::RandomClient => pick(rng, view.clients()),
            Selector::RandomServer => pick(rng, view.servers()),
        }
    }
}

/// What [`Selector::resolve`] needs to know about a run now. Nodes are numbered `0..node_count()`
/// (the engine's node ids; live's index into its node names). Each side keeps its own meaning
/// here: the engine draws roles among nodes that are not crashed, live among every node (it
/// cannot see a crash the way the engine does).
pub trait SelectorView {
    /// How many nodes the run has.
    fn node_count(&self) -> usize;
    /// A node's name (`server-0`, `client-3`, `resource`).
    fn name(&self, node: NodeId) -> &str;
    /// A node's kind.
    fn kind(&self, node: NodeId) -> NodeKind;
    /// The servers `follower` and `random-server` draw from, in draw order: by default the nodes
    /// of kind [`NodeKind::Server`].
    fn servers(&self) -> Vec<NodeId> {
        (0..self.node_count()).filter(|&i| self.kind(i) == NodeKind::Server).collect()
    }
    /// The clients `holder`, `waiter` and `random-client` draw from, in draw order.
    fn clients(&self) -> Vec<NodeId> {
        (0..self.node_count()).filter(|&i| self.kind(i) == NodeKind::Client).collect()
    }
    /// The server that leads now, if any.
    fn leader(&self) -> Option<NodeId>;
    /// Whether `follower` may be drawn while no server leads (then among every server); by
    /// default it waits for a leader.
    fn follower_without_leader(&self) -> bool {
        false
    }
    /// Whether a `follower`, `holder` or `waiter` may be this node now (`random-*` picks ignore it).
    fn alive(&self, node: NodeId) -> bool;
    /// What a client believes now (`None`: not known).
    fn client_state(&self, node: NodeId) -> Option<ClientState>;
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Selector::Named(n) => n.as_str(),
            Selector::AllOf(NodeKind::Client) => "client-*",
            Selector::AllOf(NodeKind::Server) => "server-*",
            Selector::AllOf(NodeKind::Sentinel) => "sentinel-*",
            Selector::AllOf(NodeKind::Resource) => "resource",
            Selector::All => "*",
            Selector::Leader => "leader",
            Selector::Follower => "follower",
            Selector::Holder => "holder",
            Selector::Waiter => "waiter",
            Selector::RandomClient => "random-client",
            Selector::RandomServer => "random-server",
        };
        f.write_str(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parses_every_form() {
        assert_eq!(Selector::parse("client-3"), Some(Selector::Named("client-3".into())));
        assert_eq!(Selector::parse("server-*"), Some(Selector::AllOf(NodeKind::Server)));
        assert_eq!(Selector::parse("leader"), Some(Selector::Leader));
        assert_eq!(Selector::parse("resource"), Some(Selector::Named("resource".into())));
        assert_eq!(Selector::parse("server-"), None);
        assert_eq!(Selector::parse("node-1"), None);
        assert_eq!(Selector::parse("client-x"), None);
    }

    /// server-0..2, client-0..1, resource; `crashed` nodes are not alive.
    struct Fake {
        nodes: Vec<(&'static str, NodeKind)>,
        leader: Option<NodeId>,
        crashed: Vec<NodeId>,
        holding: Vec<NodeId>,
        follower_without_leader: bool,
    }

    impl Fake {
        fn new() -> Fake {
            let nodes = vec![
                ("server-0", NodeKind::Server),
                ("server-1", NodeKind::Server),
                ("server-2", NodeKind::Server),
                ("client-0", NodeKind::Client),
                ("client-1", NodeKind::Client),
                ("resource", NodeKind::Resource),
            ];
            Fake { nodes, leader: Some(1), crashed: vec![], holding: vec![], follower_without_leader: false }
        }
    }

    impl SelectorView for Fake {
        fn node_count(&self) -> usize {
            self.nodes.len()
        }
        fn name(&self, node: NodeId) -> &str {
            self.nodes[node].0
        }
        fn kind(&self, node: NodeId) -> NodeKind {
            self.nodes[node].1
        }
        fn leader(&self) -> Option<NodeId> {
            self.leader
        }
        fn follower_without_leader(&self) -> bool {
            self.follower_without_leader
        }
        fn alive(&self, node: NodeId) -> bool {
            !self.crashed.contains(&node)
        }
        fn client_state(&self, node: NodeId) -> Option<ClientState> {
            Some(if self.holding.contains(&node) { ClientState::Holding } else { ClientState::Idle })
        }
    }

    fn resolve_all(sel: &str, view: &Fake) -> Vec<Option<Vec<NodeId>>> {
        let mut rng = crate::rng::stream(7, "test", "selector");
        let sel = Selector::parse(sel).expect("a selector");
        (0..50).map(|_| sel.resolve(view, &mut rng)).collect()
    }

    #[test]
    fn fixed_selectors_resolve_by_name_and_kind_and_a_missing_name_waits() {
        let view = Fake::new();
        assert_eq!(resolve_all("client-1", &view)[0], Some(vec![4]));
        assert_eq!(resolve_all("server-*", &view)[0], Some(vec![0, 1, 2]));
        assert_eq!(resolve_all("*", &view)[0], Some(vec![0, 1, 2, 3, 4, 5]));
        assert_eq!(resolve_all("sentinel-*", &view)[0], Some(vec![]));
        assert_eq!(resolve_all("server-7", &view)[0], None);
    }

    #[test]
    fn roles_draw_only_among_their_candidates() {
        let mut view = Fake::new();
        view.crashed = vec![2];
        // A follower is neither the leader (1) nor crashed (2).
        assert!(resolve_all("follower", &view).iter().all(|r| *r == Some(vec![0])));
        // A random server may be crashed: all three come up.
        let drawn: Vec<_> = resolve_all("random-server", &view).into_iter().flatten().flatten().collect();
        assert!((0..3).all(|s| drawn.contains(&s)), "{drawn:?}");
        view.holding = vec![4];
        assert!(resolve_all("holder", &view).iter().all(|r| *r == Some(vec![4])));
        view.crashed = vec![4];
        assert!(resolve_all("holder", &view).iter().all(|r| r.is_none()));
        assert_eq!(resolve_all("leader", &view)[0], Some(vec![1]));
        // No leader: a follower waits, unless the view lets it be any server (live).
        view.leader = None;
        view.crashed = vec![];
        assert!(resolve_all("follower", &view).iter().all(|r| r.is_none()));
        view.follower_without_leader = true;
        let drawn: Vec<_> = resolve_all("follower", &view).into_iter().flatten().flatten().collect();
        assert!((0..3).all(|s| drawn.contains(&s)), "{drawn:?}");
    }
}
