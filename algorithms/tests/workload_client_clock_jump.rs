//! A `clock_jump` on a client whose model reads the client's wall clock. Of the models, only the
//! kubernetes client does (`ctx.now_wall_ns()` in algorithms/src/kubernetes/client.rs: the
//! `acquireTime` / `renewTime` it writes into the Lease; redlock's validity and every other
//! client-side wait use the monotonic clock). docs/models.md, kubernetes, "Clocks and pauses":
//! "Offsets and wall-clock steps change nothing (the `renewTime` a leader writes is only compared
//! for change)". So a step of client-0's wall clock must change exactly the `renewTime`s client-0
//! writes after the step, by the step, and nothing else: the same history at the same times, the
//! same messages, the same metrics, as the same seed without the step.

use crate::kubernetes_common;
use kubernetes_common::*;

const JUMP_AT_MS: f64 = 1_000.0;

/// Two clients taking the Lease in turn (client-0 first, at ~504 ms), client-0's wall clock
/// stepped by `by_ms` at `JUMP_AT_MS`. In turn needs a leader that releases on cancel: the row
/// pins `client = "locksim-1"` (client-go-0.30, the default, leaves the Lease to one process).
fn jumped(by_ms: i64) -> String {
    format!(
        r#"
name = "kubernetes-client-clock-jump"
duration_ms = 40_000
algorithms = ["kubernetes"]
[models.kubernetes]
client = "locksim-1"
[network]
latency_ms = 1
[workload]
clients = 2
hold_ms = {{ uniform = [1_000, 4_000] }}
think_ms = {{ uniform = [0, 3_000] }}
[[faults]]
kind = "clock_jump"
target = "client-0"
at_ms = {JUMP_AT_MS}
by_ms = {by_ms}
"#
    )
}

/// The `renew=<µs>us` field of a Lease line, if it has one.
fn renew_us(line: &str) -> Option<i64> {
    let start = line.find("renew=")? + "renew=".len();
    Some(line[start..].split("us").next().unwrap().parse().unwrap())
}

/// The trace as (ns, node, kind, detail) lines, without the fault's own line.
fn lines(out: &locksim_simulator::run::SeedOutcome) -> Vec<(u64, String, String, String)> {
    out.trace
        .as_ref()
        .expect("trace")
        .entries
        .iter()
        .filter(|t| t.kind != "fault")
        .map(|t| (t.at_ns, t.node.clone(), t.kind.to_string(), t.detail.clone()))
        .collect()
}

#[test]
fn a_clients_wall_clock_step_changes_only_the_renew_times_it_writes() {
    for by_ms in [3_600_000i64, -3_600_000, 250] {
        for seed in 0..4 {
            let out = run(&jumped(by_ms), "kubernetes", seed);
            let calm = run(&jumped(0), "kubernetes", seed);
            // Nothing else changes: the same history, event for event, at the same true times.
            let hist = |o: &locksim_simulator::run::SeedOutcome| {
                o.history.events.iter().map(|e| format!("{} {} {:?}", e.at_ns, e.node, e.event)).collect::<Vec<_>>()
            };
            assert_eq!(hist(&out), hist(&calm), "by {by_ms} ms seed {seed}");
            assert!(out.metrics.acquisitions >= 6, "by {by_ms} ms seed {seed}: {}", out.metrics.acquisitions);
            assert_eq!(format!("{:?}", out.metrics), format!("{:?}", calm.metrics), "by {by_ms} ms seed {seed}");
            // The trace: line for line the same, but for the renewTime in Lease messages.
            let (a, b) = (lines(&out), lines(&calm));
            assert_eq!(a.len(), b.len(), "by {by_ms} ms seed {seed}");
            // Each renewTime value that differs, mapped to the true time its writer sent it.
            let mut shifted = 0;
            for (x, y) in a.iter().zip(&b) {
                assert_eq!((x.0, &x.1, &x.2), (y.0, &y.1, &y.2), "by {by_ms} ms seed {seed}");
                if x.3 == y.3 {
                    continue;
                }
                let (rx, ry) = (renew_us(&x.3), renew_us(&y.3));
                let (Some(rx), Some(ry)) = (rx, ry) else { panic!("by {by_ms} ms seed {seed}: {x:?} vs {y:?}") };
                // Shifted by exactly the step (the field is in microseconds) …
                assert_eq!(rx - ry, by_ms * 1000, "by {by_ms} ms seed {seed}: {} vs {}", x.3, y.3);
                // … and the only difference in the line.
                assert_eq!(x.3.replace(&format!("renew={rx}us"), &format!("renew={ry}us")), y.3);
                // A renewTime client-0 wrote after the step: the first line carrying it is
                // client-0 sending it, after JUMP_AT_MS.
                let first = a.iter().find(|l| renew_us(&l.3) == Some(rx)).unwrap();
                assert_eq!(first.1, "client-0", "by {by_ms} ms seed {seed}: {first:?}");
                assert_eq!(first.2, "send");
                assert!(first.0 as f64 / 1e6 > JUMP_AT_MS);
                shifted += 1;
            }
            // And every renewTime client-0 read off its clock after the step is shifted. In the
            // calm run it is client-0's wall clock (true time) when its try began: at or before
            // the send, and, if after the step, the jumped run's differs by exactly the step.
            let mut after = 0;
            for (x, y) in a.iter().zip(&b) {
                if x.1 != "client-0" || x.2 != "send" || !x.3.starts_with("→ server-0 P") {
                    continue;
                }
                let Some(calm_us) = renew_us(&y.3) else { continue };
                assert!(calm_us <= (y.0 / 1000) as i64, "seed {seed}: {y:?}");
                if calm_us as f64 / 1e3 > JUMP_AT_MS {
                    assert_eq!(renew_us(&x.3), Some(calm_us + by_ms * 1000), "by {by_ms} ms seed {seed}: {x:?}");
                    after += 1;
                }
            }
            assert!(after > 0, "by {by_ms} ms seed {seed}: client-0 writes after the step");
            assert!(shifted >= after, "by {by_ms} ms seed {seed}");
            // client-1's own writes carry its own, unstepped clock: read at or before the send.
            for l in a.iter().filter(|l| l.1 == "client-1" && l.2 == "send" && l.3.starts_with("→ server-0 P")) {
                if let Some(r) = renew_us(&l.3) {
                    assert!(
                        r <= (l.0 / 1000) as i64 && r > (l.0 / 1000) as i64 - 20_000_000,
                        "by {by_ms} ms seed {seed}: {l:?}"
                    );
                }
            }
        }
    }
}
