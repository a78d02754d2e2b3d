//! The report page's interactive timeline and clock plot: a section the page's own script
//! (`timeline.js`, inlined) fills from the recorded histories embedded as JSON
//! ([`super::page_data`]). Without JavaScript the section stays hidden and the static timeline
//! chart beside it is what the page shows. One file still: no fetch, no external script.
//!
//! Which runs are embedded: every row at the timeline's seed, then each row's explained failing
//! seed (the recordings a simulated report is given: [`super::wanted`]), or every history a live
//! run recorded; runs past [`DATA_BUDGET_BYTES`] are left out and the page names them.

use serde_json::{json, Value};

use super::html::escape;
use super::page_data::{run_json, script_safe, PageRun};

/// The script, written by hand (no library), inlined into the page.
pub const SCRIPT: &str = include_str!("timeline.js");

/// The most embedded history JSON a page carries (a 60 s, ten-client run is about a megabyte).
pub const DATA_BUDGET_BYTES: usize = 24 * 1024 * 1024;

const STYLE: &str = "#tl{position:relative;margin:1em 0}#tl .tl-controls{margin:.4em 0;font-size:.9em}\
#tl button,#tl select{font:inherit;font-size:.9em}#tl .tl-main{display:flex;gap:.8em;align-items:flex-start}\
#tl .tl-col{flex:1 1 auto;min-width:0}#tl-view{overflow:hidden;border:1px solid #eee;cursor:crosshair;user-select:none}\
#tl h4{margin:.6em 0 .2em}\
#tl-side{flex:0 0 300px;font-size:.85em;max-height:640px;overflow-y:auto}#tl-side code{overflow-wrap:anywhere}\
#tl .tl-tick,#tl .tl-lane,#tl .tl-fname{font-size:11px;fill:#444}#tl .tl-fname{fill:#a35f00}\
#tl .tl-fault{fill:rgba(255,165,0,.05)}#tl .tl-fault-lane{fill:rgba(255,140,0,.25)}#tl .tl-wait{fill:#c9dcef}\
#tl .tl-hold{fill:#2f6ea8}#tl .tl-shared{fill:#7fb3d5}#tl .tl-write{fill:#222}#tl .tl-stale{fill:#d00;cursor:pointer}\
#tl .tl-overlap{fill:rgba(220,0,0,.55);stroke:#b00;cursor:pointer}#tl .tl-msg{stroke:#555;stroke-width:1.2}\
#tl .tl-lost{stroke-dasharray:3 2;stroke:#b00}#tl .tl-lead{fill:#f2cf6b}#tl .tl-leader{fill:#8a6100}\
#tl .tl-unlead{fill:#fff;stroke:#8a6100;stroke-width:1}#tl .tl-pinned{stroke:#000;stroke-width:2}\
#tl-tip{position:absolute;z-index:5;background:#fffef4;border:1px solid #bbb;padding:.35em .55em;font-size:.8em;\
max-width:320px;box-shadow:0 2px 6px rgba(0,0,0,.15);pointer-events:none}#tl-tip div[data-f=what]{font-weight:bold}\
#tl .tl-legend span{display:inline-block;margin:0 .8em .2em 0;padding-left:.3em;font-size:.8em}\
#tl-selftest{white-space:pre-wrap}";

/// The section (hidden until its script runs), the embedded data and the script. `runs` in the
/// order the selector lists them, each with why it is there; `left_out` names runs the budget
/// dropped.
pub fn section(runs: &[(PageRun, String)]) -> String {
    let mut embedded: Vec<Value> = Vec::new();
    let mut left_out = Vec::new();
    let mut bytes = 0;
    for (run, why) in runs {
        let mut v = run_json(run);
        v["why"] = json!(why);
        let size = v.to_string().len();
        if bytes + size > DATA_BUDGET_BYTES && !embedded.is_empty() {
            left_out.push(format!("{} seed {}", run.label, run.seed));
            continue;
        }
        bytes += size;
        embedded.push(v);
    }
    let data = script_safe(&json!({ "runs": embedded }).to_string());
    let left_out = if left_out.is_empty() {
        String::new()
    } else {
        format!(
            " Left out to keep the page under {} MB of data: {}.",
            DATA_BUDGET_BYTES / (1024 * 1024),
            escape(&left_out.join(", "))
        )
    };
    format!(
        "<style>{STYLE}</style>\n<section id=\"tl\" class=\"explorer\" hidden>\n<h3>Timeline, interactive</h3>\n\
<div class=\"tl-controls\"><label>run <select id=\"tl-run\"></select></label> \
<button id=\"tl-in\" type=\"button\">zoom in</button> <button id=\"tl-out\" type=\"button\">zoom out</button> \
<button id=\"tl-left\" type=\"button\">\u{2190}</button> <button id=\"tl-right\" type=\"button\">\u{2192}</button> \
<button id=\"tl-all\" type=\"button\">whole run</button> <span id=\"tl-range\" class=\"meta\"></span></div>\n\
<div class=\"tl-main\"><div class=\"tl-col\"><div id=\"tl-view\"></div>\n\
<h4>Clocks</h4>\n<div id=\"tl-clock\"></div>\n<p class=\"meta\">Each node's wall clock minus true time over \
the same span: a clock's drift is a slope, a step (<code>clock_jump</code>) a vertical jump.</p></div>\n\
<aside id=\"tl-side\"></aside></div>\n<div id=\"tl-tip\" hidden></div>\n\
<p class=\"meta\">A lane per client (waiting light, holding solid, writes as ticks) and per server (gold while \
it claims to lead, a dark mark where it becomes leader, a hollow one where it stops, as the <code>leader</code> \
selector sees it); fault windows shaded and named (darker on the nodes they hit); overlaps and stale writes in red. Wheel to zoom, drag or \
the arrows to pan; hover a mark for its node, both clocks (true time and the node's wall clock), token and \
history event; click to pin it, and click an overlap or a stale write for what happened. Messages are drawn \
only in a run whose violation is explained below (those its diagram draws, from its replay's trace): a recorded \
history holds none, and every message of a run would outweigh the rest of its data more than tenfold (a 60 s \
ZooKeeper failover sends about 50 000). The runs listed are those this report recorded.{left_out}</p>\n\
<pre id=\"tl-selftest\" hidden></pre>\n</section>\n\
<script type=\"application/json\" id=\"tl-data\">{data}</script>\n<script>\n{SCRIPT}</script>\n"
    )
}

