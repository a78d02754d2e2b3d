//! The `client` preset: which Redlock library the clients run, and the defaults and behaviours
//! each one has in its source. The preset fills every library-dependent parameter that the
//! scenario leaves at its schema default; an explicit value overrides it.
//!
//! Sources (each number below was read in these files):
//! - `redlock-rb`: the `redlock` gem, leandromoreira/redlock-rb 2.x `lib/redlock/client.rb`
//!   (commit fbe2b28; the maintained continuation of antirez's original): `DEFAULT_RETRY_COUNT
//!   = 3` retries (`try_lock_instances`: `tries = retry_count + 1`), a wait of
//!   `retry_delay + rand(retry_jitter)` with `DEFAULT_RETRY_DELAY = 200` and
//!   `DEFAULT_RETRY_JITTER = 50` (uniform 200–250 ms), `DEFAULT_REDIS_TIMEOUT = 0.1` s per
//!   command, elapsed time on `default_time_source` = `Process.clock_gettime(CLOCK_MONOTONIC)`
//!   (`Time.now` only where CLOCK_MONOTONIC is missing), `drift = (ttl * CLOCK_DRIFT_FACTOR).to_i
//!   + 2` with 0.01, `@servers.count` one master after another, every failed attempt unlocks
//!   all masters (`lock_instances`), and `RedisInstance#unlock` rescues every error ("unlocking
//!   is just a best-effort attempt"). antirez/redlock-rb `lib/redlock.rb` (commit 7fae7d8), the
//!   original redis.io links, differs: `Time.now` (wall clock), `DefaultRetryCount=3` attempts
//!   (`@retry_count.times`), `rand(@retry_delay)` (0–200 ms) and redis-rb's default 5 s timeout;
//!   it is `elapsed_clock = "wall"`, `retries = 2`, `retry_delay_ms = { uniform = [0, 200] }`,
//!   `node_timeout_ms = 5000` here.
//! - `redsync`: go-redsync/redsync v4 `redsync.go` `NewMutex` (`tries: 32` attempts, delay
//!   `rand.Intn(maxRetryDelayMilliSec-minRetryDelayMilliSec)+minRetryDelayMilliSec` with 50 and
//!   250 ms, `driftFactor: 0.01`, `timeoutFactor: 0.05`) and `mutex.go` `lockContext`: elapsed
//!   is `now.Sub(start)` of two `time.Now()` readings, which Go computes on their monotonic
//!   readings; the validity subtracts `expiry*driftFactor` and nothing more; every round (SET
//!   and unlock) runs on all masters at once (`actOnPoolsAsync`) under one
//!   `context.WithTimeout(expiry*timeoutFactor)`; every failed attempt unlocks all masters;
//!   `UnlockContext` returns `false` and the error when fewer than a quorum deleted the key.
//!   `Extend` (`mutex.go` `ExtendContext`, lines 158-173 @v4.12.1; `touch`, 279-296, and its two
//!   scripts, 261-277) runs only when the application calls it: `extend_every_ms` is off in the
//!   preset, and `extend` stays `touchScript` (v4.12.0's `touchWithSetNXScript` is the opt-in
//!   `WithSetNXOnExtend`, `redsync.go:90-98 @v4.12.1`). `redsync-4` names the same preset.
//! - `node-redlock`: mike-marcacci/node-redlock v5.0.0-beta.2 `src/index.ts`: `defaultSettings`
//!   (`driftFactor: 0.01`, `retryCount: 10`, `retryDelay: 200`, `retryJitter: 100`);
//!   `_execute` makes `retryCount + 1` attempts with a wait of
//!   `retryDelay + floor((random*2-1)*retryJitter)` (uniform 100–300 ms); `acquire` takes
//!   `start = Date.now()` (wall clock) once before all attempts and returns the lock with
//!   `expiration = start + duration - drift`, `drift = round(driftFactor*duration) + 2`,
//!   without checking that it is still in the future; the attempts do not unlock in between:
//!   only when the whole call failed does it run the release script once (`retryCount: 0`);
//!   `_attemptOperation` decides at the quorum-th vote for or against; `release` throws
//!   `ExecutionError` when no quorum of masters deleted the key. ioredis sets no command
//!   timeout by default, so a master that never answers is waited for without end: modelled
//!   as `node_timeout_ms` = 1e7 (the parameter's maximum).

use locksim_simulator::dist::Dist;
use locksim_simulator::model::Params;

/// The Redlock client library (`client`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    /// The `redlock` gem (leandromoreira/redlock-rb 2.x).
    RedlockRb,
    /// go-redsync/redsync v4.
    Redsync,
    /// mike-marcacci/node-redlock v5.
    NodeRedlock,
}

/// The `client` parameter's choices, in the order `sim list` shows them. `redsync-4` is the
/// versioned name of `redsync` (the same preset: every reading below is of v4).
pub const LIBRARIES: &[&str] = &["redlock-rb", "redsync", "redsync-4", "node-redlock"];

