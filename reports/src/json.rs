//! The results JSON of `spec/results-format.md`: [`ResultsJson`] and [`AlgorithmJson`].
//!
//! Every field the spec shows is here, in the spec's order, with its name and nesting; extra
//! fields follow the spec's ones (the spec allows additions). Structs derive `Serialize`, so field
//! order is fixed, and `params` is a sorted map, so the output is byte-stable. Numbers are rounded
//! by [`crate::num`]; a value with no data (no runs, no acquisitions, an empty histogram) is
//! `null`, never 0.
//!
//! Extras beyond the spec, per algorithm: `rate`/`ci95` on `stale_unfenced` and `stale_fenced`
//! too, `rules_out` on a class no run showed (the rate ruled out at 95%, one-sided: the rule of
//! three, 3/n, the table's figure), `fenced`,
//! `failing_runs`, `lost_updates_runs`, `token_regressions_runs`, `completed_sections`,
//! `releases`, `notifications`, `refused_attempts`, `refused_attempts_per_s`,
//! `first_violations` (the first violation of each listed failing seed), `panicked_runs`,
//! `panicked_seeds`, `limitations`, `acquire_latency_cdf_ms` (CDF points for charts), and the
//! verdict and liveness fields added later (`leaked_regrants`, `leaked_regrants_runs`,
//! `failed_releases`, `wait_ms`, `wait_cdf_ms`, `outage_ms`, `outage_ms_max`, `fairness`,
//! `first_leaked_regrants`), `seeds_finished`, and `double_executions` (only for a scheduled
//! workload, absent otherwise). Each
//! expectation also carries `message`. At the top level: `description`, `scenario_text` (the
//! scenario as run, so a saved results file can be reported on later: `sim report`) and
//! `interrupted` (a run stopped early by Ctrl-C or SIGTERM).
//!
//! Every struct here also derives `Deserialize`, so `sim report RESULTS.json` reads saved results.
//! A field added after the first saved results is read with a default (`null` or empty) from a
//! file that lacks it, so an older file still reads; `null` then says "not measured", never 0.

use std::collections::BTreeMap;
use std::ops::Range;

use locksim_simulator::dist::Dist;
use locksim_simulator::model::ParamValue;
use locksim_simulator::scenario::Scenario;
use locksim_simulator::time::ns_to_ms;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::aggregate::{AlgorithmTotals, ClassCount, FailingSeed, Fairness, HandoffMs, LatencyMs, WaitMs};
use crate::expect::ExpectationResult;
use crate::num::{json_dp, round_sig, CI_SIG, RATE_SIG};
use crate::wilson::{rules_out, wilson95};

/// The whole results file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ResultsJson {
    /// The scenario's `name`.
    pub scenario: String,
    /// The scenario file as the user named it.
    pub file: String,
    /// The simulated length of each run, ms.
    #[serde(serialize_with = "whole_as_int")]
    pub duration_ms: f64,
    /// The seeds run.
    pub seeds: SeedRange,
    /// One row per algorithm or variant run, in the scenario's order.
    pub algorithms: Vec<AlgorithmJson>,
    /// The `[expect]` assertions judged, in the scenario's order.
    pub expectations: Vec<ExpectationResult>,
    // Extras.
    /// The scenario's `description`.
    #[serde(default)]
    pub description: String,
    /// The scenario file's text as it was run, so `sim report` can show it and replay a seed for
    /// the timeline even after the file has changed or moved; `null` when not recorded.
    #[serde(default)]
    pub scenario_text: Option<String>,
    /// `"live"` for `sim live`'s results (real servers on this machine); absent for simulation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Live mode: each server program and the version it reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerVersion>,
    /// Live mode: what the live runs did differently from the simulation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub live_notes: Vec<String>,
    /// The run was stopped early (Ctrl-C, SIGTERM): each row holds only its finished seeds
    /// (`seeds_finished`), and `seeds` is the range asked for, not the range run. `false` in
    /// results that predate the field.
    #[serde(default)]
    pub interrupted: bool,
}

