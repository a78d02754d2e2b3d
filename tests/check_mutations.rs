//! Fuzzing the scenario parser from every shipped scenario (`scenarios/*.toml`,
//! `scenarios/known/*.toml`): each file is mutated (a value changed, a value of another type, the
//! text cut short, random characters or bytes inserted, a section inserted, lines deleted or
//! duplicated) and must never panic the parser. A mutated file is either accepted or refused with
//! an error that places it: the parser's error has a line and a column, and `sim check` exits 0
//! or 2, on 2 printing `FILE:LINE:COL:`.
//!
//! In process (the real model registry, many cases) through `parse_str`, and through the `sim`
//! binary (a few cases per file: each is a process spawn). The mutations are proptest strategies;
//! the binary's cases are drawn from them with a deterministic runner, so every run spawns the
//! same files.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

/// Every shipped scenario: its path relative to the repository and its text (read once).
fn shipped() -> &'static [(String, String)] {
    static FILES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    FILES.get_or_init(read_shipped)
}

fn read_shipped() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["scenarios", "scenarios/known", "scenarios/fidelity"] {
        let rd = std::fs::read_dir(root.join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
        files
            .extend(rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "toml")));
    }
    files.sort();
    assert!(files.len() > 20, "expected the shipped scenarios, found {}", files.len());
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.strip_prefix(root).unwrap().display().to_string(), text)
        })
        .collect()
}

/// Values of every TOML type, and edge cases of each: what a changed value becomes.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "3",
    "9223372036854775807",
    "-9223372036854775808",
    "99999999999999999999",
    "1e308",
    "-1e308",
    "1e-320",
    "0.5",
    "-0.0",
    "nan",
    "inf",
    "-inf",
    "true",
    "false",
    "\"\"",
    "\"none\"",
    "\"some\"",
    "\"< 0.5\"",
    "\"leader\"",
    "\"client-*\"",
    "\"server-99\"",
    "\"crash\"",
    "\"partition\"",
    "\"redis\"",
    "\"é\"",
    "[]",
    "[1, 2]",
    "[\"db\", \"db\"]",
    "[[\"server-0\"], []]",
    "{}",
    "{ uniform = [5, 1] }",
    "{ uniform = [0, 1e308] }",
    "{ normal = { mean = 10, sd = -1 } }",
    "{ exponential = 0 }",
    "{ choice = [] }",
    "{ pareto = 3 }",
    "1979-05-27T07:32:00Z",
    "07:32:00",
    "'''x'''",
];

/// Headers and whole sections a mutation may insert.
const SECTIONS: &[&str] = &[
    "[workload]",
    "[network]",
    "[clocks]",
    "[[faults]]",
    "[[faults]]\nkind = \"pause\"\ntarget = \"holder\"\nat_ms = 1\nduration_ms = 1e12",
    "[[faults]]\nkind = \"partition\"\nat_ms = 0\ngroups = [[\"leader\"], [\"client-*\"]]",
    "[[faults]]\nkind = \"clock_jump\"\ntarget = \"server-*\"\nat_ms = -1\nby_ms = 1e300",
    "[[network.links]]\nfrom = \"client-0\"\nto = \"server-0\"\nloss = 2",
    "[[variants]]\nname = \"v\"\nmodel = \"redis\"",
    "[[variants]]",
    "[models.redis]\nttl_ms = 0",
    "[models.nope]",
    "[expect.nope]\noverlap = \"none\"",
    "[expect]",
    "[workload]\nclients = 100000000",
    "[a.b.c]",
    "x = 1",
    "[[workload]]",
];

/// One edit of a scenario's text. Positions are [`Index`]es, resolved against the text as it is
/// when the edit applies.
#[derive(Clone, Debug)]
enum Mutation {
    /// The value of the n-th `key = value` line becomes one of [`VALUES`].
    ChangeValue(Index, usize),
    /// The n-th `key = value` line's key becomes another key of the file.
    RenameKey(Index, Index),
    /// The text is cut at a character.
    Truncate(Index),
    /// Random characters inserted at a character.
    InsertText(Index, String),
    /// One of [`SECTIONS`] inserted before a line.
    InsertSection(Index, usize),
    /// Up to three lines deleted from a line on.
    DeleteLines(Index, usize),
    /// A line repeated (a duplicate key or header).
    DuplicateLine(Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<Index>(), 0..VALUES.len()).prop_map(|(i, v)| Mutation::ChangeValue(i, v)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(i, k)| Mutation::RenameKey(i, k)),
        1 => any::<Index>().prop_map(Mutation::Truncate),
        2 => (any::<Index>(), "[\\PC\\n\\[\\]{}=\",.#'\\\\]{1,8}").prop_map(|(i, s)| Mutation::InsertText(i, s)),
        2 => (any::<Index>(), 0..SECTIONS.len()).prop_map(|(i, s)| Mutation::InsertSection(i, s)),
        2 => (any::<Index>(), 1usize..4).prop_map(|(i, n)| Mutation::DeleteLines(i, n)),
        1 => any::<Index>().prop_map(Mutation::DuplicateLine),
    ]
}

