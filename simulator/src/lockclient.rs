//! The one lock-client interface every model's client library implements. The shared workload
//! driver ([`crate::workload`]) calls it; the library answers with [`LockEvent`]s. The library
//! speaks its model's [`Protocol`]: it receives the model's messages and its own typed timers;
//! the driver's timers and the resource's replies never reach it.

use crate::durable::Rebuild;
use crate::history::{FailReason, LockKey, LockMode};
use crate::process::{Ctx, NodeId, Protocol, TimerId};

/// What the library tells the application.
#[derive(Clone, Debug, PartialEq)]
pub enum LockEvent {
    /// The acquire call returned success, with the grant's fencing token if the model has one.
    Granted {
        /// The key granted.
        key: LockKey,
        /// The grant's fencing token; `None`: the model issues none.
        token: Option<u64>,
    },
    /// The acquire call gave up.
    Failed {
        /// The key asked for.
        key: LockKey,
        /// Why it gave up.
        reason: FailReason,
    },
    /// The release call returned (whether or not the server still had the lock).
    Released {
        /// The key released.
        key: LockKey,
    },
    /// The release call returned an error instead (a lost connection, a timeout): the release
    /// may never have taken effect, so the server may still name this client as the holder. The
    /// application gives the lock up all the same and moves on; the workload records it as a
    /// failed release. A library answers each `release` with exactly one of `Released` or this.
    ReleaseFailed {
        /// The key whose release failed.
        key: LockKey,
        /// What went wrong (`Timeout`, `Unavailable`, `SessionLost`, `Refused`: not held any
        /// more, as Redisson's IllegalMonitorStateException).
        reason: FailReason,
    },
    /// The library believes the lock is lost. `honour` says whether the model's policy makes the
    /// application stop (ZooKeeper `on_connection_loss`, Redlock `respect_validity`); when false
    /// it is only reported.
    Lost {
        /// The key lost.
        key: LockKey,
        /// Whether the application stops using the lock (abandons its critical section).
        honour: bool,
    },
    /// A watch or pub/sub wake-up reached this waiting client (counts the herd effect).
    Notified {
        /// The key the wake-up was for.
        key: LockKey,
    },
    /// A request for the lock was refused by a server (the key was taken): polling load.
    Refused {
        /// The key asked for.
        key: LockKey,
    },
}

/// Where a library puts its events during a call.
pub type LockEvents = Vec<LockEvent>;

