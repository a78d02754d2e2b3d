//! Who is in a run: node ids, what kind each node is, and the directory of names. The lowest
//! layer every other module builds on (it imports nothing of the crate).

use std::collections::BTreeMap;

/// Index of a node in the world (stable for the whole run).
pub type NodeId = usize;

/// What a node is, for selectors and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NodeKind {
    /// One of a model's servers (`server-N`): the nodes of the lock service itself.
    Server,
    /// A model's failover manager (`sentinel-N`): Redis Sentinel, the MySQL failover manager.
    Sentinel,
    /// A lock client (`client-N`).
    Client,
    /// The protected resource (`resource`) that clients read and write while they hold a lock.
    Resource,
}

/// Names and kinds of the nodes, by id.
#[derive(Clone, Debug, Default)]
pub struct Directory {
    names: Vec<String>,
    kinds: Vec<NodeKind>,
    by_name: BTreeMap<String, NodeId>,
    resource: NodeId,
    /// `client-0`, `client-1`, … up to the first index with no node: their ids.
    clients_by_index: Vec<NodeId>,
    /// `server-0`, `server-1`, … likewise.
    servers_by_index: Vec<NodeId>,
}

impl Directory {
    /// The directory of these nodes; a node's id is its index in `nodes`. Names must be unique
    /// (a repeated name maps to its last id). With no `Resource` node, `resource()` is node 0.
    pub fn new(nodes: &[(String, NodeKind)]) -> Self {
        let mut d = Directory::default();
        for (i, (name, kind)) in nodes.iter().enumerate() {
            d.names.push(name.clone());
            d.kinds.push(*kind);
            d.by_name.insert(name.clone(), i);
            if *kind == NodeKind::Resource {
                d.resource = i;
            }
        }
        d.clients_by_index = d.numbered("client");
        d.servers_by_index = d.numbered("server");
        d
    }
    /// The ids of `PREFIX-0`, `PREFIX-1`, … up to the first index with no such node.
    fn numbered(&self, prefix: &str) -> Vec<NodeId> {
        (0..).map_while(|i| self.id_of(&format!("{prefix}-{i}"))).collect()
    }
    /// The clients' ids by index (`client-{i}` at `i`): what a client index a model holds as a
    /// name stands for.
    pub fn clients_by_index(&self) -> &[NodeId] {
        &self.clients_by_index
    }
    /// The servers' ids by index (`server-{i}` at `i`).
    pub fn servers_by_index(&self) -> &[NodeId] {
        &self.servers_by_index
    }
    /// The id of the node with this name; `None` if no node has it.
    pub fn id_of(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }
    /// The node's name (panics on an id outside the directory).
    pub fn name_of(&self, id: NodeId) -> &str {
        &self.names[id]
    }
    /// The node's kind (panics on an id outside the directory).
    pub fn kind_of(&self, id: NodeId) -> NodeKind {
        self.kinds[id]
    }
    /// The id of the resource node (the last `Resource` given to `new`; 0 if there was none).
    pub fn resource(&self) -> NodeId {
        self.resource
    }
    /// How many nodes the run has.
    pub fn len(&self) -> usize {
        self.names.len()
    }
    /// Whether the directory has no nodes.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
    /// The ids of every node of this kind, in id order.
    pub fn of_kind(&self, kind: NodeKind) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.names.len()).filter(move |i| self.kinds[*i] == kind)
    }
    /// Every node's name, by id.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}
