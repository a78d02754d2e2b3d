//! One live run of one row: start the real servers and the resource, start each client as its
//! own process, inject the scenario's faults on schedule (drawn from the seed exactly as the
//! simulator draws them), stop everything at the end, then judge the recorded history with the
//! simulator's own checkers.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use locksim_simulator::checker::{self, SeedMetrics};
use locksim_simulator::engine::schedule;
use locksim_simulator::history::{FaultWindow, History, HistoryEvent, Stamped};
use locksim_simulator::process::{ClientState, NodeId, NodeKind};
use locksim_simulator::rng::stream;
use locksim_simulator::scenario::{FaultKind, RunSpec, Scenario};
use locksim_simulator::setup::{Selector, SelectorView};
use locksim_simulator::time::{ms_to_ns, Nanos};

use crate::backends::backend_for;
use crate::client::{node_names, ClientLine, ClientSpec, Summary};
use crate::clock::Epoch;
use crate::plan;
use crate::reference::{self, Prepared, SpecServer};
use crate::resource::ResourceServer;
use crate::servers::Server;
use crate::supervisor::{ProcId, Supervisor};

/// How a live run failed.
#[derive(Debug)]
pub enum LiveError {
    /// The scenario asks for something live mode cannot do (exit 2).
    Refused(String),
    /// A server or client could not be started or failed (exit 3).
    Failed(String),
}

impl std::fmt::Display for LiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LiveError::Refused(m) | LiveError::Failed(m) => f.write_str(m),
        }
    }
}

/// What one live run gave.
pub struct LiveOutcome {
    /// The checkers' figures, as for a simulated seed.
    pub metrics: SeedMetrics,
    /// The recorded history.
    pub history: History,
    /// Each server program and its version.
    pub versions: Vec<(String, String)>,
    /// What this run did differently from the simulation (latency, the backend's boundary).
    pub notes: Vec<String>,
    /// Every pid the run started; none is running when the run returns.
    pub pids: Vec<u32>,
    /// When a stop (Ctrl-C, SIGTERM) cut the run short: the real time it ran, which its history
    /// and rates cover (`History::duration_ns`); `None` for a run that reached its end.
    pub cut_short_ns: Option<Nanos>,
}

/// Whether `row` can run live, with the notes about its differences; an error says why not.
pub fn check_row(scenario: &Scenario, run: &RunSpec) -> Result<Vec<String>, LiveError> {
    let backend = backend_for(run.model.name()).map_err(LiveError::Refused)?;
    backend.check(&run.params).map_err(|e| LiveError::Refused(format!("{}: {e}", run.label)))?;
    let mut notes = plan::check(&scenario.setup).map_err(LiveError::Refused)?;
    notes.push(format!("{}: {}", run.model.name(), backend.boundary()));
    Ok(notes)
}

/// What the event collector knows of each client, for the `holder` and `waiter` selectors.
#[derive(Default)]
struct Collected {
    events: Vec<Stamped>,
    state: BTreeMap<usize, ClientState>,
    summaries: Vec<Summary>,
    /// What reference clients said besides history events (errors, connection states), and
    /// lines that were not of the protocol.
    reference_notes: Vec<String>,
}

/// Who plays the clients of a live run.
pub enum Launch<'a> {
    /// The model's own client library (`sim live-client`).
    Model,
    /// A real library's harness (`reference/PROTOCOL.md`), built.
    Reference(&'a Prepared),
}

/// What the results' `library` column names for a live row: with the model's own client code
/// (the recipe live), the model's `client` preset it ran with, as a simulated row names it
/// (`redis-py-8`); with a reference client, the real library and its version (`redis-py 5.2.1`:
/// [`Library::version`](crate::reference::Library) up to its parenthesised origin).
pub fn library_label(run: &RunSpec, launch: &Launch) -> Option<String> {
    match launch {
        Launch::Model => run.model.library(&run.params),
        Launch::Reference(prepared) => {
            let version = prepared.lib.version;
            Some(version.split(" (").next().unwrap_or(version).to_string())
        }
    }
}

fn track(state: &mut BTreeMap<usize, ClientState>, node: usize, e: &HistoryEvent) {
    let s = match e {
        HistoryEvent::AcquireStart { .. } => ClientState::Waiting,
        HistoryEvent::Granted { nested: false, .. } => ClientState::Holding,
        HistoryEvent::Released { nested: false, .. }
        | HistoryEvent::Abandoned { .. }
        | HistoryEvent::AcquireFailed { .. }
        | HistoryEvent::ClientCrashed => ClientState::Idle,
        _ => return,
    };
    state.insert(node, s);
}

