//! redsync's `Extend` (`extend_every_ms`, `extend`): the extend script on every master, extended
//! on a quorum; a master that restarted empty is never given the key back by `touchScript`, so a
//! second restart fails the next Extend, while `touchWithSetNXScript` (v4.12.0,
//! `WithSetNXOnExtend`) puts it back and the holder keeps 3 of 3. Off by default.

use crate::redlock_common;
use locksim_algorithms::redlock::protocol::{Command, RedlockMsg, Request};
use redlock_common::*;

/// One holder on three masters, a 20 s section; server-2 restarts at 3 s, server-1 at 8 s
/// (100 ms each).
const HOLDER: &str = r#"
name = "extend"
duration_ms = 12000
algorithms = ["redlock"]
[network]
latency_ms = 0.5
[workload]
clients = 1
think_ms = 0
hold_ms = 20000
acquisitions_per_client = 1
[[faults]]
kind = "crash"
target = "server-2"
at_ms = 3000
duration_ms = 100
[[faults]]
kind = "crash"
target = "server-1"
at_ms = 8000
duration_ms = 100
"#;

/// redsync with a 4 s lock on three masters without persistence, extending every
/// `extend_every_ms` (0: never) with the script `extend_sets` picks.
fn redsync_holder(extend_every_ms: f64, extend_sets: bool) -> RedlockConfig {
    RedlockConfig {
        masters: 3,
        persistence: Persistence::None,
        service_ms: Dist::Const(0.0),
        extend_every_ms,
        extend_sets,
        ..redsync(4000)
    }
}

/// The client's extend notes, in order: `3/3`, `2/3`, … or `failed` for a failed one.
fn extends(cfg: &RedlockConfig) -> Vec<String> {
    let out = run_config(HOLDER, cfg, 0);
    notes(&out, "redlock ")
        .into_iter()
        .filter(|(_, node, note)| node == "client-0" && note.contains("extend"))
        .map(|(_, _, note)| {
            if note.contains("failed") {
                "failed".to_string()
            } else {
                note.split(": ").nth(1).and_then(|s| s.split(' ').next()).unwrap_or("?").to_string()
            }
        })
        .collect()
}

#[test]
fn touch_script_never_repairs_a_restarted_master_and_the_second_restart_fails_the_extend() {
    let e = extends(&redsync_holder(1000.0, false));
    assert_eq!(&e[..2], ["3/3", "3/3"], "{e:?}");
    // After server-2's restart: 2 of 3 until server-1 restarts, then the Extend fails and stops.
    assert!(e.contains(&"2/3".to_string()), "{e:?}");
    assert_eq!(e.last().map(String::as_str), Some("failed"), "{e:?}");
    assert_eq!(e.iter().filter(|n| *n == "failed").count(), 1, "nothing is extended after a failure: {e:?}");
}

#[test]
fn touch_with_set_nx_puts_the_key_back_and_survives_the_second_restart() {
    let e = extends(&redsync_holder(1000.0, true));
    assert!(!e.contains(&"failed".to_string()), "{e:?}");
    // 3 of 3 again after each restart: the script SET the key on the empty master.
    assert_eq!(e.last().map(String::as_str), Some("3/3"), "{e:?}");
    assert!(e.len() >= 10, "an Extend every second for 11 s: {e:?}");
}

#[test]
fn no_extend_unless_the_application_asks() {
    assert!(extends(&redsync_holder(0.0, false)).is_empty());
    let out = run_config(HOLDER, &redsync_holder(0.0, false), 0);
    let extends = sent::<RedlockMsg>(&out)
        .into_iter()
        .filter(|s| matches!(s.msg, RedlockMsg::Request(Request { cmd: Command::Touch { .. }, .. })))
        .count();
    assert_eq!(extends, 0, "the default sends no extend script");
}
