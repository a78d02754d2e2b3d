//! The `client` preset: which ZooKeeper lock library, at which version, the clients run, and the
//! defaults and behaviours each one has in its source (docs/libraries.md has the readings; the
//! citations are repeated in docs/models.md). A preset fills every library-dependent parameter the
//! scenario leaves at its schema default; an explicit value overrides it.
//!
//! - `locksim-1`: the model as it was before presets, with no parameter changed (the default
//!   until issue 32 made `curator-5.4` the default):
//!   Curator's retry policy and connection timeout, a 40 s session, SUSPENDED seen by the
//!   application's check at once (`state_delivery = "sync"`), and a release that fails at the
//!   first connection loss (`release = "fail_fast"`). It mixes behaviours of several versions;
//!   docs/libraries.md says which.
//! - `curator-5.4` (the default, the newest stable preset): Curator 5.4.0 on the ZooKeeper 3.7.1
//!   client. `CuratorFrameworkFactory.java:62-63`
//!   (session 60 s, which a `tickTime` of 2 s negotiates to 40 s; connection timeout 15 s); the
//!   documented `ExponentialBackoffRetry(1000, 3)` (`ExponentialBackoffRetry.java:71`); connection
//!   states reach the listeners through the SendThread, the EventThread and
//!   `ConnectionStateManager`'s own thread (`ClientCnxn.java:1240-1251, 1315, 1331, 549-553
//!   @release-3.7.1`; `ConnectionStateManager.java:116, 256, 263-281`): `state_delivery =
//!   "threads"`. SUSPENDED comes from `Disconnected`, which `cleanAndNotifyState` queues only
//!   after `ClientCnxnSocketNIO.cleanup()` has slept 100 ms (`ClientCnxn.java:1328-1331`;
//!   `ClientCnxnSocketNIO.java:213-217`, unchanged in 3.8.0, the client Debian's Curator runs
//!   on): the cleanup sleep, which also delays the reconnect; the rest of the path (the SendThread
//!   waking, the EventThread's `waitingEvents.take()`, Curator's watcher `postState` →
//!   `eventQueue.offer`, `processEvents`' `eventQueue.poll` waking) is `state_delivery_ms` =
//!   1.5–4.5 ms, measured live (SUSPENDED at the listener 101.8–104.4 ms after SIGCONT, 5 runs,
//!   2026-11-27). After a pause the resumed application thread reaches its check
//!   `resume_to_check_ms` = 1–7 ms after the resume (the write left 1.3–7.1 ms after SIGCONT, 9
//!   runs): it checks before SUSPENDED arrives whenever its hold ended inside the pause. The
//!   release's guaranteed delete runs through
//!   `RetryLoop` before it gives up (`LockInternals.java:343-350`; `DeleteBuilderImpl.java:297-353`):
//!   `release = "retry_loop"`.
//! - `kazoo-2.10`, `kazoo-2.11`: kazoo's `Lock`. Session 10 s (`client.py:106`); every command
//!   retried by `KazooRetry(max_tries=None)`: 0.1 s × 2ⁿ, at most 3600 s, ±40 % jitter
//!   (`client.py:77-82, 322-323`; `retry.py:36-49, 137-162`): `retry_policy = "kazoo"`; the
//!   release retried until it succeeds (`recipe/lock.py:329-341`): `release = "retry_loop"` under
//!   that unlimited policy. Not reentrant (`recipe/lock.py:213-216`). The listeners run on
//!   kazoo's connection thread, which races the resumed application thread (`state_delivery =
//!   "threads"`, no cleanup sleep): after a pause past the session the server has closed the
//!   connection, the connection thread's `select` returns at the resume
//!   (`protocol/connection.py:624-630`), `_read` gets the end of stream and raises
//!   `ConnectionDropped("socket connection broken")` (`:262-272`), the loop's handler logs it and
//!   calls `client._session_callback(KeeperState.CONNECTING)` (`:658-665`), which calls the
//!   listeners with SUSPENDED on that same thread (`client.py:543-577`, `_make_state_change`
//!   `:526-541`) — no sleep on the way, only Python work that hands the GIL to the application
//!   thread at every I/O. The `Lock` itself checks nothing for a holder: `is_acquired` stays set
//!   (`recipe/lock.py:200, 342`) and its `_watch_session` listener only wakes a waiter
//!   (`:207-209, 252-266`), so the application's check is its own listener's flag.
//!   `state_delivery_ms` = 0.85–1.6 ms (resume to the flag set) and `resume_to_check_ms` =
//!   0.55–1.4 ms, measured on kazoo 2.10.0 live (below): the check wins in about 3 seeds of 4.
//!   The two presets differ only in the clock of the heartbeat and retry deadlines (2.10 wall,
//!   2.11 monotonic), which the model does not have yet: both run the same here.

use locksim_simulator::dist::Dist;
use locksim_simulator::model::{ParamValue as V, Params};

/// The ZooKeeper lock library (`client`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    /// The model as it was before presets (`locksim-1`).
    Locksim,
    /// Apache Curator 5.4.0 `InterProcessMutex`.
    Curator54,
    /// python-zk kazoo 2.10.0 `Lock`.
    Kazoo210,
    /// python-zk kazoo 2.11.0 `Lock`.
    Kazoo211,
}

/// The `client` parameter's choices, in the order `sim list` shows them.
pub const LIBRARIES: &[&str] = &["locksim-1", "curator-5.4", "kazoo-2.10", "kazoo-2.11"];