/// A fault action due at a time.
struct Action {
    at_ns: Nanos,
    start: bool,
    occurrence: usize,
}

/// Runs `run` of `scenario` live with `seed`; `sim` is the binary to start clients with
/// (`sim live-client`); `stop` ends the run early (Ctrl-C). `keep_dir` keeps the servers'
/// directories (logs) instead of removing them.
pub fn run_live(
    scenario: &Scenario,
    run: &RunSpec,
    seed: u64,
    sim: &Path,
    stop: &AtomicBool,
    keep_dir: Option<&Path>,
) -> Result<LiveOutcome, LiveError> {
    run_live_with(scenario, run, seed, sim, stop, keep_dir, &Launch::Model)
}

/// [`run_live`] with the clients played by `launch` (a reference library's harness, or the
/// model's own client library).
pub fn run_live_with(
    scenario: &Scenario,
    run: &RunSpec,
    seed: u64,
    sim: &Path,
    stop: &AtomicBool,
    keep_dir: Option<&Path>,
    launch: &Launch,
) -> Result<LiveOutcome, LiveError> {
    let mut notes = check_row(scenario, run)?;
    let backend = backend_for(run.model.name()).map_err(LiveError::Refused)?;
    let setup = &scenario.setup;
    let w = &setup.workload;
    let names = node_names(run.model.services(&run.params), w.clients);
    let fail = LiveError::Failed;

    let root: PathBuf = match keep_dir {
        Some(d) => d.to_path_buf(),
        None => std::env::temp_dir().join(format!("locksim-live-{}-{}-{seed}", std::process::id(), run.label)),
    };
    std::fs::create_dir_all(&root).map_err(|e| fail(format!("cannot create {}: {e}", root.display())))?;
    let mut sup = Supervisor::default();
    let result = run_inside(scenario, run, seed, sim, stop, &root, &mut sup, &names, backend, &mut notes, launch);
    sup.stop_all();
    let pids = sup.all_pids();
    drop(sup);
    if keep_dir.is_none() {
        let _ = std::fs::remove_dir_all(&root);
    }
    let (history, versions) = result?;
    let metrics = checker::check_keeping(seed, &history, checker::MAX_STORED_VIOLATIONS);
    let cut_short_ns = (history.duration_ns < ms_to_ns(scenario.setup.duration_ms)).then_some(history.duration_ns);
    Ok(LiveOutcome { metrics, history, versions, notes, pids, cut_short_ns })
}

