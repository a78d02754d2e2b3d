//! The redis model's client under connection resets and retries (Redisson `RedisExecutor`,
//! `retryAttempts` / `retryInterval`): a release whose connection is refused is sent again every
//! `retry_interval_ms`, and once the attempts are used up the unlock call fails
//! (`ReleaseFailed`); with `retry_attempts = 0` it fails at the first reset.
//!
//! The rows pin `client = "locksim-1"` (the model before presets): these tests pin the mechanisms,
//! which the presets only configure; `redis_library.rs` tests the presets and the default.

use crate::redis_common;

use locksim_simulator::history::HistoryEvent;
use redis_common::*;

/// client-0 takes the lock at ~0.5 ms and holds it 10 s; server-0 is killed at 5 s for 30 s.
fn down_at_release(extra: &str) -> locksim_simulator::run::SeedOutcome {
    let text = format!(
        r#"
name = "down-at-release"
duration_ms = 20000
algorithms = ["redis"]
[models.redis]
client = "locksim-1"
{extra}
[network]
latency_ms = 0.25
[workload]
clients = 1
think_ms = 0
hold_ms = 10000
acquisitions_per_client = 1
[[faults]]
kind = "crash"
target = "server-0"
at_ms = 5000
duration_ms = 30000
"#
    );
    run(&text, "redis", 1)
}

fn release_failed_at(out: &locksim_simulator::run::SeedOutcome) -> Vec<f64> {
    events(out, |e| matches!(e, HistoryEvent::ReleaseFailed { .. })).iter().map(|s| s.at_ns as f64 / 1e6).collect()
}

#[test]
fn a_refused_unlock_is_sent_again_each_retry_interval_then_fails() {
    let out = down_at_release("");
    // Refused at ~10 s, then three more attempts 1.5 s apart, each refused: the call fails
    // after the last one (~14.5 s), not at the 3 s response timeout.
    let sends = requests_sent(&out, |c| matches!(c, Command::DelIfEquals { .. }));
    assert_eq!(sends.len(), 4, "{sends:?}");
    for w in sends.windows(2) {
        let gap = w[1].at_ms() - w[0].at_ms();
        assert!((gap - 1_500.5).abs() < 1.0, "gap {gap}");
    }
    let failed = release_failed_at(&out);
    assert_eq!(failed.len(), 1);
    assert!(failed[0] > 14_500.0 && failed[0] < 14_510.0, "ReleaseFailed at {}", failed[0]);
}

#[test]
fn without_retries_the_first_reset_fails_the_unlock() {
    let out = down_at_release("retry_attempts = 0");
    assert_eq!(requests_sent(&out, |c| matches!(c, Command::DelIfEquals { .. })).len(), 1);
    let failed = release_failed_at(&out);
    assert_eq!(failed.len(), 1);
    assert!(failed[0] > 10_000.0 && failed[0] < 10_010.0, "ReleaseFailed at {}", failed[0]);
}