/// The path from the SendThread noticing a lost connection to a Curator listener, less the
/// cleanup sleep: Curator 5.4.0 on ZooKeeper client 3.8.0 live (`sim live
/// scenarios/fidelity/zookeeper-paused-holder.toml --reference curator`, 5 runs, 2026-11-27):
/// SUSPENDED at the `ConnectionStateListener` 101.8–104.4 ms after SIGCONT.
const CURATOR_STATE_DELIVERY_MS: Dist = Dist::Uniform(1.5, 4.5);
/// The resumed application thread's time to its check before the write: the same runs and 4
/// more, `write_sent` 1.3–7.1 ms after SIGCONT (the check is just before it).
const CURATOR_RESUME_TO_CHECK_MS: Dist = Dist::Uniform(1.0, 7.0);
/// kazoo's connection thread, from the resume to the application's listener having set its flag:
/// kazoo 2.10.0 live on `scenarios/fidelity/zookeeper-paused-holder.toml` (`sim live
/// --reference kazoo`, `LOCKSIM_KAZOO_TRACE`, 2026-11-27): the connection thread woke first in
/// 8 of 8 traced runs, entered the listener 0.67–1.13 ms later and had set the flag 0.89–1.58 ms
/// after waking (5 runs stamped it), the harness's listener printing two lines first.
const KAZOO_STATE_DELIVERY_MS: Dist = Dist::Uniform(0.85, 1.6);
/// The resumed application thread (its hold's `Event.wait` returning, the resource's buffered
/// answer read) reaching its check: 0.60–1.23 ms after the connection thread woke (7 runs; in
/// the eighth it woke only at 1.23 ms, after the flag); with the delivery above the check comes
/// first in about 76 % of draws, as in 12 of the 16 live runs (2026-11-27, the harness's hold
/// fixed at the grant).
const KAZOO_RESUME_TO_CHECK_MS: Dist = Dist::Uniform(0.55, 1.4);
/// `ClientCnxnSocketNIO.cleanup()`: `Thread.sleep(100)` after closing the socket
/// (`ClientCnxnSocketNIO.java:213-217 @release-3.7.1`).
const ZK_JAVA_CLEANUP_SLEEP_MS: u64 = 100;

impl Library {
    /// The `client` parameter; anything not a preset is `locksim-1`.
    pub fn parse(s: &str) -> Library {
        match s {
            "curator-5.4" => Library::Curator54,
            "kazoo-2.10" => Library::Kazoo210,
            "kazoo-2.11" => Library::Kazoo211,
            _ => Library::Locksim,
        }
    }

    /// The `client` parameter's text for this library (one of [`LIBRARIES`]).
    pub fn name(self) -> &'static str {
        match self {
            Library::Locksim => "locksim-1",
            Library::Curator54 => "curator-5.4",
            Library::Kazoo210 => "kazoo-2.10",
            Library::Kazoo211 => "kazoo-2.11",
        }
    }

    /// Whether a second acquisition by the holder only counts (Curator's per-thread
    /// `lockCount`); kazoo's `Lock` blocks on itself instead.
    pub fn reentrant(self) -> bool {
        !matches!(self, Library::Kazoo210 | Library::Kazoo211)
    }

    /// The ZooKeeper Java client's cleanup sleep after a lost connection (Curator runs on it;
    /// kazoo has its own connection code; `locksim-1` never had it).
    pub fn cleanup_sleep_ms(self) -> u64 {
        if self == Library::Curator54 {
            ZK_JAVA_CLEANUP_SLEEP_MS
        } else {
            0
        }
    }

    /// Whether it is one of the kazoo presets.
    pub fn is_kazoo(self) -> bool {
        matches!(self, Library::Kazoo210 | Library::Kazoo211)
    }
}

/// The parameters after the preset: every preset parameter the scenario did not set itself
/// ([`Params::fill_unset`]) takes the chosen library's value; one it set is kept. `locksim-1`
/// changes nothing.
pub fn resolve(params: &Params) -> Params {
    let lib = Library::parse(params.str("client"));
    let mut out = params.clone();
    let mut fill = |key: &str, value: V| {
        out.fill_unset(key, value);
    };
    match lib {
        Library::Locksim => {}
        Library::Curator54 => {
            fill("session_timeout_ms", V::Num(60_000.0));
            fill("connection_timeout_ms", V::Num(15_000.0));
            fill("retry_policy", V::Str("exponential_backoff".into()));
            fill("retry_base_sleep_ms", V::Num(1000.0));
            fill("retry_max_retries", V::Int(3));
            fill("state_delivery", V::Str("threads".into()));
            fill("state_delivery_ms", V::Dist(CURATOR_STATE_DELIVERY_MS));
            fill("resume_to_check_ms", V::Dist(CURATOR_RESUME_TO_CHECK_MS));
            fill("release", V::Str("retry_loop".into()));
        }
        Library::Kazoo210 | Library::Kazoo211 => {
            fill("session_timeout_ms", V::Num(10_000.0));
            fill("retry_policy", V::Str("kazoo".into()));
            fill("state_delivery", V::Str("threads".into()));
            fill("state_delivery_ms", V::Dist(KAZOO_STATE_DELIVERY_MS));
            fill("resume_to_check_ms", V::Dist(KAZOO_RESUME_TO_CHECK_MS));
            fill("release", V::Str("retry_loop".into()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_choice_parses_to_its_library() {
        let libs: Vec<Library> = LIBRARIES.iter().map(|s| Library::parse(s)).collect();
        assert_eq!(libs, [Library::Locksim, Library::Curator54, Library::Kazoo210, Library::Kazoo211]);
        assert!(Library::Curator54.reentrant() && !Library::Kazoo211.reentrant());
        let names: Vec<&str> = libs.iter().map(|l| l.name()).collect();
        assert_eq!(names, LIBRARIES, "name() gives back the parameter's text");
    }
}
