//! [`Fingerprint`] for the workload driver, the resource and their messages and timers: every
//! field destructured (a new one is a compile error here), node ids renamed, timer ids by the
//! timer they name.

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::hash::Hasher;
use std::sync::Arc;

use super::{ClientNode, Draws, Driver, Held, Phase, ResourceNode, Step};
use crate::fingerprint::{stream_position, Fingerprint, Renaming, StableHasher};
use crate::fingerprint_by_debug;
use crate::lockclient::{LockClient, LockEvent};
use crate::process::Protocol;
use crate::wire::{DriverTimer, ResourceMsg};

fingerprint_by_debug!(Step, DriverTimer);

impl Fingerprint for Held {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Held {
            key,
            mode,
            token,
            grant,
            nested,
            nesting_pending,
            read_value,
            step,
            hold_timer,
            resource_timer,
            abandoned,
        } = self;
        key.fingerprint(h, ids);
        mode.fingerprint(h, ids);
        token.fingerprint(h, ids);
        grant.fingerprint(h, ids);
        nested.fingerprint(h, ids);
        nesting_pending.fingerprint(h, ids);
        read_value.fingerprint(h, ids);
        step.fingerprint(h, ids);
        hold_timer.fingerprint(h, ids);
        resource_timer.fingerprint(h, ids);
        abandoned.fingerprint(h, ids);
    }
}

impl Fingerprint for Phase {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Phase::Thinking => h.write_u8(0),
            Phase::Waiting { key, mode, timeout } => {
                h.write_u8(1);
                key.fingerprint(h, ids);
                mode.fingerprint(h, ids);
                timeout.fingerprint(h, ids);
            }
            Phase::Holding(held) => {
                h.write_u8(2);
                held.fingerprint(h, ids);
            }
            Phase::Releasing { key, remaining } => {
                h.write_u8(3);
                key.fingerprint(h, ids);
                remaining.fingerprint(h, ids);
            }
            Phase::Done => h.write_u8(4),
        }
    }
}

impl Fingerprint for Draws {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        // Configuration: derived `Debug`, complete, no node ids.
        let Draws { hold, think, acquire_timeout, check_to_write } = self;
        h.debug(&(hold, think, acquire_timeout, check_to_write));
    }
}

/// The bytes a driver's configuration hashes as: `params`' `Debug` text, then `draws`' (as
/// [`Draws`]' impl gives it), each followed by [`StableHasher::debug`]'s separator.
fn config_bytes(params: &crate::setup::WorkloadSpec, draws: &Draws) -> Vec<u8> {
    /// Collects what `StableHasher::debug` would feed the hasher.
    struct Bytes(Vec<u8>);
    impl fmt::Write for Bytes {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            self.0.extend_from_slice(s.as_bytes());
            Ok(())
        }
    }
    let Draws { hold, think, acquire_timeout, check_to_write } = draws;
    let mut out = Bytes(Vec::new());
    let _ = write!(out, "{params:?}");
    out.0.push(0xff);
    let _ = write!(out, "{:?}", (hold, think, acquire_timeout, check_to_write));
    out.0.push(0xff);
    out.0
}

/// A driver configuration (by its `Arc`s) and its bytes ([`config_bytes`]).
type ConfigBytes = (Arc<crate::setup::WorkloadSpec>, Arc<Draws>, Vec<u8>);

thread_local! {
    /// Each driver configuration's bytes ([`config_bytes`]), by the configuration's `Arc`s
    /// (held here, so an address cannot be freed and reused while cached). A configuration
    /// never changes in a run and every copy of a world shares it, while formatting its floats
    /// cost about 5% of an etcd search's time.
    static CONFIG_BYTES: RefCell<Vec<ConfigBytes>> = const { RefCell::new(Vec::new()) };
}

/// How many configurations [`CONFIG_BYTES`] keeps (one per client of the runs a thread
/// fingerprints; past this it starts again).
const CONFIG_BYTES_KEPT: usize = 64;

/// Hashes `params` and `draws` as `h.debug(params); draws.fingerprint(h, ..)` does, the same
/// bytes, formatted once per configuration.
fn hash_config(h: &mut StableHasher, params: &Arc<crate::setup::WorkloadSpec>, draws: &Arc<Draws>) {
    CONFIG_BYTES.with(|kept| {
        let mut kept = kept.borrow_mut();
        if let Some((.., bytes)) = kept.iter().find(|(p, d, _)| Arc::ptr_eq(p, params) && Arc::ptr_eq(d, draws)) {
            h.write(bytes);
            return;
        }
        let bytes = config_bytes(params, draws);
        h.write(&bytes);
        if kept.len() >= CONFIG_BYTES_KEPT {
            kept.clear();
        }
        kept.push((Arc::clone(params), Arc::clone(draws), bytes));
    });
}

