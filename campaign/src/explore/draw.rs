//! One seed's extra fault schedule, as swarm testing draws it: the seed enables a random
//! non-empty subset of the allowed fault kinds, then draws how many faults (1 to `max_faults`)
//! and, for each, a kind among those enabled, a target among the selectors, a start within the
//! run, a length up to `max_duration_ms` and the kind's own value. Every number is drawn from the
//! seed's own stream ("explore", "schedule"), never from the run's streams, and written into the
//! scenario as a constant, so the file a failure is saved as replays exactly.

use locksim_simulator::rng::stream;
use locksim_simulator::scenario::ExploreSpec;
use rand::Rng;
use toml_edit::{value, ArrayOfTables, DocumentMut, Item, Table};

/// One drawn fault, ready to be written as a `[[faults]]` block.
#[derive(Clone, Debug)]
pub struct DrawnFault {
    /// The fault kind.
    pub kind: &'static str,
    /// The target selector, as written.
    pub target: String,
    /// Start, ms of true time.
    pub at_ms: i64,
    /// Length, ms; `None` for a clock jump (a step is not undone).
    pub duration_ms: Option<i64>,
    /// The kind's own key and value, as TOML text (`by_ms = -12000`, `mode = "machine"`).
    pub own: Option<(&'static str, toml_edit::Value)>,
}

/// The extra schedule of `seed` within `spec`, for a run of `duration_ms`, sorted by start.
pub fn schedule(seed: u64, spec: &ExploreSpec, duration_ms: f64) -> Vec<DrawnFault> {
    let mut rng = stream(seed, "explore", "schedule");
    let mut enabled: Vec<&'static str> = spec.kinds.iter().copied().filter(|_| rng.gen_bool(0.5)).collect();
    if enabled.is_empty() {
        enabled.push(spec.kinds[rng.gen_range(0..spec.kinds.len())]);
    }
    let count = rng.gen_range(1..=spec.max_faults.max(1));
    let end_ms = (duration_ms as i64).max(1);
    let longest_ms = (spec.max_duration_ms as i64).max(1);
    let mut faults: Vec<DrawnFault> = (0..count)
        .map(|_| {
            let kind = enabled[rng.gen_range(0..enabled.len())];
            let target = spec.targets[rng.gen_range(0..spec.targets.len())].to_string();
            let at_ms = rng.gen_range(0..end_ms);
            let length = rng.gen_range(1..=longest_ms);
            let jump = spec.max_jump_ms as i64;
            let ppm = spec.max_drift_ppm as i64;
            let (duration_ms, own) = match kind {
                "crash" => {
                    let mode = if rng.gen_bool(0.5) { "process" } else { "machine" };
                    (Some(length), Some(("mode", mode.into())))
                }
                "clock_jump" => (None, Some(("by_ms", rng.gen_range(-jump..=jump).into()))),
                "clock_drift" => (Some(length), Some(("ppm", rng.gen_range(-ppm..=ppm).into()))),
                "slow" => {
                    let latency = rng.gen_range(0..=spec.max_latency_ms as i64);
                    (Some(length), Some(("latency_ms", latency.into())))
                }
                "loss" => {
                    let rate = (rng.gen_range(0.0..=spec.max_loss) * 100.0).round() / 100.0;
                    (Some(length), Some(("rate", rate.into())))
                }
                _ => (Some(length), None),
            };
            DrawnFault { kind, target, at_ms, duration_ms, own }
        })
        .collect();
    faults.sort_by_key(|f| f.at_ms);
    faults
}

/// `doc` with `faults` appended to its `[[faults]]` (created if absent), the first preceded by a
/// comment naming the seed.
pub fn append(doc: &mut DocumentMut, faults: &[DrawnFault], seed: u64) {
    if doc.get("faults").is_none() {
        doc.insert("faults", Item::ArrayOfTables(ArrayOfTables::new()));
    }
    for (i, f) in faults.iter().enumerate() {
        let mut t = Table::new();
        t.insert("kind", value(f.kind));
        t.insert("target", value(f.target.as_str()));
        t.insert("at_ms", value(f.at_ms));
        if let Some(d) = f.duration_ms {
            t.insert("duration_ms", value(d));
        }
        if let Some((k, v)) = &f.own {
            t.insert(k, Item::Value(v.clone()));
        }
        if i == 0 {
            t.decor_mut().set_prefix(format!("\n# drawn by `sim explore` for seed {seed}\n"));
        }
        match doc.get_mut("faults") {
            Some(Item::ArrayOfTables(a)) => a.push(t),
            Some(Item::Value(toml_edit::Value::Array(a))) => {
                a.push(toml_edit::Value::InlineTable(t.into_inline_table()))
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::scenario::Selector;
    use std::collections::BTreeSet;

    #[test]
    fn schedules_stay_within_bounds_repeat_and_vary_their_kinds() {
        let spec = ExploreSpec {
            kinds: vec!["clock_jump", "pause", "loss"],
            max_faults: 4,
            max_duration_ms: 500.0,
            targets: vec![Selector::Holder, Selector::RandomServer],
            max_jump_ms: 100.0,
            max_loss: 0.2,
            ..ExploreSpec::defaults(10_000.0)
        };
        let mut kind_sets = BTreeSet::new();
        for seed in 0..300 {
            let s = schedule(seed, &spec, 10_000.0);
            assert_eq!(format!("{s:?}"), format!("{:?}", schedule(seed, &spec, 10_000.0)), "seed {seed} repeats");
            assert!((1..=4).contains(&s.len()), "seed {seed}: {} faults", s.len());
            assert!(s.windows(2).all(|w| w[0].at_ms <= w[1].at_ms), "sorted by start");
            for f in &s {
                assert!(spec.kinds.contains(&f.kind));
                assert!(f.target == "holder" || f.target == "random-server", "{}", f.target);
                assert!((0..10_000).contains(&f.at_ms));
                match f.kind {
                    "clock_jump" => {
                        assert_eq!(f.duration_ms, None);
                        let by = f.own.as_ref().and_then(|(_, v)| v.as_integer()).unwrap();
                        assert!((-100..=100).contains(&by), "{by}");
                    }
                    "loss" => {
                        let rate = f.own.as_ref().and_then(|(_, v)| v.as_float()).unwrap();
                        assert!((0.0..=0.2).contains(&rate), "{rate}");
                    }
                    _ => assert!(f.own.is_none()),
                }
                if let Some(d) = f.duration_ms {
                    assert!((1..=500).contains(&d), "{d}");
                }
            }
            kind_sets.insert(s.iter().map(|f| f.kind).collect::<BTreeSet<_>>());
        }
        // Swarm testing: some seeds use one kind only, others mix them.
        assert!(kind_sets.iter().any(|k| k.len() == 1) && kind_sets.iter().any(|k| k.len() > 1), "{kind_sets:?}");
    }
}
