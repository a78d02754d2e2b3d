//! `sim exhaust`'s targets at CI-sized bounds (docs/exhaustive.md): the search finds plain Redis's
//! overlap with a pause around the TTL and none with shorter pauses (a complete certificate);
//! finds the fenced resource's gap (a paused holder that resumes before the next holder has
//! written gets its stale write accepted) and certifies it complete for pauses far past the TTL;
//! and finds Kleppmann's Redlock case at its minimal depth (a depth limit one step shorter finds
//! nothing). Violations come from the models, judged by the checkers: the search only chooses
//! event orders, delays and where a fault from the menu starts.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use locksim_campaign::exhaust::bounds::BoundWords;
use locksim_campaign::exhaust::{exhaust, Report};
use locksim_simulator::scenario::{parse_str, Scenario};

fn scenario(name: &str) -> (Scenario, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/exhaust").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let models = locksim_algorithms::registry();
    let sc = parse_str(&path.display().to_string(), &text, &models).unwrap_or_else(|e| panic!("{e}"));
    (sc, text)
}

/// Two clients, one acquisition each, the `menu` of faults, messages at the minimum delay, max
/// depth 4096 (`exhaust_start_depth.rs` uses these bounds too).
pub(crate) fn words(menu: &[&str]) -> BoundWords {
    BoundWords {
        clients: 2,
        acquisitions: 1,
        faults: None,
        distinct_faults: false,
        symmetry: false,
        menu: menu.iter().map(|m| m.to_string()).collect(),
        delays: "min".into(),
        slow_messages: 1,
        property: None,
        max_depth: 4096,
        max_states: 1_000_000,
        seed: 0,
        menu_at: vec![],
        delays_at: None,
        holds_ms: vec![],
        thinks_ms: vec![],
    }
}

fn search(file: &str, label: &str, w: &BoundWords) -> Report {
    let (sc, text) = scenario(file);
    let row = sc.row_labelled(label).expect("row");
    let bounds = w.resolve(&row.params, row.model.fenced(&row.params), &sc.setup.network).expect("bounds");
    let stop = AtomicBool::new(false);
    let report = exhaust(&sc, &text, row, &bounds, &stop, &mut |_| {}).expect("searches");
    eprintln!("{report}");
    report
}

const PAUSE_AROUND_TTL: &str = "pause@clients:ttl_ms-1,ttl_ms+1";

#[test]
fn plain_redis_overlaps_with_a_pause_around_the_ttl_and_not_with_shorter_ones() {
    let report = search("redis.toml", "redis", &words(&[PAUSE_AROUND_TTL]));
    let path = report.found.counterexample.as_ref().expect("an overlap is found");
    // Even the pause just under the TTL overlaps when it starts late in the hold (at the hold's
    // end, 100 ms after the grant): the shortest path is that one, found first.
    assert!(report.story.iter().any(|l| l.contains("pause client-") && l.contains("for 999.000 ms")), "{report}");
    assert!(report.story.iter().any(|l| l.starts_with("overlap at")), "{report}");
    let text = report.scenario.as_deref().expect("a replay file");
    assert!(text.contains("[replay]") && text.contains("duration_ms = 999.0"), "{text}");
    assert!(path.len() > 5);

    // Pauses that end before the key expires whenever they start (the TTL less twice the hold):
    // every schedule is searched, and none overlaps.
    let under = search("redis.toml", "redis", &words(&["pause@clients:ttl_ms-200"]));
    assert!(under.found.counterexample.is_none(), "{under}");
    assert_eq!(under.found.incomplete, None, "{under}");
    assert!(under.found.stats.unique > 50, "{under}");
}

