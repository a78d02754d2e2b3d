mod zookeeper_common;
use zookeeper_common::*;

const NO_FAULTS: &str = r#"
name = "zk-smoke"
duration_ms = 10000
algorithms = ["zookeeper"]
[workload]
clients = 5
"#;

#[test]
fn smoke() {
    let out = run(NO_FAULTS, "zookeeper", 1);
    dump(&out, 0.0, 1500.0);
    let m = &out.metrics;
    println!(
        "acq {} fail {} overlap {} notif {} rel {}",
        m.acquisitions, m.failed_acquisitions, m.overlap_events, m.notifications, m.releases
    );
    assert!(m.acquisitions > 10);
}
