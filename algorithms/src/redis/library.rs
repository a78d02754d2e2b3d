//! The `client` preset: which lock library, at which version, the clients run, and the defaults
//! and behaviours each one has in its source (docs/libraries.md has the readings, tag by tag).
//! A preset fills every library-dependent parameter the scenario leaves at its schema default;
//! an explicit value overrides it. A row that names no `client` runs the newest stable release of
//! the library its pattern belongs to ([`client`]): `redis-py-8` for the plain `SET NX PX` pattern
//! (the schema default), `redisson-4.7` when the scenario sets `watchdog = true` (Redisson's
//! lock). `client = "locksim-1"` fills nothing: the model's settings as they were before presets,
//! a mix of versions (see docs/libraries.md), the default until issue 32's flip.
//!
//! Sources, `file:line@tag` (Redisson paths under `redisson/src/main/java/org/redisson/`):
//! - every `redisson-*`: `watchdog`, lease 30 000 ms (`config/Config.java:71@redisson-3.17.0`),
//!   `timeout` 3000 ms (`config/BaseConfig.java:55@redisson-3.17.0`, `:59@redisson-3.48.0`),
//!   `checkLockSyncedSlaves` true (`Config.java:73@redisson-3.17.0`), the renewal through the
//!   synced eval, so with `WAIT` (`RedissonBaseLock.java:185@redisson-3.17.0`,
//!   `renewal/LockTask.java:70@redisson-3.44.0`), `RLock` without a token, the owner-checked
//!   unlock script.
//! - `renewal_error`: `stop` up to 3.43.0 (`RedissonBaseLock.java:147-151@redisson-3.17.0`,
//!   `:137-145@redisson-3.43.0`), `reschedule` from 3.44.0
//!   (`renewal/RenewalTask.java:172-175@redisson-3.44.0`).
//! - `resend_written = "batch_only"` from 3.37.0 (`RedissonLock.java:219,345@redisson-3.37.0`,
//!   `command/CommandAsyncService.java:1005-1011@redisson-3.37.0`,
//!   `command/RedisExecutor.java:456-459@redisson-3.37.0`; the batch:
//!   `command/CommandBatchService.java:189-198@redisson-3.37.0`).
//! - `readonly_retry` from 3.27.1 (`client/handler/CommandDecoder.java:409@redisson-3.27.1`,
//!   `RedisExecutor.java:573-574@redisson-3.27.1`).
//! - `replica_count`: Redisson's own Sentinel view up to 3.18.0
//!   (`RedissonBaseLock.java:216@redisson-3.17.0`), `INFO REPLICATION` before every call from
//!   3.18.1 (`RedissonBaseLock.java:213-216@redisson-3.18.1`), cached from 3.27.0
//!   (`command/CommandAsyncService.java:971-994@redisson-3.27.0`,
//!   `connection/MasterSlaveEntry.java:77@redisson-3.27.0`), forgotten on any other count from
//!   3.46.0 (`CommandAsyncService.java:1129@redisson-3.46.0`); no `WAIT` with 0 cached
//!   (`command/CommandBatchService.java:447-461@redisson-3.27.0`).
//! - `no_sync` (no replica acknowledged the lock's `WAIT`): `fail_keep` in 3.17.x (no
//!   `handleNoSync`) and 3.25.0–3.46.0 (the message check no longer matches:
//!   `command/CommandAsyncService.java:858,906@redisson-3.25.0`); `unlock_retry` in 3.20.1–3.24.x
//!   (`RedissonBaseLock.java:334-340@redisson-3.20.1`) and from 3.47.0
//!   (`CommandAsyncService.java:997@redisson-3.47.0`, `connection/ServiceManager.java:568-578@redisson-3.48.0`).
//! - retries: 3 × constant 1500 ms up to 3.47.0 (`BaseConfig.java:57,59@redisson-3.17.0`), 4 ×
//!   `EqualJitterDelay(1000 ms, 2 s)` from 3.48.0 (`BaseConfig.java:63,65-68@redisson-3.48.0`,
//!   `config/EqualJitterDelay.java:51-63@redisson-3.48.0`; `BaseConfig.java:62,67@redisson-4.7.0`).
//! - redis-py `Lock` (`redis/lock.py@v5.0.8`): `SET NX PX` only, never `WAIT`
//!   (`lock.py:220-228`), no TTL unless given (`timeout=None`, `:80`), `sleep` 0.1 s
//!   (`:81`); no socket timeout (`client.py:174@v5.0.8`, `:205@v6.0.0`) and no retries in 5.x
//!   (`connection.py:187-196@v5.0.8`); 3 retries with `ExponentialWithJitterBackoff(1, 10)` in
//!   6.x–7.x (`client.py:215-217@v6.0.0`, `backoff.py:124-125@v6.0.0`); 10 retries with base 10 ms,
//!   cap 1 s, and a 5 s socket timeout in 8.x (`_defaults.py:7,37-39@v8.0.0`). From 6.0 a
//!   `READONLY` reply, raised as a `ConnectionError` by the Sentinel connection
//!   (`sentinel.py:73-81@v5.0.8`), is retried like any connection error. `release()` raises
//!   `LockNotOwnedError` when the compare-and-delete script answers 0 (`release_missing =
//!   "error"`: `lock.py:27-34,258-265@v5.2.1`; the same code at `lock.py:30-37,278-285` in
//!   `v6.0.0` and `v8.0.0`).