#[test]
fn fenced_redis_accepts_no_stale_write_when_the_pause_outlasts_the_next_holder() {
    let far = "pause@clients:ttl_ms+500";
    let report = search("redis.toml", "redis-fenced", &words(&[far]));
    assert!(report.found.counterexample.is_none(), "{report}");
    assert_eq!(report.found.incomplete, None, "the certificate is complete: {report}");
    assert!(report.to_string().contains("no fenced-stale-write in every schedule within these bounds"), "{report}");
    // The same schedules do give a stale write an unfenced resource would take: the fence, not
    // the schedule, is what keeps the resource right.
    let mut unfenced = words(&[far]);
    unfenced.property = Some("stale-write".into());
    let stale = search("redis.toml", "redis-fenced", &unfenced);
    assert!(stale.found.counterexample.is_some(), "{stale}");
}

#[test]
fn fenced_redis_accepts_a_stale_write_when_the_paused_holder_writes_first() {
    // A pause around the TTL: the paused holder resumes after its key expired and the next
    // client was granted, but before that client's write carried the higher token to the
    // resource, so the fence has nothing to compare against yet.
    let report = search("redis.toml", "redis-fenced", &words(&[PAUSE_AROUND_TTL]));
    assert!(report.found.counterexample.is_some(), "{report}");
    assert!(report.story.iter().any(|l| l.contains("pause client-")), "{report}");
}

#[test]
fn redlock_gives_kleppmanns_overlap_at_its_minimal_depth() {
    let report = search("redlock.toml", "redlock", &words(&[PAUSE_AROUND_TTL]));
    let shortest = report.found.counterexample.as_ref().expect("Kleppmann's case is found").len() as u32;
    // The first client paused at the end of its hold (just before its write), past its keys'
    // expiry on every master (499 ms after 300 ms of hold is past the 500 ms TTL).
    assert!(report.story.iter().any(|l| l.contains("pause client-")), "{report}");
    assert!(report.story.iter().any(|l| l.starts_with("overlap at")), "{report}");
    // One step shorter: nothing, whichever schedule.
    let mut shorter = words(&[PAUSE_AROUND_TTL]);
    shorter.max_depth = shortest - 1;
    let none = search("redlock.toml", "redlock", &shorter);
    assert!(none.found.counterexample.is_none(), "{none}");
}

#[test]
fn delays_from_the_bounds_are_choices_too() {
    // Both latency bounds, one message slow per path, no faults: more states than with one delay.
    let mut one = words(&[]);
    one.faults = Some(0);
    let mut two = one.clone();
    two.delays = "min,max".into();
    let a = search("redis.toml", "redis", &one);
    let b = search("redis.toml", "redis", &two);
    assert_eq!((a.found.incomplete.clone(), b.found.incomplete.clone()), (None, None));
    assert!(b.found.stats.unique > a.found.stats.unique, "{a}\n{b}");
}

#[test]
fn etcd_with_its_recheck_still_overlaps_when_a_waiter_is_paused_as_its_grant_arrives() {
    // 3 clients; a waiter paused past its lease. The shortest path pauses it just as the Txn's
    // answer "your key is the oldest" arrives: its lease expires and its key is revoked during
    // the pause, another client is granted, and the stale answer grants it on resume with no
    // wait, so clientv3 3.5's re-check after waiting never runs.
    let mut w = words(&["pause@waiters:lease_ttl_ms+1000"]);
    w.clients = 3;
    w.property = Some("overlap".into());
    let report = search("etcd.toml", "etcd", &w);
    assert!(report.found.counterexample.is_some(), "{report}");
    assert!(report.story.iter().any(|l| l.contains("pause client-") && l.contains("for 3000.000 ms")), "{report}");
}

/// etcd.toml's bound for etcd-io/etcd#11456: 3 clients, one pause past the lease of a waiter
/// blocked on its watch of the key before its own.
fn blocked_waiter_paused() -> BoundWords {
    let mut w = words(&["pause@blocked:lease_ttl_ms+1000"]);
    w.clients = 3;
    w.property = Some("overlap".into());
    w
}

