//! Reference clients: the real lock libraries, each in its own OS process, in place of a model's
//! client code (`sim live FILE --reference`). A harness in `reference/<library>/` reads a run
//! specification and writes event lines (`reference/PROTOCOL.md`); this module says which
//! library stands for which row, builds the harness (its `build.sh`, into
//! `target/reference/<library>/`), writes each client's specification with the workload drawn
//! from the seed as a model client draws it, and turns the harness's lines into history events.
//!
//! One file per library says what it needs: [`redis_py`], [`node_redlock`], [`curator`],
//! [`kazoo`], [`clientv3`].

pub mod clientv3;
pub mod curator;
pub mod kazoo;
pub mod node_redlock;
pub mod redis_py;

use std::path::{Path, PathBuf};
use std::process::Command;

use locksim_simulator::dist::{Dist, Sampler};
use locksim_simulator::history::{HistoryEvent, LockKey, Stamped};
use locksim_simulator::model::Params;
use locksim_simulator::rng::stream;
use locksim_simulator::scenario::RunSpec;
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::Nanos;
use rand::Rng;
use serde::Serialize;
use serde_json::Value;

use crate::clock::Epoch;

/// One real library a harness wraps.
pub struct Library {
    /// Its name on the command line and its folder under `reference/`.
    pub name: &'static str,
    /// The model whose rows it can stand for.
    pub model: &'static str,
    /// The library and version that runs, as the output names it.
    pub version: &'static str,
    /// The model's `client` preset that stands for this library and version (`sim compare
    /// --reference` simulates the row with it).
    pub preset: &'static str,
    /// Whether its grants carry a fencing token (the history's `fenced`).
    pub fenced: bool,
    /// The library-level lock name of a key.
    pub lock_name: fn(LockKey) -> String,
    /// Why this row has no reference client in this library, if it has none.
    pub fits: fn(&Params) -> Result<(), String>,
    /// The `settings` of the run specification, from the row's parameters.
    pub settings: fn(&Params) -> Value,
    /// What the harness does, shown with the results.
    pub note: &'static str,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Every library, the default for each model first.
pub const LIBRARIES: &[&Library] =
    &[&redis_py::LIBRARY, &node_redlock::LIBRARY, &curator::LIBRARY, &kazoo::LIBRARY, &clientv3::LIBRARY];

/// Which library each model's rows run with: the model's default unless named.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    chosen: Vec<&'static Library>,
}

impl Selection {
    /// `--reference` with no value (or `default`): every model's default library; else a
    /// comma-separated list of library names, each replacing its model's default.
    pub fn parse(text: &str) -> Result<Selection, String> {
        let mut chosen = Vec::new();
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty() && *n != "default") {
            let lib = LIBRARIES.iter().find(|l| l.name == name).ok_or_else(|| {
                let names: Vec<&str> = LIBRARIES.iter().map(|l| l.name).collect();
                format!(
                    "--reference {text}: unknown library `{name}`; expected `default` or one of: {}",
                    names.join(", ")
                )
            })?;
            chosen.retain(|c: &&Library| c.model != lib.model);
            chosen.push(*lib);
        }
        Ok(Selection { chosen })
    }

    /// The library for `run`, or why the row has no reference client.
    pub fn library_for(&self, run: &RunSpec, workload: &WorkloadSpec) -> Result<&'static Library, String> {
        let model = run.model.name();
        let lib = self
            .chosen
            .iter()
            .copied()
            .find(|l| l.model == model)
            .or_else(|| LIBRARIES.iter().copied().find(|l| l.model == model))
            .ok_or_else(|| format!("no library of the `{model}` model is runnable here"))?;
        (lib.fits)(&run.params).map_err(|why| format!("{}: {why}", lib.name))?;
        if workload.read_fraction > 0.0 {
            return Err(format!("{}: read_fraction > 0: the harnesses take exclusive locks only", lib.name));
        }
        Ok(lib)
    }
}

