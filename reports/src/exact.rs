//! A results row's folded state ([`AlgorithmTotals`]) in its exact JSON form, for the files that
//! carry unfinished work between processes: a shard's partial results ([`crate::shard`]) and a
//! sweep's record of finished points ([`crate::sweep::progress`]). `AlgorithmTotals` implements
//! `Serialize` and `Deserialize` here, in that form; there is no second copy of its fields.
//!
//! Exact means that reading the state back and folding more seeds in, or merging it with other
//! states ([`AlgorithmTotals::absorb`]), gives the same bytes as one process folding every seed:
//! integers are written as integers (`u128` as decimal strings, which JSON readers keep whole),
//! floats as their IEEE-754 bits, and each histogram as hdrhistogram's V2 serialisation in
//! base64, which holds every count. The row's identity (model, library, parameters, fencing,
//! limitations) is not stored: a state read back has only its label, and is folded into a row
//! rebuilt from the scenario text ([`AlgorithmTotals::absorb_state`]), so nothing is parsed back
//! from a rounded decimal.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2Serializer};
use hdrhistogram::Histogram;
use locksim_simulator::checker::metrics::new_histogram;
use locksim_simulator::checker::Violation;
use serde::de::Error as _;
use serde::ser::SerializeStruct as _;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::aggregate::{AlgorithmTotals, ClassCount, FailingSeed};

/// The violation kinds the checkers report (and `leaked_regrant`); a state naming another kind
/// comes from a different build and is refused.
const KINDS: &[&str] = &[
    "overlap",
    "stale_unfenced",
    "stale_fenced",
    "lost_update",
    "token_regression",
    "leaked_regrant",
    "double_execution",
];

/// A violation class: `[runs, events]`.
type ClassState = [u64; 2];

/// A seed kept in a row's list of failing (or leaked, or panicked) seeds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedNote {
    /// The seed.
    pub seed: u64,
    /// Its first violation's true time, ns (absent when the checkers kept no detail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ns: Option<u64>,
    /// Its first violation's kind, or `panic` for a panicked seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The violation's detail, or the panic's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

fn class(c: ClassCount) -> ClassState {
    [c.runs, c.events]
}

fn histogram_text(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2Serializer::new().serialize(h, &mut bytes).expect("a histogram serialises into memory");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn histogram(text: &str, what: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("histogram `{what}`: not base64: {e}"))?;
    let read: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram `{what}`: not an hdrhistogram V2 serialisation: {e:?}"))?;
    // Into a histogram with the bounds every seed uses, so later merges take the same path.
    let mut h = new_histogram();
    h.add(&read).map_err(|e| format!("histogram `{what}`: outside the simulator's bounds: {e:?}"))?;
    Ok(h)
}

fn note(f: &FailingSeed) -> SeedNote {
    match &f.first_violation {
        Some(v) => SeedNote {
            seed: f.seed,
            at_ns: Some(v.at_ns),
            kind: Some(v.kind.to_string()),
            detail: Some(v.detail.clone()),
        },
        None => SeedNote { seed: f.seed, at_ns: None, kind: None, detail: None },
    }
}

fn unnote(n: &SeedNote) -> Result<FailingSeed, String> {
    let first_violation = match (&n.kind, n.at_ns) {
        (Some(kind), Some(at_ns)) => {
            let kind = KINDS.iter().find(|k| *k == kind).ok_or_else(|| {
                format!("seed {}: unknown violation kind {kind:?}; this build knows {}", n.seed, KINDS.join(", "))
            })?;
            Some(Violation { at_ns, kind, detail: n.detail.clone().unwrap_or_default() })
        }
        _ => None,
    };
    Ok(FailingSeed { seed: n.seed, first_violation })
}

/// The six violation classes in the order of the state's `classes` (overlap, stale unfenced,
/// stale fenced, lost updates, token regressions, leaked re-grants).
fn classes_mut(t: &mut AlgorithmTotals) -> [&mut ClassCount; 6] {
    [
        &mut t.overlap,
        &mut t.stale_unfenced,
        &mut t.stale_fenced,
        &mut t.lost_updates,
        &mut t.token_regressions,
        &mut t.leaked_regrants,
    ]
}