#[test]
fn etcd_11456_without_the_recheck_a_waiter_paused_on_its_watch_is_granted_with_its_key_gone() {
    let report = search("etcd.toml", "etcd-no-recheck", &blocked_waiter_paused());
    let shortest = report.found.counterexample.as_ref().expect("#11456 is found").len() as u32;
    assert!(report.story.iter().any(|l| l.contains("pause client-") && l.contains("for 3000.000 ms")), "{report}");
    assert!(report.story.iter().any(|l| l.starts_with("overlap at")), "{report}");
    // At its minimal depth: one step shorter, nothing.
    let mut shorter = blocked_waiter_paused();
    shorter.max_depth = shortest - 1;
    let none = search("etcd.toml", "etcd-no-recheck", &shorter);
    assert!(none.found.counterexample.is_none(), "{none}");
}

#[test]
fn etcd_11456_with_the_recheck_no_schedule_overlaps() {
    let report = search("etcd.toml", "etcd", &blocked_waiter_paused());
    assert!(report.found.counterexample.is_none(), "{report}");
    assert_eq!(report.found.incomplete, None, "the certificate is complete: {report}");
}

#[test]
fn symmetry_keeps_the_shortest_counterexample_and_says_whether_it_applied() {
    // etcd's state is typed, so its clients are renamed; the path found is a real one, as short.
    let plain = search("etcd.toml", "etcd-no-recheck", &blocked_waiter_paused());
    let mut w = blocked_waiter_paused();
    w.symmetry = true;
    let sym = search("etcd.toml", "etcd-no-recheck", &w);
    let len = |r: &Report| r.found.counterexample.as_ref().map(Vec::len);
    assert_eq!(len(&sym), len(&plain), "{plain}\n{sym}");
    assert!(sym.symmetry_applies && sym.to_string().contains("symmetry: clients"), "{sym}");
    assert!(plain.to_string().contains("symmetry: off"), "{plain}");
    // Redlock: the same shortest path with symmetry as without; the report says whether the
    // model's state let it apply ("clients" or "not applied"), whichever it is.
    let plain = search("redlock.toml", "redlock", &words(&[PAUSE_AROUND_TTL]));
    let mut w = words(&[PAUSE_AROUND_TTL]);
    w.symmetry = true;
    let sym = search("redlock.toml", "redlock", &w);
    assert_eq!(len(&sym), len(&plain), "{plain}\n{sym}");
    let said = if sym.symmetry_applies { "symmetry: clients" } else { "symmetry: asked for, not applied" };
    assert!(sym.to_string().contains(said), "{sym}");
}

#[test]
fn zookeeper_fenced_at_k2_from_leader_faults_each_once_gets_a_complete_certificate() {
    // K = 2 from {the leader's process crashed 1 s, the leader isolated 1 s}, each at most once:
    // no fenced stale write in any schedule. (With the pause past the session on the menu too,
    // a pause and the crash give one: the fencing gap, docs/exhaustive.md.)
    let mut w = words(&["crash@leader:1000", "isolate@leader:1000"]);
    w.faults = Some(2);
    w.distinct_faults = true;
    let report = search("zookeeper.toml", "zookeeper", &w);
    assert!(report.found.counterexample.is_none(), "{report}");
    assert_eq!(report.found.incomplete, None, "the certificate is complete: {report}");
    assert!(report.to_string().contains("at most 2 faults (each entry at most once)"), "{report}");
}

#[test]
fn a_bad_replay_table_is_refused_with_its_line_and_key() {
    let models = locksim_algorithms::registry();
    let head = "name = \"bad\"\nduration_ms = 1000\nalgorithms = [\"redis\"]\n\n[replay]\n";
    for (body, want) in [
        ("events = [\"start server-0\", 3]\n", "bad.toml:6:29: `replay.events.1`: expected an event key"),
        ("delays_ms = [1, -2]\n", "bad.toml:6:17: `replay.delays_ms.1`: expected a latency in milliseconds"),
        ("event = []\n", "`replay.event`: unknown key `event`; valid keys here: events, delays_ms"),
    ] {
        let err = parse_str("bad.toml", &format!("{head}{body}"), &models).expect_err(body).to_string();
        assert!(err.contains(want), "{body}: {err}");
    }
}

