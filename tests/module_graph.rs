//! The import graph between the top-level modules of each crate has no cycle: a module may use
//! the modules below it, never one that uses it back (the simulator's `lib.rs` lists its modules
//! bottom-up). Read from the sources: every `crate::NAME` a file of module A mentions is an edge
//! A → NAME. A test fails with the cycle it found. Between crates, every `locksim-*` dependency
//! points down the layers docs/architecture.md draws; the engine calls no checker and the
//! reports run no seed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`engine` for `src/engine/network.rs`), or None for
/// the crate root.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next()?.as_os_str().to_string_lossy().to_string();
    let name = first.trim_end_matches(".rs").to_string();
    (name != "lib" && name != "main").then_some(name)
}

/// Edges between top-level modules, from `crate::NAME` mentions outside comments.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(src, f)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let Some(from) = module_of(src, f) else { continue };
        let text = std::fs::read_to_string(f).expect("readable");
        // Unit tests may reach anywhere; they are not part of the module's dependencies.
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        for line in text.lines().map(str::trim_start).filter(|l| !l.starts_with("//")) {
            let mut rest = line;
            while let Some(i) = rest.find("crate::") {
                rest = &rest[i + "crate::".len()..];
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if name != from && modules.contains(&name) {
                    edges.entry(from.clone()).or_default().insert(name);
                }
            }
        }
    }
    edges
}

/// A cycle, if the graph has one.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == n) {
            let mut cycle = path[at..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for n in edges.keys() {
        if let Some(c) = visit(n, edges, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

/// Every crate's source directory: each is scanned.
const CRATES: [&str; 7] =
    ["simulator/src", "algorithms/src", "reports/src", "charts/src", "live/src", "campaign/src", "src"];

/// Edges known to close a cycle, each to be removed by the change named beside it; the test
/// leaves them out, so any other cycle fails, and fails when one of them is gone (delete it here).
/// None today.
const KNOWN_CYCLE_EDGES: [(&str, &str, &str); 0] = [];

#[test]
fn no_crate_has_an_import_cycle_between_its_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for krate in CRATES {
        let mut edges = graph(&root.join(krate));
        assert!(!edges.is_empty() || krate == "charts/src", "{krate}: no edges read; is the scan broken?");
        for (_, from, to) in KNOWN_CYCLE_EDGES.iter().filter(|(k, _, _)| *k == krate) {
            let removed = edges.get_mut(*from).is_some_and(|e| e.remove(*to));
            assert!(removed, "{krate}: {from} → {to} is gone: remove it from KNOWN_CYCLE_EDGES");
        }
        if let Some(cycle) = find_cycle(&edges) {
            panic!("{krate}: import cycle {}", cycle.join(" → "));
        }
    }
}

/// The crates bottom-up, as docs/architecture.md draws them: a crate may depend only on crates
/// listed before it.
const LAYERS: [(&str, &str); 7] = [
    ("locksim-simulator", "simulator"),
    ("locksim-charts", "charts"),
    ("locksim-algorithms", "algorithms"),
    ("locksim-reports", "reports"),
    ("locksim-campaign", "campaign"),
    ("locksim-live", "live"),
    ("locksim", "."),
];

/// The `locksim-*` crates in a manifest's `[dependencies]` (not dev- or build-dependencies).
fn locksim_dependencies(manifest: &str) -> Vec<String> {
    let mut in_deps = false;
    let mut deps = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
        } else if in_deps && line.starts_with("locksim-") {
            deps.push(line.split(['.', ' ', '=']).next().unwrap_or_default().to_string());
        }
    }
    deps
}

#[test]
fn crate_dependencies_point_down_the_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut arrows = 0;
    for (i, (name, dir)) in LAYERS.iter().enumerate() {
        let manifest = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).expect("manifest");
        for dep in locksim_dependencies(&manifest) {
            let at = LAYERS.iter().position(|(n, _)| *n == dep);
            assert!(at.is_some(), "{name} depends on {dep}, which is in no layer: add it to LAYERS and the page");
            assert!(at < Some(i), "{name} → {dep} points up the layers of docs/architecture.md");
            arrows += 1;
        }
    }
    assert!(arrows >= 8, "only {arrows} arrows read; is the manifest scan broken?");
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&edges), None);
    edges.entry("c".into()).or_default().insert("a".into());
    assert_eq!(find_cycle(&edges), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
}

#[test]
fn the_manifest_scan_reads_only_dependencies() {
    let manifest = "[package]\nname = \"x\"\n[dependencies]\nlocksim-simulator.workspace = true\nlocksim-reports = { path = \"r\" }\n[dev-dependencies]\nlocksim-algorithms.workspace = true\n";
    assert_eq!(locksim_dependencies(manifest), ["locksim-simulator", "locksim-reports"]);
}

