//! `sim exhaust --property token-regression` (docs/exhaustive.md, "The property"): a grant whose
//! fencing token is not above the highest granted before it on the key, judged by the checkers'
//! `token_regressions` metric, the code `sim run` counts it with. With tokens monotone in grant
//! order a fenced resource never accepts a write after a newer holder's write, so this is the
//! certificate a fenced lock can have where `fenced-stale-write` (the fencing gap) cannot.
//!
//! Pinned here: the property fails where the token source goes back (a Redis restart that lost
//! its `INCR` counter), so a certificate for it is not vacuous; ZooKeeper's and etcd's searches
//! with the leader crashed or isolated complete with none; and a pause that catches the answer
//! "you hold" in flight gives a token regression on both (the resumed client takes its grant,
//! with its old token, after the other client's newer one), which is why the menus with
//! a pause past the session or lease get a counterexample, not a certificate; aimed at a holder
//! (`pause@holders`, the grant learned), the same menu gives ZooKeeper a complete certificate.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use locksim_campaign::exhaust::bounds::BoundWords;
use locksim_campaign::exhaust::{exhaust, Report};
use locksim_simulator::scenario::parse_str;

use crate::exhaust::words;

/// The ZooKeeper menu entries: a client paused past its session, the leader's process
/// crashed 1 s, the leader isolated 1 s.
const ZK_PAUSE: &str = "pause@clients:session_timeout_ms+2001";
/// The same pause aimed at a holder only (a client whose grant it has learned).
const ZK_HOLDER_PAUSE: &str = "pause@holders:session_timeout_ms+2001";
const LEADER_CRASH: &str = "crash@leader:1000";
const LEADER_ISOLATED: &str = "isolate@leader:1000";

/// `words(menu)` judged for token regressions, with K faults and `--distinct-faults` as given.
fn tokens(menu: &[&str], faults: u32, distinct: bool) -> BoundWords {
    let mut w = words(menu);
    w.property = Some("token-regression".into());
    w.faults = Some(faults);
    w.distinct_faults = distinct;
    w
}

/// Searches `label` of `scenarios/exhaust/FILE` within `w`; `Err`: the bounds were refused.
fn search(file: &str, label: &str, w: &BoundWords) -> Result<Report, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/exhaust").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let models = locksim_algorithms::registry();
    let sc = parse_str(&path.display().to_string(), &text, &models).unwrap_or_else(|e| panic!("{e}"));
    let row = sc.row_labelled(label).expect("row");
    let bounds = w
        .resolve(&row.params, row.model.fenced(&row.params), &sc.setup.network)?
        .with_distinct_faults(w.distinct_faults)?;
    let report = exhaust(&sc, &text, row, &bounds, &AtomicBool::new(false), &mut |_| {}).expect("searches");
    eprintln!("{report}");
    Ok(report)
}

/// The counterexample's length, or a panic naming the report.
fn shortest(r: &Report) -> usize {
    r.found.counterexample.as_ref().unwrap_or_else(|| panic!("a token regression is found: {r}")).len()
}

/// Complete, no token regression, with these counts (states explored, unique states).
fn assert_certificate(r: &Report, states: u64, unique: u64) {
    assert!(r.found.counterexample.is_none(), "{r}");
    assert_eq!(r.found.incomplete, None, "complete: {r}");
    assert!(
        r.to_string().contains("no token-regression in every schedule within these bounds (search complete)"),
        "{r}"
    );
    assert_eq!((r.found.stats.states, r.found.stats.unique), (states, unique), "{r}");
}

#[test]
fn a_redis_restart_that_loses_the_token_counter_is_found() {
    // Stock `rdb` persistence: the server killed at 200 ms comes back empty 500 ms later, its
    // INCR counter gone, and hands client-1 token 1 again, client-0's token.
    let r = search("redis.toml", "redis-fenced", &tokens(&["crash@servers:500"], 1, false)).unwrap();
    assert_eq!(shortest(&r), 49, "{r}");
    assert_eq!((r.found.stats.states, r.found.stats.unique), (1480, 102), "{r}");
    assert!(r.story.iter().any(|l| l.starts_with("token_regression at") && l.contains("granted token 1")), "{r}");
    let replay = r.scenario.as_deref().expect("a replay file");
    assert!(replay.contains("token_regressions = \"all\""), "{replay}");
    // Without a fault the counter only goes up: every schedule searched, none.
    let none = search("redis.toml", "redis-fenced", &tokens(&[], 0, false)).unwrap();
    assert!(none.found.counterexample.is_none() && none.found.incomplete.is_none(), "{none}");
    // A pause past the TTL that catches the grant's answer in flight gives one too, with the
    // counter intact: client-0 resumes into token 1 after client-1 was granted token 2.
    let paused = search("redis.toml", "redis-fenced", &tokens(&["pause@clients:ttl_ms+500"], 1, false)).unwrap();
    assert_eq!(shortest(&paused), 65, "{paused}");
    assert!(paused.story.iter().any(|l| l.contains("granted token 1 at 1502.050 ms, not above token 2")), "{paused}");
}

#[test]
fn a_row_without_a_fencing_token_is_refused() {
    let err = search("redis.toml", "redis", &tokens(&[], 0, false)).map(|_| ()).unwrap_err();
    assert!(err.starts_with("--property token-regression: this row's grants carry no fencing token"), "{err}");
    let mut unknown = words(&[]);
    unknown.property = Some("tokens".into());
    let err = search("redis.toml", "redis-fenced", &unknown).map(|_| ()).unwrap_err();
    assert_eq!(err, "--property tokens: expected one of overlap, stale-write, fenced-stale-write, token-regression");
}

