//! Node selectors as the scenario format writes them: a name, a kind wildcard, or a role resolved
//! when a fault starts.

use std::fmt;

use crate::directory::NodeKind;

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

    /// Whether the selector always means the same nodes (a name, a kind, or everything).
    pub fn is_fixed(&self) -> bool {
        matches!(self, Selector::Named(_) | Selector::AllOf(_) | Selector::All)
    }
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
}