/// redis.toml without its pause: 2 clients of 2 acquisitions each, thinking 0 ms, holding a time
/// from `holds_ms` (redis-py polls a refused `SET NX` every 100 ms; the key's TTL is 1 s).
fn two_acquisitions_holding(holds_ms: &[f64]) -> BoundWords {
    let mut w = words(&[]);
    w.faults = Some(0);
    w.acquisitions = 2;
    w.holds_ms = holds_ms.to_vec();
    w.thinks_ms = vec![0.0];
    w
}

#[test]
fn a_hold_time_chosen_per_acquisition_finds_an_overlap_no_single_hold_time_gives() {
    // Every acquisition holding one time (what the pair-by-pair search did with each value of
    // the set): 10 ms never outlasts the key; 1016 ms outlasts it by 16 ms, and with both
    // clients holding that long the waiter's 100 ms polls never land in those 16 ms.
    for single in [10.0, 1016.0] {
        let report = search("redis.toml", "redis", &two_acquisitions_holding(&[single]));
        assert!(report.found.counterexample.is_none(), "{report}");
        assert_eq!(report.found.incomplete, None, "the certificate is complete: {report}");
    }
    // Chosen at each grant: client-0 holds 10 ms, then 1016 ms, and client-1's polls (shifted
    // by the short first hold) find the key expired while client-0 still holds it.
    let report = search("redis.toml", "redis", &two_acquisitions_holding(&[10.0, 1016.0]));
    let path = report.found.counterexample.as_ref().expect("an overlap is found");
    assert_eq!(path.len(), 64, "{report}");
    assert!(
        report
            .story
            .iter()
            .any(|l| l == "hold times chosen, in order: client-0 10 ms, client-0 1016 ms, client-1 10 ms"),
        "{report}"
    );
    assert!(report.story.iter().any(|l| l.starts_with("overlap at")), "{report}");
    let text = report.scenario.as_deref().expect("a replay file");
    assert!(text.contains("hold_ms = [10.0, 1016.0, 10.0]"), "the choices are in [replay]: {text}");
    assert!(text.contains("hold_ms = 10.0"), "the set's first is the workload's past the list: {text}");
}

#[test]
fn single_value_hold_and_think_sets_search_as_the_workload_alone() {
    // A set of one value is no choice: the same search, state for state, as no set with the
    // workload's own constant times (redis.toml holds 100 ms and thinks 0 ms).
    let mut sets = words(&[PAUSE_AROUND_TTL]);
    sets.holds_ms = vec![100.0];
    sets.thinks_ms = vec![0.0];
    let a = search("redis.toml", "redis", &sets);
    let b = search("redis.toml", "redis", &words(&[PAUSE_AROUND_TTL]));
    assert_eq!(a.found.stats, b.found.stats, "{a}\n{b}");
    assert_eq!(a.found.counterexample, b.found.counterexample, "{a}\n{b}");
}

#[test]
fn a_bad_replay_hold_or_think_list_is_refused_with_its_line_and_key() {
    let models = locksim_algorithms::registry();
    let head = "name = \"bad\"\nduration_ms = 1000\nalgorithms = [\"redis\"]\n\n[replay]\n";
    for (body, want) in [
        ("hold_ms = [10, -1]\n", "bad.toml:6:16: `replay.hold_ms.1`: expected a hold time in milliseconds, at least 0"),
        ("think_ms = 5\n", "bad.toml:6:12: `replay.think_ms`: expected an array of think times in milliseconds"),
        ("think_ms = [\"x\"]\n", "bad.toml:6:13: `replay.think_ms.0`: expected a think time in milliseconds"),
        (
            "holds_ms = []\n",
            "`replay.holds_ms`: unknown key `holds_ms`; valid keys here: events, delays_ms, hold_ms, think_ms",
        ),
    ] {
        let err = parse_str("bad.toml", &format!("{head}{body}"), &models).expect_err(body).to_string();
        assert!(err.contains(want), "{body}: {err}");
    }
}

