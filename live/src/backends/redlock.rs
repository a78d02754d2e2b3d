//! The `redlock` model's live backend: `masters` independent real `redis-server`s; the model's
//! Redlock library through [`RedlockAdapter`].

use std::path::Path;

use locksim_algorithms::redlock::Redlock;
use locksim_simulator::model::Params;
use locksim_simulator::scenario::RunSpec;
use locksim_simulator::setup::Setup;

use super::redis::redis_version;
use crate::adapters::redlock::RedlockAdapter;
use crate::backend::Backend;
use crate::client::{self, ClientSpec};
use crate::probe::Probe;
use crate::servers::{self, Server};

/// `redlock`: `masters` independent `redis-server`s.
pub struct RedlockBackend;

impl Backend for RedlockBackend {
    fn check(&self, _params: &Params) -> Result<(), String> {
        Ok(())
    }
    fn servers(&self, params: &Params, root: &Path) -> Result<Vec<Server>, String> {
        let persistence = params.str("persistence");
        (0..params.int("masters")).map(|i| servers::redis_server(root, &format!("server-{i}"), persistence)).collect()
    }
    fn versions(&self) -> Vec<(String, String)> {
        redis_version()
    }
    fn client(&self, setup: &Setup, run: &RunSpec, spec: &ClientSpec) -> Result<(), String> {
        client::run_typed(&Redlock, setup, run, spec, |servers, tx| Box::new(RedlockAdapter::new(servers, tx)))
    }
    fn probe_requests_ms(&self, _: &Params, servers: &[Server], n: usize) -> Option<Result<Vec<Probe>, String>> {
        Some(super::redis::probe_set(servers, n).map(|p| vec![p]))
    }
    fn boundary(&self) -> &'static str {
        "the model's Redlock library (quorum, validity arithmetic, retries) runs unchanged; SET NX PX and the unlock \
script go to real redis-servers through the `redis` crate; clocks are the machine's (no drift can be injected)"
    }
}