use locksim_simulator::dist::Dist;
use locksim_simulator::model::{ParamValue as V, Params};

/// The `client` parameter's choices, in the order `sim list` shows them.
pub const LIBRARIES: &[&str] = &[
    "locksim-1",
    "redisson-3.17",
    "redisson-3.21",
    "redisson-3.27",
    "redisson-3.37",
    "redisson-3.44",
    "redisson-3.52",
    "redisson-4.7",
    "redis-py-5",
    "redis-py-6",
    "redis-py-8",
];

/// redis-py has no socket timeout by default: modelled as the parameter's maximum.
pub const NO_TIMEOUT_MS: f64 = 1e9;

/// The newest stable redis-py read (the schema default of `client`: the plain pattern's).
pub const NEWEST_REDIS_PY: &str = "redis-py-8";

/// The newest stable Redisson read: the default of a row that asks for the watchdog.
pub const NEWEST_REDISSON: &str = "redisson-4.7";

/// The preset a row runs: the scenario's own `client`, or, when it wrote none, the newest stable
/// release of the library whose lock it asked for: [`NEWEST_REDISSON`] for `watchdog = true`
/// (only Redisson has the watchdog), otherwise the schema default [`NEWEST_REDIS_PY`] (the plain
/// `SET NX PX` pattern, which never `WAIT`s: docs/libraries.md row 6).
pub fn client(params: &Params) -> &str {
    if !params.is_explicit("client") && params.is_explicit("watchdog") && params.bool("watchdog") {
        NEWEST_REDISSON
    } else {
        params.str("client")
    }
}

/// The parameters after the preset ([`client`]): every preset parameter the scenario did not set
/// itself ([`Params::fill_unset`]) takes the chosen library's value; one it set is kept. `client`
/// holds the preset that ran. `client = "locksim-1"` returns the parameters unchanged.
pub fn resolve(params: &Params) -> Params {
    let client = client(params);
    let values = preset(client);
    let mut out = params.clone();
    out.values.insert("client".to_string(), V::Str(client.to_string()));
    for (key, value) in values {
        out.fill_unset(key, value);
    }
    out
}

/// Redisson, every version read: the lock with its watchdog, as `RLock` runs it.
fn redisson_common() -> Vec<(&'static str, V)> {
    vec![
        ("watchdog", V::Bool(true)),
        ("ttl_ms", V::Num(30_000.0)),
        ("timeout_ms", V::Num(3_000.0)),
        ("replica_ack", V::Bool(true)),
        ("renewal_wait", V::Bool(true)),
        ("fencing_counter", V::Bool(false)),
        ("unlock", V::Str("compare_and_delete".into())),
        ("acquire", V::Str("set_nx_px".into())),
    ]
}

/// Redisson up to 3.47.0: 3 retries, a constant 1500 ms `retryInterval`.
fn redisson_constant_retry() -> Vec<(&'static str, V)> {
    vec![
        ("retry_attempts", V::Int(3)),
        ("retry_delay", V::Str("constant".into())),
        ("retry_interval_ms", V::Num(1_500.0)),
    ]
}

/// Redisson from 3.48.0: 4 retries, `EqualJitterDelay(1000 ms, 2 s)`.
fn redisson_equal_jitter_retry() -> Vec<(&'static str, V)> {
    vec![
        ("retry_attempts", V::Int(4)),
        ("retry_delay", V::Str("equal_jitter".into())),
        ("retry_delay_base_ms", V::Num(1_000.0)),
        ("retry_delay_max_ms", V::Num(2_000.0)),
    ]
}

/// The switches that changed between Redisson versions.
fn redisson_switches(
    renewal_error: &str,
    resend_written: &str,
    readonly_retry: bool,
    replica_count: &str,
    no_sync: &str,
) -> Vec<(&'static str, V)> {
    vec![
        ("renewal_error", V::Str(renewal_error.into())),
        ("resend_written", V::Str(resend_written.into())),
        ("readonly_retry", V::Bool(readonly_retry)),
        ("replica_count", V::Str(replica_count.into())),
        ("no_sync", V::Str(no_sync.into())),
    ]
}

/// redis-py's `Lock`: the redis.io pattern with no `WAIT`, no TTL, 0.1 s between tries; a
/// release that finds the lock not ours raises `LockNotOwnedError`.
fn redis_py_common() -> Vec<(&'static str, V)> {
    vec![
        ("watchdog", V::Bool(false)),
        ("acquire", V::Str("set_nx_px".into())),
        ("unlock", V::Str("compare_and_delete".into())),
        ("ttl_ms", V::Num(0.0)),
        ("retry_ms", V::Dist(Dist::Const(100.0))),
        ("replica_ack", V::Bool(false)),
        ("fencing_counter", V::Bool(false)),
        ("resend_written", V::Str("all".into())),
        ("release_missing", V::Str("error".into())),
    ]
}