/// A real server program a live run started, and its version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerVersion {
    /// The program (`redis-server`).
    pub program: String,
    /// What it reported as its version.
    pub version: String,
}

/// Seeds run: `from` inclusive, `to` exclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedRange {
    /// The first seed.
    pub from: u64,
    /// One past the last seed.
    pub to: u64,
}

/// A violation class across runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassJson {
    /// Runs that showed it at least once.
    pub runs: u64,
    /// Events over all runs.
    pub events: u64,
    /// `runs` over the row's runs; `null` with no runs.
    pub rate: Option<f64>,
    /// 95% Wilson interval of `rate`.
    pub ci95: Option<[f64; 2]>,
    /// Only when `runs == 0`: the rate the clean runs rule out at 95%, one-sided (the rule of
    /// three, 3/n, as the table prints it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules_out: Option<f64>,
}

impl ClassJson {
    /// The class `c` over `n` runs: its rate and 95% Wilson interval (`null` with no runs), and,
    /// when no run showed it, the rate the `n` clean runs rule out.
    pub fn new(c: ClassCount, n: u64) -> Self {
        let rate = if n == 0 { None } else { Some(round_sig(c.runs as f64 / n as f64, RATE_SIG)) };
        let ci95 = wilson95(c.runs, n).map(|(lo, hi)| [round_sig(lo, CI_SIG), round_sig(hi, CI_SIG)]);
        let rules_out = if c.runs == 0 { rules_out(n).map(|b| round_sig(b, CI_SIG)) } else { None };
        ClassJson { runs: c.runs, events: c.events, rate, ci95, rules_out }
    }
}

/// The first violation of a failing seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViolationJson {
    /// The failing seed.
    pub seed: u64,
    /// The violation's class (`overlap`, `stale_unfenced`, …), as the checker names it.
    pub kind: String,
    /// True time of the violation.
    pub at_ms: f64,
    /// What happened, in words, with clients by node name.
    pub detail: String,
}

/// A seed whose run panicked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PanicJson {
    /// The seed.
    pub seed: u64,
    /// The panic's message.
    pub message: String,
}