#[test]
fn zookeeper_with_its_leader_crashed_or_isolated_never_regresses_a_token() {
    // K = 2 from {leader crash 1 s, leader isolated 1 s}, each at most once and with repeats.
    let distinct = search("zookeeper.toml", "zookeeper", &tokens(&[LEADER_CRASH, LEADER_ISOLATED], 2, true)).unwrap();
    assert_certificate(&distinct, 528_206, 33_618);
    let repeats = search("zookeeper.toml", "zookeeper", &tokens(&[LEADER_CRASH, LEADER_ISOLATED], 2, false)).unwrap();
    assert_certificate(&repeats, 938_878, 59_594);
}

#[test]
fn zookeeper_with_a_pause_past_the_session_regresses_when_the_grant_is_in_flight() {
    // One pause: client-1 paused at 417.2 ms as the answer "your node is the lowest" reaches it;
    // its session expires, client-0 is granted its newer node's czxid at 6 005 ms, and client-1,
    // resumed at 6 418 ms, reads the queued answer and holds with its old czxid.
    let one = search("zookeeper.toml", "zookeeper", &tokens(&[ZK_PAUSE], 1, false)).unwrap();
    assert_eq!(shortest(&one), 150, "{one}");
    assert!(one.story.iter().any(|l| l.contains("pause client-1 at 417.200 ms")), "{one}");
    assert!(one.story.iter().any(|l| l.starts_with("token_regression at 6418.200 ms")), "{one}");
    // The full menu, K = 2, with repeats (two pauses, 122 steps) and each entry at most
    // once (the same pause and the leader isolated, 140 steps): a counterexample either way.
    let full = [ZK_PAUSE, LEADER_CRASH, LEADER_ISOLATED];
    let repeats = search("zookeeper.toml", "zookeeper", &tokens(&full, 2, false)).unwrap();
    assert_eq!(shortest(&repeats), 122, "{repeats}");
    let distinct = search("zookeeper.toml", "zookeeper", &tokens(&full, 2, true)).unwrap();
    assert_eq!(shortest(&distinct), 140, "{distinct}");
}

#[test]
fn zookeeper_with_a_holder_paused_past_the_session_never_regresses_a_token() {
    // The full menu with the pause aimed at a holder (`holders`: a client whose grant it
    // has learned, no answer in flight): K = 2, each entry at most once and with repeats,
    // complete with no token regression. The pause in flight above is the only way to one.
    let full = [ZK_HOLDER_PAUSE, LEADER_CRASH, LEADER_ISOLATED];
    let distinct = search("zookeeper.toml", "zookeeper", &tokens(&full, 2, true)).unwrap();
    assert_certificate(&distinct, 735_458, 50_478);
    let repeats = search("zookeeper.toml", "zookeeper", &tokens(&full, 2, false)).unwrap();
    assert_certificate(&repeats, 1_146_974, 76_565);
    // The same bounds judged for fenced stale writes still find the fencing gap: client-1 paused
    // at 517.2 ms holding, the leader's crash delays client-0's grant to 6 496 ms, and client-1
    // resumes and writes its old token before client-0's first write.
    let mut gap = tokens(&full, 2, true);
    gap.property = Some("fenced-stale-write".into());
    let gap = search("zookeeper.toml", "zookeeper", &gap).unwrap();
    assert_eq!(shortest(&gap), 161, "{gap}");
    assert!(gap.story.iter().any(|l| l.contains("pause client-1 at 517.200 ms")), "{gap}");
}

#[test]
fn etcd_with_its_leader_crashed_or_isolated_never_regresses_a_token() {
    // Smaller than the full target (K = 2, `just exhaust`): one fault from the two.
    let r = search("etcd.toml", "etcd", &tokens(&[LEADER_CRASH, LEADER_ISOLATED], 1, false)).unwrap();
    assert_certificate(&r, 1_157_370, 61_810);
}

#[test]
fn etcd_with_a_pause_past_the_lease_regresses_when_the_grant_is_in_flight() {
    // client-0 paused at 6.1 ms with its Txn's answer "your key is the oldest" on its way; its
    // lease expires, client-1 is granted revision 3, and client-0 resumes into revision 2.
    let r = search("etcd.toml", "etcd", &tokens(&["pause@clients:lease_ttl_ms+1000"], 1, false)).unwrap();
    assert_eq!(shortest(&r), 234, "{r}");
    assert!(
        r.story.iter().any(|l| l.starts_with("token_regression at 3006.100 ms") && l.contains("granted token 2")),
        "{r}"
    );
}

#[test]
fn the_exhaust_table_takes_the_property_and_lists_it_when_refusing_another() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/exhaust/redis.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let models = locksim_algorithms::registry();
    // redis.toml's last table is [exhaust]: a key appended lands in it.
    let with = |value: &str| parse_str("redis.toml", &format!("{text}property = \"{value}\"\n"), &models);
    let sc = with("token-regression").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.exhaust.and_then(|t| t.property), Some("token-regression"));
    let err = with("tokens").map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("exhaust.property") && err.contains("fenced-stale-write, token-regression"), "{err}");
}
