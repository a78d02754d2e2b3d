//! Judging a scenario's `[expect]` block against the folded totals.
//!
//! Two kinds of metric:
//!
//! - **Run-counting** (`overlap`, `stale_unfenced`, `stale_fenced`, `lost_updates`,
//!   `token_regressions`, `leaked_regrants`): `none` holds when no run showed it, `some` when at least one did, `all`
//!   when every run did (`actual` is then the number of runs that showed it), and a comparison
//!   such as `"< 0.05"` compares the *fraction* of runs that showed it (`actual` is the fraction).
//! - **Values** (`throughput_per_s`, `acquisitions`, `failed_acquisitions` and `failed_releases`
//!   as totals, `acquire_latency_ms_p50/p99/max`, `wait_ms_p50/p99/max`, `handoff_ms_p50/p99`,
//!   `unavailable_ms`, `outage_ms` (mean), `outage_ms_max`, `fairness` (mean),
//!   `messages_per_acquisition`, `notifications_per_release`, `refused_attempts_per_s`): the value
//!   exactly as the results JSON reports it (same rounding); `none` holds when it is 0, `some`
//!   when it is above 0, and a comparison compares it.
//!
//! An expectation never passes on missing evidence; these fail, with the reason in `message`:
//!
//! - `stale_fenced` on a model without a fencing token, whatever is expected, even `"none"`: the
//!   measurement does not exist ("cannot be fenced"), and a passing assertion would read as
//!   "fencing protected this model". `actual` is the string `"cannot be fenced"`.
//! - any expectation on a row with no completed run, or a label that names no row;
//! - a value with no data (latency with no acquisition, handoff with none recorded, a ratio with
//!   a zero denominator): `actual` is `null`;
//! - `all` on a value metric (it is defined for run-counting metrics only).

use locksim_simulator::metric::Metric;
use locksim_simulator::scenario::{CompareOp, ExpectOp, Expectation};
use serde::{Deserialize, Serialize};

use crate::aggregate::{AlgorithmTotals, ClassCount};
use crate::num::{fmt_num, fmt_pct, round_sig, RATE_SIG};

/// The observed side of an expectation, as the JSON shows it: a count, a number, a reason in
/// words, or `null` when there is nothing to show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Actual {
    /// A count: runs that showed a violation class, or (failed) acquisitions.
    Count(u64),
    /// A measured value: a fraction of runs, or the metric's value (a latency, a rate, …).
    Number(f64),
    /// Why there is no number (`cannot be fenced`).
    Text(String),
    /// Nothing to show (`null`): no such row, no completed run, or no data.
    Missing,
}

/// One evaluated expectation: the JSON's `{label, metric, expected, actual, ok}` plus `message`,
/// the line printed for it (`redis: overlap expected "none", actual 37 of 1000 runs (3.7%)`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpectationResult {
    /// The row the expectation is about (an algorithm or variant label).
    pub label: String,
    /// The metric's name, as the scenario's `[expect]` block writes it.
    pub metric: String,
    /// As written in the scenario.
    pub expected: String,
    /// What the runs showed.
    pub actual: Actual,
    /// Whether the expectation held.
    pub ok: bool,
    /// The line printed for it.
    pub message: String,
    /// Why it was not judged, when the run had fewer seeds than the scenario file asks for and
    /// those seeds cannot decide it ([`evaluate_at_fewer_seeds`]); `ok` is then true (nothing
    /// failed). Absent from the JSON when judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_judged: Option<String>,
}

/// Evaluates every expectation, in order, against the row with its label.
pub fn evaluate(expectations: &[Expectation], totals: &[AlgorithmTotals]) -> Vec<ExpectationResult> {
    expectations.iter().map(|e| evaluate_one(e, totals.iter().find(|t| t.label == e.label))).collect()
}