#[test]
fn no_node_handles_a_message_before_its_own_start() {
    // Redis with Sentinel, and messages that may take no time: a client's first send (to a
    // Sentinel, asking for the primary) is then due at 0, tied with the Sentinel's own start.
    // The normal loop starts every node first (queue order); the search must not deliver before
    // the start either (the Sentinel has no primary until it boots: it used to panic here).
    let (_, text) = scenario("redis.toml");
    let text = text.replacen("[models.redis]\n", "[models.redis]\nreplicas = 1\nsentinels = 2\n", 1);
    let models = locksim_algorithms::registry();
    let sc = parse_str("redis-sentinel.toml", &text, &models).unwrap_or_else(|e| panic!("{e}"));
    let row = sc.row_labelled("redis").expect("row");
    let mut w = words(&[]);
    w.faults = Some(0);
    w.delays = "0,min".into();
    let bounds = w.resolve(&row.params, row.model.fenced(&row.params), &sc.setup.network).expect("bounds");
    let stop = AtomicBool::new(false);
    let report = exhaust(&sc, &text, row, &bounds, &stop, &mut |_| {}).expect("searches");
    eprintln!("{report}");
    assert_eq!(report.found.incomplete, None, "{report}");
    assert!(report.found.stats.unique > 100, "{report}");
}

// The panicking world is the debug-build hook `sim exhaust`'s own tests use (`test_panic`).
#[cfg(debug_assertions)]
#[test]
fn a_model_panic_stops_the_search_with_its_message_and_the_path_to_it() {
    use locksim_campaign::exhaust::test_panic::{PanicsOn, TEST_PANIC_EXHAUST_VAR};
    use locksim_campaign::exhaust::{exhaust_from, timed_setup};
    // Redis with a pause from the menu: the search reaches client-1's first reply on many paths;
    // the first one it takes ends the search (no unwinding out of it), reported as the model's
    // failure with the path that led there, written as a replay file with no [expect].
    let (sc, text) = scenario("redis.toml");
    let row = sc.row_labelled("redis").expect("row");
    let bounds = words(&[PAUSE_AROUND_TTL])
        .resolve(&row.params, row.model.fenced(&row.params), &sc.setup.network)
        .expect("bounds");
    let setup = timed_setup(&locksim_campaign::exhaust::bounded_setup(&sc.setup, &bounds).unwrap(), &bounds);
    let trigger = "deliver server-0 -> client-1";
    let root = PanicsOn::new(row.model.search_world(&setup, &row.params, bounds.seed), trigger);
    let stop = AtomicBool::new(false);
    let report = exhaust_from(&root, &text, row, &bounds, &stop, &mut |_| {}).expect("searches");
    eprintln!("{report}");
    let panicked = report.found.panicked.as_ref().expect("the panic is the search's result");
    assert_eq!(panicked.message, format!("{TEST_PANIC_EXHAUST_VAR}: `{trigger}` panics on purpose"));
    assert!(report.found.counterexample.is_none() && report.found.incomplete.is_none(), "{report}");
    assert!(report.to_string().contains("the model panicked, search stopped"), "{report}");
    let last = format!("panicked at step {}: {trigger}", panicked.path.len());
    assert!(report.story.contains(&last), "{report}");

    // The replay file follows the path up to the step that panicked, and expects nothing.
    let file = report.scenario.as_deref().expect("the path is written");
    assert!(file.contains(&format!("\"{trigger}\",\n]")) && !file.contains("[expect"), "{file}");
    let replay = parse_str("panic.toml", file, &locksim_algorithms::registry()).unwrap_or_else(|e| panic!("{e}"));
    let events = &replay.setup.replay.as_ref().expect("a [replay] table").events;
    assert_eq!(events.len(), panicked.path.len(), "{file}");
}