/// Every `.rs` file under `dir` (relative to the workspace; or that file) whose text mentions one
/// of `needles`.
fn files_mentioning(dir: &str, needles: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    match root.join(dir) {
        file if file.is_file() => files.push(file),
        dir => rust_files(&dir, &mut files),
    }
    assert!(!files.is_empty(), "{dir}: no sources read; is the scan broken?");
    files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).expect("source");
            needles.iter().any(|n| text.contains(n))
        })
        .map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string())
        .collect()
}

/// What of the checkers the reports use: types, and the pure helpers that rebuild what the checks
/// read (`intervals`: holder intervals and waits, `Timeline::from_history`, `ordered`) or list
/// the pairs the overlap check judges (`overlap::for_each_pair`), to draw and tell them, and the
/// empty latency histogram a row's totals start from (`metrics::new_histogram`). No check: the
/// violations and metrics they show are the campaign's (or live's), handed over.
const REPORTS_CHECKER_USES: [&str; 13] = [
    "self",
    "intervals",
    "EndCause",
    "WaitOutcome",
    "ordered",
    "Interval",
    "Timeline",
    "overlap",
    "for_each_pair",
    "Violation",
    "SeedMetrics",
    "metrics",
    "new_histogram",
];

/// Every name used through a `checker::` path (or one of its `overlap::`, `intervals::`,
/// `metrics::` modules) in the non-test code of the `.rs` files under `dir`, with its file.
fn checker_names(dir: &Path) -> BTreeSet<(String, String)> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let mut names = BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("source");
        let code: Vec<&str> = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect();
        let code = code.join("\n");
        let file = f.display().to_string();
        for module in ["checker::", "overlap::", "intervals::", "metrics::"] {
            for (at, _) in code.match_indices(module) {
                // The path that follows: names and `::`, and a `{…}` group (which may span lines).
                let rest = &code[at + module.len()..];
                let (mut depth, mut end) = (0usize, rest.len());
                for (i, c) in rest.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth > 0 => {
                            depth -= 1;
                            if depth == 0 {
                                end = i;
                                break;
                            }
                        }
                        c if c.is_alphanumeric() || c == '_' || c == ':' || depth > 0 => {}
                        _ => {
                            end = i;
                            break;
                        }
                    }
                }
                for name in rest[..end].split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|n| !n.is_empty()) {
                    names.insert((file.clone(), name.to_string()));
                }
            }
        }
    }
    names
}