#[allow(clippy::too_many_arguments)]
fn run_inside(
    scenario: &Scenario,
    run: &RunSpec,
    seed: u64,
    sim: &Path,
    stop: &AtomicBool,
    root: &Path,
    sup: &mut Supervisor,
    names: &[(String, NodeKind)],
    backend: &'static dyn crate::backend::Backend,
    notes: &mut Vec<String>,
    launch: &Launch,
) -> Result<(History, Vec<(String, String)>), LiveError> {
    let setup = &scenario.setup;
    let w = &setup.workload;
    let fail = LiveError::Failed;
    let mut servers: Vec<Server> = backend.servers(&run.params, root).map_err(LiveError::Refused)?;
    for s in servers.iter_mut() {
        s.start(sup).map_err(fail)?;
    }
    backend.ready(&servers).map_err(fail)?;
    let versions = backend.versions_for(&run.params);

    let epoch = Epoch::now();
    let resource = ResourceServer::start(w.locks, names, epoch).map_err(fail)?;
    let end_ns = ms_to_ns(setup.duration_ms);
    let collected = Arc::new(Mutex::new(Collected::default()));
    let mut clients: Vec<ProcId> = Vec::new();
    let mut readers = Vec::new();
    for index in 0..w.clients {
        let spec = ClientSpec {
            scenario: scenario.file.clone(),
            label: run.label.clone(),
            index,
            seed,
            epoch,
            end_mono_ns: end_ns,
            resource: resource.addr(),
            servers: servers.iter().map(|s| (s.node.clone(), s.addr())).collect(),
        };
        let node = w_node(names, index);
        let mut cmd = match launch {
            Launch::Model => {
                let json = serde_json::to_string(&spec).expect("client spec serialises");
                let mut cmd = Command::new(sim);
                cmd.arg("live-client").arg(json);
                cmd
            }
            Launch::Reference(prepared) => {
                let servers =
                    spec.servers.iter().map(|(n, a)| SpecServer { node: n.clone(), addr: a.clone() }).collect();
                let rs = prepared.specification(
                    &run.params,
                    w,
                    seed,
                    index,
                    node,
                    servers,
                    spec.resource.clone(),
                    &epoch,
                    end_ns,
                );
                let file = root.join(format!("reference-client-{index}.json"));
                let text = serde_json::to_string(&rs).expect("reference spec serialises");
                std::fs::write(&file, text).map_err(|e| fail(format!("cannot write {}: {e}", file.display())))?;
                prepared.command(&file)
            }
        };
        cmd.stdout(Stdio::piped()).stderr(Stdio::inherit());
        let id = sup.spawn(&format!("client-{index}"), &mut cmd).map_err(fail)?;
        let stdout = sup.child_mut(id).stdout.take().expect("piped stdout");
        let c = collected.clone();
        let is_reference = matches!(launch, Launch::Reference(_));
        readers.push(std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if is_reference {
                    let mut c = c.lock().expect("collector lock");
                    match reference::parse_line(&line, &epoch, node) {
                        reference::Line::Event(e) => {
                            track(&mut c.state, e.node, &e.event);
                            c.events.push(e);
                        }
                        reference::Line::Note(n) => c.reference_notes.push(format!("client-{index}: {n}")),
                        reference::Line::Quiet => {}
                        reference::Line::Bad(why) => {
                            c.reference_notes.push(format!("client-{index}: not a protocol line: {why}"))
                        }
                    }
                    continue;
                }
                match serde_json::from_str::<ClientLine>(&line) {
                    Ok(ClientLine::Event(e)) => {
                        let mut c = c.lock().expect("collector lock");
                        track(&mut c.state, e.node, &e.event);
                        c.events.push(e);
                    }
                    Ok(ClientLine::Summary { summary }) => c.lock().expect("collector lock").summaries.push(summary),
                    Err(_) => {}
                }
            }
        }));
        clients.push(id);
    }

    // The faults, drawn from the seed as the simulator draws them.
    let occurrences = schedule::draw(&setup.faults, end_ns, &mut stream(seed, "faults", "schedule"));
    let mut pick_rng = stream(seed, "faults", "selection");
    // Starts are known up front; an end is scheduled when its start takes effect (a role
    // selector with no member yet, `holder` before any grant, puts the start off, as in the
    // simulator).
    let mut actions: Vec<Action> =
        (0..occurrences.len()).map(|i| Action { at_ns: occurrences[i].start_ns, start: true, occurrence: i }).collect();
    actions.sort_by_key(|a| a.at_ns);
    let mut hit: BTreeMap<usize, (Vec<String>, usize)> = BTreeMap::new();
    let mut windows: Vec<FaultWindow> = Vec::new();
    let mut next = 0;
    // A stop before the end cuts the run: its history, and the time its rates are over, end
    // when its clients are stopped, not at the end it was meant to reach.
    let cut;
    loop {
        let now = epoch.mono_ns();
        if now >= end_ns || stop.load(Ordering::Relaxed) {
            cut = now < end_ns;
            break;
        }
        while next < actions.len() && actions[next].at_ns <= now {
            let a = &actions[next];
            let (start, occurrence) = (a.start, a.occurrence);
            let o = &occurrences[occurrence];
            let f = &setup.faults[o.fault];
            if start {
                let state = collected.lock().expect("collector lock").state.clone();
                let targets = resolve(&f.targets, names, &servers, backend, &state, &mut pick_rng);
                if targets.is_empty() {
                    // Nobody matches yet: try again shortly.
                    actions[next].at_ns = now + 2_000_000;
                    actions[next..].sort_by_key(|a| (a.at_ns, a.start));
                    continue;
                }
                next += 1;
                for t in &targets {
                    apply(&f.kind, true, t, sup, &mut servers, &clients).map_err(fail)?;
                }
                let started = epoch.mono_ns();
                windows.push(FaultWindow {
                    kind: f.kind.name(),
                    targets: targets.join(", "),
                    start_ns: started,
                    end_ns: None,
                });
                hit.insert(occurrence, (targets, windows.len() - 1));
                let end = o.duration_ns.map_or(end_ns, |d| started + d).min(end_ns);
                actions.push(Action { at_ns: end, start: false, occurrence });
                actions[next..].sort_by_key(|a| (a.at_ns, a.start));
            } else {
                next += 1;
                if let Some((targets, window)) = hit.remove(&occurrence) {
                    for t in &targets {
                        apply(&f.kind, false, t, sup, &mut servers, &clients).map_err(fail)?;
                    }
                    windows[window].end_ns = Some(epoch.mono_ns());
                }
            }
        }
        let until = actions.get(next).map_or(end_ns, |a| a.at_ns).min(end_ns);
        let nap = until.saturating_sub(epoch.mono_ns()).min(50_000_000);
        std::thread::sleep(Duration::from_nanos(nap.max(1_000_000)));
    }
    // Whatever is still paused or down is resumed, so the clients can end cleanly.
    for (occ, (targets, window)) in std::mem::take(&mut hit) {
        let f = &setup.faults[occurrences[occ].fault];
        for t in &targets {
            let _ = apply(&f.kind, false, t, sup, &mut servers, &clients);
        }
        windows[window].end_ns = Some(epoch.mono_ns().min(end_ns));
    }
    // At the end the clients stop by themselves (their workload ends at the run's end); after a
    // Ctrl-C they are killed now. Every event they recorded is already on their stdout: each
    // line is flushed as it is written.
    let grace = if stop.load(Ordering::Relaxed) { Duration::ZERO } else { Duration::from_secs(5) };
    for id in &clients {
        sup.wait_or_kill(*id, grace);
    }
    for r in readers {
        let _ = r.join();
    }
    let ran_ns = if cut { epoch.mono_ns().min(end_ns) } else { end_ns };
    let mut c = std::mem::take(&mut *collected.lock().expect("collector lock"));
    c.events.extend(resource.take_events());
    // One timeline: every process stamped with the same monotonic clock.
    c.events.sort_by_key(|e| e.at_ns);
    let mut final_counter = vec![0u64; w.locks as usize];
    for e in &c.events {
        if let HistoryEvent::ResourceWrite { key, value, .. } = e.event {
            final_counter[key as usize] = value;
        }
    }
    let messages = c.summaries.iter().map(|s| s.sent + s.received).sum();
    let history = History {
        events: c.events,
        // A live history records every event: nothing was folded.
        folded: Default::default(),
        messages,
        client_messages: messages,
        duration_ns: ran_ns,
        final_counter,
        clients: names.iter().enumerate().filter(|(_, (_, k))| *k == NodeKind::Client).map(|(i, _)| i).collect(),
        fenced: match launch {
            Launch::Model => run.model.fenced(&run.params),
            Launch::Reference(p) => p.lib.fenced,
        },
        node_names: names.iter().map(|(n, _)| n.clone()).collect(),
        faults: windows,
        schedule_period_ns: w.schedule.as_ref().map(|s| (s.period_ms * 1e6).round() as u64),
        // One machine clock: no node's offset from true time is known.
        clocks: Vec::new(),
        // The real servers are not asked who leads.
        leaders: Vec::new(),
    };
    if let Launch::Reference(_) = launch {
        notes.extend(reference_notes(&c.reference_notes));
    }
    if stop.load(Ordering::Relaxed) {
        notes.push("interrupted: the history ends at the Ctrl-C".to_string());
    }
    Ok((history, versions))
}