/// Evaluates one expectation against its row (`None`: no row has that label).
pub fn evaluate_one(e: &Expectation, totals: Option<&AlgorithmTotals>) -> ExpectationResult {
    let head = format!("{}: {} expected \"{}\"", e.label, e.metric.name(), e.expected);
    let result = |actual: Actual, ok: bool, message: String| ExpectationResult {
        label: e.label.clone(),
        metric: e.metric.name().to_string(),
        expected: e.expected.clone(),
        actual,
        ok,
        message,
        not_judged: None,
    };
    let fail = |actual: Actual, why: &str| result(actual, false, format!("{head}, actual: {why}"));

    let Some(t) = totals else {
        return fail(Actual::Missing, "no algorithm or variant has this label");
    };
    if t.runs == 0 {
        return fail(Actual::Missing, "no completed runs");
    }

    if let Some(class) = run_class(t, e.metric) {
        let Some(c) = class else {
            return fail(
                Actual::Text("cannot be fenced".to_string()),
                "cannot be fenced (the model's grants carry no fencing token)",
            );
        };
        let n = t.runs;
        let fraction = c.runs as f64 / n as f64;
        let (ok, actual) = match &e.op {
            ExpectOp::None => (c.runs == 0, Actual::Count(c.runs)),
            ExpectOp::Some => (c.runs > 0, Actual::Count(c.runs)),
            ExpectOp::All => (c.runs == n, Actual::Count(c.runs)),
            ExpectOp::Compare { op, value } => {
                (op.holds(fraction, *value), Actual::Number(round_sig(fraction, RATE_SIG)))
            }
            ExpectOp::Both { first, second } => (
                first.0.holds(fraction, first.1) && second.0.holds(fraction, second.1),
                Actual::Number(round_sig(fraction, RATE_SIG)),
            ),
        };
        let msg = format!("{head}, actual {} of {n} runs ({})", c.runs, fmt_pct(fraction));
        return result(actual, ok, msg);
    }

    let Some(value) = value_metric(t, e.metric) else {
        return fail(Actual::Missing, "no data");
    };
    let actual = match e.metric {
        Metric::Acquisitions | Metric::FailedAcquisitions | Metric::FailedReleases => Actual::Count(value as u64),
        _ => Actual::Number(value),
    };
    let ok = match &e.op {
        ExpectOp::None => value == 0.0,
        ExpectOp::Some => value > 0.0,
        ExpectOp::All => {
            return fail(actual, "\"all\" applies only to run-counting metrics");
        }
        ExpectOp::Compare { op, value: expected } => op.holds(value, *expected),
        ExpectOp::Both { first, second } => first.0.holds(value, first.1) && second.0.holds(value, second.1),
    };
    result(actual, ok, format!("{head}, actual {}", fmt_num(value)))
}

/// [`evaluate`] for a run of fewer seeds per row than the scenario file's `file_seeds`: an
/// expectation is judged only where the seeds run decide it whatever the file's other seeds would
/// show; the rest are marked not judged, with why, and do not fail. With `n` runs of which `k`
/// showed a class, the file's `N` seeds would show it in `k` to `k + N - n` runs, so `none` and
/// `all` are decided when broken, `some` when met, and a share when it holds (or fails) at both
/// ends of that range. A value metric (a latency, a mean, a total) over `n` seeds does not
/// decide its value over `N`: never judged here. A row with as many runs as the file's seeds, or
/// more, is judged as usual.
pub fn evaluate_at_fewer_seeds(
    expectations: &[Expectation],
    totals: &[AlgorithmTotals],
    file_seeds: u64,
) -> Vec<ExpectationResult> {
    expectations
        .iter()
        .map(|e| {
            let row = totals.iter().find(|t| t.label == e.label);
            let judged = evaluate_one(e, row);
            match row.and_then(|t| undecided(e, t, file_seeds)) {
                Some(why) => ExpectationResult {
                    ok: true,
                    message: format!("{}: {} expected \"{}\": not judged: {why}", e.label, e.metric.name(), e.expected),
                    not_judged: Some(why),
                    ..judged
                },
                None => judged,
            }
        })
        .collect()
}

