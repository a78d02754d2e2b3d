//! What a shrink keeps, in process: the row's library preset (a shrink never resets `client`, nor
//! drops a key whose removal swaps the preset, even when the default library would still fail),
//! a key marked `shrink: keep`, and, with an `[expect]` target, a failure that is no violation (a
//! lock never granted again).

use std::sync::atomic::AtomicBool;

use locksim_campaign::shrink::{shrink, NotShrunk, Request, Shrunk};
use locksim_campaign::thread_pool;
use locksim_simulator::scenario::parse_str;

/// A scenario of one Redis row, `broken`, with `keys`, its holder paused from the start for
/// `pause_ms`, seeds 0 to 3.
fn paused_holder(name: &str, duration_ms: u32, keys: &str, workload: &str, pause_ms: u32) -> String {
    format!(
        r#"name = "{name}"
duration_ms = {duration_ms}
seeds = 4

[[variants]]
name = "broken"
model = "redis"
{keys}

[workload]
{workload}

[[faults]]
kind = "pause"
target = "holder"
at_ms = 0
duration_ms = {pause_ms}
"#
    )
}

/// A Redis lock whose holder is paused past its TTL: the second client's grant overlaps it
/// whatever the library, so the default preset (redis-py-8) would fail too, and a shrink that
/// may reset `client` does (the steps said `variants.0.client back to its default`).
fn paused_redis_py_5() -> String {
    let workload = "clients = 3\nhold_ms = { uniform = [5, 50] }";
    paused_holder("paused-redis-py-5", 20000, "client = \"redis-py-5\"\nttl_ms = 3000", workload, 8000)
}

/// The same pause against Redisson's watchdog, chosen by `watchdog = true` alone: the model names
/// that row's library the newest Redisson preset; without the key it would be redis-py-8 with a
/// 10 s timeout, which overlaps under the pause as well.
fn paused_redisson() -> String {
    paused_holder("paused-redisson", 60000, "watchdog = true\nttl_ms = 10000", "clients = 2\nhold_ms = 20", 45000)
}

/// redis-py 2.10's SETNX then PEXPIRE, client-0 killed between the two (its SETNX answer is on
/// its way when it dies): the key has no TTL and nobody is granted the lock again. No violation
/// in any seed; the failure is the outage, longer than any TTL could make it.
const SETNX_KILLED: &str = r#"name = "setnx-killed"
duration_ms = 12000
seeds = 4

[[variants]]
name = "broken"
model = "redis"
client = "redis-py-5"
ttl_ms = 5000
acquire = "setnx_then_expire"

[network]
latency_ms = 0.25

[[network.links]]
from = "client-*"
to = "server-*"
latency_ms = 1

[[network.links]]
from = "client-0"
to = "server-*"
latency_ms = 0.25

[workload]
clients = 3
think_ms = 0

[[faults]]
kind = "crash"
target = "client-0"
at_ms = 0.4
duration_ms = 1000

[expect.broken]
overlap = "none"
outage_ms = "> 11_000"
"#;

fn run(text: &str, kind: Option<&str>) -> Result<Shrunk, NotShrunk> {
    let models = locksim_algorithms::registry();
    let req = Request {
        file: "t.toml",
        text,
        models: &models,
        label: "broken",
        seed: 0,
        kind,
        budget: 600,
        out_file: "t.shrunk.toml",
    };
    let pool = thread_pool(Some(2)).expect("pool");
    shrink(&req, &pool, &AtomicBool::new(false), &mut |_| {})
}

/// The library the shrunk scenario's row runs, as `sim run`'s library column names it.
fn library(text: &str) -> Option<String> {
    let s = parse_str("t.shrunk.toml", text, &locksim_algorithms::registry()).expect("the output parses");
    s.runs[0].model.library(&s.runs[0].params)
}

#[test]
fn a_shrink_keeps_client_even_where_the_default_library_fails_too() {
    let shrunk = run(&paused_redis_py_5(), Some("overlap")).expect("it shrinks");
    assert!(shrunk.text.contains("client = \"redis-py-5\""), "{}", shrunk.text);
    assert_eq!(library(&shrunk.text).as_deref(), Some("redis-py-5"));
    assert!(!shrunk.steps.iter().any(|s| s.contains(".client ")), "{:?}", shrunk.steps);
    // It still shrank what the overlap does not need.
    assert!(shrunk.steps.iter().any(|s| s.starts_with("workload.clients 3 → ")), "{:?}", shrunk.steps);
}

#[test]
fn a_shrink_keeps_a_key_whose_removal_would_swap_the_library() {
    let shrunk = run(&paused_redisson(), Some("overlap")).expect("it shrinks");
    let redisson = library(&paused_redisson()).expect("a library");
    assert!(redisson.starts_with("redisson-"), "{redisson}");
    assert_eq!(library(&shrunk.text), Some(redisson), "{}", shrunk.text);
    assert!(shrunk.text.contains("watchdog = true"), "{}", shrunk.text);
    assert!(!shrunk.steps.iter().any(|s| s.contains("watchdog")), "{:?}", shrunk.steps);
}

