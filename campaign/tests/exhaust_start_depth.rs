//! `sim exhaust --start-depth` (docs/exhaustive.md, "The search"): the first round's depth limit
//! of iterative deepening. Starting at `--max-depth` searches one round. A search that ends with
//! a certificate then ends with the same one (complete, the same unique states, which are the
//! last round's) in fewer steps, the shallow rounds skipped; a search that finds a counterexample
//! finds one as short as iterative deepening's, because each violation lowers the round's limit
//! and the states explored above it are then marked as covered only to the lowered limit.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use locksim_campaign::exhaust::bounds::BoundWords;
use locksim_campaign::exhaust::{exhaust, Report};
use locksim_simulator::scenario::parse_str;

use crate::exhaust::words;

/// The depth limit of `exhaust.rs`'s bounds ([`words`]).
const MAX_DEPTH: u32 = 4096;

/// Searches `label` of `scenarios/exhaust/FILE` within `w`, the first round's limit `start`.
fn search(file: &str, label: &str, w: &BoundWords, start: Option<u32>) -> Result<Report, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/exhaust").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let models = locksim_algorithms::registry();
    let sc = parse_str(&path.display().to_string(), &text, &models).unwrap_or_else(|e| panic!("{e}"));
    let row = sc.row_labelled(label).expect("row");
    let bounds = w.resolve(&row.params, row.model.fenced(&row.params), &sc.setup.network)?.with_start_depth(start)?;
    let report = exhaust(&sc, &text, row, &bounds, &AtomicBool::new(false), &mut |_| {}).expect("searches");
    eprintln!("{report}");
    Ok(report)
}

#[test]
fn one_round_at_the_max_depth_gives_the_same_certificate_in_fewer_steps() {
    // ZooKeeper, the leader's process crashed 1 s: complete, no fenced stale write; its paths end
    // by 163 steps, so iterative deepening runs rounds of 64, 128 and 256.
    let w = words(&["crash@leader:1000"]);
    let deepening = search("zookeeper.toml", "zookeeper", &w, None).unwrap();
    let one_round = search("zookeeper.toml", "zookeeper", &w, Some(MAX_DEPTH)).unwrap();
    for r in [&deepening, &one_round] {
        assert!(r.found.counterexample.is_none(), "{r}");
        assert_eq!(r.found.incomplete, None, "complete: {r}");
    }
    let (d, o) = (&deepening.found.stats, &one_round.found.stats);
    assert!(d.rounds >= 2, "{deepening}");
    assert_eq!((o.rounds, o.limit), (1, MAX_DEPTH), "{one_round}");
    // The one round is iterative deepening's last: the same states, without the shallow rounds.
    assert_eq!((o.unique, o.max_depth), (d.unique, d.max_depth), "{deepening}\n{one_round}");
    assert!(o.states < d.states, "{deepening}\n{one_round}");
}

#[test]
fn one_round_finds_a_counterexample_as_short_as_iterative_deepening() {
    // Kleppmann's Redlock case and plain Redis's overlap, each found deep in the one round first
    // and then shortened by the lowered limit to iterative deepening's length.
    let len = |r: &Report| r.found.counterexample.as_ref().map(Vec::len);
    for (file, label) in [("redlock.toml", "redlock"), ("redis.toml", "redis")] {
        let w = words(&["pause@clients:ttl_ms-1,ttl_ms+1"]);
        let deepening = search(file, label, &w, None).unwrap();
        let one_round = search(file, label, &w, Some(MAX_DEPTH)).unwrap();
        assert!(len(&deepening).is_some(), "{deepening}");
        assert_eq!(len(&one_round), len(&deepening), "{deepening}\n{one_round}");
        assert_eq!(one_round.found.stats.rounds, 1, "{one_round}");
    }
}

#[test]
fn a_start_depth_of_zero_or_past_the_max_depth_is_refused() {
    let w = words(&[]);
    let err = |start| search("redis.toml", "redis", &w, Some(start)).map(|_| ()).unwrap_err();
    assert_eq!(err(0), "--start-depth 0: expected at least 1 step");
    assert_eq!(
        err(MAX_DEPTH + 1),
        "--start-depth 4097: expected at most --max-depth (4096); give both for one round at that depth"
    );
}