/// A model's client library: the state machine behind `lock()` / `unlock()`.
///
/// `Debug` and [`CloneLockClient`] (given to every `Clone` library) let the engine copy and
/// fingerprint a world, as for [`crate::process::Process`]: derive both.
pub trait LockClient<P: Protocol>: Send + std::fmt::Debug + CloneLockClient<P> + Rebuild {
    /// The client node starts (connect, open a session).
    fn on_start(&mut self, ctx: &mut Ctx<P>, out: &mut LockEvents);
    /// Acquire `key` in `mode`. Answer later with `Granted` or `Failed`. A reentrant library that
    /// already holds `key` grants again at once (nested); others are never asked that.
    fn acquire(&mut self, ctx: &mut Ctx<P>, out: &mut LockEvents, key: LockKey, mode: LockMode);
    /// Release `key` (once per grant, nested grants included). Answer with `Released`, or with
    /// `ReleaseFailed` when the call got an error.
    fn release(&mut self, ctx: &mut Ctx<P>, out: &mut LockEvents, key: LockKey);
    /// Give up a pending acquisition (the workload's `acquire_timeout_ms` ran out): stop waiting
    /// and clean up whatever the request left on the servers. No event is expected in answer.
    fn cancel(&mut self, ctx: &mut Ctx<P>, out: &mut LockEvents, key: LockKey);
    /// A message from the lock service.
    fn on_message(&mut self, ctx: &mut Ctx<P>, out: &mut LockEvents, from: NodeId, msg: P::Msg);
    /// A timer the library set fired.
    fn on_timer(&mut self, ctx: &mut Ctx<P>, out: &mut LockEvents, timer: TimerId, tag: P::Timer);
    /// The client node restarts, built from its [`crate::durable::Durable`] disk (a library's is
    /// its configuration: it keeps nothing else; see [`crate::process::Process::on_restart`]).
    fn on_restart(&mut self, ctx: &mut Ctx<P>, out: &mut LockEvents) {
        self.on_start(ctx, out)
    }
    /// The connection to server `peer` was closed from its end (its process was killed, or it
    /// refused a message): see [`crate::process::Process::on_reset`]. A real library fails the
    /// requests outstanding on that connection and reconnects; the default ignores it.
    fn on_reset(&mut self, ctx: &mut Ctx<P>, out: &mut LockEvents, peer: NodeId) {
        let _ = (ctx, out, peer);
    }
    /// The application's own check of its lock, made just before the critical section writes
    /// (after its hold): `false` makes it abandon the section without writing. The check a real
    /// application makes with this library: Redlock's `respect_validity` compares its clock
    /// with the validity end; a ZooKeeper application that honours SUSPENDED or LOST asks
    /// whether it saw one. The default: the application does not check. Only a pause between
    /// the check and the write (`check_to_write_ms`) can then defeat it.
    fn check_before_write(&mut self, ctx: &mut Ctx<P>, out: &mut LockEvents, key: LockKey) -> bool {
        let _ = (ctx, out, key);
        true
    }
    /// Whether re-acquiring a held lock nests (Redisson, the db row with a count). Non-reentrant
    /// libraries are never asked to re-acquire; the workload reports that it skipped nesting.
    fn reentrant(&self) -> bool {
        false
    }
    /// Whether the acquire call is blocked on a notification from the service, with no request
    /// of its own in flight: etcd's `waitDeletes` watching the key before its own, a recipe
    /// waiting on a watch. `sim exhaust`'s `blocked` fault target reads it, to pause a waiter
    /// only where no answer to it is on its way (a pause that catches the answer "you hold"
    /// in flight is the generic paused-holder case, not a waiter's). The default: never.
    fn blocked_on_service(&self) -> bool {
        false
    }
    /// Whether this library treats the servers it talks to as a set: it visits them in no order
    /// that matters, and its typed fingerprint hashes what it knows of each server keyed by the
    /// server (renamed), not by its position in a list. Then, where every server says
    /// `Process::interchangeable_server`, the symmetric fingerprint renames servers too. The
    /// default: no (the servers keep their ids).
    fn servers_interchangeable(&self) -> bool {
        false
    }
    /// The identity values this library drew or was given that name its client (a lock value,
    /// a session id), each as `crate::fingerprint::identity_hash(&value)`: under client
    /// symmetry each hashes as its client, renamed with it (`Renaming::identity_value`, which
    /// the library's fingerprint uses where the value appears; the servers' and messages'
    /// impls do the same). List a value only if the model compares it for equality only: never
    /// orders by it, iterates a map in its order in a way that changes behaviour, or derives a
    /// delay from it (docs/world-state.md "Identity values"). The default: none.
    fn identity_values(&self, _out: &mut Vec<u64>) {}
    /// The library's typed state hash (`crate::fingerprint`), as `Process::as_fingerprint`:
    /// return `Some(self)`. The default: none (hashed by its `Debug` text, no symmetry).
    fn as_fingerprint(&self) -> Option<&dyn crate::fingerprint::Fingerprint> {
        None
    }
}

/// A boxed copy of a client library: implemented for every `Clone` library.
pub trait CloneLockClient<P: Protocol> {
    /// A copy of this library, boxed.
    fn box_clone(&self) -> Box<dyn LockClient<P>>;
}

impl<P: Protocol, T: LockClient<P> + Clone + 'static> CloneLockClient<P> for T {
    fn box_clone(&self) -> Box<dyn LockClient<P>> {
        Box::new(self.clone())
    }
}

impl<P: Protocol> Clone for Box<dyn LockClient<P>> {
    fn clone(&self) -> Self {
        self.box_clone()
    }
}
