//! What a model's live backend provides: which configurations it starts servers for (and why
//! not the others), how it starts them, which wire adapter carries the client library's
//! messages, and which server leads. The backends themselves, and which model each runs (the
//! registry's declaration), are in [`crate::backends`].

use std::path::Path;

use locksim_simulator::model::Params;
use locksim_simulator::scenario::RunSpec;
use locksim_simulator::setup::Setup;

use crate::client::ClientSpec;
use crate::probe::Probe;
use crate::servers::Server;

/// A model's live backend.
pub trait Backend: Sync {
    /// Why this configuration cannot run live, if it cannot.
    fn check(&self, params: &Params) -> Result<(), String>;
    /// The servers to start (not started yet), in `root`.
    fn servers(&self, params: &Params, root: &Path) -> Result<Vec<Server>, String>;
    /// Each server program's name and version, for the results.
    fn versions(&self) -> Vec<(String, String)>;
    /// The versions of the programs a row with `params` starts (a backend whose rows choose
    /// among servers, as `db`'s `database`, says which); the default is [`Backend::versions`].
    fn versions_for(&self, params: &Params) -> Vec<(String, String)> {
        let _ = params;
        self.versions()
    }
    /// Runs one client process's workload (called in the client process).
    fn client(&self, setup: &Setup, run: &RunSpec, spec: &ClientSpec) -> Result<(), String>;
    /// Waits until the started servers serve (a quorum formed, a leader elected); the default
    /// trusts the open client ports.
    fn ready(&self, servers: &[Server]) -> Result<(), String> {
        let _ = servers;
        Ok(())
    }
    /// Where the `leader` selector points (asked of the real system where it has one).
    fn leader(&self, servers: &[Server]) -> Option<String> {
        servers.first().map(|s| s.node.clone())
    }
    /// The client address of the started server [`Backend::leader`] names.
    fn leader_addr(&self, servers: &[Server]) -> Result<String, String> {
        let leader = self.leader(servers).ok_or("no server names itself leader")?;
        Ok(servers.iter().find(|s| s.node == leader).ok_or("the leader is not a started server")?.addr())
    }
    /// `sim compare`'s calibration: the median round trip, in milliseconds, of `n` requests of
    /// each kind the row's recipe sends that a model parameter stands for (see each backend),
    /// sent to the started, ready `servers` (the leader where there is one) from a connection
    /// thread as a live client sends them. `None`: not measured for this model.
    fn probe_requests_ms(&self, params: &Params, servers: &[Server], n: usize) -> Option<Result<Vec<Probe>, String>> {
        let _ = (params, servers, n);
        None
    }
    /// What the live run does differently from the model, shown with the results.
    fn boundary(&self) -> &'static str;
}