/// A shipped file (by index) and the edits applied to it in order.
fn mutated_file(files: usize) -> impl Strategy<Value = (usize, Vec<Mutation>)> {
    (0..files, prop::collection::vec(mutation(), 1..4))
}

/// The byte offset of the character `at` selects in `text` (the end included).
fn char_at(text: &str, at: &Index) -> usize {
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    bounds[at.index(bounds.len())]
}

/// Lines that assign a key (`key = value`), as (line index, key, byte offset of the value).
fn assignments(lines: &[String]) -> Vec<(usize, String, usize)> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(n, l)| {
            let (key, _) = l.split_once('=')?;
            let key = key.trim();
            let plain = !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || "_-.".contains(c));
            plain.then(|| (n, key.to_string(), l.find('=').unwrap() + 1))
        })
        .collect()
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    match m {
        Mutation::ChangeValue(at, v) => {
            let keys = assignments(&lines);
            if keys.is_empty() {
                return text.to_string();
            }
            let (n, _, value_at) = &keys[at.index(keys.len())];
            lines[*n] = format!("{} {}", &lines[*n][..*value_at], VALUES[*v]);
        }
        Mutation::RenameKey(at, other) => {
            let keys = assignments(&lines);
            if keys.is_empty() {
                return text.to_string();
            }
            let (n, key, _) = &keys[at.index(keys.len())];
            let (_, new_key, _) = &keys[other.index(keys.len())];
            lines[*n] = lines[*n].replacen(key.as_str(), new_key, 1);
        }
        Mutation::Truncate(at) => return text[..char_at(text, at)].to_string(),
        Mutation::InsertText(at, s) => {
            let i = char_at(text, at);
            return format!("{}{s}{}", &text[..i], &text[i..]);
        }
        Mutation::InsertSection(at, s) => {
            let n = at.index(lines.len() + 1);
            lines.insert(n, SECTIONS[*s].to_string());
        }
        Mutation::DeleteLines(at, count) => {
            let n = at.index(lines.len());
            let end = (n + count).min(lines.len());
            lines.drain(n..end);
        }
        Mutation::DuplicateLine(at) => {
            let n = at.index(lines.len());
            let line = lines[n].clone();
            lines.insert(n, line);
        }
    }
    lines.join("\n")
}

/// The mutated text of one case.
fn mutate(files: &[(String, String)], (file, edits): &(usize, Vec<Mutation>)) -> String {
    edits.iter().fold(files[*file].1.clone(), |text, m| apply(&text, m))
}

// ---------------------------------------------------------------- in process

proptest! {
    // Parsing is fast (about 0.1 ms a file), so 10 000 cases take a second or two.
    #![proptest_config(ProptestConfig { cases: 10000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_shipped_scenarios_parse_or_fail_with_a_position(case in mutated_file(shipped().len())) {
        let files = shipped();
        let text = mutate(files, &case);
        let models = locksim_algorithms::registry();
        let name = &files[case.0].0;
        if let Err(e) = locksim_simulator::scenario::parse_str(name, &text, &models) {
            let lines = text.split('\n').count();
            prop_assert!(e.line.is_some() && e.column.is_some(), "no position: {}", e);
            prop_assert!(e.line.unwrap() >= 1 && e.line.unwrap() <= lines, "line out of the file: {}", e);
            prop_assert!(e.column.unwrap() >= 1, "column 0: {}", e);
            prop_assert!(e.to_string().starts_with(&format!("{name}:")), "{}", e);
            prop_assert!(!e.message.trim().is_empty() && !e.message.trim_end().ends_with(':'), "empty reason: {}", e);
            // Numbers are shown in exponent form long before they run to 30 digits.
            let longest_digits = e.message.split(|c: char| !c.is_ascii_digit()).map(str::len).max().unwrap_or(0);
            prop_assert!(longest_digits < 30, "a number shown in full: {}", e);
        }
    }
}

// ---------------------------------------------------------------- through `sim check`