/// One results row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AlgorithmJson {
    /// The row's label (the model's name or a variant's).
    pub label: String,
    /// The model's name.
    pub model: String,
    /// The lock library preset the row runs (the model's `client`, resolved); absent for a
    /// model without presets (and in files written before presets were named).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// Parameters that differ from the model's defaults.
    pub params: Value,
    /// Runs completed (panicked seeds are not runs).
    pub runs: u64,
    /// Runs with overlapping holders (V1).
    pub overlap: ClassJson,
    /// Runs in which the unfenced resource accepted a stale write (V2).
    pub stale_unfenced: ClassJson,
    /// `null` when the model has no fencing token ("cannot be fenced").
    pub stale_fenced: Option<ClassJson>,
    /// Lost increments over all runs.
    pub lost_updates: u64,
    /// Token regressions over all runs.
    pub token_regressions: u64,
    /// Successful acquisitions over all runs.
    pub acquisitions: u64,
    /// Acquire calls that gave up over all runs.
    pub failed_acquisitions: u64,
    /// Completed critical sections per simulated second; `null` with no simulated time.
    pub throughput_per_s: Option<f64>,
    /// Acquire latency percentiles; `null` with no acquisition.
    pub acquire_latency_ms: Option<LatencyMs>,
    /// Handoff time percentiles; `null` with no handoff.
    pub handoff_ms: Option<HandoffMs>,
    /// Mean time per run during which a client waited and nobody held the key, ms; `null` with
    /// no runs.
    pub unavailable_ms: Option<f64>,
    /// Messages sent over all runs.
    pub messages: u64,
    /// Messages per successful acquisition; `null` with no acquisition.
    pub messages_per_acquisition: Option<f64>,
    /// Watch or pub/sub wake-ups per release (the herd effect); `null` with no release.
    pub notifications_per_release: Option<f64>,
    /// The first failing seeds (at most [`crate::MAX_FAILING_SEEDS`]).
    pub failing_seeds: Vec<u64>,
    /// The command that replays the first failing seed with its trace; `null` with none.
    pub replay: Option<String>,
    // Extras.
    /// Whether grants carry a fencing token.
    pub fenced: bool,
    /// Runs with any safety violation.
    pub failing_runs: u64,
    /// Runs with a lost update.
    pub lost_updates_runs: u64,
    /// Runs with a token regression.
    pub token_regressions_runs: u64,
    /// Critical sections completed (holds ended by a release) over all runs.
    pub completed_sections: u64,
    /// Non-nested release calls over all runs.
    pub releases: u64,
    /// Watch or pub/sub wake-ups over all runs.
    pub notifications: u64,
    /// Lock requests a server refused over all runs.
    pub refused_attempts: u64,
    /// Refused lock requests per simulated second; `null` with no simulated time.
    pub refused_attempts_per_s: Option<f64>,
    /// The first violation of each listed failing seed.
    pub first_violations: Vec<ViolationJson>,
    /// Seeds whose run panicked.
    pub panicked_runs: u64,
    /// The first panicked seeds (at most [`crate::MAX_PANICKED_SEEDS`]) with their message.
    pub panicked_seeds: Vec<PanicJson>,
    /// What this configuration does not model.
    pub limitations: Vec<String>,
    /// Points `[ms, fraction]` of the acquire-latency CDF (see
    /// [`AlgorithmTotals::acquire_latency_cdf_ms`]); empty with no acquisition.
    #[serde(default)]
    pub acquire_latency_cdf_ms: Vec<[f64; 2]>,
    /// Grants of the token of a lock the same client held last (a leaked lock re-entered; not a
    /// violation), over all runs; `null` in results that predate the field.
    #[serde(default)]
    pub leaked_regrants: Option<u64>,
    /// Runs with a leaked re-grant; `null` in results that predate the field.
    #[serde(default)]
    pub leaked_regrants_runs: Option<u64>,
    /// Release calls that returned an error, over all runs; `null` in results that predate it.
    #[serde(default)]
    pub failed_releases: Option<u64>,
    /// Wait percentiles, from a section's first acquire call to its grant, failed calls
    /// included; `null` with no attempt (or in results that predate it).
    #[serde(default)]
    pub wait_ms: Option<WaitMs>,
    /// Points `[ms, fraction]` of the wait CDF (see [`AlgorithmTotals::wait_cdf_ms`]); empty with
    /// no attempt or in results that predate it.
    #[serde(default)]
    pub wait_cdf_ms: Vec<[f64; 2]>,
    /// Mean over runs of the longest stretch with a waiter and no holder, ms; `null` with no runs.
    #[serde(default)]
    pub outage_ms: Option<f64>,
    /// The longest such stretch in any run, ms; `null` with no runs.
    #[serde(default)]
    pub outage_ms_max: Option<f64>,
    /// Jain's index of completed sections per client: `mean`, `min`, `max` over the runs that
    /// completed a section; `null` with none.
    #[serde(default)]
    pub fairness: Option<Fairness>,
    /// The first seeds with a leaked re-grant (at most [`crate::MAX_FAILING_SEEDS`]), each with
    /// its first one (`kind` `leaked_regrant`); empty with none.
    #[serde(default)]
    pub first_leaked_regrants: Vec<ViolationJson>,
    /// Seeds that finished (`runs` plus `panicked_runs`): every seed asked for unless the run was
    /// interrupted, 0 for a row that never started; `null` in results that predate the field.
    #[serde(default)]
    pub seeds_finished: Option<u64>,
    /// Scheduled workload (`kind = "scheduled"`): runs of the job beyond the first in one period,
    /// as a violation class (runs, events, rate); absent for a loop, which reads as none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub double_executions: Option<ClassJson>,
}