/// Why `e` cannot be decided on `t`'s runs for a file of `file_seeds` seeds; `None` when it can
/// (or the row ran the file's seeds).
fn undecided(e: &Expectation, t: &AlgorithmTotals, file_seeds: u64) -> Option<String> {
    let n = t.runs;
    if n == 0 || n >= file_seeds {
        return None;
    }
    let at = format!("{n} of the file's {file_seeds} seeds ran");
    let Some(class) = run_class(t, e.metric) else {
        return Some(format!("{at}; a value over {n} seeds does not decide the value over {file_seeds}"));
    };
    // `stale_fenced` on a model without a token fails whatever the seeds: decided.
    let c = class?;
    let (k, rest, total) = (c.runs, file_seeds - n, file_seeds as f64);
    let (lo, hi) = (k as f64 / total, (k + rest) as f64 / total);
    let so_far = format!("{k} of {n} runs so far");
    let decided = match &e.op {
        ExpectOp::None | ExpectOp::Some => k > 0,
        ExpectOp::All => k < n,
        ExpectOp::Compare { op: CompareOp::Eq, .. } => false,
        ExpectOp::Compare { op, value } => op.holds(lo, *value) == op.holds(hi, *value),
        ExpectOp::Both { first, second } => {
            let ends = |(op, v): (CompareOp, f64)| (op.holds(lo, v), op.holds(hi, v));
            let (a, b) = (ends(*first), ends(*second));
            let eq = first.0 == CompareOp::Eq || second.0 == CompareOp::Eq;
            !eq && ((a == (true, true) && b == (true, true)) || a == (false, false) || b == (false, false))
        }
    };
    if decided {
        return None;
    }
    Some(match &e.op {
        ExpectOp::None | ExpectOp::Some => format!("{at}, {so_far}; the other {rest} could still show one"),
        ExpectOp::All => format!("{at}, {so_far}; the other {rest} could still miss it"),
        _ => format!("{at}, {so_far}; over all {file_seeds} the share could be {} to {}", fmt_pct(lo), fmt_pct(hi)),
    })
}

/// `Some(Some(class))` for a run-counting metric, `Some(None)` for `stale_fenced` on an unfenced
/// model, `None` for a value metric.
fn run_class(t: &AlgorithmTotals, metric: Metric) -> Option<Option<ClassCount>> {
    Some(Some(match metric {
        Metric::Overlap => t.overlap,
        Metric::StaleUnfenced => t.stale_unfenced,
        Metric::StaleFenced if !t.fenced => return Some(None),
        Metric::StaleFenced => t.stale_fenced,
        Metric::LostUpdates => t.lost_updates,
        Metric::TokenRegressions => t.token_regressions,
        Metric::LeakedRegrants => t.leaked_regrants,
        // Absent-as-0 for a loop: `double_executions = "none"` holds there.
        Metric::DoubleExecutions => t.double_executions,
        _ => return None,
    }))
}