fn sim_check(path: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim")).arg("check").arg(path).output().expect("sim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Cases per shipped file for the binary: each is a process spawn.
const SPAWNS_PER_FILE: usize = 3;

/// `sim check` on mutated files: exit 0 or 2, never a panic, and a refusal names `FILE:LINE:COL`.
/// One case per file is also written with raw bytes inserted (not UTF-8), which `sim check` must
/// refuse at the first bad byte.
#[test]
fn sim_check_on_mutated_shipped_scenarios_exits_0_or_2_with_a_position() {
    let files = shipped();
    let dir = std::env::temp_dir().join(format!("locksim-check-mutations-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut runner = TestRunner::deterministic();
    let mut failures = Vec::new();
    let mut exits = [0usize; 2];
    for (n, (name, _)) in files.iter().enumerate() {
        let edits = prop::collection::vec(mutation(), 1..4);
        for k in 0..SPAWNS_PER_FILE {
            let case = (n, edits.new_tree(&mut runner).expect("a case").current());
            let mut bytes = mutate(files, &case).into_bytes();
            if k == 0 {
                // Bytes that are not UTF-8 (a lone continuation byte, an overlong lead).
                let at = any::<Index>().new_tree(&mut runner).expect("an index").current().index(bytes.len() + 1);
                bytes.splice(at..at, [0x80, 0xC0, 0xFF]);
            }
            let path = dir.join(format!("{n}-{k}.toml"));
            std::fs::write(&path, &bytes).unwrap();
            let (code, out, err) = sim_check(&path);
            let shown = path.display().to_string();
            let placed = err.lines().any(|l| {
                l.strip_prefix("error: ")
                    .and_then(|l| l.strip_prefix(shown.as_str()))
                    .and_then(|l| l.strip_prefix(':'))
                    .is_some_and(|l| {
                        let mut parts = l.splitn(3, ':');
                        let line = parts.next().is_some_and(|p| p.parse::<usize>().is_ok());
                        let col = parts.next().is_some_and(|p| p.parse::<usize>().is_ok());
                        line && col
                    })
            });
            let ok = match code {
                0 => k != 0,
                2 => placed,
                _ => false,
            };
            if ok {
                exits[usize::from(code == 2)] += 1;
            }
            if !ok || err.contains("panicked") {
                failures.push(format!(
                    "{name} mutated by {:?} (written to {shown}): exit {code}\nstdout: {out}\nstderr: {err}",
                    case.1
                ));
                continue;
            }
            std::fs::remove_file(&path).ok();
        }
    }
    assert!(failures.is_empty(), "{} bad outcomes:\n\n{}", failures.len(), failures.join("\n\n"));
    eprintln!("sim check on mutated files: {} accepted, {} refused with a position", exits[0], exits[1]);
    // The mutations change something: some files still parse, most are refused.
    assert!(exits[0] > 0 && exits[1] > files.len(), "accepted/refused: {exits:?}");
}

/// The case the proptest above found (CI, 2026-11-27): a model's own parameter check echoed the
/// smallest subnormal `ttl_ms` as 300-odd digits; model messages show numbers as the parser does.
#[test]
fn a_model_parameter_message_shows_a_tiny_number_in_exponent_form() {
    let text = "name = \"t\"\nduration_ms = 1000\nseeds = 1\n\n[[variants]]\nname = \"r\"\nmodel = \"redis\"\nttl_ms = 5e-324\n\n[workload]\nclients = 2\n";
    let models = locksim_algorithms::registry();
    let e = locksim_simulator::scenario::parse_str("t.toml", text, &models).expect_err("ttl_ms below 1 is refused");
    assert!(e.message.contains("ttl_ms = 5e-324"), "{e}");
    let longest_digits = e.message.split(|c: char| !c.is_ascii_digit()).map(str::len).max().unwrap_or(0);
    assert!(longest_digits < 30, "a number shown in full: {e}");
}

/// Issue 34's model files (hazelcast's ILock row, the DynamoDB heartbeat thread's end): the key
/// that makes each outcome, mutated to a bad value, is refused at its line and column with the
/// key named and what it expects; mutated to another valid value, the file still parses.
#[test]
fn issue_34_model_keys_mutated_are_refused_at_their_position() {
    let models = locksim_algorithms::registry();
    let cases = [
        (
            "27-hazelcast-ilock-partition.toml",
            "lock = \"ilock\"",
            "lock = \"ilok\"",
            "lock = \"fenced_lock\"",
            "fenced_lock",
        ),
        (
            "27-hazelcast-ilock-partition.toml",
            "max_no_heartbeat_ms = 5_000",
            "max_no_heartbeat_ms = 500",
            "max_no_heartbeat_ms = 300_000",
            "member_heartbeat_ms",
        ),
        (
            "29-dynamodb-heartbeat-thread-died.toml",
            "heartbeat_thread_stops_ms = 7_000\n\n",
            "heartbeat_thread_stops_ms = -7_000\n\n",
            "heartbeat_thread_stops_ms = 0\n\n",
            "heartbeat_thread_stops_ms",
        ),
    ];
    for (file, good, bad, other, expected) in cases {
        let (name, text) =
            shipped().iter().find(|(n, _)| n.ends_with(file)).unwrap_or_else(|| panic!("{file} is shipped"));
        assert!(text.contains(good), "{name}: {good}");
        let line = text[..text.find(good).unwrap()].lines().count() + 1;
        let e = locksim_simulator::scenario::parse_str(name, &text.replacen(good, bad, 1), &models)
            .expect_err("the bad value is refused");
        let shown = e.to_string();
        assert!(shown.contains(&format!("{name}:{line}:")), "{good} → {bad}: {shown}");
        assert!(shown.contains(good.split(' ').next().unwrap()) && shown.contains(expected), "{shown}");
        locksim_simulator::scenario::parse_str(name, &text.replacen(good, other, 1), &models)
            .unwrap_or_else(|e| panic!("{good} → {other}: {e}"));
    }
}