/// The repository folder holding `reference/PROTOCOL.md`: `$LOCKSIM_REFERENCE_DIR`'s parent if
/// set, else the first ancestor of the working directory or of the `sim` binary that has it.
pub fn repo_root(sim: &Path) -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("LOCKSIM_REFERENCE_DIR") {
        let dir = PathBuf::from(dir);
        return dir.parent().map(Path::to_path_buf).ok_or_else(|| "LOCKSIM_REFERENCE_DIR has no parent".to_string());
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    for start in [cwd.as_path(), sim] {
        if let Some(root) = start.ancestors().find(|d| d.join("reference/PROTOCOL.md").is_file()) {
            return Ok(root.to_path_buf());
        }
    }
    Err("cannot find the reference/ folder (with PROTOCOL.md) above the working directory or the sim binary; \
run from the repository or set LOCKSIM_REFERENCE_DIR"
        .to_string())
}

/// How building a harness failed.
pub enum BuildError {
    /// Its toolchain is missing (the message names the package): exit 2.
    Toolchain(String),
    /// Anything else.
    Failed(String),
}

/// Builds `lib`'s harness (its `build.sh`, idempotent) into `root/target/reference/<name>`;
/// returns that folder.
pub fn build(lib: &Library, root: &Path) -> Result<PathBuf, BuildError> {
    let out = root.join("target/reference").join(lib.name);
    let script = root.join("reference").join(lib.name).join("build.sh");
    let result =
        Command::new("bash").arg(&script).arg(&out).stdin(std::process::Stdio::null()).output().map_err(|e| {
            BuildError::Toolchain(format!("cannot run bash {}: {e} (Debian package bash)", script.display()))
        })?;
    let stderr = String::from_utf8_lossy(&result.stderr).trim().to_string();
    match result.status.code() {
        Some(0) => Ok(out),
        Some(2) => Err(BuildError::Toolchain(stderr)),
        _ => Err(BuildError::Failed(format!("{} failed ({}): {stderr}", script.display(), result.status))),
    }
}

/// A library whose harness is built, ready to start clients.
pub struct Prepared {
    /// The library.
    pub lib: &'static Library,
    /// The repository folder (holding `reference/`).
    pub root: PathBuf,
    /// The harness's build folder.
    pub out_dir: PathBuf,
}

impl Prepared {
    /// The command that starts one client on the specification in `spec_file`: `run.sh`, which
    /// `exec`s the runtime, through `sim live-exec` (so the harness dies with `sim`).
    pub fn command(&self, spec_file: &Path) -> Command {
        let mut cmd = crate::supervisor::command_for("bash");
        cmd.arg(self.root.join("reference").join(self.lib.name).join("run.sh")).arg(&self.out_dir).arg(spec_file);
        cmd
    }

    /// Client `index`'s specification (node id `node`) for a row with `params`.
    #[allow(clippy::too_many_arguments)]
    pub fn specification(
        &self,
        params: &Params,
        w: &WorkloadSpec,
        seed: u64,
        index: usize,
        node: usize,
        servers: Vec<SpecServer>,
        resource_addr: String,
        epoch: &Epoch,
        duration_ns: Nanos,
    ) -> RunSpecification {
        let client = format!("client-{index}");
        RunSpecification {
            protocol: 1,
            library: self.lib.name,
            sections: draw_sections(seed, &client, w, duration_ns),
            client,
            client_node: node,
            seed,
            servers,
            lock_names: (0..w.locks).map(self.lib.lock_name).collect(),
            resource_addr,
            resource: w.resource,
            start_mono_ns: epoch.mono_ns,
            end_mono_ns: epoch.mono_ns + duration_ns as i128,
            acquisitions_per_client: w.acquisitions_per_client,
            settings: (self.lib.settings)(params),
        }
    }
}