/// redis-py's command retries: `attempts` retries of `ExponentialWithJitterBackoff(base, cap)`.
fn redis_py_retry(timeout_ms: f64, attempts: i64, base_ms: f64, cap_ms: f64) -> Vec<(&'static str, V)> {
    vec![
        ("timeout_ms", V::Num(timeout_ms)),
        ("retry_attempts", V::Int(attempts)),
        ("retry_delay", V::Str("exp_jitter".into())),
        ("retry_delay_base_ms", V::Num(base_ms)),
        ("retry_delay_max_ms", V::Num(cap_ms)),
        ("readonly_retry", V::Bool(true)),
    ]
}

/// The values a preset sets, by parameter name (empty for `locksim-1`).
fn preset(client: &str) -> Vec<(&'static str, V)> {
    let mut v = Vec::new();
    match client {
        "redisson-3.17" => {
            v.extend(redisson_common());
            v.extend(redisson_constant_retry());
            v.extend(redisson_switches("stop", "all", false, "sentinel_view", "fail_keep"));
        }
        "redisson-3.21" => {
            v.extend(redisson_common());
            v.extend(redisson_constant_retry());
            v.extend(redisson_switches("stop", "all", false, "info_each_call", "unlock_retry"));
        }
        "redisson-3.27" => {
            v.extend(redisson_common());
            v.extend(redisson_constant_retry());
            v.extend(redisson_switches("stop", "all", true, "info_cached", "fail_keep"));
        }
        "redisson-3.37" => {
            v.extend(redisson_common());
            v.extend(redisson_constant_retry());
            v.extend(redisson_switches("stop", "batch_only", true, "info_cached", "fail_keep"));
        }
        "redisson-3.44" => {
            v.extend(redisson_common());
            v.extend(redisson_constant_retry());
            // 3.44.0–3.46.0; 3.47.0 alone already unlocks and retries (`no_sync`).
            v.extend(redisson_switches("reschedule", "batch_only", true, "info_cached", "fail_keep"));
        }
        // 3.48.0–3.52.0 and 4.0.0–4.7.0: the same for every switch the model has (they differ
        // in WAITAOF with AOF on, not modelled).
        "redisson-3.52" | "redisson-4.7" => {
            v.extend(redisson_common());
            v.extend(redisson_equal_jitter_retry());
            v.extend(redisson_switches("reschedule", "batch_only", true, "info_cached_any_change", "unlock_retry"));
        }
        "redis-py-5" => {
            v.extend(redis_py_common());
            v.extend(vec![
                ("timeout_ms", V::Num(NO_TIMEOUT_MS)),
                ("retry_attempts", V::Int(0)),
                ("readonly_retry", V::Bool(false)),
            ]);
        }
        "redis-py-6" => {
            v.extend(redis_py_common());
            v.extend(redis_py_retry(NO_TIMEOUT_MS, 3, 1_000.0, 10_000.0));
        }
        "redis-py-8" => {
            v.extend(redis_py_common());
            v.extend(redis_py_retry(5_000.0, 10, 10.0, 1_000.0));
        }
        _ => {}
    }
    v
}

/// The parameter names a preset sets (for the notes), in the order it sets them.
pub fn preset_keys(client: &str) -> Vec<&'static str> {
    preset(client).into_iter().map(|(k, _)| k).collect()
}

/// Whether `client` names a Redisson version.
pub fn is_redisson(client: &str) -> bool {
    client.starts_with("redisson-")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(explicit: &[(&str, V)]) -> Params {
        let mut p = Params::default();
        p.values.insert("client".into(), V::Str(NEWEST_REDIS_PY.into()));
        p.values.insert("watchdog".into(), V::Bool(false));
        for (k, v) in explicit {
            p.set_explicit(k, v.clone());
        }
        p
    }

    #[test]
    fn a_row_without_client_runs_the_newest_release_of_its_patterns_library() {
        assert_eq!(client(&row(&[])), "redis-py-8", "the plain pattern: redis-py");
        let redisson = row(&[("watchdog", V::Bool(true))]);
        assert_eq!(client(&redisson), "redisson-4.7", "the watchdog is Redisson's");
        let r = resolve(&redisson);
        assert_eq!((r.str("client"), r.str("retry_delay")), ("redisson-4.7", "equal_jitter"));
        let old = row(&[("watchdog", V::Bool(true)), ("client", V::Str("locksim-1".into()))]);
        assert_eq!(client(&old), "locksim-1", "a client the scenario names is kept");
        assert!(!resolve(&row(&[])).bool("replica_ack"), "row 6: the plain pattern never WAITs");
    }

    #[test]
    fn locksim_1_sets_nothing_and_every_other_preset_sets_the_retry_switches() {
        assert!(preset("locksim-1").is_empty());
        for lib in &LIBRARIES[1..] {
            let keys = preset_keys(lib);
            assert!(keys.contains(&"retry_attempts") && keys.contains(&"watchdog"), "{lib}");
        }
    }
}