impl Fingerprint for Driver {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Driver { params, draws, rng, phase, think_timer, grants, completed, last_slot_wall_ns } = self;
        hash_config(h, params, draws);
        stream_position(h, rng);
        phase.fingerprint(h, ids);
        think_timer.fingerprint(h, ids);
        grants.fingerprint(h, ids);
        completed.fingerprint(h, ids);
        last_slot_wall_ns.fingerprint(h, ids);
    }
}

impl Fingerprint for LockEvent {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            LockEvent::Granted { key, token } => {
                h.write_u8(0);
                (key, token).fingerprint(h, ids);
            }
            LockEvent::Failed { key, reason } => {
                h.write_u8(1);
                (key, reason).fingerprint(h, ids);
            }
            LockEvent::Released { key } => {
                h.write_u8(2);
                key.fingerprint(h, ids);
            }
            LockEvent::ReleaseFailed { key, reason } => {
                h.write_u8(3);
                (key, reason).fingerprint(h, ids);
            }
            LockEvent::Lost { key, honour } => {
                h.write_u8(4);
                (key, honour).fingerprint(h, ids);
            }
            LockEvent::Notified { key } => {
                h.write_u8(5);
                key.fingerprint(h, ids);
            }
            LockEvent::Refused { key } => {
                h.write_u8(6);
                key.fingerprint(h, ids);
            }
        }
    }
}

impl<P: Protocol> ClientNode<P> {
    /// The library's identity values (`LockClient::identity_values`).
    pub(crate) fn identity_values(&self, out: &mut Vec<u64>) {
        self.lib.identity_values(out);
    }

    /// Whether the library has a typed fingerprint (else the client is hashed by `Debug` text).
    pub(crate) fn has_fingerprint(&self) -> bool {
        self.lib.as_fingerprint().is_some()
    }

    /// Whether the library treats the servers as a set (`LockClient::servers_interchangeable`).
    pub(crate) fn servers_interchangeable(&self) -> bool {
        self.lib.servers_interchangeable()
    }
}

impl<P: Protocol> Fingerprint for ClientNode<P> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let ClientNode { lib, driver, events, batch } = self;
        match LockClient::as_fingerprint(lib.as_ref()) {
            Some(f) => f.fingerprint(h, ids),
            // A world with such a client is not fingerprinted with symmetry (`has_fingerprint`).
            None => h.debug(lib),
        }
        driver.fingerprint(h, ids);
        events.fingerprint(h, ids);
        // Scratch for one `drain` call: empty between events.
        let _ = batch;
    }
}

impl Fingerprint for ResourceNode {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let ResourceNode { counter, highest_token, applied } = self;
        counter.fingerprint(h, ids);
        highest_token.fingerprint(h, ids);
        // (client, grant): sorted by the renamed client.
        let mut writes: Vec<(u64, u64)> = applied.iter().map(|(c, g)| (ids.name(*c), *g)).collect();
        writes.sort_unstable();
        writes.fingerprint(h, ids);
    }
}

impl Fingerprint for ResourceMsg {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ResourceMsg::Read { key, grant } => {
                h.write_u8(0);
                (key, grant).fingerprint(h, ids);
            }
            ResourceMsg::ReadReply { key, grant, value } => {
                h.write_u8(1);
                (key, grant, value).fingerprint(h, ids);
            }
            ResourceMsg::Write { key, grant, token, value } => {
                h.write_u8(2);
                (key, grant, token, value).fingerprint(h, ids);
            }
            ResourceMsg::WriteReply { key, grant, fenced_accepted } => {
                h.write_u8(3);
                (key, grant, fenced_accepted).fingerprint(h, ids);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::WorkloadSpec;

    /// The kept bytes hash exactly as the configuration's `Debug` text did, on first use and
    /// from the cache.
    #[test]
    fn a_configuration_hashes_as_its_debug_text() {
        let params = WorkloadSpec::default();
        let draws = Draws {
            hold: crate::dist::Sampler::new(&params.hold_ms),
            think: crate::dist::Sampler::new(&params.think_ms),
            acquire_timeout: None,
            check_to_write: Some(crate::dist::Sampler::new(&crate::dist::Dist::Uniform(0.5, 1.25))),
        };
        let mut plain = StableHasher::default();
        plain.debug(&params);
        draws.fingerprint(&mut plain, &Renaming::identity(1));
        let (params, draws) = (Arc::new(params), Arc::new(draws));
        for _ in 0..2 {
            let mut kept = StableHasher::default();
            hash_config(&mut kept, &params, &draws);
            assert_eq!(kept.finish(), plain.finish());
        }
    }
}