/// A metric's value as the JSON reports it; `None` for no data. Every metric is here (run-counting
/// ones as the fraction of runs), so a new [`Metric`] does not compile until it is given a value.
pub fn value_metric(t: &AlgorithmTotals, metric: Metric) -> Option<f64> {
    let fraction = |c: ClassCount| (t.runs > 0).then(|| c.runs as f64 / t.runs as f64);
    match metric {
        Metric::Overlap => fraction(t.overlap),
        Metric::StaleUnfenced => fraction(t.stale_unfenced),
        Metric::StaleFenced => t.fenced.then_some(t.stale_fenced).and_then(fraction),
        Metric::LostUpdates => fraction(t.lost_updates),
        Metric::TokenRegressions => fraction(t.token_regressions),
        Metric::LeakedRegrants => fraction(t.leaked_regrants),
        Metric::DoubleExecutions => fraction(t.double_executions),
        Metric::ThroughputPerS => t.throughput_per_s(),
        Metric::Acquisitions => Some(t.acquisitions as f64),
        Metric::FailedAcquisitions => Some(t.failed_acquisitions as f64),
        Metric::FailedReleases => Some(t.failed_releases as f64),
        Metric::AcquireLatencyMsP50 => t.acquire_latency_ms().map(|l| l.p50),
        Metric::AcquireLatencyMsP99 => t.acquire_latency_ms().map(|l| l.p99),
        Metric::AcquireLatencyMsMax => t.acquire_latency_ms().map(|l| l.max),
        Metric::WaitMsP50 => t.wait_ms().map(|w| w.p50),
        Metric::WaitMsP99 => t.wait_ms().map(|w| w.p99),
        Metric::WaitMsMax => t.wait_ms().map(|w| w.max),
        Metric::HandoffMsP50 => t.handoff_ms().map(|h| h.p50),
        Metric::HandoffMsP99 => t.handoff_ms().map(|h| h.p99),
        Metric::UnavailableMs => t.unavailable_ms(),
        Metric::OutageMs => t.outage_ms(),
        Metric::OutageMsMax => t.outage_ms_max(),
        Metric::Fairness => t.fairness().map(|f| f.mean),
        Metric::MessagesPerAcquisition => t.messages_per_acquisition(),
        Metric::NotificationsPerRelease => t.notifications_per_release(),
        Metric::RefusedAttemptsPerS => t.refused_attempts_per_s(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::tests::{clean, failing};

    fn exp(label: &str, metric: &str, expected: &str, op: ExpectOp) -> Expectation {
        Expectation {
            label: label.into(),
            metric: Metric::parse(metric).expect("a metric"),
            expected: expected.into(),
            op,
        }
    }

    fn cmp(op: CompareOp, value: f64) -> ExpectOp {
        ExpectOp::Compare { op, value }
    }

    /// redis: 10 runs, seeds 0..3 fail (30%), fenced. redlock: 10 clean runs, unfenced.
    fn rows() -> Vec<AlgorithmTotals> {
        let mut redis = AlgorithmTotals::new("redis", "redis", serde_json::json!({}), true);
        let mut redlock = AlgorithmTotals::new("redlock", "redlock", serde_json::json!({}), false);
        for seed in 0..10 {
            redis.add(&if seed < 3 { failing(seed, true) } else { clean(seed, true) });
            redlock.add(&clean(seed, false));
        }
        vec![redis, redlock]
    }

    fn check(label: &str, metric: &str, op: ExpectOp) -> ExpectationResult {
        let r = rows();
        evaluate_one(&exp(label, metric, "x", op), r.iter().find(|t| t.label == label))
    }

    #[test]
    fn run_counting_ops() {
        assert!(!check("redis", "overlap", ExpectOp::None).ok);
        assert!(check("redis", "overlap", ExpectOp::Some).ok);
        assert!(!check("redis", "overlap", ExpectOp::All).ok);
        assert!(check("redlock", "overlap", ExpectOp::None).ok);
        assert!(!check("redlock", "overlap", ExpectOp::Some).ok);
        assert!(check("redis", "overlap", cmp(CompareOp::Lt, 0.31)).ok);
        assert!(!check("redis", "overlap", cmp(CompareOp::Lt, 0.3)).ok);
        assert!(check("redis", "overlap", cmp(CompareOp::Le, 0.3)).ok);
        assert!(check("redis", "overlap", cmp(CompareOp::Gt, 0.29)).ok);
        assert!(check("redis", "overlap", cmp(CompareOp::Ge, 0.3)).ok);
        assert!(check("redis", "overlap", cmp(CompareOp::Eq, 0.3)).ok);
        assert!(!check("redis", "overlap", cmp(CompareOp::Eq, 0.2)).ok);
        assert!(check("redis", "lost_updates", ExpectOp::Some).ok);
        assert!(check("redis", "stale_unfenced", ExpectOp::Some).ok);
        assert!(check("redis", "stale_fenced", ExpectOp::Some).ok);
        assert!(check("redis", "token_regressions", ExpectOp::None).ok);
        // Leaked re-grants count runs, like a violation class (the failing seeds have them).
        assert!(check("redis", "leaked_regrants", ExpectOp::Some).ok);
        assert!(check("redlock", "leaked_regrants", ExpectOp::None).ok);
        assert_eq!(check("redis", "leaked_regrants", cmp(CompareOp::Eq, 0.3)).actual, Actual::Number(0.3));
        assert_eq!(check("redis", "overlap", ExpectOp::None).actual, Actual::Count(3));
        assert_eq!(check("redis", "overlap", cmp(CompareOp::Lt, 0.5)).actual, Actual::Number(0.3));
    }

    /// At fewer seeds than the file's, an expectation is judged only where the seeds run decide
    /// it (issue 37: `sim run failover.toml --seeds 4` exited 1 on "> 0.6" with 2 of 4 runs).
    /// redis: 3 of 10 runs; redlock: 0 of 10; the file asks for 200 or 11.
    #[test]
    fn fewer_seeds_judge_only_what_they_decide() {
        let r = rows();
        let at = |label: &str, metric: &str, op: ExpectOp, file_seeds: u64| {
            evaluate_at_fewer_seeds(&[exp(label, metric, "x", op)], &r, file_seeds).remove(0)
        };
        // Decided: a violation seen breaks "none" and meets "some"; a clean run breaks "all".
        let broken = at("redis", "overlap", ExpectOp::None, 200);
        assert!(!broken.ok && broken.not_judged.is_none(), "{broken:?}");
        assert!(at("redis", "overlap", ExpectOp::Some, 200).not_judged.is_none());
        assert!(!at("redis", "overlap", ExpectOp::All, 200).ok);
        // Undecided: nothing seen yet ("none", "some"), a share the other 190 seeds could move.
        let none = at("redlock", "overlap", ExpectOp::None, 200);
        assert!(none.ok, "not judged is not a failure");
        assert_eq!(
            none.not_judged.as_deref(),
            Some("10 of the file's 200 seeds ran, 0 of 10 runs so far; the other 190 could still show one")
        );
        assert!(at("redlock", "overlap", ExpectOp::Some, 200).not_judged.is_some());
        let share = at("redis", "overlap", cmp(CompareOp::Gt, 0.6), 200);
        assert!(
            share.ok && share.message.contains("not judged: ") && share.message.contains("1.5% to 96%"),
            "{share:?}"
        );
        // A share decided at both ends: 3 to 4 of 11 runs is under 40% and over 20% whatever seed 10 shows.
        assert!(at("redis", "overlap", cmp(CompareOp::Lt, 0.4), 11).not_judged.is_none());
        assert!(!at("redis", "overlap", cmp(CompareOp::Gt, 0.5), 11).ok);
        let both = ExpectOp::Both { first: (CompareOp::Gt, 0.2), second: (CompareOp::Lt, 0.4) };
        assert!(at("redis", "overlap", both, 11).not_judged.is_none());
        // A value over 10 seeds does not decide the value over 200; at the file's seeds all is judged.
        assert!(at("redis", "throughput_per_s", cmp(CompareOp::Gt, 1.0), 200).not_judged.is_some());
        assert!(at("redlock", "overlap", ExpectOp::None, 10).not_judged.is_none());
        assert!(at("redlock", "stale_fenced", ExpectOp::None, 200).not_judged.is_none(), "cannot be fenced: decided");
    }

    #[test]
    fn all_holds_when_every_run_shows_it() {
        let mut t = AlgorithmTotals::new("r", "redis", serde_json::json!({}), true);
        for seed in 0..4 {
            t.add(&failing(seed, true));
        }
        assert!(evaluate_one(&exp("r", "overlap", "all", ExpectOp::All), Some(&t)).ok);
        assert!(!evaluate_one(&exp("r", "token_regressions", "all", ExpectOp::All), Some(&t)).ok);
    }

    #[test]
    fn failure_message_names_the_numbers() {
        let r = rows();
        let res = evaluate(&[exp("redis", "overlap", "none", ExpectOp::None)], &r);
        assert_eq!(res[0].message, "redis: overlap expected \"none\", actual 3 of 10 runs (30%)");
        assert!(!res[0].ok);
    }

    #[test]
    fn stale_fenced_on_unfenced_model_fails() {
        for op in [ExpectOp::None, ExpectOp::Some, cmp(CompareOp::Le, 1.0)] {
            let r = check("redlock", "stale_fenced", op);
            assert!(!r.ok);
            assert_eq!(r.actual, Actual::Text("cannot be fenced".into()));
            assert!(r.message.contains("cannot be fenced"), "{}", r.message);
        }
    }

    #[test]
    fn value_metrics() {
        // Per row: 9 sections/s, 1 ms latency, 2 ms handoffs, 50 ms unavailable, 10 msgs/acq,
        // 0.5 wake-ups/release, 2 refusals/s, 1000 acquisitions, 10 failed.
        let t = &rows()[1];
        let ok = |metric: &str, op: ExpectOp| evaluate_one(&exp("redlock", metric, "x", op), Some(t)).ok;
        assert!(ok("throughput_per_s", cmp(CompareOp::Eq, 9.0)));
        assert!(ok("throughput_per_s", cmp(CompareOp::Gt, 8.0)));
        assert!(!ok("throughput_per_s", cmp(CompareOp::Gt, 50.0)));
        assert!(ok("acquisitions", cmp(CompareOp::Eq, 1000.0)));
        assert!(ok("failed_acquisitions", ExpectOp::Some));
        assert!(!ok("failed_acquisitions", ExpectOp::None));
        let both = |lo: f64, hi: f64| ExpectOp::Both { first: (CompareOp::Gt, lo), second: (CompareOp::Lt, hi) };
        assert!(ok("failed_acquisitions", both(0.0, 1e12)));
        assert!(!ok("failed_acquisitions", both(1e11, 1e12)), "below the lower bound");
        assert!(!ok("failed_acquisitions", both(0.0, 0.5)), "above the upper bound");
        assert!(ok("acquire_latency_ms_p50", cmp(CompareOp::Le, 1.0)));
        assert!(ok("acquire_latency_ms_p99", cmp(CompareOp::Lt, 1.5)));
        assert!(ok("acquire_latency_ms_max", cmp(CompareOp::Ge, 1.0)));
        assert!(ok("handoff_ms_p50", cmp(CompareOp::Eq, 2.0)));
        assert!(ok("handoff_ms_p99", cmp(CompareOp::Lt, 2.5)));
        assert!(ok("unavailable_ms", cmp(CompareOp::Eq, 50.0)));
        assert!(ok("messages_per_acquisition", cmp(CompareOp::Eq, 10.0)));
        assert!(ok("notifications_per_release", cmp(CompareOp::Eq, 0.5)));
        assert!(ok("refused_attempts_per_s", cmp(CompareOp::Eq, 2.0)));
        assert!(!ok("refused_attempts_per_s", ExpectOp::None));
        assert!(!ok("throughput_per_s", ExpectOp::All));
        // Waits of 1 ms and one of 2 ms, 2 failed releases a run, a 40 ms outage, fairness 0.9.
        assert!(ok("wait_ms_p50", cmp(CompareOp::Eq, 1.0)));
        assert!(ok("wait_ms_p99", cmp(CompareOp::Le, 1.0)));
        assert!(ok("wait_ms_max", cmp(CompareOp::Eq, 2.0)));
        assert!(ok("failed_releases", cmp(CompareOp::Eq, 20.0)));
        assert!(ok("outage_ms", cmp(CompareOp::Eq, 40.0)));
        assert!(ok("outage_ms_max", cmp(CompareOp::Eq, 40.0)));
        assert!(ok("fairness", cmp(CompareOp::Eq, 0.9)));
        assert!(!ok("fairness", cmp(CompareOp::Lt, 0.5)));
        let r = evaluate_one(&exp("redlock", "failed_releases", "some", ExpectOp::Some), Some(t));
        assert_eq!(r.actual, Actual::Count(20));
        let r = evaluate_one(&exp("redlock", "acquisitions", "> 5000", cmp(CompareOp::Gt, 5000.0)), Some(t));
        assert_eq!(r.actual, Actual::Count(1000));
        assert_eq!(r.message, "redlock: acquisitions expected \"> 5000\", actual 1000");
    }

    #[test]
    fn every_expect_metric_is_known() {
        let r = rows();
        for m in Metric::NAMES {
            let res = evaluate_one(&exp("redis", m, "some", ExpectOp::Some), Some(&r[0]));
            assert!(res.actual != Actual::Missing, "{m}: {}", res.message);
            // The rows ran the loop: no token regression, and `double_executions` is 0 (absent).
            assert!(res.ok || *m == "token_regressions" || *m == "double_executions", "{m}: {}", res.message);
        }
    }

    #[test]
    fn missing_evidence_fails() {
        let r = rows();
        let res = evaluate(&[exp("nope", "overlap", "none", ExpectOp::None)], &r);
        assert!(!res[0].ok && res[0].actual == Actual::Missing);
        let empty = AlgorithmTotals::new("db", "db", serde_json::json!({}), true);
        assert!(!evaluate_one(&exp("db", "overlap", "none", ExpectOp::None), Some(&empty)).ok);
        let mut no_handoff = AlgorithmTotals::new("db", "db", serde_json::json!({}), true);
        no_handoff.add(&locksim_simulator::checker::SeedMetrics::empty(0, 1_000_000_000, true));
        let res = evaluate_one(&exp("db", "handoff_ms_p50", "< 5", cmp(CompareOp::Lt, 5.0)), Some(&no_handoff));
        assert!(!res.ok && res.actual == Actual::Missing, "{res:?}");
    }
}
