//! The terminal tables `sim run` prints, and the notes under them.
//!
//! Two tables with one row per algorithm or variant each: the safety verdicts, then liveness and
//! cost (one table with every column would not fit a terminal). Two header lines keep each within
//! 120 columns (columns are sized to their content, with two spaces between them, or one when
//! that would pass 120). Violation columns count *runs*: overlap as "count rate [95% Wilson
//! interval]", or for a clean row the rate the runs rule out ("0 (< 3e-3 at 95%)"); stale writes,
//! lost updates, token regressions and leaked re-grants as "count (rate)"; the fenced column reads
//! "n/a: no token" for a model without a fencing token (and the token columns "n/a"). Each table
//! has a line or two under it defining its less obvious columns. A `-` means no data (no runs,
//! no acquisitions, …).
//!
//! Under the tables, in order: for each row with violations its first failing seeds, the first
//! violation and the exact replay command; the same for each row with leaked re-grants; for each
//! row with panicked seeds, each seed and its message; the failed expectations; then each row's
//! limitation notes. No colours.

use std::fmt::Write;

use locksim_simulator::time::ns_to_ms;

use crate::aggregate::{AlgorithmTotals, ClassCount, FailingSeed};
use crate::expect::ExpectationResult;
use crate::json::replay_command;
use crate::num::{count, fmt_num, fmt_opt, fmt_pct};
use crate::wilson::{rules_out_text, wilson95};

/// The width the table aims to stay within.
pub const TARGET_WIDTH: usize = 120;

#[derive(Clone, Copy, PartialEq)]
enum Align {
    Left,
    Right,
}