impl Library {
    /// The `client` parameter: `redsync` or `redsync-4`, `node-redlock`, anything else
    /// `redlock-rb`.
    pub fn parse(s: &str) -> Library {
        match s {
            "redsync" | "redsync-4" => Library::Redsync,
            "node-redlock" => Library::NodeRedlock,
            _ => Library::RedlockRb,
        }
    }

    /// Attempts one acquire call makes for a `retries` value, as the library counts it:
    /// redsync's `tries` counts attempts; redlock-rb's `retry_count` (`tries = retry_count + 1`)
    /// and node-redlock's `retryCount` (`maxAttempts = retryCount + 1`) count retries.
    pub fn attempts(self, retries: u32) -> u32 {
        match self {
            Library::Redsync => retries,
            Library::RedlockRb | Library::NodeRedlock => retries.saturating_add(1),
        }
    }

    /// Whether each failed attempt unlocks all masters before the next (redis.io step 5,
    /// redlock-rb, redsync); node-redlock unlocks once, after the last attempt.
    pub fn unlocks_each_failed_attempt(self) -> bool {
        self != Library::NodeRedlock
    }

    /// Whether the validity is measured from the start of the whole acquire call (node-redlock's
    /// one `start = Date.now()`) rather than from the start of the successful attempt.
    pub fn validity_from_call_start(self) -> bool {
        self == Library::NodeRedlock
    }

    /// Whether a grant requires a validity left (redlock-rb `validity >= 0`, redsync
    /// `now.Before(until)`); node-redlock returns the lock on a quorum alone.
    pub fn checks_validity(self) -> bool {
        self != Library::NodeRedlock
    }

    /// Whether `unlock` raises when fewer than a quorum of masters deleted the key (redsync
    /// `UnlockContext`, node-redlock `release`); redlock-rb ignores every per-node error.
    pub fn release_raises(self) -> bool {
        self != Library::RedlockRb
    }
}

/// A library's values for the preset parameters.
struct Preset {
    elapsed_clock: &'static str,
    retries: i64,
    retry_delay_ms: Dist,
    /// A number of milliseconds, or `None` for redsync's `ttl × timeoutFactor`.
    node_timeout_ms: Option<f64>,
    drift_factor: f64,
    drift_extra_ms: f64,
    requests: &'static str,
}

/// redsync's `timeoutFactor` (`redsync.go` `NewMutex`).
const REDSYNC_TIMEOUT_FACTOR: f64 = 0.05;

fn preset(lib: Library) -> Preset {
    match lib {
        Library::RedlockRb => Preset {
            elapsed_clock: "mono",
            retries: 3,
            retry_delay_ms: Dist::Uniform(200.0, 250.0),
            node_timeout_ms: Some(100.0),
            drift_factor: 0.01,
            drift_extra_ms: 2.0,
            requests: "sequential",
        },
        Library::Redsync => Preset {
            elapsed_clock: "mono",
            retries: 32,
            retry_delay_ms: Dist::Uniform(50.0, 250.0),
            node_timeout_ms: None,
            drift_factor: 0.01,
            drift_extra_ms: 0.0,
            requests: "parallel",
        },
        Library::NodeRedlock => Preset {
            elapsed_clock: "wall",
            retries: 10,
            retry_delay_ms: Dist::Uniform(100.0, 300.0),
            node_timeout_ms: Some(1e7),
            drift_factor: 0.01,
            drift_extra_ms: 2.0,
            requests: "parallel_quorum",
        },
    }
}

/// The parameters after the preset: every preset parameter the scenario did not set itself
/// ([`Params::fill_unset`]) takes the chosen library's value; one it set, even to redlock-rb's
/// value, is kept.
pub fn resolve(params: &Params) -> Params {
    use locksim_simulator::model::ParamValue as V;
    let lib = Library::parse(params.str("client"));
    if lib == Library::RedlockRb {
        return params.clone();
    }
    let p = preset(lib);
    let mut out = params.clone();
    out.fill_unset("elapsed_clock", V::Str(p.elapsed_clock.into()));
    out.fill_unset("retries", V::Int(p.retries));
    out.fill_unset("retry_delay_ms", V::Dist(p.retry_delay_ms.clone()));
    let timeout_ms = p.node_timeout_ms.unwrap_or(params.f64("ttl_ms") * REDSYNC_TIMEOUT_FACTOR);
    out.fill_unset("node_timeout_ms", V::Num(timeout_ms));
    out.fill_unset("drift_factor", V::Num(p.drift_factor));
    out.fill_unset("drift_extra_ms", V::Num(p.drift_extra_ms));
    out.fill_unset("requests", V::Str(p.requests.into()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_follow_each_librarys_count() {
        assert_eq!(Library::RedlockRb.attempts(3), 4);
        assert_eq!(Library::Redsync.attempts(32), 32);
        assert_eq!(Library::NodeRedlock.attempts(10), 11);
    }
}
