//! What of a scenario a live run can do faithfully, decided before anything starts: the faults it
//! can inject (a pause is SIGSTOP/SIGCONT, a process crash is SIGKILL and a restart on the same
//! data), and a refusal, with the reason, for everything else. Nothing is silently skipped.

use locksim_simulator::dist::Dist;
use locksim_simulator::process::CrashKind;
use locksim_simulator::process::NodeKind;
use locksim_simulator::scenario::FaultKind;
use locksim_simulator::setup::{Selector, Setup};

/// Why live mode cannot run this setting, or the notes about what it does differently.
pub fn check(setup: &Setup) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    let n = &setup.network;
    if n.loss > 0.0 || n.duplicate > 0.0 {
        return Err(format!(
            "[network] loss = {}, duplicate = {}: live mode runs on the machine's loopback, which cannot lose or \
duplicate segments without root traffic control; set both to 0 for a live run",
            n.loss, n.duplicate
        ));
    }
    if !n.links.is_empty() {
        return Err("[[network.links]]: live mode cannot give one loopback link its own latency or loss; remove the \
link overrides for a live run"
            .to_string());
    }
    if n.latency_ms != Dist::Const(0.0) {
        notes.push(format!(
            "[network] latency_ms = {} is the simulated network's; a live run's latency is this machine's loopback",
            n.latency_ms
        ));
    }
    if setup.clocks.drift_ppm != Dist::Const(0.0) || setup.clocks.offset_ms != Dist::Const(0.0) {
        return Err("[clocks] drift_ppm / offset_ms: every process of a live run reads the same machine clock, which \
cannot drift or be offset for one of them; remove [clocks] for a live run"
            .to_string());
    }
    for (i, f) in setup.faults.iter().enumerate() {
        let at = format!("[[faults]] #{} (kind = \"{}\")", i + 1, f.kind.name());
        let why = match &f.kind {
            FaultKind::Pause => None,
            FaultKind::Crash { mode: CrashKind::Process } => None,
            FaultKind::Crash { mode: CrashKind::Machine } => Some(
                "mode = \"machine\" (a silent host that loses its unsynced writes) cannot be staged with processes on \
one machine: killing a process closes its sockets at once; use mode = \"process\"",
            ),
            FaultKind::Partition { .. } | FaultKind::Isolate => {
                Some("cutting links would need network namespaces and firewall rules; live mode runs on plain loopback")
            }
            FaultKind::ClockJump { .. } | FaultKind::ClockDrift { .. } => {
                Some("every process reads the same machine clock, which cannot be moved or skewed for one of them")
            }
            FaultKind::Slow { .. } | FaultKind::Loss { .. } => {
                Some("loopback cannot be slowed or made lossy without root traffic control (tc netem)")
            }
        };
        if let Some(why) = why {
            return Err(format!("{at}: live mode cannot inject this fault faithfully: {why}"));
        }
        if f.duration_ms.is_none() {
            return Err(format!("{at}: a live fault needs a duration_ms (the process must be resumed or restarted)"));
        }
        for t in &f.targets {
            let bad = match (t, &f.kind) {
                (Selector::Named(n), _) if n == "resource" => Some("the resource is served by sim live itself"),
                (Selector::All, _) => Some("`*` includes the resource, which sim live serves itself"),
                (Selector::Named(n), FaultKind::Crash { .. }) if n.starts_with("client-") => Some(CLIENT_CRASH),
                (
                    Selector::AllOf(NodeKind::Client) | Selector::Holder | Selector::Waiter | Selector::RandomClient,
                    FaultKind::Crash { .. },
                ) => Some(CLIENT_CRASH),
                _ => None,
            };
            if let Some(why) = bad {
                return Err(format!("{at}: target {t}: {why}"));
            }
        }
    }
    Ok(notes)
}

const CLIENT_CRASH: &str =
    "crashing a client is not supported live yet (a killed client process would need a replacement to go on with its workload); pause it instead";
