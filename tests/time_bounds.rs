//! Hostile times and faults that do nothing, as a user meets them on the command line: every
//! time beyond 1e12 ms (about 31.7 years) is refused with file:line:column, key and range (exit
//! 2), a partition that cuts nothing is refused, and a fault that starts after the run ends gets
//! a note from `sim check` and `sim run` (issue 31).

use crate::support::cli::{fresh_dir, s, sim};

const HEAD: &str = "name = \"t\"\nduration_ms = 1000\nseeds = 1\nalgorithms = [\"redlock\"]\n";

/// Writes `HEAD` + `body` and runs `sim check --no-estimate` on it.
fn check(test: &str, body: &str) -> (i32, String, String) {
    let dir = fresh_dir("time-bounds", test);
    let f = dir.join("t.toml");
    std::fs::write(&f, format!("{HEAD}{body}")).unwrap();
    sim(&["check", "--no-estimate", &s(&f)])
}

/// Exit 2, no panic, and the message names the place, the key and the range.
fn assert_refused(out: (i32, String, String), place: &str, key: &str, range: &str) {
    let (code, stdout, err) = out;
    assert_eq!(code, 2, "stdout: {stdout}\nstderr: {err}");
    assert!(err.contains(&format!("t.toml:{place}")), "{err}");
    assert!(err.contains(&format!("`{key}`")), "{err}");
    assert!(err.contains(range), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// The cases reproduced in issue 31: each was accepted and gave a wrapped, wrong result.
#[test]
fn times_beyond_the_bound_are_refused_where_written() {
    assert_refused(check("hold", "[workload]\nhold_ms = 2e13\n"), "6:11", "workload.hold_ms", "[0, 1e12]");
    assert_refused(check("latency", "[network]\nlatency_ms = 1e14\n"), "6:14", "network.latency_ms", "[0, 1e12]");
    for by in ["1e13", "-1e13"] {
        let fault = format!("[[faults]]\nkind = \"clock_jump\"\ntarget = \"server-0\"\nat_ms = 10\nby_ms = {by}\n");
        assert_refused(check("jump", &fault), "9:9", "faults.0.by_ms", "[-1e12, 1e12]");
    }
}

/// Every other kind of time: fault windows, intervals, offsets, distribution parameters, a
/// model's `*_ms` parameters.
#[test]
fn every_kind_of_time_is_bounded() {
    let fault = |keys: &str| format!("[[faults]]\nkind = \"pause\"\ntarget = \"server-0\"\n{keys}\n");
    let cases = [
        (fault("at_ms = 2e12"), "faults.0.at_ms"),
        (fault("at_ms = 10\nduration_ms = 1.5e12"), "faults.0.duration_ms"),
        (fault("at_ms = 10\nevery_ms = 1e13"), "faults.0.every_ms"),
        ("[clocks]\noffset_ms = -2e12\n".to_string(), "clocks.offset_ms"),
        ("[workload]\nthink_ms = { uniform = [0, 1e15] }\n".to_string(), "workload.think_ms"),
        ("[workload]\nhold_ms = { normal = { mean = 5, sd = 1e13 } }\n".to_string(), "workload.hold_ms"),
        ("[workload]\nhold_ms = { lognormal = { median = 5, p99 = 1e13 } }\n".to_string(), "workload.hold_ms"),
        ("[workload]\nacquire_timeout_ms = { exponential = 1e13 }\n".to_string(), "workload.acquire_timeout_ms"),
        ("[workload]\ncheck_to_write_ms = 1e300\n".to_string(), "workload.check_to_write_ms"),
        (
            "[network]\n[[network.links]]\nfrom = \"client-0\"\nto = \"*\"\nlatency_ms = 3e12\n".to_string(),
            "network.links.0.latency_ms",
        ),
        (
            "[[faults]]\nkind = \"slow\"\ntarget = \"server-0\"\nat_ms = 1\nlatency_ms = 1e13\n".to_string(),
            "faults.0.latency_ms",
        ),
        (
            "[models.redlock]\nretry_delay_ms = { normal = { mean = 5, sd = 1e13 } }\n".to_string(),
            "models.redlock.retry_delay_ms",
        ),
    ];
    for (body, key) in cases {
        let (code, out, err) = check("every", &body);
        assert_eq!(code, 2, "{body}\nstdout: {out}\nstderr: {err}");
        assert!(err.contains(&format!("`{key}`")), "{body}\n{err}");
        assert!(err.contains("1e12"), "the bound is named: {body}\n{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// At the bound everything is accepted and runs: the times that were refused above are not
/// refused for being large, only for being beyond it.
#[test]
fn times_at_the_bound_run() {
    let dir = fresh_dir("time-bounds", "at-bound");
    let f = dir.join("t.toml");
    let body = "[workload]\nhold_ms = 1e12\n[network]\nlatency_ms = { lognormal = { median = 1e11, p99 = 1e12 } }\n\
                [[faults]]\nkind = \"clock_jump\"\ntarget = \"*\"\nat_ms = 0\nby_ms = 1e12\nevery_ms = 1\n";
    std::fs::write(&f, format!("{HEAD}{body}")).unwrap();
    let (code, out, err) = sim(&["run", &s(&f), "--seeds", "1"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn partitions_that_cut_nothing_are_refused() {
    let part = |groups: &str, one_way: bool| {
        format!("[[faults]]\nkind = \"partition\"\ngroups = {groups}\none_way = {one_way}\nat_ms = 10\n")
    };
    for (groups, one_way) in [
        (r#"[["server-0"], ["server-0"]]"#, false),
        (r#"[["*"], ["*"]]"#, false),
        (r#"[["server-0", "client-0"], ["*"]]"#, false),
        (r#"[["server-0"], ["server-*"], ["*"]]"#, false),
        // The leader is a server: the later group takes it back.
        (r#"[["leader"], ["server-*"]]"#, false),
        // One way: only links from group 0 are cut, and group 0 keeps no node of its own.
        (r#"[["server-0"], ["server-*"]]"#, true),
    ] {
        let (code, out, err) = check("partition", &part(groups, one_way));
        assert_eq!(code, 2, "{groups}\n{out}\n{err}");
        assert!(err.contains("t.toml:7:10"), "{err}");
        assert!(err.contains("`faults.0.groups`") && err.contains("cuts no link"), "{groups}\n{err}");
    }
    // Partitions that separate two nodes stay valid, roles and overlaps included.
    for (groups, one_way) in [
        (r#"[["server-0"], ["server-1"]]"#, false),
        (r#"[["*"], ["server-0"]]"#, false),
        (r#"[["server-*"], ["server-0"]]"#, true),
        (r#"[["server-*"], ["leader"]]"#, false),
        (r#"[["holder"], ["server-*", "sentinel-*"]]"#, true),
    ] {
        let (code, out, err) = check("partition-ok", &part(groups, one_way));
        assert_eq!(code, 0, "{groups}\n{out}\n{err}");
    }
}

#[test]
fn a_fault_that_starts_after_the_run_ends_gets_a_note() {
    let body = "[[faults]]\nkind = \"pause\"\ntarget = \"server-0\"\nat_ms = 5000\n\
                [[faults]]\nkind = \"crash\"\ntarget = \"server-1\"\nat_ms = { uniform = [500, 2000] }\n\
                [[faults]]\nkind = \"pause\"\ntarget = \"server-2\"\nat_ms = 500\n";
    let (code, out, _) = check("late", body);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("note: fault `faults.0` (pause, at_ms = 5000)"), "{out}");
    assert!(out.contains("it never happens"), "{out}");
    assert!(out.contains("note: fault `faults.1` (crash"), "{out}");
    assert!(!out.contains("faults.2"), "{out}");

    let dir = fresh_dir("time-bounds", "late-run");
    let f = dir.join("t.toml");
    std::fs::write(&f, format!("{HEAD}{body}")).unwrap();
    let (code, out, err) = sim(&["run", &s(&f), "--seeds", "1"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("note: fault `faults.0` (pause, at_ms = 5000) starts at or after"), "{err}");
    assert!(!out.contains("note: fault"), "the table on stdout is unchanged: {out}");
}