/// Client `index`'s node id (services come first, as the simulator numbers them).
fn w_node(names: &[(String, NodeKind)], index: usize) -> usize {
    let name = format!("client-{index}");
    names.iter().position(|(n, _)| *n == name).expect("every client has a node")
}

/// What a reference run's harnesses said besides history events, shortened for the results:
/// each distinct message once, with how often it came.
fn reference_notes(said: &[String]) -> Vec<String> {
    // In the order first said (a connection's states read in order), each with its count.
    let mut counted: Vec<(&str, usize)> = Vec::new();
    for n in said {
        match counted.iter_mut().find(|(m, _)| *m == n.as_str()) {
            Some((_, k)) => *k += 1,
            None => counted.push((n.as_str(), 1)),
        }
    }
    let mut notes = Vec::new();
    notes.extend(counted.iter().take(20).map(|(n, k)| if *k > 1 { format!("{n} ({k} times)") } else { n.to_string() }));
    if counted.len() > 20 {
        notes.push(format!("… and {} more distinct harness messages", counted.len() - 20));
    }
    notes
}

/// The node names a fault's selectors pick now (empty: a role has no member yet, try again).
fn resolve(
    targets: &[Selector],
    names: &[(String, NodeKind)],
    servers: &[Server],
    backend: &dyn crate::backend::Backend,
    state: &BTreeMap<usize, ClientState>,
    rng: &mut rand_chacha::ChaCha8Rng,
) -> Vec<String> {
    let view = LiveView { names, servers, backend, state };
    let mut out = Vec::new();
    for t in targets {
        for id in t.resolve(&view, rng).unwrap_or_default() {
            let name = &names[id].0;
            if !out.contains(name) {
                out.push(name.clone());
            }
        }
    }
    out
}