struct Column {
    head: [&'static str; 2],
    align: Align,
    cells: Vec<String>,
}

/// Whether the notes under the table end each failing row with the `replay:` command.
#[derive(Clone, Copy, PartialEq)]
enum Replay {
    /// A simulated run: the same file and seed give the same run again.
    Command,
    /// A live run: its seed does not fix the servers' timing, so there is no command to give.
    None,
}

/// The tables and the notes under them; `file` is the scenario file as the user named it (for
/// replay commands). Ends with a newline.
pub fn render_table(file: &str, totals: &[AlgorithmTotals], expectations: &[ExpectationResult]) -> String {
    render(file, totals, expectations, Replay::Command)
}

/// [`render_table`] for a live run (`sim live`): the same tables and notes without the
/// `replay:` lines, since a live run cannot be replayed (the caller says so above the table).
pub fn render_live_table(file: &str, totals: &[AlgorithmTotals], expectations: &[ExpectationResult]) -> String {
    render(file, totals, expectations, Replay::None)
}

fn render(file: &str, totals: &[AlgorithmTotals], expectations: &[ExpectationResult], replay: Replay) -> String {
    let mut out = String::new();
    out.push_str(&grid(&safety_columns(totals)));
    out.push_str("violation columns count runs; overlap with its 95% Wilson interval\n");
    out.push_str(LEAKED_NOTE);
    out.push('\n');
    out.push_str(&grid(&liveness_columns(totals)));
    out.push_str(LIVENESS_NOTE);
    notes(&mut out, file, totals, expectations, replay);
    out
}

/// The lines under the safety table that say what a leaked re-grant is (and is not).
pub const LEAKED_NOTE: &str = "leaked re-grants: a client was granted again the token of a lock whose release never \
                               took effect —\na leaked lock (others starve), not a fencing failure\n";

/// The lines under the liveness table that define its less obvious columns.
pub const LIVENESS_NOTE: &str = "wait: from a section's first acquire call to its grant, failed calls included; \
                                 outage: the longest stretch with a\nwaiter and no holder (mean/max over runs); \
                                 fairness: Jain's index of sections per client (1: equal, 1/n: one client)\n";

fn column(
    totals: &[AlgorithmTotals],
    head: [&'static str; 2],
    align: Align,
    f: &dyn Fn(&AlgorithmTotals) -> String,
) -> Column {
    Column { head, align, cells: totals.iter().map(f).collect() }
}

/// The safety verdicts: violation classes in runs, and leaked re-grants beside them. A row's
/// library preset stands next to its label when any row has one (`-` for a model without).
fn safety_columns(totals: &[AlgorithmTotals]) -> Vec<Column> {
    let col = |head, align, f: &dyn Fn(&AlgorithmTotals) -> String| column(totals, head, align, f);
    let mut columns = vec![col(["", "label"], Align::Left, &|t| t.label.clone())];
    if totals.iter().any(|t| t.library.is_some()) {
        columns.push(col(["", "library"], Align::Left, &|t| t.library.clone().unwrap_or_else(|| "-".to_string())));
    }
    columns.extend([
        col(["", "runs"], Align::Right, &|t| t.runs.to_string()),
        col(["overlap", "runs, rate [95%]"], Align::Left, &|t| overlap_cell(t.overlap, t.runs)),
        col(["stale", "unfenced"], Align::Right, &|t| runs_cell(t.stale_unfenced, t.runs)),
        col(["stale", "fenced"], Align::Right, &|t| {
            if t.fenced {
                runs_cell(t.stale_fenced, t.runs)
            } else {
                "n/a: no token".to_string()
            }
        }),
        col(["lost", "updates"], Align::Right, &|t| runs_cell(t.lost_updates, t.runs)),
        col(["token", "regressions"], Align::Right, &|t| token_cell(t, t.token_regressions)),
        col(["leaked", "re-grants"], Align::Right, &|t| token_cell(t, t.leaked_regrants)),
    ]);
    // Only when some row ran a scheduled job, so a loop's table keeps its columns.
    if totals.iter().any(|t| t.scheduled) {
        columns.push(col(["double", "executions"], Align::Right, &|t| {
            if t.scheduled {
                runs_cell(t.double_executions, t.runs)
            } else {
                "n/a: loop".to_string()
            }
        }));
    }
    columns
}

/// Liveness and cost: how fast, how long the clients waited and went without the lock, how
/// evenly it was shared, and what it cost in messages.
fn liveness_columns(totals: &[AlgorithmTotals]) -> Vec<Column> {
    let col = |head, align, f: &dyn Fn(&AlgorithmTotals) -> String| column(totals, head, align, f);
    vec![
        col(["", "label"], Align::Left, &|t| t.label.clone()),
        col(["thru-", "put/s"], Align::Right, &|t| fmt_opt(t.throughput_per_s())),
        col(["wait ms", "p50/p99"], Align::Right, &|t| match t.wait_ms() {
            Some(w) => format!("{}/{}", fmt_num(w.p50), fmt_num(w.p99)),
            None => "-".to_string(),
        }),
        col(["failed", "acq/rel"], Align::Right, &|t| {
            if t.runs == 0 {
                "-".to_string()
            } else {
                format!("{}/{}", t.failed_acquisitions, t.failed_releases)
            }
        }),
        col(["unavail", "ms"], Align::Right, &|t| fmt_opt(t.unavailable_ms())),
        col(["outage", "mean/max"], Align::Right, &|t| match (t.outage_ms(), t.outage_ms_max()) {
            (Some(mean), Some(max)) => format!("{}/{}", fmt_s(mean), fmt_s(max)),
            _ => "-".to_string(),
        }),
        col(["fairness", "mean [min-max]"], Align::Right, &|t| match t.fairness() {
            Some(f) => format!("{} [{}-{}]", fmt_num(f.mean), fmt_num(f.min), fmt_num(f.max)),
            None => "-".to_string(),
        }),
        col(["msgs", "/acq"], Align::Right, &|t| fmt_opt(t.messages_per_acquisition())),
        col(["wake-ups", "/release"], Align::Right, &|t| fmt_opt(t.notifications_per_release())),
    ]
}

/// Milliseconds as seconds with their unit (`20.1s`), or milliseconds below one second
/// (`350ms`), about three significant figures.
fn fmt_s(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{}ms", fmt_num(ms))
    } else {
        format!("{}s", fmt_num(ms / 1000.0))
    }
}

/// A token verdict in runs (`runs_cell`); `n/a` for a model without fencing tokens.
fn token_cell(t: &AlgorithmTotals, c: ClassCount) -> String {
    if t.fenced {
        runs_cell(c, t.runs)
    } else {
        "n/a".to_string()
    }
}

fn grid(columns: &[Column]) -> String {
    let rows = columns.first().map_or(0, |c| c.cells.len());
    let widths: Vec<usize> = columns
        .iter()
        .map(|c| {
            c.cells.iter().map(|s| s.chars().count()).chain(c.head.iter().map(|h| h.chars().count())).max().unwrap_or(0)
        })
        .collect();
    let total2: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
    let gap = if total2 > TARGET_WIDTH { " " } else { "  " };

    let line = |cells: Vec<&str>| -> String {
        let mut s = String::new();
        for (i, (cell, c)) in cells.iter().zip(columns).enumerate() {
            if i > 0 {
                s.push_str(gap);
            }
            let pad = widths[i].saturating_sub(cell.chars().count());
            match c.align {
                Align::Left => {
                    s.push_str(cell);
                    s.push_str(&" ".repeat(pad));
                }
                Align::Right => {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(cell);
                }
            }
        }
        s.truncate(s.trim_end().len());
        s.push('\n');
        s
    };
    let mut out = String::new();
    out.push_str(&line(columns.iter().map(|c| c.head[0]).collect()));
    out.push_str(&line(columns.iter().map(|c| c.head[1]).collect()));
    let rule_len = widths.iter().sum::<usize>() + gap.len() * (widths.len() - 1);
    out.push_str(&"-".repeat(rule_len));
    out.push('\n');
    for r in 0..rows {
        out.push_str(&line(columns.iter().map(|c| c.cells[r].as_str()).collect()));
    }
    out
}

/// "37 3.7% [2.7-5.1%]", "0 (< 3e-3 at 95%)", or "-" with no runs.
fn overlap_cell(c: ClassCount, n: u64) -> String {
    if n == 0 {
        return "-".to_string();
    }
    if c.runs == 0 {
        return format!("0 ({})", rules_out_text(n));
    }
    let (lo, hi) = wilson95(c.runs, n).expect("n > 0");
    let lo = fmt_pct(lo);
    format!("{} {} [{}-{}]", c.runs, fmt_pct(c.runs as f64 / n as f64), lo.trim_end_matches('%'), fmt_pct(hi))
}

/// "30 (3%)", "0", or "-" with no runs.
fn runs_cell(c: ClassCount, n: u64) -> String {
    if n == 0 {
        "-".to_string()
    } else if c.runs == 0 {
        "0".to_string()
    } else {
        format!("{} ({})", c.runs, fmt_pct(c.runs as f64 / n as f64))
    }
}

/// The seeds of a row that saw one class of event (violations, or leaked re-grants): how many
/// runs did, the first seeds, the first one's event and the command that replays it.
struct SeedList<'a> {
    label: &'a str,
    /// What the runs saw (`violations`).
    what: &'a str,
    /// What the seeds listed are (`first failing seeds`).
    listed: &'a str,
    /// Runs that saw it, of `runs`.
    runs_with: u64,
    runs: u64,
    /// The first seeds kept, each with its first event.
    seeds: &'a [FailingSeed],
}

