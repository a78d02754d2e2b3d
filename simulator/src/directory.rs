//! Who is in a run: node ids, what kind each node is, and the directory of names. The lowest
//! layer every other module builds on (it imports nothing of the crate).

use std::collections::BTreeMap;

/// Index of a node in the world (stable for the whole run).
pub type NodeId = usize;

/// What a node is, for selectors and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NodeKind {
    Server,
    Sentinel,
    Client,
    Resource,
}

/// Names and kinds of the nodes, by id.
#[derive(Clone, Debug, Default)]
pub struct Directory {
    names: Vec<String>,
    kinds: Vec<NodeKind>,
    by_name: BTreeMap<String, NodeId>,
    resource: NodeId,
}

impl Directory {
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
        d
    }
    pub fn id_of(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }
    pub fn name_of(&self, id: NodeId) -> &str {
        &self.names[id]
    }
    pub fn kind_of(&self, id: NodeId) -> NodeKind {
        self.kinds[id]
    }
    pub fn resource(&self) -> NodeId {
        self.resource
    }
    pub fn len(&self) -> usize {
        self.names.len()
    }
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
    pub fn of_kind(&self, kind: NodeKind) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.names.len()).filter(move |i| self.kinds[*i] == kind)
    }
    /// Every node's name, by id.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}