/// The real servers as a selector sees them. Unlike the simulator's view, every node counts as
/// alive (a live run does not track crashes for selection), `follower` and `random-server` draw
/// among every started server process (Redis sentinels included), and a `follower` may be any of
/// them while no server says it leads.
struct LiveView<'a> {
    names: &'a [(String, NodeKind)],
    servers: &'a [Server],
    backend: &'a dyn crate::backend::Backend,
    /// Each client's last known state, by node index.
    state: &'a BTreeMap<usize, ClientState>,
}

impl LiveView<'_> {
    fn id_of(&self, name: &str) -> Option<NodeId> {
        self.names.iter().position(|(n, _)| n == name)
    }
}

impl SelectorView for LiveView<'_> {
    fn node_count(&self) -> usize {
        self.names.len()
    }
    fn name(&self, node: NodeId) -> &str {
        &self.names[node].0
    }
    fn kind(&self, node: NodeId) -> NodeKind {
        self.names[node].1
    }
    fn servers(&self) -> Vec<NodeId> {
        self.servers.iter().filter_map(|s| self.id_of(&s.node)).collect()
    }
    fn leader(&self) -> Option<NodeId> {
        self.id_of(&self.backend.leader(self.servers)?)
    }
    fn follower_without_leader(&self) -> bool {
        true
    }
    fn alive(&self, _node: NodeId) -> bool {
        true
    }
    fn client_state(&self, node: NodeId) -> Option<ClientState> {
        self.state.get(&node).copied()
    }
}

/// Starts (`start`) or ends a fault on one node.
fn apply(
    kind: &FaultKind,
    start: bool,
    target: &str,
    sup: &mut Supervisor,
    servers: &mut [Server],
    clients: &[ProcId],
) -> Result<(), String> {
    let server = servers.iter_mut().find(|s| s.node == target);
    let client =
        target.strip_prefix("client-").and_then(|i| i.parse::<usize>().ok()).and_then(|i| clients.get(i).copied());
    match (kind, server, client) {
        (FaultKind::Pause, Some(s), _) => match s.proc {
            Some(p) if start => sup.pause(p),
            Some(p) => sup.resume(p),
            None => Ok(()),
        },
        (FaultKind::Pause, None, Some(p)) => {
            if start {
                sup.pause(p)
            } else {
                sup.resume(p)
            }
        }
        (FaultKind::Crash { .. }, Some(s), _) => {
            if start {
                match s.proc.take() {
                    Some(p) => sup.kill(p),
                    None => Ok(()),
                }
            } else if s.proc.is_none() {
                s.start(sup)
            } else {
                Ok(())
            }
        }
        _ => Err(format!("live mode cannot apply {} to {target}", kind.name())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::scenario::parse_str;

    /// A redis row with no `client` (the plain pattern's default preset), Redisson's watchdog
    /// row (its own default) and a row pinning the model before presets.
    const ROWS: &str = r#"
name = "library-label"
duration_ms = 1000
algorithms = ["redis"]
[[variants]]
name = "redisson"
model = "redis"
watchdog = true
[[variants]]
name = "pinned"
model = "redis"
client = "locksim-1"
"#;

    #[test]
    fn a_live_rows_library_is_the_preset_it_ran_or_the_real_library_and_version() {
        let scenario = parse_str("library-label.toml", ROWS, &locksim_algorithms::registry()).unwrap();
        let label = |i: usize, launch: &Launch| library_label(&scenario.runs[i], launch);
        // The recipe live: the model's own client code with the preset it resolved to, as the
        // simulated row names it.
        assert_eq!(label(0, &Launch::Model).as_deref(), Some("redis-py-8"));
        assert_eq!(label(1, &Launch::Model).as_deref(), Some("redisson-4.7"));
        assert_eq!(label(2, &Launch::Model).as_deref(), Some("locksim-1"));
        // A reference client: the real library and version that ran, whatever the row's preset.
        let prepared = Prepared {
            lib: &reference::redis_py::LIBRARY,
            root: PathBuf::from("/nonexistent"),
            out_dir: PathBuf::from("/nonexistent"),
        };
        assert_eq!(label(0, &Launch::Reference(&prepared)).as_deref(), Some("redis-py 5.2.1"));
        assert_eq!(label(2, &Launch::Reference(&prepared)).as_deref(), Some("redis-py 5.2.1"));
    }
}