impl AlgorithmJson {
    /// The row for `t`; `file` is the scenario file as the user named it (for `replay`).
    pub fn from_totals(t: &AlgorithmTotals, file: &str) -> Self {
        let n = t.runs;
        AlgorithmJson {
            label: t.label.clone(),
            model: t.model.clone(),
            library: t.library.clone(),
            params: t.params.clone(),
            runs: n,
            overlap: ClassJson::new(t.overlap, n),
            stale_unfenced: ClassJson::new(t.stale_unfenced, n),
            stale_fenced: if t.fenced { Some(ClassJson::new(t.stale_fenced, n)) } else { None },
            lost_updates: t.lost_updates.events,
            token_regressions: t.token_regressions.events,
            acquisitions: t.acquisitions,
            failed_acquisitions: t.failed_acquisitions,
            throughput_per_s: t.throughput_per_s(),
            acquire_latency_ms: t.acquire_latency_ms(),
            handoff_ms: t.handoff_ms(),
            unavailable_ms: t.unavailable_ms(),
            messages: t.messages,
            messages_per_acquisition: t.messages_per_acquisition(),
            notifications_per_release: t.notifications_per_release(),
            failing_seeds: t.failing_seeds.iter().map(|f| f.seed).collect(),
            replay: t.first_failing_seed().map(|s| replay_command(file, &t.label, s)),
            fenced: t.fenced,
            failing_runs: t.failing_runs,
            lost_updates_runs: t.lost_updates.runs,
            token_regressions_runs: t.token_regressions.runs,
            completed_sections: t.completed_sections,
            releases: t.releases,
            notifications: t.notifications,
            refused_attempts: t.refused_attempts,
            refused_attempts_per_s: t.refused_attempts_per_s(),
            first_violations: first_of_each(&t.failing_seeds),
            panicked_runs: t.panicked_runs,
            panicked_seeds: t
                .panicked
                .iter()
                .map(|(seed, message)| PanicJson { seed: *seed, message: message.clone() })
                .collect(),
            limitations: t.limitations.clone(),
            acquire_latency_cdf_ms: t.acquire_latency_cdf_ms(),
            leaked_regrants: Some(t.leaked_regrants.events),
            leaked_regrants_runs: Some(t.leaked_regrants.runs),
            failed_releases: Some(t.failed_releases),
            wait_ms: t.wait_ms(),
            wait_cdf_ms: t.wait_cdf_ms(),
            outage_ms: t.outage_ms(),
            outage_ms_max: t.outage_ms_max(),
            fairness: t.fairness(),
            first_leaked_regrants: first_of_each(&t.leaked_seeds),
            seeds_finished: Some(t.runs + t.panicked_runs),
            double_executions: t.scheduled.then(|| ClassJson::new(t.double_executions, n)),
        }
    }
}

impl ResultsJson {
    /// Results from plain values (`seeds` is `from..to`, `to` exclusive).
    pub fn new(
        scenario: &str,
        file: &str,
        duration_ms: f64,
        seeds: Range<u64>,
        totals: &[AlgorithmTotals],
        expectations: Vec<ExpectationResult>,
    ) -> Self {
        ResultsJson {
            scenario: scenario.to_string(),
            file: file.to_string(),
            duration_ms,
            seeds: SeedRange { from: seeds.start, to: seeds.end },
            algorithms: totals.iter().map(|t| AlgorithmJson::from_totals(t, file)).collect(),
            expectations,
            description: String::new(),
            scenario_text: None,
            mode: None,
            servers: Vec::new(),
            live_notes: Vec::new(),
            interrupted: false,
        }
    }

    /// Results for a scenario (its name, file as the user named it, and duration).
    pub fn from_scenario(
        scenario: &Scenario,
        seeds: Range<u64>,
        totals: &[AlgorithmTotals],
        expectations: Vec<ExpectationResult>,
    ) -> Self {
        let file = scenario.file.display().to_string();
        let mut json = Self::new(&scenario.name, &file, scenario.setup.duration_ms, seeds, totals, expectations);
        json.description = scenario.description.clone();
        json
    }

