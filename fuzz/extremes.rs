//! Scenario texts built from bytes, every time drawn from a table of extremes (0, a nanosecond,
//! just below, at and just beyond the 1e12 ms bound, negative where a time may be), and a
//! bounded run of whatever parses. Shared by the fuzz target (`fuzz_targets/parse_scenario.rs`,
//! nightly) and by `tests/time_extremes.rs`, which runs the same builder on stable over a fixed
//! set of inputs; so this file compiles in every `cargo test`.
//!
//! Runs are bounded: a parsed scenario runs at most [`RUN_MS`] of simulated time with at most
//! [`RUN_CLIENTS`] clients, and a zero-time loop (every time 0) is stopped by the engine's stall
//! detector, so no input can hang.

use locksim_simulator::model::DynModel;
use locksim_simulator::outcome::{Halt, RunOptions};
use locksim_simulator::scenario::{parse_str, Scenario};

/// The longest simulated time a fuzzed scenario runs, in milliseconds.
pub const RUN_MS: f64 = 20.0;
/// The most clients a fuzzed scenario runs with.
pub const RUN_CLIENTS: usize = 4;

/// Times the parser must accept or refuse cleanly: zero, tiny, ordinary, near the bound, at it,
/// and the first values beyond it.
const TIMES_MS: &[&str] =
    &["0", "1e-9", "1e-6", "0.001", "1", "1e11", "999999999999", "1e12", "1.0000001e12", "2e13", "1e14"];
/// Signed times (clock offsets and steps), including the negative bound and beyond.
const SIGNED_MS: &[&str] = &["0", "-1e-6", "1e12", "-1e12", "-999999999999", "1e13", "-1e13", "1e-6"];
/// Intervals of recurring faults: the first is not 0, so an input of zeros is a valid scenario
/// (every other time 0), the zero-time loop the stall detector must stop.
const EVERY_MS: &[&str] = &["1", "1e-6", "0", "1e12", "2e13"];
/// Clock rate errors at and beyond their bound.
const PPM: &[&str] = &["0", "999999", "-999999", "1e6", "-1e6", "1"];
const MODELS: &[&str] = &["db", "redis", "redlock", "zookeeper", "etcd", "kubernetes"];
const DURATIONS_MS: &[&str] = &["1e-6", "0.001", "1", "20", "1e12"];

/// Reads picks from the input, then zeros: an empty input is "the first option everywhere",
/// which is 0 for every time.
struct Picks<'a>(std::slice::Iter<'a, u8>);

impl Picks<'_> {
    fn pick<'t>(&mut self, options: &[&'t str]) -> &'t str {
        options[*self.0.next().unwrap_or(&0) as usize % options.len()]
    }

    /// A time as a constant or a distribution reaching it.
    fn time(&mut self, values: &[&str]) -> String {
        let v = self.pick(values);
        match self.pick(&["const", "uniform", "normal", "exponential", "lognormal"]) {
            "uniform" => format!("{{ uniform = [0, {v}] }}"),
            "normal" => format!("{{ normal = {{ mean = {v}, sd = {v} }} }}"),
            "exponential" => format!("{{ exponential = {v} }}"),
            "lognormal" => format!("{{ lognormal = {{ median = 1e-6, p99 = {v} }} }}"),
            _ => v.to_string(),
        }
    }
}

/// A scenario text whose every time is picked by the input's bytes from the tables above.
pub fn scenario_text(data: &[u8]) -> String {
    let mut p = Picks(data.iter());
    let duration = p.pick(DURATIONS_MS);
    let model = p.pick(MODELS);
    let (hold, think, timeout, latency) = (p.time(TIMES_MS), p.time(TIMES_MS), p.time(TIMES_MS), p.time(TIMES_MS));
    let (offset, drift) = (p.time(SIGNED_MS), p.pick(PPM));
    let (at, window, every, slow) = (p.time(TIMES_MS), p.time(TIMES_MS), p.time(EVERY_MS), p.time(TIMES_MS));
    let (jump, fault_ppm) = (p.time(SIGNED_MS), p.pick(PPM));
    format!(
        "name = \"extreme\"\nduration_ms = {duration}\nseeds = 1\nalgorithms = [\"{model}\"]\n\
         [workload]\nclients = 2\nhold_ms = {hold}\nthink_ms = {think}\nacquire_timeout_ms = {timeout}\n\
         [network]\nlatency_ms = {latency}\n[clocks]\noffset_ms = {offset}\ndrift_ppm = {drift}\n\
         [[faults]]\nkind = \"clock_jump\"\ntarget = \"*\"\nat_ms = {at}\nby_ms = {jump}\nevery_ms = {every}\n\
         [[faults]]\nkind = \"pause\"\ntarget = \"random-server\"\nat_ms = {at}\nduration_ms = {window}\n\
         [[faults]]\nkind = \"slow\"\ntarget = \"client-0\"\nat_ms = 0\nlatency_ms = {slow}\nduration_ms = {window}\n\
         [[faults]]\nkind = \"clock_drift\"\ntarget = \"leader\"\nat_ms = {at}\nppm = {fault_ppm}\n"
    )
}

/// Parses `text`; a valid scenario then runs seed 0 of every row, bounded ([`RUN_MS`],
/// [`RUN_CLIENTS`], the stall detector). Returns the scenario error, if any, and how many rows
/// were stopped as zero-time loops. Panics (overflow included) propagate.
pub fn parse_and_run(text: &str, models: &[&'static dyn DynModel]) -> Result<usize, String> {
    let sc: Scenario = parse_str("extreme.toml", text, models).map_err(|e| {
        assert!(e.line.is_some() && e.column.is_some(), "an error with no position: {e}");
        e.to_string()
    })?;
    let mut setup = sc.setup.clone();
    setup.duration_ms = setup.duration_ms.min(RUN_MS);
    setup.workload.clients = setup.workload.clients.min(RUN_CLIENTS);
    let mut stuck = 0;
    for row in &sc.runs {
        match row.model.run_seed_until(&setup, &row.params, 0, &RunOptions::default(), None) {
            Ok(_) => {}
            Err(Halt::Stuck(_)) => stuck += 1,
            Err(Halt::Stopped) => unreachable!("no stop flag was given"),
        }
    }
    Ok(stuck)
}