/// `page` with `section` put just before the static timeline chart, so the two timelines sit
/// together; a page without that chart is returned as it is.
pub fn insert(page: String, section: &str) -> String {
    match page.find("<figure class=\"chart\" id=\"timeline\">") {
        Some(at) => {
            let mut out = String::with_capacity(page.len() + section.len());
            out.push_str(&page[..at]);
            out.push_str(section);
            out.push_str(&page[at..]);
            out
        }
        None => page,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::history::History;

    #[test]
    fn the_script_is_small_and_the_section_sits_before_the_static_timeline() {
        assert!(SCRIPT.len() < 300 * 1024, "{} bytes of script", SCRIPT.len());
        let h = History {
            duration_ns: 1_000_000,
            node_names: vec!["client-0".into()],
            clients: vec![0],
            ..History::default()
        };
        let run =
            PageRun { label: "db", seed: 3, history: &h, violations: &[], explained: None, explain_command: None };
        let s = section(&[(run, "the timeline's seed".into())]);
        assert!(s.contains("<section id=\"tl\" class=\"explorer\" hidden>"), "hidden until the script runs");
        assert!(s.contains("\"label\":\"db\"") && s.contains("\"seed\":3"), "{s}");
        let page = insert("<p>a</p><figure class=\"chart\" id=\"timeline\">x</figure>".into(), "[S]");
        assert_eq!(page, "<p>a</p>[S]<figure class=\"chart\" id=\"timeline\">x</figure>");
        assert_eq!(insert("<p>no charts</p>".into(), "[S]"), "<p>no charts</p>", "no timeline, no section");
    }

    /// A live report's page embeds every recorded seed of a row, the static timeline's seed (the
    /// first failing one) first, with no clocks (one machine clock) and no `sim explain` command (no replay).
    #[test]
    fn a_live_pages_selector_holds_every_recorded_seed_and_no_explain_command() {
        use crate::aggregate::tests::{clean, failing};
        use crate::aggregate::AlgorithmTotals;
        use crate::json::ResultsJson;
        use crate::report::{write_report, RecordedHistory, TimelineSource};
        let mut db = AlgorithmTotals::new("db", "db", json!({}), true);
        db.add(&clean(0, true));
        // Seed 1 fails: the static timeline shows it, and the selector lists it first.
        db.add(&failing(1, true));
        let mut results = ResultsJson::new("live-test", "s.toml", 1.0, 0..2, &[db], vec![]);
        results.mode = Some("live".to_string());
        let recorded = |seed| RecordedHistory {
            label: "db".into(),
            seed,
            violations: Vec::new(),
            history: History {
                duration_ns: 1_000_000,
                node_names: vec!["server-0".into(), "client-0".into(), "resource".into()],
                clients: vec![1],
                ..History::default()
            },
        };
        let dir = std::env::temp_dir().join(format!("locksim-explorer-live-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let written =
            write_report(&dir, &results, TimelineSource::Recorded(&[recorded(1), recorded(0)]), None).unwrap();
        let page = std::fs::read_to_string(&written.index).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let open = "<script type=\"application/json\" id=\"tl-data\">";
        let data = &page[page.find(open).unwrap() + open.len()..];
        let data: Value = serde_json::from_str(&data[..data.find("</script>").unwrap()]).unwrap();
        let runs: Vec<(String, u64, String)> = data["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (r["label"].as_str().unwrap().into(), r["seed"].as_u64().unwrap(), r["why"].as_str().unwrap().into())
            })
            .collect();
        assert_eq!(runs, [("db".into(), 1, "the static timeline's seed".into()), ("db".into(), 0, "recorded".into())]);
        assert!(data["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["explain_command"].is_null() && r["clocks"] == json!([])));
        assert!(
            page.find("<section id=\"tl\"").unwrap() < page.find("<figure class=\"chart\" id=\"timeline\">").unwrap()
        );
    }
}