    /// Marks the results as those of a run stopped early (see [`ResultsJson::interrupted`]).
    pub fn with_interrupted(mut self, interrupted: bool) -> Self {
        self.interrupted = interrupted;
        self
    }

    /// Records the scenario file's text (see [`ResultsJson::scenario_text`]).
    pub fn with_scenario_text(mut self, text: impl Into<String>) -> Self {
        self.scenario_text = Some(text.into());
        self
    }

    /// Pretty-printed JSON with a trailing newline: the bytes `--json FILE` writes.
    pub fn to_pretty_string(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("results serialize");
        s.push('\n');
        s
    }
}

/// Each listed seed's first violation (or leaked re-grant) as JSON; seeds without one are left out.
fn first_of_each(seeds: &[FailingSeed]) -> Vec<ViolationJson> {
    seeds
        .iter()
        .filter_map(|f| {
            f.first_violation.as_ref().map(|v| ViolationJson {
                seed: f.seed,
                kind: v.kind.to_string(),
                at_ms: json_dp(ns_to_ms(v.at_ns)),
                detail: v.detail.clone(),
            })
        })
        .collect()
}

/// `sim run {file} --algorithm {label} --seed {seed} --trace`, with the file and label quoted for
/// a POSIX shell when they contain anything but `[A-Za-z0-9_./:=+,@%-]`.
pub fn replay_command(file: &str, label: &str, seed: u64) -> String {
    format!("sim run {} --algorithm {} --seed {seed} --trace", shell_quote(file), shell_quote(label))
}

fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "_./:=+,@%-".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A model's parameter overrides (from [`locksim_simulator::model::Params::overrides`]) as the
/// JSON `params` object, written as a scenario would: whole numbers as integers
/// (`"ttl_ms": 30000`), a constant distribution as its number, other distributions as
/// `{"uniform": [5, 50]}`. Keys are sorted.
pub fn params_json(overrides: &BTreeMap<String, ParamValue>) -> Value {
    let map = overrides
        .iter()
        .map(|(k, v)| {
            let value = match v {
                ParamValue::Num(x) | ParamValue::Dist(Dist::Const(x)) => number(*x),
                ParamValue::Int(i) => Value::from(*i),
                ParamValue::Bool(b) => Value::Bool(*b),
                ParamValue::Str(s) => Value::String(s.clone()),
                ParamValue::Dist(d) => whole_numbers(serde_json::to_value(d).unwrap_or(Value::Null)),
            };
            (k.clone(), value)
        })
        .collect();
    Value::Object(map)
}

/// A number, as an integer when it is whole and exactly representable.
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map(Value::Number).unwrap_or(Value::Null)
    }
}

fn whole_numbers(v: Value) -> Value {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() => number(x),
            _ => Value::Number(n),
        },
        Value::Array(a) => Value::Array(a.into_iter().map(whole_numbers).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, whole_numbers(v))).collect()),
        other => other,
    }
}

