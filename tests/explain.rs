//! `sim explain` as a user runs it: the narrative of known outcome 08 (a ZooKeeper holder paused
//! beyond its session) tells the pause, the session expiry and the second grant at the times the
//! trace of the same seed records; the diagram is a well-formed SVG and a PNG; the same command
//! gives the same bytes twice; bad labels, clean seeds and indexes out of range are exit 2.

use std::path::Path;

use crate::support::cli::{self, sim};
use crate::support::xml::xml_root;

const KNOWN_08: &str = "scenarios/known/08-zookeeper-pause-beyond-session.toml";
const CLEAN_08: &str = "scenarios/known/08-zookeeper-pause-within-session.toml";

fn temp_dir(name: &str) -> cli::TestDir {
    cli::fresh_dir("explain", name)
}

/// A true time as the narrative writes it: milliseconds to the microsecond, thousands grouped
/// with a space, trailing zeros dropped (`42 001.394 ms`).
fn ms(ns: u64) -> String {
    let us = (ns + 500) / 1_000;
    let digits = (us / 1_000).to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(' ');
        }
        grouped.push(c);
    }
    let frac = format!("{:03}", us % 1_000);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        format!("{grouped} ms")
    } else {
        format!("{grouped}.{frac} ms")
    }
}

/// The trace of seed 0 of `suspended`, as JSON lines.
fn trace_08(dir: &Path) -> Vec<serde_json::Value> {
    let file = dir.join("trace.jsonl");
    let (code, out, err) =
        sim(&["run", KNOWN_08, "--algorithm", "suspended", "--seed", "0", "--trace", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    std::fs::read_to_string(&file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn explain(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["explain", KNOWN_08, "--algorithm", "suspended", "--seed", "0", "--out", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    sim(&args)
}

/// The index of the first narrative line containing every needle.
fn line_with(lines: &[&str], needles: &[&str]) -> usize {
    lines
        .iter()
        .position(|l| needles.iter().all(|n| l.contains(n)))
        .unwrap_or_else(|| panic!("no narrative line has all of {needles:?}:\n{}", lines.join("\n")))
}

#[test]
fn the_narrative_of_known_outcome_08_tells_the_pause_the_session_expiry_and_the_second_grant() {
    let dir = temp_dir("08");
    let trace = trace_08(&dir);
    let (code, out, err) = explain(&dir, &[]);
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();

    // The pause, as the trace records it: who, when, how long.
    let at = |e: &serde_json::Value| e["at_ns"].as_u64().unwrap();
    let detail = |e: &serde_json::Value| e["detail"].as_str().unwrap().to_string();
    let pause = trace.iter().find(|e| e["kind"] == "fault" && detail(e).starts_with("pause starts on [")).unwrap();
    let paused = detail(pause).trim_start_matches("pause starts on [").split(']').next().unwrap().to_string();
    let pause_end = trace.iter().find(|e| e["kind"] == "fault" && detail(e) == "pause ends").unwrap();
    let pause_line = line_with(
        &lines,
        &[&format!("{paused} was paused at {}", ms(at(pause))), &format!("for {}", ms(at(pause_end) - at(pause)))],
    );

    // The holder's session, and the server's note that it expired.
    let session = trace
        .iter()
        .filter(|e| e["kind"] == "note" && e["node"] == paused.as_str() && detail(e).contains("connected to"))
        .find_map(|e| detail(e).split(" session ").nth(1).map(|s| s.split(' ').next().unwrap().to_string()))
        .expect("the holder's connect note names its session");
    let expiry = trace
        .iter()
        .find(|e| {
            e["kind"] == "note"
                && e["node"].as_str().unwrap().starts_with("server-")
                && detail(e) == format!("zk: session {session} expired")
        })
        .expect("a server records the holder's session expiry");
    let expiry_line =
        line_with(&lines, &[expiry["node"].as_str().unwrap(), &ms(at(expiry)), &format!("session {session} expired")]);

    // The second grant: the first overlap's later holder, granted at the violation's time.
    let violation = trace.iter().find(|e| e["kind"] == "violation").unwrap();
    assert!(detail(violation).starts_with("overlap:"), "{violation}");
    let grant = trace
        .iter()
        .find(|e| e["kind"] == "history" && at(e) == at(violation) && detail(e).starts_with("Granted"))
        .expect("the later grant is recorded at the violation's instant");
    let second = grant["node"].as_str().unwrap();
    assert_ne!(second, paused, "the second grant goes to another client");
    let grant_line = line_with(&lines, &[&format!("{second} was granted key 0 at {}", ms(at(grant))), "still held it"]);
    assert!(lines[grant_line].contains(&paused), "{}", lines[grant_line]);

    assert!(pause_line < expiry_line && expiry_line < grant_line, "told in time order:\n{out}");
    // Sentences are numbered from 1, and the diagram's files are named.
    assert!(lines[1].starts_with("1. "), "{out}");
    assert!(out.contains("explain-suspended-0-0.svg"), "{out}");
}

#[test]
fn the_diagram_is_a_well_formed_svg_and_a_png() {
    let dir = temp_dir("diagram");
    let (code, out, err) = explain(&dir, &[]);
    assert_eq!(code, 0, "{out}{err}");
    let svg = std::fs::read_to_string(dir.join("explain-suspended-0-0.svg")).unwrap();
    assert_eq!(xml_root(&svg).as_deref(), Ok("svg"), "the diagram is well-formed XML with an <svg> root");
    // Every text the SVG draws, trimmed (plotters puts an element's text on its own line).
    let texts: Vec<&str> = svg.split('>').filter_map(|t| t.split('<').next()).map(str::trim).collect();
    // A lane for each client the narrative names (the paused holder, the next one), the server
    // that expired the session, and the resource.
    let named = |phrase: &'static str| {
        out.lines().filter(move |l| l.contains(phrase)).filter_map(move |l| l.split(phrase).next()?.split(". ").nth(1))
    };
    let granted: Vec<&str> = named(" was granted key 0 at ").collect();
    let expirer = named(" recorded at ").find(|n| n.starts_with("server-"));
    assert_eq!(granted.len(), 2, "{out}");
    for lane in granted.into_iter().chain(expirer).chain(["resource"]) {
        assert!(texts.contains(&lane), "the diagram has a lane for {lane}");
    }
    assert!(texts.iter().any(|t| t.contains("elided")), "the 41 s pause is elided, and the break says so");
    // The first grant's time as the narrative tells it (checked against the trace by the
    // narrative test); the 08 scenario sets no clock offset, so the client's wall clock reads it.
    let grant_ms = out
        .lines()
        .find_map(|l| l.split(" was granted key 0 at ").nth(1))
        .and_then(|rest| rest.split(" ms").next())
        .expect("the narrative tells the first grant");
    let wall = format!("wall {grant_ms} ms");
    assert!(texts.contains(&wall.as_str()), "the grant carries the client's own clock reading ({wall})");
    assert!(texts.contains(&"overlap"), "the violation is marked");
    let png = std::fs::read(dir.join("explain-suspended-0-0.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "PNG signature");
    assert!(png.len() > 1_000, "a drawn image, not an empty one ({} bytes)", png.len());
}

#[test]
fn the_same_command_gives_the_same_bytes() {
    let (a, b) = (temp_dir("det-a"), temp_dir("det-b"));
    let (code_a, out_a, _) = explain(&a, &["--index", "1"]);
    let (code_b, out_b, _) = explain(&b, &["--index", "1"]);
    assert_eq!((code_a, code_b), (0, 0));
    let narrative = |out: &str| out.lines().filter(|l| !l.starts_with("diagram:")).collect::<Vec<_>>().join("\n");
    assert_eq!(narrative(&out_a), narrative(&out_b));
    assert!(out_a.contains("violation 2 of"), "--index 1 is the second violation: {out_a}");
    for f in ["explain-suspended-0-1.svg", "explain-suspended-0-1.png"] {
        assert!(std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(), "{f} differs between runs");
    }
}

#[test]
fn a_bad_label_a_clean_seed_and_an_index_out_of_range_are_exit_2() {
    let dir = temp_dir("bad");
    let d = dir.to_str().unwrap();
    let (code, _, err) = sim(&["explain", KNOWN_08, "--algorithm", "nope", "--seed", "0", "--out", d]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--algorithm nope") && err.contains("valid labels: suspended, lost"), "{err}");

    let (code, _, err) = sim(&["explain", CLEAN_08, "--algorithm", "suspended", "--seed", "0", "--out", d]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("seed 0") && err.contains("no violation"), "{err}");

    let (code, _, err) = explain(&dir, &["--index", "100000"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--index 100000") && err.contains("valid indexes: 0 to"), "{err}");

    let (code, _, err) = sim(&["explain", "no-such-file.toml", "--algorithm", "x", "--seed", "0", "--out", d]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no-such-file.toml"), "{err}");
    assert!(std::fs::read_dir(&dir).unwrap().next().is_none(), "nothing written on bad input");
}

/// Kleppmann's case (known outcome 02): the story tells the pause, then the Redis server's
/// expiry of the lock's key (noted when a command finds its PX deadline passed), then the second
/// grant and the paused holder's accepted write, in that order.
#[test]
fn the_redis_story_tells_the_key_expiry_on_the_server() {
    let dir = temp_dir("redis02");
    let (code, out, err) = sim(&[
        "explain",
        "scenarios/known/02-redis-paused-holder.toml",
        "--algorithm",
        "redis",
        "--seed",
        "0",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    let paused = line_with(&lines, &[" was paused at "]);
    let expired = line_with(&lines, &["server-", "the lock's key expired"]);
    let second = line_with(&lines, &["was granted key 0", "still held it"]);
    let write = line_with(&lines, &["the unfenced resource accepted it"]);
    assert!(paused < expired && expired < second && second < write, "told in this order:\n{out}");
}