#[test]
fn the_checker_scan_reads_grouped_and_plain_paths() {
    let dir = std::env::temp_dir().join(format!("locksim-checker-scan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let code = "use a::checker::{check_keeping, overlap,\n    Timeline};\n// checker::check in a comment\n\
                fn f() { overlap::check_key(k); Timeline::from_history(h); }\n#[cfg(test)]\nuse a::checker::check;\n";
    std::fs::write(dir.join("page.rs"), code).unwrap();
    let names: Vec<String> = checker_names(&dir).into_iter().map(|(_, n)| n).collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(names, ["Timeline", "check_keeping", "check_key", "overlap"]);
}

/// The path of a seed, as docs/architecture.md draws it: the engine records (its run module calls
/// no checker), the campaign checks, and the reports are handed the recorded, checked seeds they
/// name: they run none, and call no checker (only [`REPORTS_CHECKER_USES`]).
#[test]
fn the_engine_calls_no_checker_and_the_reports_run_no_seed() {
    assert_eq!(files_mentioning("simulator/src/run.rs", &["crate::checker", "checker::"]), Vec::<String>::new());
    let seed_runners = ["batch::", "run_seed", "record_seed", "run_ordered", "dyn Fn(&RunSpec"];
    assert_eq!(files_mentioning("reports/src", &seed_runners), Vec::<String>::new());
    let used = checker_names(&Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/src"));
    assert!(used.iter().any(|(_, n)| n == "for_each_pair"), "no checker path read; is the scan broken? {used:?}");
    let checks: Vec<&(String, String)> =
        used.iter().filter(|(_, n)| !REPORTS_CHECKER_USES.contains(&n.as_str())).collect();
    assert!(checks.is_empty(), "the reports call the checkers (file, name): {checks:?}");
}

/// The `locksim-*` dependencies each crate's row of docs/architecture.md's table names ("depends
/// on"), by crate: `—` is none, `all of the above` every crate in an earlier row.
fn documented_dependencies(page: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut crates: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut above: Vec<String> = Vec::new();
    for row in page.lines().filter(|l| l.starts_with("| ") && l.as_bytes().get(2).is_some_and(u8::is_ascii_digit)) {
        let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
        let name = cells[1].split('`').nth(1).expect("crate name in backticks").to_string();
        let deps = match *cells.last().expect("depends-on cell") {
            "—" => BTreeSet::new(),
            "all of the above" => above.iter().cloned().collect(),
            list => list.split(", ").map(|short| format!("locksim-{short}")).collect(),
        };
        above.push(name.clone());
        crates.insert(name, deps);
    }
    crates
}

/// Every arrow between crates is one the page draws, and every arrow it draws is in the code:
/// the order of LAYERS alone would let `reports` use `algorithms`, or `live` use `reports`.
#[test]
fn crate_dependencies_are_those_docs_architecture_md_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/architecture.md")).expect("docs/architecture.md");
    let documented = documented_dependencies(&page);
    assert_eq!(documented.len(), LAYERS.len(), "one row per crate in the page's table: {documented:?}");
    for (name, dir) in LAYERS {
        let manifest = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).expect("manifest");
        let actual: BTreeSet<String> = locksim_dependencies(&manifest).into_iter().collect();
        assert_eq!(Some(&actual), documented.get(name), "{name}: Cargo.toml's locksim dependencies vs the page's row");
    }
}

#[test]
fn the_page_table_scan_reads_each_row() {
    let page = "| layer | crate | owns | depends on |\n|---|---|---|---|\n\
                | 1 | `locksim-simulator` (`simulator/`) | the engine | — |\n\
                | 2 | `locksim-reports` (`reports/`) | totals | simulator, charts |\n\
                | 4 | `locksim` (root) | the binary | all of the above |\n";
    let deps = documented_dependencies(page);
    assert_eq!(deps["locksim-simulator"], BTreeSet::new());
    assert_eq!(deps["locksim-reports"], ["locksim-simulator", "locksim-charts"].map(String::from).into());
    assert_eq!(deps["locksim"], ["locksim-simulator", "locksim-reports"].map(String::from).into());
}

/// The top-level modules a crate's `lib.rs` module map lists (`//! - [`name`]: …` or
/// `//! - `name`: …`), in its order: bottom-up.
fn module_map(lib_rs: &str) -> Vec<String> {
    lib_rs
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .filter_map(|l| l.strip_prefix("//! - "))
        .filter_map(|item| {
            let name = item.trim_start_matches('[').strip_prefix('`')?.split('`').next()?;
            name.chars().all(|c| c.is_alphanumeric() || c == '_').then(|| name.to_string())
        })
        .collect()
}

/// Edges that point up a crate's module map: the map's order, not cycles. `reports`' map wants
/// `expect` before `json` (the results JSON holds the expectations' results), `json` before
/// `shard` (a partial file writes the row's parameters as the JSON does) and `html`'s escaping
/// below `compare`.
const KNOWN_UPWARD_EDGES: [(&str, &str, &str); 3] =
    [("reports/src", "json", "expect"), ("reports/src", "shard", "json"), ("reports/src", "compare", "report")];

/// In `reports`, `live` and `campaign`, whose `lib.rs` module maps are drawn bottom-up
/// (docs/architecture.md: "inside each crate the top-level modules are layered too"), a module
/// uses only modules the map lists before it, and the map lists every module.
#[test]
fn reports_live_and_campaign_modules_point_down_their_module_maps() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for krate in ["reports/src", "live/src", "campaign/src"] {
        let src = root.join(krate);
        let map = module_map(&std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs"));
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(&src, f)).collect();
        let unmapped: Vec<&String> = modules.iter().filter(|m| !map.contains(m)).collect();
        assert!(unmapped.is_empty(), "{krate}: modules missing from lib.rs's module map: {unmapped:?}");
        let edges = graph(&src);
        for (_, from, to) in KNOWN_UPWARD_EDGES.iter().filter(|(k, _, _)| *k == krate) {
            let still = edges.get(*from).is_some_and(|e| e.contains(*to));
            assert!(still, "{krate}: {from} → {to} is gone: remove it from KNOWN_UPWARD_EDGES");
        }
        let mut upward = Vec::new();
        for (from, tos) in edges {
            let at = map.iter().position(|m| *m == from);
            for to in tos {
                let known = KNOWN_UPWARD_EDGES.contains(&(krate, from.as_str(), to.as_str()));
                if map.iter().position(|m| *m == to) > at && !known {
                    upward.push(format!("{from} → {to}"));
                }
            }
        }
        assert!(upward.is_empty(), "{krate}: edges up the lib.rs module map: {upward:?}");
    }
}

#[test]
fn the_module_map_scan_reads_linked_and_plain_names() {
    let lib = "//! Crate.\n//!\n//! Module map:\n//! - [`wilson`]: intervals\n//!   more text\n//! - `smallmap`: a map\n\npub mod wilson;\n";
    assert_eq!(module_map(lib), ["wilson", "smallmap"]);
}
