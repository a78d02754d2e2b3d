//! locksim's live mode: the models' own lock recipes run in real time against real servers
//! started on this machine, judged by the simulator's own checkers.
//!
//! Module map:
//! - [`clock`]: the machine clock every process of a run shares, measured from the run's start
//! - [`supervisor`]: every process a run starts, by pid: pause, resume, kill, stop all; servers
//!   and clients die with `sim` even when it is killed outright (`sim live-exec`)
//! - [`servers`]: starting real servers on free loopback ports, configured from the model
//! - [`adapters`]: a model's messages as real requests on a real client library, and back
//! - [`client`]: a client process: the model's library under the workload driver, on real time
//! - [`resource`]: the protected resource, served by `sim live` on loopback
//! - [`plan`]: what of a scenario live mode can inject faithfully, and refusals with reasons
//! - [`probe`]: one kind of request timed on a model's real servers, and how a backend times it
//! - [`backend`]: what a model's live backend provides
//! - [`backends`]: one backend per model live mode runs (configurations, servers, adapter,
//!   leader), and which model each runs, as the registry (`locksim_algorithms::entries`) declares
//! - [`calibrate`]: the loopback round trip and a real server's service time, for `sim compare`
//! - [`reference`]: the real lock libraries as clients (`--reference`): harnesses, their run
//!   specifications and event lines
//! - [`run`]: one live run of one row: start, inject faults, stop, collect, check
//! - [`command`]: `sim live`'s work: the rows checked, every row × seed run live, folded into
//!   the reports' totals, judged, printed and written
//! - [`compare`]: `sim compare`'s work: this machine measured, each row simulated on its figures
//!   and run live (and with `--reference` its real library live), side by side, judged

pub mod adapters;
pub mod backend;
pub mod backends;
pub mod calibrate;
pub mod client;
pub mod clock;
pub mod command;
pub mod compare;
pub mod plan;
pub mod probe;
pub mod reference;
pub mod resource;
pub mod run;
pub mod servers;
pub mod supervisor;

pub use run::{check_row, run_live, LiveError, LiveOutcome};

/// The entry of a client process (`sim live-client SPEC`): runs its workload until the run's end.
pub fn client_main(spec_json: &str) -> Result<(), String> {
    // A `sim live` killed outright must not leave its clients running.
    supervisor::die_with_parent()?;
    let spec: client::ClientSpec =
        serde_json::from_str(spec_json).map_err(|e| format!("sim live-client: bad specification: {e}"))?;
    let models = locksim_algorithms::registry();
    let (scenario, _) =
        locksim_simulator::scenario::load_file_with_text(&spec.scenario, &models).map_err(|e| e.to_string())?;
    let run = scenario
        .runs
        .iter()
        .find(|r| r.label == spec.label)
        .ok_or_else(|| format!("{}: no row labelled {}", spec.scenario.display(), spec.label))?;
    backends::backend_for(run.model.name())?.client(&scenario.setup, run, &spec)
}
