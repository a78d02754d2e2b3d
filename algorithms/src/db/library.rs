//! The `client` preset: which lock library, at which version, the clients run, and the defaults
//! and behaviours it has in its source (docs/libraries.md, row 11 and the Spring Integration
//! table, has the readings; the citations are repeated in docs/models.md). A preset fills every
//! library-dependent parameter the scenario leaves at its schema default; an explicit value
//! overrides it. Citations are `spring-integration-jdbc/src/main/java/org/springframework/
//! integration/jdbc/lock/FILE:line @tag` in spring-projects/spring-integration.
//!
//! - `locksim-1` (the default): the model as it was before presets, no parameter changed: the
//!   seed's lock row (a count column, the server's `NOW()`, a cleanup job), which is no one
//!   library's.
//! - `spring-jdbc-6` (Spring Integration 6.4–6.5): `mode = "spring_jdbc"`: acquire is
//!   `UPDATE … SET CLIENT_ID=?, CREATED_DATE=? WHERE REGION=? AND LOCK_KEY=? AND (CLIENT_ID=? OR
//!   CREATED_DATE<?)` then `INSERT` (`DefaultLockRepository.java:113-115, 399-414 @v6.5.0`) with
//!   `now = LocalDateTime.now(UTC)` of the acquiring JVM and `now − ttl` (`:445-453`), in a
//!   READ_COMMITTED transaction (`:359`); `ttl_ms = 10000` (`DEFAULT_TTL`, `:83`); no cleanup job
//!   (`deleteExpired()` is never called by the library): `expire_ms = 0`, `heartbeat_ms = 0`;
//!   `CLIENT_ID` one `UUID.randomUUID()` per repository (`:157`): `owner_scope = "process"`;
//!   `idleBetweenTries` 100 ms (`JdbcLockRegistry.java:66, 84, 193-215`): `poll_ms = 100`;
//!   reentrancy in the JVM's `ReentrantLock` (`:299-306`): `reentrant = true`, no count column;
//!   release `DELETE … WHERE REGION=? AND LOCK_KEY=? AND CLIENT_ID=?`
//!   (`DefaultLockRepository.java:98-99`), a lost connection not retried (`release_retry = 0`),
//!   0 rows deleted a `ConcurrentModificationException` (`JdbcLockRegistry.java:310-325`, first
//!   tag v6.4.0): `release_missing = "error"`.
//! - `spring-jdbc-6.0` (6.0–6.1): as `spring-jdbc-6`, but the acquire transaction is SERIALIZABLE
//!   (`DefaultLockRepository.java:209 @v6.0.0`; the model runs every transaction serially either
//!   way) and 0 rows deleted is no error (`JdbcLockRegistry.java:289-299 @v6.0.0`):
//!   `release_missing = "ignore"`; `DEFAULT_TTL` `:69 @v6.0.0`, idle `JdbcLockRegistry.java:62
//!   @v6.0.0`.
//! - `spring-jdbc-7` (7.0): as `spring-jdbc-6` with `EXPIRED_AFTER` (the holder's now + ttl)
//!   compared with the acquirer's now (`DefaultLockRepository.java:113-115, 468 @v7.0.0`):
//!   `expiry_column = "expired_after"`.

use locksim_simulator::model::{ParamValue as V, Params};

/// The lock library (`client`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    /// The model as it was before presets (`locksim-1`).
    Locksim,
    /// Spring Integration 6.0–6.1 `JdbcLockRegistry`.
    Spring60,
    /// Spring Integration 6.4–6.5 `JdbcLockRegistry`.
    Spring6,
    /// Spring Integration 7.0 `JdbcLockRegistry`.
    Spring7,
}

/// The `client` parameter's choices, in the order `sim list` shows them.
pub const LIBRARIES: &[&str] = &["locksim-1", "spring-jdbc-6.0", "spring-jdbc-6", "spring-jdbc-7"];

impl Library {
    /// The `client` parameter; anything not a preset is `locksim-1`.
    pub fn parse(s: &str) -> Library {
        match s {
            "spring-jdbc-6.0" => Library::Spring60,
            "spring-jdbc-6" => Library::Spring6,
            "spring-jdbc-7" => Library::Spring7,
            _ => Library::Locksim,
        }
    }

    /// The `client` parameter's text for this library (one of [`LIBRARIES`]).
    pub fn name(self) -> &'static str {
        match self {
            Library::Locksim => "locksim-1",
            Library::Spring60 => "spring-jdbc-6.0",
            Library::Spring6 => "spring-jdbc-6",
            Library::Spring7 => "spring-jdbc-7",
        }
    }
}

/// The parameters after the preset: every preset parameter the scenario did not set itself
/// ([`Params::fill_unset`]) takes the chosen version's value; one it set is kept. `locksim-1`
/// changes nothing.
pub fn resolve(params: &Params) -> Params {
    let lib = Library::parse(params.str("client"));
    let mut out = params.clone();
    if lib == Library::Locksim {
        return out;
    }
    out.fill_unset("mode", V::Str("spring_jdbc".into()));
    out.fill_unset("ttl_ms", V::Num(10_000.0));
    out.fill_unset("poll_ms", V::Num(100.0));
    out.fill_unset("expire_ms", V::Num(0.0));
    out.fill_unset("heartbeat_ms", V::Num(0.0));
    out.fill_unset("owner_scope", V::Str("process".into()));
    out.fill_unset("reentrant", V::Bool(true));
    out.fill_unset("release_retry", V::Int(0));
    let column = if lib == Library::Spring7 { "expired_after" } else { "created_date" };
    out.fill_unset("expiry_column", V::Str(column.into()));
    let missing = if lib == Library::Spring60 { "ignore" } else { "error" };
    out.fill_unset("release_missing", V::Str(missing.into()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_choice_parses_to_its_library() {
        let libs: Vec<Library> = LIBRARIES.iter().map(|s| Library::parse(s)).collect();
        assert_eq!(libs, [Library::Locksim, Library::Spring60, Library::Spring6, Library::Spring7]);
        let names: Vec<&str> = libs.iter().map(|l| l.name()).collect();
        assert_eq!(names, LIBRARIES, "name() gives back the parameter's text");
    }

    #[test]
    fn the_preset_fills_defaults_and_an_explicit_value_wins() {
        let mut p = Params::default();
        p.values.insert("client".into(), V::Str("spring-jdbc-7".into()));
        p.values.insert("mode".into(), V::Str("table".into()));
        p.set_explicit("ttl_ms", V::Num(30_000.0));
        let r = resolve(&p);
        assert_eq!(
            (r.str("mode"), r.str("expiry_column"), r.str("release_missing")),
            ("spring_jdbc", "expired_after", "error")
        );
        assert_eq!(r.f64("ttl_ms"), 30_000.0, "the scenario's value is kept");
        p.values.insert("client".into(), V::Str("locksim-1".into()));
        assert_eq!(resolve(&p).str("mode"), "table", "locksim-1 changes nothing");
    }
}
