//! The `client` preset: which clientv3 version the clients run, and the defaults and behaviours
//! it has in its source (docs/libraries.md has the readings; the citations are repeated in
//! docs/models.md). A preset fills every library-dependent parameter the scenario leaves at its
//! schema default; an explicit value overrides it.
//!
//! The default is `clientv3-3.5`, the newest stable release read (issue 32: the default preset is
//! the newest stable release); `locksim-1` stays selectable.
//!
//! - `locksim-1` (the default before issue 32's flip): the model as it was before presets, no parameter changed: a
//!   client-side deadline of `ReqTimeout` on every call and on the keep-alive stream
//!   (`call_deadline = "req_timeout"`), one member per client (`balancer = "pinned"`), and the
//!   Mutex's re-check after waiting (`recheck_after_wait = true`). It mixes versions:
//!   docs/libraries.md, rows 9 and 10 and "Other differences" 1.
//! - `clientv3-3.4` (3.4.23; every 3.4 tag for these switches): no per-call deadline beyond the
//!   caller's context (`concurrency/mutex.go:42, 54, 80-82`; `config.go:32-85` has none), the
//!   7 s being the server's `ReqTimeout` (`etcdserver/config.go:286-289`, `v3_server.go:671`,
//!   `errors.go:26`): `call_deadline = "none"`; the keep-alive ends only at its deadline
//!   (`lease.go:537-552`); the `RoundrobinBalanced` picker from v3.3.14 (`client.go:47, 65, 290`;
//!   `balancer/picker/roundrobin_balanced.go:55-67`): `balancer = "round_robin"`; no 3.4 tag
//!   re-checks the own key after waiting (`concurrency/mutex.go:69-77`, identical v3.4.3 to
//!   v3.4.45): `recheck_after_wait = false`; session TTL 60 s (`concurrency/session.go:24`),
//!   keep-alive every TTL/3 (`lease.go:517-518`), gRPC keepalive off (`client.go:224-230`).
//!   The session's end reaches the application through goroutines (`session_done =
//!   "goroutines"`): the lessor's `deadlineLoop` (a `time.After(time.Second)` tick, `lease.go:537-552`)
//!   or `recvKeepAlive` on a TTL-0 answer (`lease.go:509-513`) calls `ka.close()`, which closes the
//!   keep-alive channel (`lease.go:591-596`); the Session's goroutine ranging over it then closes
//!   `donec` (`concurrency/session.go:64-69`), the channel `Session.Done()` returns
//!   (`session.go:84`). Measured live (clientv3 3.4.23, `etcd-paused-holder.toml`, 8 runs):
//!   `Done()` closed 0.1–0.2 ms after SIGCONT (`session_done_ms`), and the application's check
//!   came first in 4 of 8 runs; `resume_to_check_ms` = 0–0.3 ms makes that race even (not
//!   measured on its own: the stale writes reached the resource 0.4–5 ms after SIGCONT).
//! - `clientv3-3.5` (v3.5.0 … v3.5.33; the default): as 3.4, with the re-check (`concurrency/mutex.go:85-100
//!   @v3.5.33`) and gRPC's own `round_robin` (`client/v3/internal/resolver/resolver.go:43 @v3.5.0`).

use locksim_simulator::dist::Dist;
use locksim_simulator::model::{ParamValue as V, Params};

/// The clientv3 version (`client`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    /// The model as it was before presets (`locksim-1`).
    Locksim,
    /// etcd clientv3 3.4 (read at v3.4.23).
    Clientv3_34,
    /// etcd clientv3 3.5.
    Clientv3_35,
}

/// The `client` parameter's choices, in the order `sim list` shows them.
pub const LIBRARIES: &[&str] = &["locksim-1", "clientv3-3.4", "clientv3-3.5"];

impl Library {
    /// The `client` parameter; anything not a preset is `locksim-1`.
    pub fn parse(s: &str) -> Library {
        match s {
            "clientv3-3.4" => Library::Clientv3_34,
            "clientv3-3.5" => Library::Clientv3_35,
            _ => Library::Locksim,
        }
    }

    /// The `client` parameter's text for this version (one of [`LIBRARIES`]).
    pub fn name(self) -> &'static str {
        match self {
            Library::Locksim => "locksim-1",
            Library::Clientv3_34 => "clientv3-3.4",
            Library::Clientv3_35 => "clientv3-3.5",
        }
    }
}

/// From the lessor closing the keep-alive to `Session.Done()` closed: clientv3 3.4.23 live
/// (`sim live scenarios/fidelity/etcd-paused-holder.toml --reference`, 8 runs, 2026-11-27):
/// `Done()` closed 0.1–0.2 ms after SIGCONT.
const CLIENTV3_SESSION_DONE_MS: Dist = Dist::Uniform(0.1, 0.2);
/// The application thread's wake-up to its check: the same runs checked before `Done()` closed in
/// 4 of 8; uniform 0–0.3 ms against the 0.1–0.2 ms above is an even race.
const CLIENTV3_RESUME_TO_CHECK_MS: Dist = Dist::Uniform(0.0, 0.3);

/// The parameters after the preset: every preset parameter the scenario did not set itself
/// ([`Params::fill_unset`]) takes the chosen version's value; one it set is kept. `locksim-1`
/// changes nothing.
pub fn resolve(params: &Params) -> Params {
    let lib = Library::parse(params.str("client"));
    let mut out = params.clone();
    if lib == Library::Locksim {
        return out;
    }
    out.fill_unset("lease_ttl_ms", V::Num(60_000.0));
    out.fill_unset("keepalive_fraction", V::Num(1.0 / 3.0));
    out.fill_unset("keepalive_time_ms", V::Num(0.0));
    out.fill_unset("call_deadline", V::Str("none".into()));
    out.fill_unset("balancer", V::Str("round_robin".into()));
    out.fill_unset("recheck_after_wait", V::Bool(lib == Library::Clientv3_35));
    out.fill_unset("session_done", V::Str("goroutines".into()));
    out.fill_unset("session_done_ms", V::Dist(CLIENTV3_SESSION_DONE_MS));
    out.fill_unset("resume_to_check_ms", V::Dist(CLIENTV3_RESUME_TO_CHECK_MS));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_choice_parses_to_its_library() {
        let libs: Vec<Library> = LIBRARIES.iter().map(|s| Library::parse(s)).collect();
        assert_eq!(libs, [Library::Locksim, Library::Clientv3_34, Library::Clientv3_35]);
        let names: Vec<&str> = libs.iter().map(|l| l.name()).collect();
        assert_eq!(names, LIBRARIES, "name() gives back the parameter's text");
    }
}