impl Serialize for AlgorithmTotals {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let classes = [
            self.overlap,
            self.stale_unfenced,
            self.stale_fenced,
            self.lost_updates,
            self.token_regressions,
            self.leaked_regrants,
        ]
        .map(class);
        let panicked: Vec<SeedNote> = self
            .panicked
            .iter()
            .map(|(seed, message)| SeedNote {
                seed: *seed,
                at_ns: None,
                kind: Some("panic".into()),
                detail: Some(message.clone()),
            })
            .collect();
        let mut st = s.serialize_struct("AlgorithmTotals", 27)?;
        st.serialize_field("label", &self.label)?;
        st.serialize_field("runs", &self.runs)?;
        st.serialize_field("failing_runs", &self.failing_runs)?;
        st.serialize_field("duration_ns", &self.duration_ns.to_string())?;
        st.serialize_field("classes", &classes)?;
        st.serialize_field("acquisitions", &self.acquisitions)?;
        st.serialize_field("failed_acquisitions", &self.failed_acquisitions)?;
        st.serialize_field("completed_sections", &self.completed_sections)?;
        st.serialize_field("releases", &self.releases)?;
        st.serialize_field("failed_releases", &self.failed_releases)?;
        st.serialize_field("messages", &self.messages)?;
        st.serialize_field("notifications", &self.notifications)?;
        st.serialize_field("refused_attempts", &self.refused_attempts)?;
        st.serialize_field("unavailable_ns", &self.unavailable_ns.to_string())?;
        st.serialize_field("outage_ns_sum", &self.outage_ns_sum.to_string())?;
        st.serialize_field("outage_ns_max", &self.outage_ns_max)?;
        st.serialize_field("fairness_sum_units", &self.fairness_sum_units.to_string())?;
        st.serialize_field("fairness_runs", &self.fairness_runs)?;
        st.serialize_field("fairness_range_bits", &self.fairness_range.map(|(lo, hi)| [lo.to_bits(), hi.to_bits()]))?;
        st.serialize_field("acquire_latency_us", &histogram_text(&self.acquire_latency_us))?;
        st.serialize_field("wait_us", &histogram_text(&self.wait_us))?;
        st.serialize_field("handoff_us", &histogram_text(&self.handoff_us))?;
        st.serialize_field("failing_seeds", &self.failing_seeds.iter().map(note).collect::<Vec<_>>())?;
        st.serialize_field("leaked_seeds", &self.leaked_seeds.iter().map(note).collect::<Vec<_>>())?;
        st.serialize_field("panicked_runs", &self.panicked_runs)?;
        st.serialize_field("panicked", &panicked)?;
        // Only a scheduled workload has it (a loop's state is as it was before the field).
        if self.scheduled {
            st.serialize_field("double_executions", &class(self.double_executions))?;
        }
        st.end()
    }
}

/// The fields of a state being read back, each read by name; an error names the field.
struct Fields(Map<String, Value>);

impl Fields {
    fn get(&self, key: &str) -> Result<&Value, String> {
        self.0.get(key).ok_or_else(|| format!("missing field `{key}`"))
    }
    fn u64(&self, key: &str) -> Result<u64, String> {
        self.get(key)?.as_u64().ok_or_else(|| format!("`{key}`: expected a whole number"))
    }
    fn text(&self, key: &str) -> Result<&str, String> {
        self.get(key)?.as_str().ok_or_else(|| format!("`{key}`: expected a string"))
    }
    /// A `u128` written as a decimal string.
    fn decimal(&self, key: &str) -> Result<u128, String> {
        let text = self.text(key)?;
        text.parse().map_err(|_| format!("`{key}`: expected a whole number as a string, found {text:?}"))
    }
    fn typed<T: for<'de> Deserialize<'de>>(&self, key: &str) -> Result<T, String> {
        T::deserialize(self.get(key)?).map_err(|e| format!("`{key}`: {e}"))
    }
    /// Absent or null reads as `None`.
    fn optional<T: for<'de> Deserialize<'de>>(&self, key: &str) -> Result<Option<T>, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.typed(key).map(Some),
        }
    }
    fn histogram(&self, key: &str) -> Result<Histogram<u64>, String> {
        histogram(self.text(key)?, key)
    }
    fn seeds(&self, key: &str) -> Result<Vec<FailingSeed>, String> {
        self.typed::<Vec<SeedNote>>(key)?.iter().map(unnote).collect()
    }

    /// The totals these fields hold, with no identity but the label.
    fn totals(&self) -> Result<AlgorithmTotals, String> {
        let mut t = AlgorithmTotals::new(self.text("label")?, "", Value::Null, false);
        t.runs = self.u64("runs")?;
        t.failing_runs = self.u64("failing_runs")?;
        t.duration_ns = self.decimal("duration_ns")?;
        let classes: [ClassState; 6] = self.typed("classes")?;
        for (mine, [runs, events]) in classes_mut(&mut t).into_iter().zip(classes) {
            *mine = ClassCount { runs, events };
        }
        t.acquisitions = self.u64("acquisitions")?;
        t.failed_acquisitions = self.u64("failed_acquisitions")?;
        t.completed_sections = self.u64("completed_sections")?;
        t.releases = self.u64("releases")?;
        t.failed_releases = self.u64("failed_releases")?;
        t.messages = self.u64("messages")?;
        t.notifications = self.u64("notifications")?;
        t.refused_attempts = self.u64("refused_attempts")?;
        t.unavailable_ns = self.decimal("unavailable_ns")?;
        t.outage_ns_sum = self.decimal("outage_ns_sum")?;
        t.outage_ns_max = self.u64("outage_ns_max")?;
        t.fairness_sum_units = self.decimal("fairness_sum_units")?;
        t.fairness_runs = self.u64("fairness_runs")?;
        t.fairness_range =
            self.optional::<[u64; 2]>("fairness_range_bits")?.map(|[lo, hi]| (f64::from_bits(lo), f64::from_bits(hi)));
        t.acquire_latency_us = self.histogram("acquire_latency_us")?;
        t.wait_us = self.histogram("wait_us")?;
        t.handoff_us = self.histogram("handoff_us")?;
        t.failing_seeds = self.seeds("failing_seeds")?;
        t.leaked_seeds = self.seeds("leaked_seeds")?;
        t.panicked_runs = self.u64("panicked_runs")?;
        t.panicked = self
            .typed::<Vec<SeedNote>>("panicked")?
            .into_iter()
            .map(|n| (n.seed, n.detail.unwrap_or_default()))
            .collect();
        // Absent for the loop (and in states written before the field): none.
        if let Some([runs, events]) = self.optional::<ClassState>("double_executions")? {
            t.scheduled = true;
            t.double_executions = ClassCount { runs, events };
        }
        Ok(t)
    }
}