fn whole_as_int<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    number(*x).serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::tests::{clean, failing};
    use crate::expect::evaluate;
    use locksim_simulator::scenario::{ExpectOp, Expectation};

    fn sample() -> ResultsJson {
        let mut overrides = BTreeMap::new();
        overrides.insert("ttl_ms".to_string(), ParamValue::Num(30000.0));
        overrides.insert("replicas".to_string(), ParamValue::Int(1));
        overrides.insert("hold".to_string(), ParamValue::Dist(Dist::Uniform(5.0, 50.5)));
        let mut redis = AlgorithmTotals::new("redis", "redis", params_json(&overrides), true)
            .with_limitations(vec!["not reentrant".to_string()]);
        let mut redlock = AlgorithmTotals::new("redlock", "redlock", params_json(&BTreeMap::new()), false);
        for seed in 0..20 {
            if seed % 7 == 3 {
                redis.add(&failing(seed, true));
            } else {
                redis.add(&clean(seed, true));
            }
            redlock.add(&clean(seed, false));
        }
        redlock.add_panic(20, "index out of bounds");
        let exps = vec![Expectation {
            label: "redlock".into(),
            metric: locksim_simulator::metric::Metric::Overlap,
            expected: "none".into(),
            op: ExpectOp::None,
        }];
        let results = evaluate(&exps, &[redis.clone(), redlock.clone()]);
        ResultsJson::new("failover", "scenarios/failover.toml", 60000.0, 0..20, &[redis, redlock], results)
    }

    #[test]
    fn every_spec_field_is_present() {
        let text = sample().to_pretty_string();
        let v: Value = serde_json::from_str(&text).unwrap();
        for k in ["scenario", "file", "duration_ms", "seeds", "algorithms", "expectations"] {
            assert!(v.get(k).is_some(), "missing top-level {k}");
        }
        assert_eq!(v["duration_ms"], serde_json::json!(60000));
        assert_eq!(v["seeds"], serde_json::json!({"from": 0, "to": 20}));
        let a = &v["algorithms"][0];
        for k in [
            "label",
            "model",
            "params",
            "runs",
            "overlap",
            "stale_unfenced",
            "stale_fenced",
            "lost_updates",
            "token_regressions",
            "acquisitions",
            "failed_acquisitions",
            "throughput_per_s",
            "acquire_latency_ms",
            "handoff_ms",
            "unavailable_ms",
            "messages",
            "messages_per_acquisition",
            "notifications_per_release",
            "failing_seeds",
            "replay",
        ] {
            assert!(a.get(k).is_some(), "missing algorithm field {k}");
        }
        for k in ["runs", "events", "rate", "ci95"] {
            assert!(a["overlap"].get(k).is_some(), "missing overlap.{k}");
        }
        for k in ["runs", "events"] {
            assert!(a["stale_unfenced"].get(k).is_some());
            assert!(a["stale_fenced"].get(k).is_some());
        }
        for k in ["p50", "p90", "p99", "p999", "max", "mean"] {
            assert!(a["acquire_latency_ms"][k].is_number(), "missing acquire_latency_ms.{k}");
        }
        for k in ["p50", "p99", "max"] {
            assert!(a["handoff_ms"][k].is_number(), "missing handoff_ms.{k}");
        }
        let e = &v["expectations"][0];
        for k in ["label", "metric", "expected", "actual", "ok"] {
            assert!(e.get(k).is_some(), "missing expectation field {k}");
        }
        assert_eq!(e["actual"], serde_json::json!(0));
        assert_eq!(e["ok"], serde_json::json!(true));
        // The verdict and liveness additions.
        assert_eq!(a["leaked_regrants"], 6);
        assert_eq!(a["leaked_regrants_runs"], 3);
        assert_eq!(a["failed_releases"], 40);
        assert_eq!(a["first_leaked_regrants"][0]["kind"], "leaked_regrant");
        assert_eq!(a["first_leaked_regrants"][0]["seed"], 3);
        for k in ["p50", "p90", "p99", "max"] {
            assert!(a["wait_ms"][k].is_number(), "missing wait_ms.{k}");
        }
        assert!(a["wait_cdf_ms"].as_array().is_some_and(|c| !c.is_empty()));
        assert!(a["outage_ms"].is_number() && a["outage_ms_max"].is_number());
        for k in ["mean", "min", "max"] {
            assert!(a["fairness"][k].is_number(), "missing fairness.{k}");
        }
        // Extras.
        for k in ["refused_attempts_per_s", "panicked_seeds", "limitations"] {
            assert!(a.get(k).is_some(), "missing extra {k}");
        }
        assert!(a["stale_unfenced"]["ci95"].is_array());
    }

    #[test]
    fn values_and_nulls() {
        let v: Value = serde_json::from_str(&sample().to_pretty_string()).unwrap();
        let redis = &v["algorithms"][0];
        assert_eq!(
            redis["params"],
            serde_json::json!({"hold": {"uniform": [5, 50.5]}, "replicas": 1, "ttl_ms": 30000})
        );
        // Seeds 3, 10 and 17 fail.
        assert_eq!(redis["failing_seeds"], serde_json::json!([3, 10, 17]));
        assert_eq!(redis["overlap"]["runs"], 3);
        assert_eq!(redis["overlap"]["events"], 6);
        assert_eq!(redis["overlap"]["rate"], serde_json::json!(0.15));
        assert_eq!(redis["lost_updates"], 9);
        assert_eq!(redis["replay"], "sim run scenarios/failover.toml --algorithm redis --seed 3 --trace");
        assert!(redis["overlap"].get("rules_out").is_none());
        assert_eq!(redis["token_regressions"], 0);
        assert_eq!(redis["first_violations"][0]["at_ms"], serde_json::json!(1500.0));
        assert_eq!(redis["limitations"], serde_json::json!(["not reentrant"]));

        let redlock = &v["algorithms"][1];
        assert!(redlock["stale_fenced"].is_null());
        assert!(redlock["replay"].is_null());
        assert_eq!(redlock["failing_seeds"], serde_json::json!([]));
        assert_eq!(redlock["params"], serde_json::json!({}));
        assert_eq!(redlock["overlap"]["ci95"][0], serde_json::json!(0.0));
        assert!(redlock["overlap"]["rules_out"].as_f64().unwrap() > 0.1);
        assert_eq!(redlock["panicked_runs"], 1);
        assert_eq!(redlock["panicked_seeds"], serde_json::json!([{"seed": 20, "message": "index out of bounds"}]));
    }

    /// Serialisation is byte-stable: two independently built results write the same bytes, and
    /// so do results read back from those bytes and written again (twice over), so a saved file
    /// rewritten by `sim report` does not drift. The sample has every kind of field set: sorted
    /// params, nulls, rounded rates and intervals, `rules_out`, violations and panics.
    #[test]
    fn byte_stable() {
        let with_text = || {
            let mut json = sample().with_scenario_text("name = \"failover\"\nduration_ms = 60000\n");
            json.description = "A primary fails over.".to_string();
            json
        };
        let first = with_text().to_pretty_string();
        let second = with_text().to_pretty_string();
        assert!(first == second, "two builds of the same results serialise differently");
        let mut text = first.clone();
        for round in 1..=2 {
            let back: ResultsJson = serde_json::from_str(&text).expect("results read back");
            let again = back.to_pretty_string();
            if let Some((n, (a, b))) = first.lines().zip(again.lines()).enumerate().find(|(_, (a, b))| a != b) {
                panic!(
                    "written, read back and written again (round {round}) differs at line {}: {a:?} became {b:?}",
                    n + 1
                );
            }
            assert!(again == first, "round {round}: the rewritten results differ in length or trailing bytes");
            text = again;
        }
        assert!(first.ends_with("}\n") && !first.ends_with("\n\n"), "one trailing newline");
    }

    #[test]
    fn empty_row_reports_nulls_not_zeros() {
        let t = AlgorithmTotals::new("db", "db", serde_json::json!({}), true);
        let v = serde_json::to_value(AlgorithmJson::from_totals(&t, "x.toml")).unwrap();
        for k in [
            "throughput_per_s",
            "acquire_latency_ms",
            "handoff_ms",
            "unavailable_ms",
            "messages_per_acquisition",
            "notifications_per_release",
        ] {
            assert!(v[k].is_null(), "{k} should be null");
        }
        assert!(v["overlap"]["rate"].is_null() && v["overlap"]["ci95"].is_null());
    }

    /// A row saved before the verdict and liveness fields existed reads with them `null` (not
    /// measured), never 0, and writes them back as `null`.
    #[test]
    fn a_row_without_the_later_fields_reads_them_as_not_measured() {
        let mut v: Value = serde_json::from_str(&sample().to_pretty_string()).unwrap();
        let later = [
            "seeds_finished",
            "leaked_regrants",
            "leaked_regrants_runs",
            "failed_releases",
            "wait_ms",
            "wait_cdf_ms",
            "outage_ms",
            "outage_ms_max",
            "fairness",
            "first_leaked_regrants",
        ];
        for a in v["algorithms"].as_array_mut().unwrap() {
            for k in later {
                assert!(a.as_object_mut().unwrap().remove(k).is_some(), "{k} was written");
            }
        }
        assert!(v.as_object_mut().unwrap().remove("interrupted").is_some(), "interrupted was written");
        let old: ResultsJson = serde_json::from_value(v).expect("an older row still reads");
        assert!(!old.interrupted && old.algorithms[0].seeds_finished.is_none());
        let row = &old.algorithms[0];
        assert_eq!((row.leaked_regrants, row.failed_releases), (None, None));
        assert!(row.wait_ms.is_none() && row.wait_cdf_ms.is_empty() && row.fairness.is_none());
        assert!(row.outage_ms.is_none() && row.outage_ms_max.is_none());
        let again: Value = serde_json::from_str(&old.to_pretty_string()).unwrap();
        assert!(again["algorithms"][0]["leaked_regrants"].is_null());
    }

    /// An interrupted run says so at the top and gives each row's finished seeds, a row that
    /// never started included (0); a whole run writes `"interrupted": false`.
    #[test]
    fn an_interrupted_run_says_so_with_each_rows_finished_seeds() {
        let whole: Value = serde_json::from_str(&sample().to_pretty_string()).unwrap();
        assert_eq!(whole["interrupted"], false);
        assert_eq!(whole["algorithms"][0]["seeds_finished"], 20);
        assert_eq!(whole["algorithms"][1]["seeds_finished"], 21, "a panicked seed finished too");
        let mut cut = sample();
        cut.algorithms.push(AlgorithmJson::from_totals(
            &AlgorithmTotals::new("zookeeper", "zookeeper", serde_json::json!({}), true),
            "x.toml",
        ));
        let cut = cut.with_interrupted(true);
        let v: Value = serde_json::from_str(&cut.to_pretty_string()).unwrap();
        assert_eq!(v["interrupted"], true);
        assert_eq!(v["algorithms"][2]["seeds_finished"], 0);
    }

    #[test]
    fn replay_quotes_odd_paths() {
        assert_eq!(replay_command("a b.toml", "redis", 4), "sim run 'a b.toml' --algorithm redis --seed 4 --trace");
        assert_eq!(replay_command("it's.toml", "x", 0), r"sim run 'it'\''s.toml' --algorithm x --seed 0 --trace");
    }

    #[test]
    fn saved_results_read_back_to_the_same_bytes() {
        let json = sample().with_scenario_text("name = \"failover\"\n");
        let text = json.to_pretty_string();
        let back: ResultsJson = serde_json::from_str(&text).expect("results read back");
        assert_eq!(back.to_pretty_string(), text);
        assert_eq!(back.scenario_text.as_deref(), Some("name = \"failover\"\n"));
        assert!(back.algorithms[1].stale_fenced.is_none(), "cannot be fenced stays null");
    }

    #[test]
    fn latency_cdf_rises_to_one_in_latency_order() {
        let json = sample();
        let cdf = &json.algorithms[0].acquire_latency_cdf_ms;
        assert!(cdf.len() > 1, "{cdf:?}");
        assert!(cdf.windows(2).all(|w| w[0][0] < w[1][0] && w[0][1] < w[1][1]), "{cdf:?}");
        assert_eq!(cdf.last().unwrap()[1], 1.0);
        let max = json.algorithms[0].acquire_latency_ms.unwrap().max;
        assert_eq!(cdf.last().unwrap()[0], max, "the 100% point is the maximum");
    }
}