/// One turn of the workload loop, as `reference/PROTOCOL.md` gives it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Section {
    /// Wait before acquire.
    pub think_ns: Nanos,
    /// The key to lock.
    pub key: LockKey,
    /// Always `exclusive`.
    pub mode: &'static str,
    /// How long acquire may wait; `None`: until the run's end.
    pub acquire_timeout_ns: Option<Nanos>,
    /// The critical section's length.
    pub hold_ns: Nanos,
    /// From the check before the write to the write.
    pub check_to_write_ns: Nanos,
}

/// Most sections one client is given (a workload of zero-length turns would never fill the run).
const MAX_SECTIONS: usize = 20_000;

/// Client `client`'s sections for a run of `duration_ns` (`acquisitions_per_client` does not
/// shorten the list: a failed acquisition uses a section and does not count), drawn from its `workload` stream in
/// the order the workload driver draws them when every acquisition is granted: think, key (more
/// than one lock), mode (`read_fraction > 0`), acquire timeout (if any), hold, reentry, check to
/// write (with the resource).
pub fn draw_sections(seed: u64, client: &str, w: &WorkloadSpec, duration_ns: Nanos) -> Vec<Section> {
    let mut rng = stream(seed, client, "workload");
    let think = Sampler::new(&w.think_ms);
    let hold = Sampler::new(&w.hold_ms);
    let timeout = w.acquire_timeout_ms.as_ref().map(Sampler::new);
    let check_to_write = (w.check_to_write_ms != Dist::Const(0.0)).then(|| Sampler::new(&w.check_to_write_ms));
    let mut sections = Vec::new();
    let mut elapsed_ns: Nanos = 0;
    while sections.len() < MAX_SECTIONS && elapsed_ns < duration_ns {
        let think_ns = think.sample_ns(&mut rng);
        let key = if w.locks <= 1 { 0 } else { rng.gen_range(0..w.locks) };
        if w.read_fraction > 0.0 {
            let _: f64 = rng.gen();
        }
        let acquire_timeout_ns = timeout.as_ref().map(|d| d.sample_ns(&mut rng));
        let hold_ns = hold.sample_ns(&mut rng);
        let _reentry: f64 = rng.gen();
        let check_to_write_ns = match &check_to_write {
            Some(d) if w.resource => d.sample_ns(&mut rng),
            _ => 0,
        };
        // A turn takes at least its think and its hold; a zero-length one still counts a little,
        // so the list ends.
        elapsed_ns += (think_ns + hold_ns).max(1_000_000);
        sections.push(Section { think_ns, key, mode: "exclusive", acquire_timeout_ns, hold_ns, check_to_write_ns });
    }
    sections
}

/// A server of the run, as the specification lists it.
#[derive(Clone, Debug, Serialize)]
pub struct SpecServer {
    /// Its node name.
    pub node: String,
    /// `127.0.0.1:port`.
    pub addr: String,
}

/// The run specification one harness reads (`reference/PROTOCOL.md`).
#[derive(Clone, Debug, Serialize)]
pub struct RunSpecification {
    /// This protocol's version.
    pub protocol: u32,
    /// The library's name.
    pub library: &'static str,
    /// The client's node name.
    pub client: String,
    /// The client's node id.
    pub client_node: usize,
    /// The run's seed.
    pub seed: u64,
    /// The lock service's servers.
    pub servers: Vec<SpecServer>,
    /// Each key's lock name.
    pub lock_names: Vec<String>,
    /// The resource's address.
    pub resource_addr: String,
    /// Whether sections read and write the resource.
    pub resource: bool,
    /// The run's start on CLOCK_MONOTONIC.
    pub start_mono_ns: i128,
    /// The workload's end on CLOCK_MONOTONIC.
    pub end_mono_ns: i128,
    /// How many granted sections (released or abandoned) the client makes before it stops;
    /// `None`: until the end.
    pub acquisitions_per_client: Option<u64>,
    /// The library's settings.
    pub settings: Value,
    /// The workload.
    pub sections: Vec<Section>,
}