/// Reads a state back: every count, histogram and seed, checked (a bad number or histogram, an
/// unknown violation kind is refused naming the field); the identity but the label is left
/// empty ([`AlgorithmTotals::absorb_state`] folds it into a row that has one).
impl<'de> Deserialize<'de> for AlgorithmTotals {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Fields(Map::deserialize(d)?).totals().map_err(D::Error::custom)
    }
}

impl AlgorithmTotals {
    /// Folds `state` (a state read back, holding the seeds after this row's) into this row, as
    /// [`AlgorithmTotals::absorb`] does, after checking it is this row's.
    pub fn absorb_state(&mut self, state: &AlgorithmTotals) -> Result<(), String> {
        if state.label != self.label {
            return Err(format!("holds row `{}` where the scenario has `{}`", state.label, self.label));
        }
        self.absorb(state);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::tests::{clean, failing};
    use crate::json::AlgorithmJson;

    fn row() -> AlgorithmTotals {
        AlgorithmTotals::new("redis", "redis", serde_json::json!({"ttl_ms": 1000}), true)
    }

    /// Every field the results JSON shows, and every folded field, as one string.
    fn everything(t: &AlgorithmTotals) -> String {
        let json = serde_json::to_string(&AlgorithmJson::from_totals(t, "f.toml")).unwrap();
        format!("{json}\n{}", serde_json::to_string(t).unwrap())
    }

    fn seed(s: u64) -> locksim_simulator::checker::SeedMetrics {
        let mut m = if s % 3 == 1 { failing(s, true) } else { clean(s, true) };
        // Fairness values whose float sum depends on the order they are added in.
        m.fairness = Some(0.1 + (s as f64) * 0.013_7);
        m.outage_ns += s * 1_000_003;
        m
    }

    /// Folding seeds 0..40 in one row equals folding any split of them into consecutive parts,
    /// writing each part's state to JSON, reading it back and absorbing the parts in order.
    #[test]
    fn split_fold_serialise_merge_equals_one_fold() {
        let mut whole = row();
        for s in 0..40 {
            whole.add(&seed(s));
        }
        for cuts in [vec![0, 40], vec![0, 20, 40], vec![0, 1, 13, 14, 39, 40], vec![0, 0, 40, 40]] {
            let mut merged = row();
            for w in cuts.windows(2) {
                let mut part = row();
                for s in w[0]..w[1] {
                    part.add(&seed(s));
                }
                let text = serde_json::to_string(&part).unwrap();
                let back: AlgorithmTotals = serde_json::from_str(&text).unwrap();
                merged.absorb_state(&back).unwrap();
            }
            assert_eq!(everything(&merged), everything(&whole), "cuts {cuts:?}");
        }
        // The capped list kept the first failing seeds across part boundaries.
        assert_eq!(whole.failing_seeds.len(), crate::MAX_FAILING_SEEDS);
        assert_eq!(whole.failing_seeds[0].seed, 1);
    }

    /// `double_executions` exists only for a scheduled workload: in the JSON, the table and the
    /// exact state, and it folds, serialises and merges like the other classes.
    #[test]
    fn double_executions_show_only_for_a_scheduled_workload_and_merge_exactly() {
        let scheduled = |s: u64| {
            let mut m = seed(s);
            m.double_executions = Some(s % 2);
            m
        };
        let mut whole = row();
        for s in 0..10 {
            whole.add(&scheduled(s));
        }
        assert!(whole.scheduled);
        assert_eq!(whole.double_executions, ClassCount { runs: 5, events: 5 });
        let mut merged = row();
        for part in [0..4, 4..10] {
            let mut t = row();
            part.for_each(|s| t.add(&scheduled(s)));
            let state: AlgorithmTotals = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
            merged.absorb_state(&state).unwrap();
        }
        assert_eq!(everything(&merged), everything(&whole));
        let json = serde_json::to_value(AlgorithmJson::from_totals(&whole, "f.toml")).unwrap();
        assert_eq!(json["double_executions"]["runs"], 5);
        let table = crate::table::render_table("f.toml", std::slice::from_ref(&whole), &[]);
        assert!(table.contains("executions"), "{table}");
        // The loop: no field, no column, no state.
        let mut looped = row();
        looped.add(&seed(1));
        let json = serde_json::to_value(AlgorithmJson::from_totals(&looped, "f.toml")).unwrap();
        assert!(json.get("double_executions").is_none(), "{json}");
        assert!(!serde_json::to_string(&looped).unwrap().contains("double"));
        let table = crate::table::render_table("f.toml", std::slice::from_ref(&looped), &[]);
        assert!(!table.contains("executions"), "{table}");
    }

    #[test]
    fn a_foreign_state_is_refused_naming_what() {
        let mut t = row();
        t.add(&failing(0, true));
        let text = serde_json::to_string(&t).unwrap();
        let state: AlgorithmTotals = serde_json::from_str(&text).unwrap();
        let mut other = AlgorithmTotals::new("db", "db", Value::Null, true);
        assert!(other.absorb_state(&state).unwrap_err().contains("`redis`"));
        let read = |edit: &dyn Fn(&mut Value)| {
            let mut v: Value = serde_json::from_str(&text).unwrap();
            edit(&mut v);
            serde_json::from_value::<AlgorithmTotals>(v).unwrap_err().to_string()
        };
        assert!(read(&|v| v["failing_seeds"][0]["kind"] = "martian".into()).contains("martian"));
        assert!(read(&|v| v["wait_us"] = "!!".into()).contains("wait_us"));
        assert!(read(&|v| v["duration_ns"] = "1.5".into()).contains("duration_ns"));
        assert!(read(&|v| drop(v.as_object_mut().unwrap().remove("runs"))).contains("missing field `runs`"));
    }

    /// The exact form keeps the field names and order the shard and progress files have always
    /// had (a state written by an earlier build reads back, and a new one is byte for byte what
    /// it wrote): the label, the counts, `classes` as six `[runs, events]`, decimal strings for
    /// the `u128` sums, the fairness range as bits, the histograms, the seeds, and
    /// `double_executions` last and only for a scheduled workload.
    #[test]
    fn the_exact_form_keeps_its_field_names_and_order() {
        let mut t = row();
        t.add(&failing(3, true));
        let v = serde_json::to_value(&t).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let text = serde_json::to_string(&t).unwrap();
        let mut at = 0;
        for key in [
            "label",
            "runs",
            "failing_runs",
            "duration_ns",
            "classes",
            "acquisitions",
            "failed_acquisitions",
            "completed_sections",
            "releases",
            "failed_releases",
            "messages",
            "notifications",
            "refused_attempts",
            "unavailable_ns",
            "outage_ns_sum",
            "outage_ns_max",
            "fairness_sum_units",
            "fairness_runs",
            "fairness_range_bits",
            "acquire_latency_us",
            "wait_us",
            "handoff_us",
            "failing_seeds",
            "leaked_seeds",
            "panicked_runs",
            "panicked",
        ] {
            assert!(keys.contains(&key), "{key} in {keys:?}");
            let found = text[at..].find(&format!("\"{key}\":")).unwrap_or_else(|| panic!("{key} after {at}: {text}"));
            at += found;
        }
        assert_eq!(keys.len(), 26, "{keys:?}");
        assert!(v["duration_ns"].is_string() && v["classes"].as_array().unwrap().len() == 6, "{v}");
        assert_eq!(v["failing_seeds"][0]["kind"], "overlap", "{v}");
    }
}