fn seed_list(out: &mut String, file: &str, list: &SeedList, replay: Replay) {
    let seeds: Vec<String> = list.seeds.iter().map(|f| f.seed.to_string()).collect();
    let more = if list.runs_with > list.seeds.len() as u64 { ", …" } else { "" };
    let _ = writeln!(
        out,
        "\n{}: {} in {} of {} runs; {}: {}{more}",
        list.label,
        list.what,
        list.runs_with,
        list.runs,
        list.listed,
        seeds.join(", ")
    );
    if let Some(first) = list.seeds.first() {
        if let Some(v) = &first.first_violation {
            let _ =
                writeln!(out, "  seed {}: {} at {} ms: {}", first.seed, v.kind, fmt_num(ns_to_ms(v.at_ns)), v.detail);
        }
        if replay == Replay::Command {
            let _ = writeln!(out, "  replay: {}", replay_command(file, list.label, first.seed));
        }
    }
}

fn notes(out: &mut String, file: &str, totals: &[AlgorithmTotals], expectations: &[ExpectationResult], replay: Replay) {
    for t in totals.iter().filter(|t| t.failing_runs > 0) {
        let list = SeedList {
            label: &t.label,
            what: "violations",
            listed: "first failing seeds",
            runs_with: t.failing_runs,
            runs: t.runs,
            seeds: &t.failing_seeds,
        };
        seed_list(out, file, &list, replay);
    }
    for t in totals.iter().filter(|t| t.leaked_regrants.runs > 0) {
        let list = SeedList {
            label: &t.label,
            what: "leaked re-grants",
            listed: "first seeds",
            runs_with: t.leaked_regrants.runs,
            runs: t.runs,
            seeds: &t.leaked_seeds,
        };
        seed_list(out, file, &list, replay);
    }
    for t in totals.iter().filter(|t| t.panicked_runs > 0) {
        let s = if t.panicked_runs == 1 { "" } else { "s" };
        let _ = writeln!(out, "\n{}: {} seed{s} panicked (a model or the simulator failed):", t.label, t.panicked_runs);
        for (seed, msg) in &t.panicked {
            let _ = writeln!(out, "  seed {seed}: {}", msg.trim_end().replace('\n', "\n    "));
        }
        let shown = t.panicked.len() as u64;
        if t.panicked_runs > shown {
            let _ = writeln!(out, "  … and {} more", t.panicked_runs - shown);
        }
        if let Some((seed, _)) = t.panicked.first() {
            if replay == Replay::Command {
                let _ = writeln!(out, "  replay: {}", replay_command(file, &t.label, *seed));
            }
        }
    }
    let failed: Vec<&ExpectationResult> = expectations.iter().filter(|e| !e.ok).collect();
    let unjudged: Vec<&ExpectationResult> = expectations.iter().filter(|e| e.not_judged.is_some()).collect();
    let judged = expectations.len() - unjudged.len();
    if !failed.is_empty() {
        let of = if unjudged.is_empty() { judged.to_string() } else { format!("{judged} judged") };
        let _ = writeln!(out, "\nexpectations failed ({} of {of}):", failed.len());
        for e in failed {
            let _ = writeln!(out, "  {}", e.message);
        }
    } else if judged > 0 {
        let judged_word = if unjudged.is_empty() { "" } else { " judged" };
        let all = if judged == 1 { format!("the 1{judged_word}") } else { format!("all {judged}{judged_word}") };
        let _ = writeln!(out, "\nexpectations: {all} held");
    }
    if !unjudged.is_empty() {
        let _ = writeln!(
            out,
            "\n{} not judged: fewer seeds than the file's, and these seeds do not decide {}:",
            count(unjudged.len() as u64, "expectation"),
            if unjudged.len() == 1 { "it" } else { "them" }
        );
        for e in unjudged {
            let _ = writeln!(out, "  {}", e.message);
        }
    }
    let noted: Vec<&AlgorithmTotals> = totals.iter().filter(|t| !t.limitations.is_empty()).collect();
    if !noted.is_empty() {
        let _ = writeln!(out, "\nnot modelled:");
        for t in noted {
            for l in &t.limitations {
                let _ = writeln!(out, "  {}: {l}", t.label);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::tests::{clean, failing};
    use crate::expect::evaluate;
    use locksim_simulator::scenario::{ExpectOp, Expectation};

    fn rows() -> Vec<AlgorithmTotals> {
        let labels = [("db", true), ("redis", true), ("redlock", false), ("zookeeper", true), ("redis-wait", true)];
        labels
            .iter()
            .map(|&(label, fenced)| {
                let mut t = AlgorithmTotals::new(label, label, serde_json::json!({}), fenced);
                for seed in 0..1000 {
                    let bad = label.starts_with("redis") && seed % 27 == 3;
                    t.add(&if bad { failing(seed, fenced) } else { clean(seed, fenced) });
                }
                t
            })
            .collect()
    }

    #[test]
    fn table_has_every_label_and_the_replay_command() {
        let mut r = rows();
        r[2].add_panic(1000, "assertion failed: term > 0\nsecond line");
        r[2].limitations = vec!["clocks: drift only".to_string()];
        let exps = evaluate(
            &[
                Expectation {
                    label: "redis".into(),
                    metric: locksim_simulator::metric::Metric::Overlap,
                    expected: "none".into(),
                    op: ExpectOp::None,
                },
                Expectation {
                    label: "db".into(),
                    metric: locksim_simulator::metric::Metric::Overlap,
                    expected: "none".into(),
                    op: ExpectOp::None,
                },
            ],
            &r,
        );
        let s = render_table("scenarios/failover.toml", &r, &exps);
        println!("{s}");
        for t in &r {
            assert!(s.contains(&t.label), "missing {}", t.label);
        }
        assert!(s.contains("replay: sim run scenarios/failover.toml --algorithm redis --seed 3 --trace"));
        assert!(s.contains("replay: sim run scenarios/failover.toml --algorithm redis-wait --seed 3 --trace"));
        assert!(s.contains("first failing seeds: 3, 30, 57"));
        assert!(s.contains(
            "redis: leaked re-grants in 37 of 1000 runs; first seeds: 3, 30, 57, 84, 111, 138, \
             165, 192, 219, 246, …\n  seed 3: leaked_regrant at 2000 ms: client-3 granted token 7 again (seed 3)\n  \
             replay: sim run scenarios/failover.toml --algorithm redis --seed 3 --trace"
        ));
        assert!(s.contains(LEAKED_NOTE) && s.contains(LIVENESS_NOTE));
        assert!(s.contains("0 (< 3e-3 at 95%)"));
        assert!(s.contains("n/a: no token"));
        assert!(s.contains("seed 1000: assertion failed: term > 0\n    second line"));
        assert!(s.contains(
            "expectations failed (1 of 2):\n  redis: overlap expected \"none\", actual 37 of 1000 runs (3.7%)"
        ));
        assert!(s.contains("redlock: clocks: drift only"));
        for l in s.lines() {
            assert!(l.chars().count() <= TARGET_WIDTH, "too wide ({}): {l}", l.chars().count());
        }
        // Columns line up: every grid line but the rule has the runs column ending at one place.
        let grid: Vec<&str> = s.lines().take(3 + r.len()).collect();
        assert!(grid[2].chars().all(|c| c == '-'));
    }

    /// A live run cannot be replayed: its table keeps every failing seed and panic but gives no
    /// `replay:` command (`sim live` says why above the table).
    #[test]
    fn the_live_table_gives_no_replay_command() {
        let mut r = rows();
        r[2].add_panic(1000, "assertion failed: term > 0");
        let simulated = render_table("f.toml", &r, &[]);
        assert!(simulated.contains("replay: sim run f.toml --algorithm redis --seed 3 --trace"), "{simulated}");
        let live = render_live_table("f.toml", &r, &[]);
        assert!(!live.contains("replay"), "{live}");
        assert!(
            live.contains("first failing seeds: 3, 30, 57") && live.contains("seed 1000: assertion failed"),
            "{live}"
        );
        let without = |s: &str| s.lines().filter(|l| !l.starts_with("  replay: ")).collect::<Vec<_>>().join("\n");
        assert_eq!(without(&simulated), without(&live), "only the replay lines differ");
    }

    #[test]
    fn cells() {
        assert_eq!(overlap_cell(ClassCount { runs: 37, events: 41 }, 1000), "37 3.7% [2.7-5.1%]");
        assert_eq!(overlap_cell(ClassCount::default(), 30_000), "0 (< 1e-4 at 95%)");
        assert_eq!(overlap_cell(ClassCount::default(), 0), "-");
        assert_eq!(runs_cell(ClassCount { runs: 30, events: 33 }, 1000), "30 (3%)");
        assert_eq!(runs_cell(ClassCount::default(), 1000), "0");
        assert_eq!(fmt_s(25_418.501), "25.4s");
        assert_eq!(fmt_s(248.336), "248ms");
        assert_eq!(fmt_s(0.0), "0ms");
    }

    #[test]
    fn the_safety_table_names_each_rows_library_preset() {
        let mut r = rows();
        assert!(!render_table("f.toml", &r, &[]).contains("library"), "no presets: no column");
        r[1] = r[1].clone().with_library(Some("redis-py-8".into()));
        r[3] = r[3].clone().with_library(Some("curator-5.4".into()));
        let s = render_table("f.toml", &r, &[]);
        let head: Vec<&str> = s.lines().nth(1).unwrap().split_whitespace().collect();
        assert_eq!(head[..3], ["label", "library", "runs"]);
        let row = |label: &str| s.lines().find(|l| l.starts_with(&format!("{label} "))).unwrap().to_string();
        assert!(row("redis").split_whitespace().nth(1) == Some("redis-py-8"), "{s}");
        assert!(row("zookeeper").split_whitespace().nth(1) == Some("curator-5.4"), "{s}");
        assert!(row("db").split_whitespace().nth(1) == Some("-"), "a model without presets: {s}");
        let json = crate::json::AlgorithmJson::from_totals(&r[1], "f.toml");
        assert_eq!(serde_json::to_value(&json).unwrap()["library"], "redis-py-8", "the JSON names it too");
    }

    #[test]
    fn empty_rows_render() {
        let t = AlgorithmTotals::new("etcd", "etcd", serde_json::json!({}), true);
        let s = render_table("f.toml", &[t], &[]);
        assert!(s.contains("etcd"));
    }
}