/// What one line of a harness's stdout is.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A history event, stamped on the run's clock.
    Event(Stamped),
    /// A protocol event worth keeping as a note (`error`, `connection`).
    Note(String),
    /// A protocol event that needs nothing (`write_sent`, `write_answered`, `done`).
    Quiet,
    /// Not a line of the protocol.
    Bad(String),
}

/// Reads one line a harness wrote for client node `node`.
pub fn parse_line(line: &str, epoch: &Epoch, node: usize) -> Line {
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return Line::Bad(format!("not JSON: {line}"));
    };
    let Some(mono_ns) = value.get("mono_ns").and_then(Value::as_i64) else {
        return Line::Bad(format!("no integer mono_ns: {line}"));
    };
    let at_ns = (mono_ns as i128 - epoch.mono_ns).max(0) as Nanos;
    match value.get("event").and_then(Value::as_str) {
        Some("write_sent" | "write_answered" | "done") => Line::Quiet,
        Some("error") => Line::Note(format!("error: {}", value["message"].as_str().unwrap_or("?"))),
        Some("connection") => Line::Note(format!("connection: {}", value["state"].as_str().unwrap_or("?"))),
        _ => match serde_json::from_value::<HistoryEvent>(value) {
            // The resource records its own reads and writes; a harness never does.
            Ok(
                HistoryEvent::ResourceRead { .. } | HistoryEvent::ResourceWrite { .. } | HistoryEvent::ClientCrashed,
            ) => Line::Bad(format!("not a client's event: {line}")),
            Ok(event) => Line::Event(Stamped { at_ns, node, event }),
            Err(e) => Line::Bad(format!("{e}: {line}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::history::{FailReason, LockMode};

    #[test]
    fn history_events_map_one_to_one_and_stamps_move_to_the_run_clock() {
        let epoch = Epoch { mono_ns: 1_000, wall_ns: 0 };
        let line =
            r#"{"event":"granted","mono_ns":1500,"key":0,"mode":"exclusive","token":7,"grant":2,"nested":false}"#;
        assert_eq!(
            parse_line(line, &epoch, 3),
            Line::Event(Stamped {
                at_ns: 500,
                node: 3,
                event: HistoryEvent::Granted {
                    key: 0,
                    mode: LockMode::Exclusive,
                    token: Some(7),
                    grant: 2,
                    nested: false
                }
            })
        );
        let failed = r#"{"event":"acquire_failed","mono_ns":2000,"key":1,"reason":"session_lost"}"#;
        assert!(matches!(
            parse_line(failed, &epoch, 3),
            Line::Event(Stamped { event: HistoryEvent::AcquireFailed { key: 1, reason: FailReason::SessionLost }, .. })
        ));
        assert_eq!(parse_line(r#"{"event":"done","mono_ns":5}"#, &epoch, 3), Line::Quiet);
        assert!(matches!(parse_line(r#"{"event":"granted","mono_ns":5}"#, &epoch, 3), Line::Bad(_)));
        assert!(matches!(
            parse_line(r#"{"event":"resource_read","mono_ns":5,"client":1,"key":0,"value":1}"#, &epoch, 3),
            Line::Bad(_)
        ));
        assert!(matches!(parse_line("granted", &epoch, 3), Line::Bad(_)));
    }

    #[test]
    fn sections_follow_the_workload_stream_of_a_client_whose_acquisitions_succeed() {
        let w = WorkloadSpec {
            hold_ms: Dist::Uniform(5.0, 50.0),
            think_ms: Dist::Uniform(0.0, 20.0),
            ..WorkloadSpec::default()
        };
        let s = draw_sections(7, "client-1", &w, 200_000_000);
        assert!(s.len() > 3, "{} sections fill 200 ms of 5-70 ms turns", s.len());
        // The same draws as the driver: think, hold, reentry, per turn.
        let mut rng = stream(7, "client-1", "workload");
        let think = Sampler::new(&w.think_ms);
        let hold = Sampler::new(&w.hold_ms);
        for section in &s {
            assert_eq!(section.think_ns, think.sample_ns(&mut rng));
            assert_eq!(section.hold_ns, hold.sample_ns(&mut rng));
            let _: f64 = rng.gen();
        }
        assert_ne!(draw_sections(8, "client-1", &w, 200_000_000), s, "another seed draws otherwise");
    }

    /// The sections are the simulator's own draws: a simulated client whose acquisitions all
    /// succeed (one client, no contention) holds each grant exactly its section's `hold_ns`.
    #[test]
    fn sections_hold_as_long_as_the_simulated_client_holds() {
        let text = r#"
name = "draws"
duration_ms = 2_000
algorithms = ["redis"]
[workload]
clients = 1
resource = false
acquisitions_per_client = 6
hold_ms = { uniform = [5, 50] }
think_ms = { uniform = [0, 20] }
"#;
        let scenario = locksim_simulator::scenario::parse_str("draws.toml", text, &locksim_algorithms::registry())
            .expect("scenario parses");
        let run = &scenario.runs[0];
        let seed = 11;
        let outcome = locksim_simulator::batch::run_seed(&scenario, run, seed, &Default::default()).expect("runs");
        let mut granted_at = None;
        let mut holds = Vec::new();
        for e in &outcome.history.events {
            match e.event {
                HistoryEvent::Granted { .. } => granted_at = Some(e.at_ns),
                HistoryEvent::Released { .. } => holds.push(e.at_ns - granted_at.take().expect("a grant first")),
                _ => {}
            }
        }
        assert_eq!(holds.len(), 6, "{:?}", outcome.history.events);
        let sections = draw_sections(seed, "client-0", &scenario.setup.workload, 2_000_000_000);
        let drawn: Vec<Nanos> = sections.iter().take(6).map(|s| s.hold_ns).collect();
        assert_eq!(holds, drawn);
    }

    /// The harness runs with the row's values after its `client` preset, as the model would:
    /// redis-py 5's preset sets no TTL and a 100 ms sleep unless the scenario set its own.
    #[test]
    fn settings_follow_the_rows_client_preset() {
        // `locksim-1` pins the model's own retry (the default preset is a redis-py release now).
        let text = "name = \"p\"\nduration_ms = 1_000\nalgorithms = [\"redis\"]\n[models.redis]\nclient = \"locksim-1\"\nttl_ms = 2_000\n";
        let scenario = locksim_simulator::scenario::parse_str("p.toml", text, &locksim_algorithms::registry())
            .expect("scenario parses");
        let mut params = scenario.runs[0].params.clone();
        let as_written = (redis_py::LIBRARY.settings)(&params);
        assert_eq!(as_written["ttl_ms"], 2_000.0);
        assert_eq!(as_written["retry_ms"], 150.0, "the row's own uniform 50-250 ms");
        params
            .values
            .insert("client".into(), locksim_simulator::model::ParamValue::Str(redis_py::LIBRARY.preset.into()));
        let preset = (redis_py::LIBRARY.settings)(&params);
        assert_eq!(preset["ttl_ms"], 2_000.0, "the scenario's own ttl_ms is kept");
        assert_eq!(preset["retry_ms"], 100.0, "redis-py's sleep=0.1");
    }

    #[test]
    fn a_selection_names_libraries_and_refuses_unknown_ones() {
        assert!(Selection::parse("").unwrap().chosen.is_empty());
        let s = Selection::parse("kazoo").unwrap();
        assert_eq!(s.chosen.iter().map(|l| l.name).collect::<Vec<_>>(), ["kazoo"]);
        let e = Selection::parse("redisson").unwrap_err();
        assert!(e.contains("unknown library `redisson`") && e.contains("curator"), "{e}");
    }
}
