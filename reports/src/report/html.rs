//! `index.html` of a report directory: the scenario (description and file), the results table,
//! every chart inlined as SVG, the failing seeds with their replay commands, the expectations
//! and what each model does not model. One file with no external references: it opens from disk,
//! offline, and can be mailed as it is.

use super::explained::RowExplanation;
use crate::json::{AlgorithmJson, ClassJson, ResultsJson};
use crate::num::{fmt_num, fmt_opt, fmt_pct};
use crate::rules_out_text;

/// A chart to show: its heading, a sentence on how to read it, and its SVG text.
pub struct ChartSection {
    /// The heading above the chart.
    pub heading: String,
    /// A sentence on how to read it, under it.
    pub caption: String,
    /// The SVG file's text (the XML prologue is dropped when inlined).
    pub svg: String,
    /// The PNG beside it (a file name in the same directory).
    pub png_name: String,
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:'DejaVu Sans',Verdana,sans-serif;max-width:1100px;margin:1.5em auto;\
padding:0 1em;color:#222;line-height:1.45}h1{margin-bottom:.2em}h2{margin-top:1.8em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;font-size:.9em;width:100%}th,td{border:1px solid #ccc;padding:.25em .45em;\
text-align:right}th{background:#f3f3f3}td.label,th.label{text-align:left}td.bad{color:#b00;font-weight:bold}\
td.na{color:#777;font-style:italic}pre,code{background:#f6f6f6;font-size:.85em}pre{padding:.6em;overflow-x:auto}\
figure{margin:1em 0}figure svg{width:100%;height:auto;border:1px solid #eee}figure.diagram svg{max-width:1000px}\
section.explain ol{font-size:.92em}figcaption{color:#555;font-size:.9em}\
.meta{color:#555}li code{overflow-wrap:anywhere}.ok{color:#070}.fail{color:#b00;font-weight:bold}td.warn{color:#a60}\
div.table-scroll{overflow-x:auto;width:min(calc(100vw - 2em),1500px);max-width:none;\
margin-left:calc((100% - min(calc(100vw - 2em),1500px))/2)}#results{font-size:.8em}#results th{font-weight:600;vertical-align:bottom}\
#results th,#results td{padding:.2em .35em}#results td.label{white-space:nowrap}";

fn class_cell(c: &ClassJson, runs: u64) -> String {
    if runs == 0 {
        // No finished run (an interrupted run): no data, which is not "no violation".
        return "<td class=\"na\">–</td>".to_string();
    }
    if c.runs == 0 {
        let title = escape(&rules_out_text(runs));
        return format!("<td title=\"{title}\">0</td>");
    }
    let ci = c.ci95.map(|[lo, hi]| format!(" [{}–{}]", fmt_pct(lo), fmt_pct(hi))).unwrap_or_default();
    format!("<td class=\"bad\">{} ({}){ci}</td>", c.runs, c.rate.map(fmt_pct).unwrap_or_default())
}

/// A count column's cell: the runs that showed it with their share first, as every violation
/// column counts runs (as `sim run` and `sim sweep` do), then the events, named as such:
/// `40 (100%); 14491 events`.
fn runs_and_events(runs: u64, of: u64, events: u64) -> String {
    let share = if of > 0 { format!(" ({})", fmt_pct(runs as f64 / of as f64)) } else { String::new() };
    let events = crate::num::count(events, "event");
    format!("{runs}{share}; {events}")
}

fn row(a: &AlgorithmJson, scheduled: bool, libraries: bool) -> String {
    // The row's library preset beside its label, when any row has one (as in the text table).
    let library = if libraries {
        format!("<td class=\"label\">{}</td>", escape(a.library.as_deref().unwrap_or("–")))
    } else {
        String::new()
    };
    let fenced = match &a.stale_fenced {
        Some(c) => class_cell(c, a.runs),
        None => "<td class=\"na\">cannot be fenced</td>".to_string(),
    };
    let wait = a.wait_ms.map_or("–".to_string(), |w| format!("{}/{}", fmt_num(w.p50), fmt_num(w.p99)));
    let lost = if a.runs == 0 {
        "<td class=\"na\">–</td>".to_string()
    } else if a.lost_updates_runs > 0 {
        format!("<td class=\"bad\">{}</td>", runs_and_events(a.lost_updates_runs, a.runs, a.lost_updates))
    } else {
        "<td>0</td>".to_string()
    };
    let regressions = if a.token_regressions_runs > 0 {
        format!("<td class=\"bad\">{}</td>", runs_and_events(a.token_regressions_runs, a.runs, a.token_regressions))
    } else if a.fenced && a.runs == 0 {
        "<td class=\"na\">–</td>".to_string()
    } else if a.fenced {
        "<td>0</td>".to_string()
    } else {
        "<td class=\"na\">no token</td>".to_string()
    };
    // Not a violation, but a lock one client keeps while the others starve: marked, not red.
    let leaked = match (a.leaked_regrants, a.leaked_regrants_runs) {
        (Some(n), Some(runs)) if runs > 0 => format!("<td class=\"warn\">{}</td>", runs_and_events(runs, a.runs, n)),
        _ if !a.fenced => "<td class=\"na\">no token</td>".to_string(),
        (Some(_), Some(_)) if a.runs > 0 => "<td>0</td>".to_string(),
        _ => "<td class=\"na\">–</td>".to_string(),
    };
    let failed = match a.failed_releases {
        Some(r) if a.runs > 0 => format!("{}/{r}", a.failed_acquisitions),
        _ if a.runs > 0 => format!("{}/–", a.failed_acquisitions),
        _ => "–".to_string(),
    };
    let outage = match (a.outage_ms, a.outage_ms_max) {
        (Some(mean), Some(max)) => format!("{}/{}", fmt_num(mean), fmt_num(max)),
        _ => "–".to_string(),
    };
    let fairness = a
        .fairness
        .map_or("–".to_string(), |f| format!("{} [{}–{}]", fmt_num(f.mean), fmt_num(f.min), fmt_num(f.max)));
    // Only when some row ran a scheduled job, so a loop's report keeps its columns.
    let doubles = match &a.double_executions {
        Some(c) if scheduled => class_cell(c, a.runs),
        None if scheduled => "<td class=\"na\">not scheduled</td>".to_string(),
        _ => String::new(),
    };
    format!(
        "<tr data-label=\"{label}\"><td class=\"label\">{label}</td>{library}<td>{runs}</td>{overlap}{unfenced}{fenced}{lost}\
{regressions}{leaked}{doubles}<td>{thru}</td><td>{wait}</td><td>{failed}</td><td>{unavail}</td><td>{outage}</td>\
<td>{fairness}</td><td>{msgs}</td><td>{wake}</td></tr>\n",
        label = escape(&a.label),
        runs = a.runs,
        overlap = class_cell(&a.overlap, a.runs),
        unfenced = class_cell(&a.stale_unfenced, a.runs),
        thru = fmt_opt(a.throughput_per_s),
        unavail = fmt_opt(a.unavailable_ms),
        msgs = fmt_opt(a.messages_per_acquisition),
        wake = fmt_opt(a.notifications_per_release),
    )
}

fn table(results: &ResultsJson) -> String {
    let scheduled = results.algorithms.iter().any(|a| a.double_executions.is_some());
    let doubles_head = if scheduled { "<th>double executions</th>" } else { "" };
    let libraries = results.algorithms.iter().any(|a| a.library.is_some());
    let library_head = if libraries { "<th class=\"label\">library</th>" } else { "" };
    let mut out = format!(
        "<div class=\"table-scroll\">\n<table id=\"results\">\n<tr><th class=\"label\">label</th>{library_head}<th>runs</th><th>overlap runs [95%]</th>\
<th>stale writes, unfenced</th><th>stale writes, fenced</th><th>lost updates</th><th>token regressions</th>\
<th>leaked re-grants</th>{doubles_head}<th>throughput /s</th><th>wait ms p50/p99</th><th>failed acquire/release</th>\
<th>unavailable ms</th><th>outage ms mean/max</th><th>fairness mean [min–max]</th><th>messages /acquisition</th>\
<th>wake-ups /release</th></tr>\n",
    );
    for a in &results.algorithms {
        out.push_str(&row(a, scheduled, libraries));
    }
    out.push_str(
        "</table>\n</div>\n<p class=\"meta\">Violation columns count runs (seeds) with at least one, then their share of the runs; \
lost updates, token regressions and leaked re-grants also give their events (every lost increment, regression \
or re-grant). The brackets are 95% Wilson intervals. Hover a 0 for the rate the clean runs rule out.</p>\n\
<p class=\"meta\">Leaked re-grants: a client was granted again the token of a lock whose release never took \
effect — a leaked lock (others starve), not a fencing failure.</p>\n\
<p class=\"meta\">Wait: from a critical section's first acquire call to its grant, failed calls included. \
Outage: the longest stretch in a run during which some client waited and no client held the key (mean over runs \
/ longest). Fairness: Jain's index of completed sections per client (1: equal shares, 1/n: one client had them \
all), over runs.</p>\n",
    );
    out
}

fn failing(results: &ResultsJson, explained: &[RowExplanation]) -> String {
    // A live run's seed does not fix the servers' timing: there is no command that replays it.
    let replayable = results.mode.as_deref() != Some("live");
    let mut out = String::new();
    if !replayable {
        out.push_str("<p class=\"meta\">A live run is not replayable: its seed fixes the workload's draws and the fault schedule, not the servers' timing.</p>\n");
    }
    for a in &results.algorithms {
        if a.failing_seeds.is_empty() && a.panicked_seeds.is_empty() && a.first_leaked_regrants.is_empty() {
            continue;
        }
        out.push_str(&format!("<h3>{}</h3>\n<ul>\n", escape(&a.label)));
        for v in a.first_violations.iter().take(5) {
            out.push_str(&format!(
                "<li>seed {}: {} at {} ms: {}</li>\n",
                v.seed,
                escape(&v.kind),
                fmt_num(v.at_ms),
                escape(&v.detail)
            ));
        }
        for v in a.first_leaked_regrants.iter().take(3) {
            let replay = if replayable {
                format!(
                    " (replay: <code>{}</code>)",
                    escape(&crate::json::replay_command(&results.file, &a.label, v.seed))
                )
            } else {
                String::new()
            };
            out.push_str(&format!(
                "<li>seed {} (not a violation): {} at {} ms: {}{replay}</li>\n",
                v.seed,
                escape(&v.kind),
                fmt_num(v.at_ms),
                escape(&v.detail),
            ));
        }
        for p in &a.panicked_seeds {
            out.push_str(&format!("<li class=\"fail\">seed {} panicked: {}</li>\n", p.seed, escape(&p.message)));
        }
        out.push_str("</ul>\n");
        if let Some(replay) = a.replay.as_ref().filter(|_| replayable) {
            out.push_str(&format!("<p>Replay: <code>{}</code></p>\n", escape(replay)));
        }
        if let Some(e) = explained.iter().find(|e| e.label == a.label) {
            out.push_str(&format!(
                "<p>Its first violation, told and drawn: <a href=\"#{}\">seed {}, explained below</a>.</p>\n",
                escape(&e.anchor),
                e.seed
            ));
        }
    }
    if out.is_empty() {
        out.push_str("<p>No seed of any algorithm violated safety or failed.</p>\n");
    }
    out
}

fn expectations(results: &ResultsJson) -> String {
    if results.expectations.is_empty() {
        return "<p>The scenario makes no assertions.</p>\n".to_string();
    }
    let mut out = String::from("<ul>\n");
    for e in &results.expectations {
        let (class, word) = match (&e.not_judged, e.ok) {
            (Some(_), _) => ("meta", "not judged"),
            (None, true) => ("ok", "held"),
            (None, false) => ("fail", "FAILED"),
        };
        out.push_str(&format!("<li class=\"{class}\">{word}: {}</li>\n", escape(&e.message)));
    }
    out.push_str("</ul>\n");
    out
}

fn limitations(results: &ResultsJson) -> String {
    let mut out = String::new();
    for a in results.algorithms.iter().filter(|a| !a.limitations.is_empty()) {
        out.push_str(&format!("<li><b>{}</b>: {}</li>\n", escape(&a.label), escape(&a.limitations.join("; "))));
    }
    if out.is_empty() {
        return String::new();
    }
    format!("<h2>Not modelled</h2>\n<ul>\n{out}</ul>\n")
}

/// The scorecard's PNG name: its section is shown under the results table, not among the charts.
const SCORECARD_PNG: &str = "scorecard.png";

/// The scorecard as a static block (no script needed): heading, the SVG, how to read it.
fn scorecard_block(c: &ChartSection) -> String {
    format!(
        "<section class=\"scorecard\">\n<h2>{heading}</h2>\n<figure class=\"chart\" id=\"scorecard\">\n{svg}\n<figcaption>{caption} \
(<a href=\"{png}\">PNG</a>)</figcaption>\n</figure>\n</section>\n",
        heading = escape(&c.heading),
        svg = inline_svg(&c.svg),
        caption = escape(&c.caption),
        png = escape(&c.png_name),
    )
}

/// Strips the XML prologue so an SVG file can sit inside HTML.
/// Escaped text with every `https://` address made a link, so an incident file's description
/// (`scenarios/incidents/`: "Source: https://github.com/…", then the mechanism) shows its source
/// thread as a link above the tables. The address ends at white space or `)`, without a final
/// `.` or `,` (a `;` may end an escaped `&quot;`); it is already escaped, so it cannot close the
/// attribute.
fn linked(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len());
    let mut rest = escaped;
    while let Some(at) = rest.find("https://") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail.find(|c: char| c.is_whitespace() || c == ')').unwrap_or(tail.len());
        let address = tail[..end].trim_end_matches(['.', ',']);
        out.push_str(&format!("<a href=\"{address}\">{address}</a>"));
        rest = &tail[address.len()..];
    }
    out.push_str(rest);
    out
}

fn inline_svg(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |i| &svg[i..])
}

/// The shipped chart font as an `@font-face` rule with a data URL: the inlined charts name
/// `DejaVu Sans`, and with the font in the page they render the same on any machine, offline.
fn font_face() -> String {
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(locksim_charts::font::TTF);
    format!("@font-face{{font-family:'DejaVu Sans';font-style:normal;font-weight:normal;src:url(data:font/ttf;base64,{data}) format('truetype')}}")
}

/// Each row's first violation: its narrative as a numbered list and its diagram inlined.
fn explanations(rows: &[RowExplanation]) -> String {
    let mut out = String::new();
    for r in rows {
        out.push_str(&format!(
            "<section class=\"explain\" id=\"{anchor}\">\n<h3>{title}</h3>\n<ol>\n",
            anchor = escape(&r.anchor),
            title = escape(&r.title)
        ));
        for s in &r.sentences {
            out.push_str(&format!("<li>{}</li>\n", escape(s)));
        }
        out.push_str(&format!(
            "</ol>\n<figure class=\"diagram\">\n{svg}\n<figcaption>Space-time diagram: a lane per node involved, \
true time going down, messages as arrows (lost ones end in a cross), fault windows shaded, quiet stretches \
elided; each mark carries its node's wall clock. (<a href=\"{png}\">PNG</a>)</figcaption>\n</figure>\n</section>\n",
            svg = inline_svg(&r.svg),
            png = escape(&r.png_name)
        ));
    }
    out
}

/// The header's seeds: the range run, or, for an interrupted run, the range asked for and what
/// each row finished of it (a row that never started says so; a live run cut short is named as
/// such), so a cut run never reads as a whole one.
fn seeds_text(results: &ResultsJson) -> String {
    let range = format!("seeds {}..{}", results.seeds.from, results.seeds.to);
    if !results.interrupted {
        return range;
    }
    let asked = results.seeds.to.saturating_sub(results.seeds.from);
    let each: Vec<String> = results
        .algorithms
        .iter()
        .map(|a| {
            let ran = a.runs + a.panicked_runs;
            let finished = a.seeds_finished.unwrap_or(ran);
            let label = escape(&a.label);
            match (finished, ran.saturating_sub(finished)) {
                (0, 0) => format!("{label} not run"),
                (n, 0) => format!("{label} {n} of {asked}"),
                (n, cut) => format!("{label} {n} of {asked} ({cut} cut short)"),
            }
        })
        .collect();
    format!("<strong class=\"fail\">interrupted</strong>: {range} asked, seeds finished: {}", each.join(", "))
}

/// The whole page. `explained` are the rows' first violations told; `notes` are lines shown
/// under the charts (e.g. why a timeline is missing).
pub fn index_html(
    results: &ResultsJson,
    charts: &[ChartSection],
    explained: &[RowExplanation],
    notes: &[String],
) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!(
        "<title>locksim: {}</title>\n<style>{}{STYLE}</style>\n</head>\n<body>\n",
        escape(&results.scenario),
        font_face()
    ));
    out.push_str(&format!("<h1>{}</h1>\n", escape(&results.scenario)));
    out.push_str(&format!(
        "<p class=\"meta\">{} · {} · {} simulated ms per run</p>\n",
        escape(&results.file),
        seeds_text(results),
        fmt_num(results.duration_ms)
    ));
    if !results.description.is_empty() {
        out.push_str(&format!("<p class=\"description\">{}</p>\n", linked(&escape(&results.description))));
    }
    out.push_str("<h2>Results</h2>\n");
    out.push_str(&table(results));
    // The scorecard, static, right under the table: every row on one figure.
    if let Some(c) = charts.iter().find(|c| c.png_name == SCORECARD_PNG) {
        out.push_str(&scorecard_block(c));
    }
    out.push_str("<h2>Expectations</h2>\n");
    out.push_str(&expectations(results));
    out.push_str("<h2>Charts</h2>\n");
    for c in charts.iter().filter(|c| c.png_name != SCORECARD_PNG) {
        out.push_str(&format!(
            "<figure class=\"chart\" id=\"{id}\">\n<h3>{heading}</h3>\n{svg}\n<figcaption>{caption} \
(<a href=\"{png}\">PNG</a>)</figcaption>\n</figure>\n",
            id = escape(c.png_name.trim_end_matches(".png")),
            heading = escape(&c.heading),
            svg = inline_svg(&c.svg),
            caption = escape(&c.caption),
            png = escape(&c.png_name),
        ));
    }
    for n in notes {
        out.push_str(&format!("<p class=\"meta\">{}</p>\n", escape(n)));
    }
    let live = results.mode.as_deref() == Some("live");
    out.push_str(if live { "<h2>Failing seeds</h2>\n" } else { "<h2>Failing seeds and replay</h2>\n" });
    out.push_str(&failing(results, explained));
    if !explained.is_empty() {
        out.push_str("<h2>First violations explained</h2>\n");
        out.push_str(&explanations(explained));
    }
    out.push_str(&limitations(results));
    out.push_str("<h2>Scenario</h2>\n");
    match &results.scenario_text {
        Some(text) => out.push_str(&format!("<pre>{}</pre>\n", escape(text))),
        None => out.push_str("<p class=\"meta\">The results file does not record the scenario text.</p>\n"),
    }
    out.push_str("<h2>Parameters per algorithm</h2>\n<ul>\n");
    for a in &results.algorithms {
        out.push_str(&format!(
            "<li><b>{}</b> (model {}): <code>{}</code></li>\n",
            escape(&a.label),
            escape(&a.model),
            escape(&a.params.to_string())
        ));
    }
    out.push_str(if live {
        "</ul>\n<p class=\"meta\">Made by locksim from a live run (not replayable).</p>\n"
    } else {
        "</ul>\n<p class=\"meta\">Made by locksim; every number above replays exactly from its seed.</p>\n"
    });
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }

    #[test]
    fn a_class_with_no_finished_run_is_no_data_not_zero() {
        let clean = ClassJson { runs: 0, events: 0, rate: None, ci95: None, rules_out: None };
        assert_eq!(class_cell(&clean, 0), "<td class=\"na\">–</td>");
        assert!(class_cell(&clean, 100).contains(">0</td>"));
        let seen = ClassJson { runs: 3, events: 5, rate: Some(0.03), ci95: Some([0.01, 0.08]), rules_out: None };
        assert!(class_cell(&seen, 100).starts_with("<td class=\"bad\">3 ("));
    }

    /// The header of an interrupted run does not claim the seed range asked for: it says
    /// interrupted, what each row finished, and that a row never started.
    #[test]
    fn an_interrupted_header_gives_each_rows_finished_seeds() {
        use crate::aggregate::tests::clean;
        use crate::aggregate::AlgorithmTotals;
        let mut db = AlgorithmTotals::new("db", "db", serde_json::json!({}), true);
        (0..37).for_each(|seed| db.add(&clean(seed, true)));
        let redis = AlgorithmTotals::new("redis", "redis", serde_json::json!({}), true);
        let results = ResultsJson::new("s", "s.toml", 1000.0, 0..200, &[db, redis], vec![]);
        assert_eq!(seeds_text(&results), "seeds 0..200");
        let mut cut = results.with_interrupted(true);
        let header = seeds_text(&cut);
        assert_eq!(
            header,
            "<strong class=\"fail\">interrupted</strong>: seeds 0..200 asked, seeds finished: db 37 of 200, redis not run"
        );
        // A live run cut short is judged (a run) but did not finish.
        cut.algorithms[0].seeds_finished = Some(36);
        assert!(seeds_text(&cut).contains("db 36 of 200 (1 cut short), redis not run"), "{}", seeds_text(&cut));
    }

    #[test]
    fn the_results_table_names_each_rows_library_preset() {
        use crate::aggregate::AlgorithmTotals;
        let db = AlgorithmTotals::new("db", "db", serde_json::json!({}), true);
        let plain = ResultsJson::new("s", "s.toml", 1000.0, 0..1, std::slice::from_ref(&db), vec![]);
        assert!(!table(&plain).contains("library"), "no presets: no column");
        let redis = AlgorithmTotals::new("redis", "redis", serde_json::json!({}), true)
            .with_library(Some("redis-py-8".to_string()));
        let t = table(&ResultsJson::new("s", "s.toml", 1000.0, 0..1, &[db, redis], vec![]));
        assert!(t.contains("<th class=\"label\">label</th><th class=\"label\">library</th><th>runs</th>"), "{t}");
        assert!(t.contains("<td class=\"label\">redis</td><td class=\"label\">redis-py-8</td>"), "{t}");
        assert!(t.contains("<td class=\"label\">db</td><td class=\"label\">–</td>"), "{t}");
    }

    /// The double-executions column exists only when some row ran a scheduled workload; a loop
    /// row beside one says it was not scheduled.
    #[test]
    fn the_double_executions_column_shows_only_with_a_scheduled_row() {
        use crate::aggregate::tests::clean;
        use crate::aggregate::AlgorithmTotals;
        let mut looped = AlgorithmTotals::new("db", "db", serde_json::json!({}), true);
        looped.add(&clean(0, true));
        let plain = ResultsJson::new("s", "s.toml", 1000.0, 0..1, std::slice::from_ref(&looped), vec![]);
        assert!(!table(&plain).contains("double executions"));
        let mut job = AlgorithmTotals::new("shedlock", "db", serde_json::json!({}), false);
        let mut m = clean(0, false);
        m.double_executions = Some(2);
        job.add(&m);
        let t = table(&ResultsJson::new("s", "s.toml", 1000.0, 0..1, &[looped, job], vec![]));
        assert!(t.contains("<th>leaked re-grants</th><th>double executions</th>"), "{t}");
        assert!(t.contains("<td class=\"na\">not scheduled</td>"), "{t}");
        assert!(t.contains("<td class=\"bad\">1 (100%)"), "{t}");
    }

    /// A live run's page lists its failing seeds but gives no replay command (as `sim live`).
    #[test]
    fn a_live_runs_failing_seeds_come_without_a_replay_command() {
        use crate::aggregate::tests::{clean, failing as failing_seed};
        use crate::aggregate::AlgorithmTotals;
        let mut redis = AlgorithmTotals::new("redis", "redis", serde_json::json!({}), true);
        redis.add(&clean(0, true));
        redis.add(&failing_seed(1, true));
        let simulated = ResultsJson::new("s", "s.toml", 1000.0, 0..2, &[redis], vec![]);
        assert!(failing(&simulated, &[]).contains("Replay: <code>sim run s.toml"), "{}", failing(&simulated, &[]));
        let mut live = simulated.clone();
        live.mode = Some("live".to_string());
        let text = failing(&live, &[]);
        assert!(text.contains("seed 1") && text.contains("not replayable"), "{text}");
        assert!(!text.to_lowercase().contains("replay:"), "{text}");
        assert!(index_html(&simulated, &[], &[], &[]).contains("every number above replays exactly from its seed"));
        let page = index_html(&live, &[], &[], &[]);
        assert!(!page.contains("replays exactly") && !page.contains("Failing seeds and replay"), "{page}");
    }

    #[test]
    fn a_description_links_its_source_addresses() {
        let text =
            "Source: https://github.com/etcd-io/etcd/issues/11456 (etcd 3.4.3). See https://x.org/a?b=1&c=\"2\".";
        assert_eq!(
            linked(&escape(text)),
            "Source: <a href=\"https://github.com/etcd-io/etcd/issues/11456\">https://github.com/etcd-io/etcd/issues/11456</a> \
(etcd 3.4.3). See <a href=\"https://x.org/a?b=1&amp;c=&quot;2&quot;\">https://x.org/a?b=1&amp;c=&quot;2&quot;</a>."
        );
        assert_eq!(linked("no address"), "no address");
    }

    /// The scorecard stands in its own static block right under the results table (no script
    /// needed), not among the charts further down; a page without one has no block.
    #[test]
    fn the_scorecard_is_a_block_under_the_results_table() {
        let results = ResultsJson::new("s", "s.toml", 1000.0, 0..1, &[], vec![]);
        let chart = |png: &str| ChartSection {
            heading: png.trim_end_matches(".png").to_string(),
            caption: "how to read it".to_string(),
            svg: format!("<?xml version=\"1.0\"?>\n<svg id=\"{png}\"></svg>"),
            png_name: png.to_string(),
        };
        let page = index_html(&results, &[chart("throughput.png"), chart(SCORECARD_PNG)], &[], &[]);
        let block = page.find("<section class=\"scorecard\">").expect("a scorecard block");
        assert!(page.find("</table>").unwrap() < block, "under the table");
        assert!(block < page.find("<h2>Expectations</h2>").unwrap(), "near the top, before the charts");
        assert_eq!(page.matches("<svg id=\"scorecard.png\">").count(), 1, "shown once");
        assert!(page.find("<svg id=\"throughput.png\">").unwrap() > page.find("<h2>Charts</h2>").unwrap());
        let without = index_html(&results, &[chart("throughput.png")], &[], &[]);
        assert!(!without.contains("scorecard"));
    }

    /// The results table (16 columns and more) sits in a container that is wider than the text
    /// column and scrolls sideways, so it is never cut (issue 37: at 1 400 px the columns from
    /// messages per acquisition on were cut off).
    #[test]
    fn the_results_table_scrolls_within_its_container() {
        let results = ResultsJson::new("s", "s.toml", 1000.0, 0..1, &[], vec![]);
        let t = table(&results);
        assert!(t.starts_with("<div class=\"table-scroll\">\n<table id=\"results\">"), "{t}");
        assert!(t.contains("</table>\n</div>"), "{t}");
        assert!(STYLE.contains("div.table-scroll{overflow-x:auto;"), "{STYLE}");
        assert!(!STYLE.contains("#results td{white-space:nowrap}"), "cells may wrap, so the table fits");
    }

    #[test]
    fn inline_svg_drops_the_prologue() {
        assert_eq!(inline_svg("<?xml version=\"1.0\"?>\n<svg a=\"1\"></svg>"), "<svg a=\"1\"></svg>");
    }
}
