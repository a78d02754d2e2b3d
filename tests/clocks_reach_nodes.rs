//! `[clocks]` reaches every node: with a constant drift and offset each node's monotonic clock
//! runs at `1 + drift/1e6` times true time and its wall clock reads the monotonic one plus the
//! offset; with distributions each node draws its own, within their bounds, and the same node
//! of another row draws the same. Read from the trace,
//! which stamps every entry with the node's own clock readings.

use std::collections::BTreeMap;

use crate::support::cli::{fresh_dir, s, sim};

/// (node, at_ns, mono_ns, wall_ns) of every trace entry of a one-seed run of `clocks`.
fn readings(test: &str, clocks: &str) -> Vec<(String, u64, u64, i64)> {
    let dir = fresh_dir("clocks", test);
    let file = dir.join("c.toml");
    std::fs::write(
        &file,
        format!("name = \"c\"\nduration_ms = 3000\nseeds = 1\nalgorithms = [\"etcd\", \"redis\"]\n[workload]\nclients = 3\n[clocks]\n{clocks}\n"),
    )
    .unwrap();
    let trace = dir.join("t.jsonl");
    let (code, out, err) = sim(&["run", &s(&file), "--seed", "0", "--trace", &s(&trace)]);
    assert_eq!(code, 0, "{out}{err}");
    std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                format!("{}/{}", v["algorithm"].as_str().unwrap(), v["node"].as_str().unwrap()),
                v["at_ns"].as_u64().unwrap(),
                v["mono_ns"].as_u64().unwrap(),
                v["wall_ns"].as_i64().unwrap(),
            )
        })
        .filter(|(n, ..)| !n.ends_with("/-"))
        .collect()
}

#[test]
fn a_constant_drift_and_offset_reach_every_node() {
    let r = readings("constant", "drift_ppm = 500\noffset_ms = 1000");
    let mut nodes = BTreeMap::new();
    for (node, at, mono, wall) in &r {
        let expected = (*at as f64 * 1.0005).round();
        assert!((*mono as f64 - expected).abs() <= 1.0, "{node} at {at}: mono {mono}, expected {expected}");
        assert_eq!(wall - *mono as i64, 1_000_000_000, "{node} at {at}");
        *nodes.entry(node.clone()).or_insert(0) += 1;
    }
    // Servers, clients and the resource of both rows all ran on the configured clock.
    for n in ["etcd/server-0", "etcd/server-2", "etcd/client-0", "etcd/client-2", "redis/server-0", "redis/client-1"] {
        assert!(nodes.contains_key(n), "no trace entry of {n}: {:?}", nodes.keys().collect::<Vec<_>>());
    }
}

#[test]
fn drawn_drifts_and_offsets_differ_per_node_and_stay_in_bounds() {
    let r = readings("drawn", "drift_ppm = { uniform = [-500, 500] }\noffset_ms = { uniform = [-1000, 1000] }");
    // Per node: the drift from its last reading after 1 s, and its (constant) wall offset.
    let mut per_node: BTreeMap<String, (f64, i64)> = BTreeMap::new();
    for (node, at, mono, wall) in &r {
        if *at > 1_000_000_000 {
            let drift_ppm = (*mono as f64 / *at as f64 - 1.0) * 1e6;
            per_node.insert(node.clone(), (drift_ppm, wall - *mono as i64));
        }
    }
    assert!(per_node.len() >= 6, "{per_node:?}");
    for (node, (drift, offset)) in &per_node {
        assert!(drift.abs() <= 500.01, "{node}: drift {drift} ppm");
        assert!(offset.abs() <= 1_000_000_000, "{node}: offset {offset} ns");
    }
    // Within a row every node draws its own; across rows a node of the same name draws the same
    // (the clock stream is keyed by seed and node name, so every algorithm faces the same clocks).
    let etcd: Vec<_> = per_node.iter().filter(|(n, _)| n.starts_with("etcd/")).collect();
    let mut drifts: Vec<i64> = etcd.iter().map(|(_, (d, _))| (d * 100.0) as i64).collect();
    drifts.sort();
    drifts.dedup();
    assert_eq!(drifts.len(), etcd.len(), "each node draws its own drift: {etcd:?}");
    for name in ["client-0", "client-2", "server-0", "resource"] {
        let (a, b) = (per_node[&format!("etcd/{name}")], per_node[&format!("redis/{name}")]);
        assert!((a.0 - b.0).abs() < 0.01 && a.1 == b.1, "{name}: etcd {a:?}, redis {b:?}");
    }
}
