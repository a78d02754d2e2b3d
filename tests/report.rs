//! Report directories as a user gets them: `sim run --report DIR` writes every chart (SVG and
//! PNG), the results and `index.html`; `sim report` rebuilds the same page from the saved
//! results alone; bad directories and files are exit 2; and the page renders in headless
//! Chromium with every chart drawn and every algorithm's row present.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::xml::xml_root;

fn sim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim")).args(args).output().expect("sim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("locksim-report-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Two cheap models, a client pause long enough to lapse Redlock's lease, three seeds.
const SCENARIO: &str = r#"name = "report-test"
description = "A holder pauses past its lease."
duration_ms = 4000
seeds = 3
algorithms = ["redlock", "db"]

[workload]
clients = 3
hold_ms = { uniform = [5, 20] }

[models.redlock]
ttl_ms = 300

[[faults]]
kind = "pause"
target = "holder"
at_ms = 1000
duration_ms = 1500
"#;

const CHARTS: &[&str] = &["throughput", "latency-cdf", "violations", "cost", "scorecard", "timeline"];

fn run_report(name: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(name);
    let file = dir.join("scenario.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = dir.join("report");
    let (code, stdout, err) = sim(&["run", file.to_str().unwrap(), "--report", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{err}");
    (dir, out)
}

#[test]
fn run_with_report_writes_every_chart_and_the_page() {
    let (_dir, out) = run_report("run");
    for c in CHARTS {
        let svg = std::fs::read_to_string(out.join(format!("{c}.svg"))).unwrap_or_else(|e| panic!("{c}.svg: {e}"));
        assert!(svg.contains("<svg"), "{c}.svg is an SVG");
        let png = std::fs::read(out.join(format!("{c}.png"))).unwrap_or_else(|e| panic!("{c}.png: {e}"));
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{c}.png is a PNG");
    }
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    for needle in [
        "<h1>report-test</h1>",
        "A holder pauses past its lease.",
        "data-label=\"redlock\"",
        "data-label=\"db\"",
        "cannot be fenced",
        "kind = &quot;pause&quot;",
    ] {
        assert!(html.contains(needle), "index.html lacks {needle}");
    }
    assert_eq!(
        html.matches("<svg").count(),
        CHARTS.len() + explained(&out).len(),
        "every chart and diagram is inlined"
    );
    // The charts name the shipped font, and the page carries it, so they render alike anywhere.
    assert!(html.contains("font-family=\"DejaVu Sans, sans-serif\""), "the charts name DejaVu Sans");
    assert!(html.contains("@font-face{font-family:'DejaVu Sans'"), "the page embeds the font");
    assert!(html.contains("src:url(data:font/ttf;base64,AAEAAA"), "as a TrueType data URL");
    // Scripts are inlined (the interactive timeline's): none is fetched.
    for external in ["src=\"http", "href=\"http", "<link", "<script src", "url(http"] {
        assert!(!html.contains(external), "self-contained: no {external}");
    }
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["scenario_text"], serde_json::Value::from(SCENARIO));
    // The pause lapses Redlock's 300 ms lease: a failing seed, which the timeline shows.
    let failing = results["algorithms"][0]["failing_seeds"].as_array().unwrap();
    assert!(!failing.is_empty(), "redlock fails in some seed: {results}");
    assert!(html.contains(&format!("seed {}, the first failing seed", failing[0])), "timeline seed named");
    // The failing row's replay command is on the page, as `sim run --json` records it.
    let replay = results["algorithms"][0]["replay"].as_str().expect("a failing row has a replay command");
    assert!(replay.contains(&format!("--seed {}", failing[0])), "{replay}");
    assert!(html.contains(replay), "index.html lacks the replay command {replay}");
}

#[test]
fn report_from_saved_results_gives_the_same_page_even_without_the_scenario_file() {
    let (dir, out) = run_report("saved");
    std::fs::remove_file(dir.join("scenario.toml")).unwrap();
    let again = dir.join("again");
    let (code, stdout, err) =
        sim(&["report", out.join("results.json").to_str().unwrap(), "--out", again.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{err}");
    for f in
        ["index.html", "results.json", "timeline.svg", "violations.svg", "explain-redlock.svg", "explain-redlock.png"]
    {
        let a = std::fs::read(out.join(f)).unwrap();
        let b = std::fs::read(again.join(f)).unwrap();
        assert!(a == b, "{f} differs between `sim run --report` and `sim report`");
    }
}

#[test]
fn an_existing_directory_is_updated_not_wiped() {
    let dir = temp_dir("keep");
    let file = dir.join("scenario.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = dir.join("report");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let (code, _, err) = sim(&["run", file.to_str().unwrap(), "--seeds", "1", "--report", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
    assert!(out.join("index.html").exists());
}

#[test]
fn bad_report_targets_and_results_files_are_exit_2() {
    let dir = temp_dir("bad");
    let file = dir.join("scenario.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let a_file = dir.join("plain-file");
    std::fs::write(&a_file, "x").unwrap();
    let (code, _, err) = sim(&["run", file.to_str().unwrap(), "--report", a_file.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a directory"), "{err}");
    let under_file = a_file.join("sub");
    let (code, _, err) = sim(&["run", file.to_str().unwrap(), "--report", under_file.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--report") && err.contains("cannot create the directory"), "{err}");
    // A directory that exists but cannot be written into is refused before the run.
    if Path::new("/proc/self").is_dir() {
        let (code, out, err) = sim(&["run", file.to_str().unwrap(), "--report", "/proc/self"]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("--report /proc/self: cannot write in the directory"), "{err}");
        assert!(out.is_empty(), "nothing ran: {out}");
    }
    let (code, _, err) = sim(&["report", "no/such.json", "--out", a_file.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no/such.json"), "the results are read first: {err}");

    let not_json = dir.join("results.json");
    std::fs::write(&not_json, "{\n  \"scenario\": 5\n}\n").unwrap();
    let (code, _, err) = sim(&["report", not_json.to_str().unwrap(), "--out", dir.join("o").to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("results.json:2:") && err.contains("not a locksim results file"), "{err}");
    let (code, _, err) = sim(&["report", "no/such.json", "--out", dir.join("o").to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no/such.json"), "{err}");

    // `sim report` names its own option.
    let results = dir.join("saved.json");
    let (code, _, err) = sim(&["run", file.to_str().unwrap(), "--seeds", "1", "--json", results.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = sim(&["report", results.to_str().unwrap(), "--out", a_file.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--out ") && err.contains("not a directory") && !err.contains("--report"), "{err}");
}

/// The first of `chromium`, `chromium-browser`, `google-chrome` found on PATH, as `.ci/run` looks.
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"].iter().find_map(|name| on_path(name))
}

/// `name` as an executable file in a PATH directory.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// Whether `.ci/run` could have installed Chromium here: running as root with apt-get on PATH.
fn could_install_chromium() -> bool {
    #[cfg(unix)]
    let root = {
        use std::os::unix::fs::MetadataExt;
        // The owner of /proc/self is the process's user: no `id` binary needed.
        std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
    };
    #[cfg(not(unix))]
    let root = false;
    root && on_path("apt-get").is_some()
}

/// A line the test harness shows even when it captures the test's output (as it does without
/// `--nocapture`): the capture only takes `print!`/`eprint!`, not writes to the stderr handle.
fn say_uncaptured(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}

#[test]
fn the_xml_check_tells_well_formed_from_broken() {
    assert_eq!(
        xml_root("<?xml version=\"1.0\"?>\n<svg a=\"1\" b='x &amp; y'><g><text>a &lt; b</text></g><rect/></svg>\n"),
        Ok("svg".into())
    );
    for bad in [
        "<svg><g></svg>",
        "<svg><g>",
        "<svg a=1></svg>",
        "<svg a=\"1\" a=\"2\"></svg>",
        "<svg></svg><svg></svg>",
        "<svg>&bogus;</svg>",
        "<svg><text>a < b</text></svg>",
        "text<svg></svg>",
        "",
    ] {
        assert!(xml_root(bad).is_err(), "{bad:?} passed");
    }
}

/// The rows whose first violation the report explains: every row with a failing seed.
fn explained(out: &Path) -> Vec<String> {
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    results["algorithms"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| !a["failing_seeds"].as_array().unwrap().is_empty())
        .map(|a| a["label"].as_str().unwrap().to_string())
        .collect()
}

/// What the report directory must hold, checked without a browser: `index.html` references every
/// chart (its figure, its inlined SVG and its PNG), every SVG file and inlined copy is well-formed
/// XML with an `<svg>` root, and every PNG is a non-empty PNG.
fn check_page_files(out: &Path) {
    let html = std::fs::read_to_string(out.join("index.html")).expect("index.html is written");
    for c in CHARTS {
        assert!(html.contains(&format!("<figure class=\"chart\" id=\"{c}\">")), "index.html has no figure for {c}");
        assert!(html.contains(&format!("href=\"{c}.png\"")), "index.html does not link {c}.png");
        let svg = std::fs::read_to_string(out.join(format!("{c}.svg"))).unwrap_or_else(|e| panic!("{c}.svg: {e}"));
        assert_eq!(xml_root(&svg).as_deref(), Ok("svg"), "{c}.svg is not well-formed XML with an <svg> root");
        let png = std::fs::read(out.join(format!("{c}.png"))).unwrap_or_else(|e| panic!("{c}.png: {e}"));
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{c}.png lacks the PNG signature");
        // Past the signature: an IHDR chunk of 13 bytes with a non-zero width and height.
        assert!(png.len() > 33 && &png[12..16] == b"IHDR", "{c}.png has no image header ({} bytes)", png.len());
        let (w, h) =
            (u32::from_be_bytes(png[16..20].try_into().unwrap()), u32::from_be_bytes(png[20..24].try_into().unwrap()));
        assert!(w > 0 && h > 0, "{c}.png is {w}x{h}");
    }
    // Each failing row's first violation: its section with the narrative, and its diagram as a
    // well-formed SVG inlined and on disk, and a PNG.
    let rows = explained(out);
    assert!(rows.contains(&"redlock".to_string()), "redlock fails, so its first violation is explained");
    for label in &rows {
        let anchor = format!("explain-{label}");
        assert!(html.contains(&format!("<section class=\"explain\" id=\"{anchor}\">")), "no explanation of {label}");
        let section = &html[html.find(&format!("id=\"{anchor}\"")).unwrap()..];
        assert!(section.contains("<ol>\n<li>") && section.contains(" was granted key 0 at "), "{label}: no narrative");
        assert!(html.contains(&format!("href=\"{anchor}.png\"")), "index.html does not link {anchor}.png");
        let svg =
            std::fs::read_to_string(out.join(format!("{anchor}.svg"))).unwrap_or_else(|e| panic!("{anchor}.svg: {e}"));
        assert_eq!(xml_root(&svg).as_deref(), Ok("svg"), "{anchor}.svg is not well-formed XML with an <svg> root");
        let png = std::fs::read(out.join(format!("{anchor}.png"))).unwrap_or_else(|e| panic!("{anchor}.png: {e}"));
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 1_000, "{anchor}.png is not a drawn PNG");
    }
    // The timeline's overlaps link to the explanation of a row explained at the timeline's seed.
    let timeline = std::fs::read_to_string(out.join("timeline.svg")).unwrap();
    assert!(
        timeline.contains("<a href=\"#explain-redlock\">"),
        "the timeline's overlaps link to redlock's explanation"
    );
    // Every inlined chart is a complete SVG element, well-formed on its own.
    let mut inlined = 0;
    for (start, _) in html.match_indices("<svg") {
        let end = html[start..].find("</svg>").map(|e| start + e + "</svg>".len());
        let svg = &html[start..end.unwrap_or(html.len())];
        assert_eq!(
            xml_root(svg).as_deref(),
            Ok("svg"),
            "an inlined chart is not well-formed XML: {}…",
            &svg[..svg.len().min(200)]
        );
        inlined += 1;
    }
    assert_eq!(inlined, CHARTS.len() + rows.len(), "every chart and diagram is inlined once");
}

/// The page in a real browser: a script appended to a copy of it measures every chart and row
/// after layout and writes what it found into the DOM, which Chromium dumps. Without Chromium
/// on PATH the page's files are still checked, and the test says (uncaptured) that it skipped
/// the browser; under `CI=true` where `.ci/run` could have installed Chromium (root, apt-get),
/// a missing browser is a failure, not a skip.
#[test]
fn the_page_renders_in_headless_chromium() {
    let (dir, out) = run_report("chromium");
    check_page_files(&out);
    let Some(browser) = chromium() else {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        assert!(
            !(ci && could_install_chromium()),
            "CI=true, running as root with apt-get, yet no chromium, chromium-browser or google-chrome on PATH: \
             .ci/run should have installed it (apt-get install chromium)"
        );
        say_uncaptured(
            "SKIPPED: the_page_renders_in_headless_chromium: browser check skipped, no chromium, chromium-browser or \
             google-chrome on PATH (Debian: apt-get install chromium; .ci/run does); the page's files were checked",
        );
        return;
    };
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let probe = r#"<script>
const charts = [...document.querySelectorAll('figure.chart svg')]
  .filter(s => { const r = s.getBoundingClientRect(); return r.width > 300 && r.height > 150; }).length;
const rows = [...document.querySelectorAll('#results tr[data-label]')]
  .filter(r => r.getBoundingClientRect().height > 0).map(r => r.dataset.label).join(',');
const texts = [...document.querySelectorAll('figure.chart svg text')].length;
const faces = [...document.fonts].filter(f => f.family.includes('DejaVu Sans')).length;
const diagrams = [...document.querySelectorAll('section.explain figure.diagram svg')]
  .filter(s => { const r = s.getBoundingClientRect(); return r.width > 300 && r.height > 300; }).length;
const links = [...document.querySelectorAll('figure.chart svg a')].map(a => a.getAttribute('href'));
const linked = links.length > 0 && links.every(h => h.startsWith('#') && document.getElementById(h.slice(1)));
const p = document.createElement('p'); p.id = 'probe';
p.textContent = `charts=${charts} rows=${rows} faces=${faces} diagrams=${diagrams} linked=${linked} texts=${texts}`; document.body.appendChild(p);
</script></body>"#;
    let checked = out.join("check.html");
    std::fs::write(&checked, html.replace("</body>", probe)).unwrap();
    let profile = dir.join("chromium-profile");
    let output = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,900",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", absolute(&checked).display()))
        .output()
        .unwrap_or_else(|e| panic!("{} starts: {e}", browser.display()));
    let dom = String::from_utf8_lossy(&output.stdout);
    let probe_line = dom
        .lines()
        .find(|l| l.contains("id=\"probe\""))
        .unwrap_or_else(|| panic!("no probe result; chromium said: {}", String::from_utf8_lossy(&output.stderr)));
    assert!(probe_line.contains(&format!("charts={}", CHARTS.len())), "{probe_line}");
    assert!(probe_line.contains("rows=redlock,db"), "{probe_line}");
    assert!(probe_line.contains("faces=1"), "the embedded font face is the page's: {probe_line}");
    let rows = explained(&out);
    assert!(
        probe_line.contains(&format!("diagrams={}", rows.len())),
        "every explanation's diagram is drawn: {probe_line}"
    );
    assert!(
        probe_line.contains("linked=true"),
        "the timeline's overlap links lead to sections of the page: {probe_line}"
    );
    let texts: usize = probe_line.split("texts=").nth(1).and_then(|t| t.split('<').next()).unwrap().parse().unwrap();
    assert!(texts > 20, "charts carry titles, labels and legends as text: {probe_line}");
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap().join(p)
    }
}

/// Results saved before `description`, `scenario_text`, `acquire_latency_cdf_ms` and `rules_out`
/// existed (all read with defaults), as `tests/fixtures/results-before-scenario-text.json` holds.
const OLD_RESULTS: &str = "tests/fixtures/results-before-scenario-text.json";

/// README, "Reports and charts": results from before `scenario_text` look for the file they
/// name, then beside themselves, and the page says why it has no timeline when neither works;
/// `sim report` exits 0.
#[test]
fn results_from_an_older_version_still_make_a_report() {
    let old: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(OLD_RESULTS).unwrap()).unwrap();
    assert!(old.get("scenario_text").is_none() && old.get("description").is_none(), "the fixture is old");
    assert!(old["algorithms"][0].get("acquire_latency_cdf_ms").is_none(), "the fixture is old");
    assert!(
        !Path::new(old["file"].as_str().unwrap()).exists(),
        "the scenario it names is not in the working directory"
    );

    // Alone: no scenario anywhere, so the page has every chart but the timeline, and says why.
    let dir = temp_dir("old-alone");
    let results = dir.join("results-old.json");
    std::fs::copy(OLD_RESULTS, &results).unwrap();
    let out = dir.join("report");
    let (code, stdout, err) = sim(&["report", results.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(err.contains("note: no timeline: the results record no scenario text (they predate it)"), "{err}");
    let html = std::fs::read_to_string(out.join("index.html")).expect("index.html is written");
    assert!(html.contains("<h1>report-test</h1>"), "the page names the scenario");
    assert!(html.contains("data-label=\"redlock\"") && html.contains("data-label=\"db\""), "both rows are on the page");
    assert!(
        html.contains("No timeline and no explanations: the results record no scenario text (they predate it), and the scenario file old-report.toml was not found."),
        "the page says why it has no timeline"
    );
    assert!(!out.join("timeline.svg").exists(), "no timeline without a scenario");
    for c in CHARTS.iter().filter(|c| **c != "timeline") {
        assert!(html.contains(&format!("href=\"{c}.png\"")), "index.html lacks {c}");
        assert!(out.join(format!("{c}.svg")).is_file() && out.join(format!("{c}.png")).is_file(), "{c} is drawn");
    }
    assert_eq!(html.matches("<svg").count(), CHARTS.len() - 1, "every chart but the timeline is inlined");
    // The results are rewritten in the current format: the old fields read back unchanged.
    let rewritten: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert!(rewritten["scenario_text"].is_null(), "{rewritten}");
    for key in ["scenario", "file", "duration_ms", "seeds", "expectations"] {
        assert_eq!(rewritten[key], old[key], "{key}");
    }
    for key in ["runs", "overlap", "failing_seeds", "replay", "throughput_per_s", "acquire_latency_ms"] {
        assert_eq!(rewritten["algorithms"][0][key], old["algorithms"][0][key], "algorithms[0].{key}");
    }
    // Fields it predates are "not measured" (null), never 0.
    for key in ["leaked_regrants", "failed_releases", "wait_ms", "outage_ms", "outage_ms_max", "fairness"] {
        assert!(old["algorithms"][0].get(key).is_none(), "the fixture predates {key}");
        assert!(rewritten["algorithms"][0][key].is_null(), "{key}: {}", rewritten["algorithms"][0][key]);
    }

    // With the scenario file beside the results, the timeline is re-run from it.
    let dir = temp_dir("old-beside");
    let results = dir.join("results-old.json");
    std::fs::copy(OLD_RESULTS, &results).unwrap();
    std::fs::copy("tests/fixtures/old-report.toml", dir.join("old-report.toml")).unwrap();
    let out = dir.join("report");
    let (code, stdout, err) = sim(&["report", results.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(stdout.contains("(timeline: seed 0)"), "{stdout}");
    check_page_files(&out);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(!html.contains("No timeline"), "the timeline is drawn");
    assert!(html.contains("seed 0, the first failing seed"), "timeline seed named");
}

/// The server lanes' leader changes (`History::leaders`) follow what the `leader` selector
/// reads: in failover.toml, which crashes `leader`, the crashed server is the one claiming to
/// lead just before the crash and stops at its start; ZooKeeper and etcd elect another server in
/// a later term after it, while db's only server leads again, in the same epoch, at its restart.
/// Recorded in process, the trace off: the changes are not trace lines.
#[test]
fn leader_changes_show_the_crashed_leader_and_the_one_elected_after_it() {
    use locksim_simulator::batch::run_seed;
    use locksim_simulator::history::LeaderChange;
    use locksim_simulator::run::RunOptions;
    let models = locksim_algorithms::registry();
    let scenario = locksim_simulator::scenario::load_file(Path::new("scenarios/failover.toml"), &models).unwrap();
    for label in ["zookeeper", "etcd", "db"] {
        let run = scenario.runs.iter().find(|r| r.label == label).unwrap();
        for seed in 0..2 {
            let h = run_seed(&scenario, run, seed, &RunOptions { trace: false }).unwrap().history;
            let what = format!("{label} seed {seed}: {:?}", h.leaders);
            let crash = &h.faults[0];
            let crashed = h.node_names.iter().position(|n| *n == crash.targets).expect("one server crashed");
            let before = h.leaders.iter().filter(|l| l.at_ns < crash.start_ns).fold(
                vec![None; h.node_names.len()],
                |mut c, l| {
                    c[l.node] = l.term;
                    c
                },
            );
            let leading: Vec<usize> = (0..before.len()).filter(|&n| before[n].is_some()).collect();
            assert_eq!(leading, [crashed], "only the crashed server led just before the crash: {what}");
            let term = before[crashed].unwrap();
            let at_crash = LeaderChange { node: crashed, at_ns: crash.start_ns, term: None };
            assert!(h.leaders.contains(&at_crash), "it stops leading as it crashes: {what}");
            let next = h.leaders.iter().find(|l| l.at_ns > crash.start_ns && l.term.is_some()).expect(&what);
            if label == "db" {
                let restart = crash.end_ns.unwrap();
                assert_eq!(*next, LeaderChange { node: crashed, at_ns: restart, term: Some(term) }, "{what}");
            } else {
                assert!(next.node != crashed && next.term.unwrap() > term, "another server, a later term: {what}");
                assert!(h.node_names[next.node].starts_with("server-"), "{what}");
            }
            assert!(h.leaders.windows(2).all(|w| w[0].at_ns <= w[1].at_ns), "in time order: {what}");
        }
    }
}