#[test]
fn an_expect_target_shrinks_an_outage_that_shows_no_violation() {
    // The seed has no violation: the violation shrink refuses it.
    let Err(NotShrunk::Input(e)) = run(SETNX_KILLED, None) else { panic!("a seed with no violation was shrunk") };
    assert!(e.contains("shows no violation"), "{e}");

    let shrunk = run(SETNX_KILLED, Some("expect:outage_ms < 6_000")).expect("it shrinks");
    assert_eq!(shrunk.kind, "outage_ms \"< 6_000\" failing");
    let text = &shrunk.text;
    assert!(text.contains(": [expect] outage_ms \"< 6_000\" still fails on seed "), "{text}");
    assert!(text.contains("outage_ms expected \"< 6_000\", actual "), "the judgement is in the header: {text}");
    // What the failure needs stays: the SETNX-then-PEXPIRE acquire, the crash, the preset.
    assert!(text.contains("acquire = \"setnx_then_expire\""), "{text}");
    assert!(text.contains("kind = \"crash\""), "{text}");
    assert_eq!(library(text).as_deref(), Some("redis-py-5"));
    // The run cannot end before the bound is exceeded, and it did shrink something.
    let s = parse_str("t.shrunk.toml", text, &locksim_algorithms::registry()).expect("parses");
    assert!(s.setup.duration_ms > 6_000.0 && s.setup.duration_ms <= 12_000.0, "{}", s.setup.duration_ms);
    assert!(shrunk.steps.len() > 2, "{:?}", shrunk.steps);
}

#[test]
fn an_expect_target_is_the_rows_own_line_or_one_written_out() {
    // The row's own line holds on seed 0 (it states the outage): nothing to keep failing.
    let Err(NotShrunk::Input(e)) = run(SETNX_KILLED, Some("expect:outage_ms")) else { panic!("shrunk") };
    assert!(e.contains("does not fail [expect] outage_ms \"> 11_000\""), "{e}");
    let Err(NotShrunk::Input(e)) = run(SETNX_KILLED, Some("expect:wait_ms_max")) else { panic!("shrunk") };
    assert!(e.contains("row broken has no `wait_ms_max` line in [expect.broken]"), "{e}");
    let Err(NotShrunk::Input(e)) = run(SETNX_KILLED, Some("expect:outage < 6_000")) else { panic!("shrunk") };
    assert!(e.contains("unknown metric `outage`") && e.contains("outage_ms"), "{e}");
    let Err(NotShrunk::Input(e)) = run(SETNX_KILLED, Some("expect:outage_ms about 6 s")) else { panic!("shrunk") };
    assert!(e.contains("`about 6 s` is no expectation"), "{e}");
    let Err(NotShrunk::Input(e)) = run(SETNX_KILLED, Some("expect:outage_ms all")) else { panic!("shrunk") };
    assert!(e.contains("\"all\" applies only to run-counting metrics"), "{e}");
    let Err(NotShrunk::Input(e)) = run(SETNX_KILLED, Some("outage_ms")) else { panic!("shrunk") };
    assert!(e.contains("is an [expect] metric") && e.contains("--expect"), "{e}");
}

#[test]
fn a_key_marked_keep_is_neither_changed_nor_removed_with_its_table() {
    let marked = paused_redis_py_5()
        .replace("hold_ms = { uniform = [5, 50] }", "hold_ms = { uniform = [5, 50] }   # (shrink: keep)")
        .replace("[workload]", "[network]\nlatency_ms = 2   # (shrink: keep)\n\n[workload]");
    let shrunk = run(&marked, Some("overlap")).expect("it shrinks");
    assert!(shrunk.text.contains("hold_ms = { uniform = [5, 50] }   # (shrink: keep)"), "{}", shrunk.text);
    assert!(shrunk.text.contains("[network]\nlatency_ms = 2   # (shrink: keep)"), "{}", shrunk.text);
    assert!(!shrunk.steps.iter().any(|s| s.contains("hold_ms") || s.contains("network")), "{:?}", shrunk.steps);
    // Unmarked, both go (the distribution to a constant, [network] removed).
    let plain =
        run(&paused_redis_py_5().replace("[workload]", "[network]\nlatency_ms = 2\n\n[workload]"), Some("overlap"))
            .expect("it shrinks");
    assert!(plain.steps.iter().any(|s| s.contains("hold_ms")), "{:?}", plain.steps);
    assert!(plain.steps.iter().any(|s| s.contains("network")), "{:?}", plain.steps);
}
