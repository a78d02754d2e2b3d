//! `sim check FILE`: validate a scenario without running it.

use std::path::Path;

use crate::exit::{CliError, OK};

pub fn check(file: &Path) -> Result<i32, CliError> {
    let models = locksim_algorithms::registry();
    let scenario = locksim_simulator::scenario::load_file(file, &models)?;
    let labels: Vec<&str> = scenario.runs.iter().map(|r| r.label.as_str()).collect();
    println!(
        "{}: ok: scenario \"{}\", {} ms, {} seeds, algorithms [{}], {} faults, {} expectations",
        file.display(),
        scenario.name,
        scenario.setup.duration_ms,
        scenario.seeds,
        labels.join(", "),
        scenario.setup.faults.len(),
        scenario.expect.len()
    );
    for note in tcp_notes(&scenario) {
        println!("note: {note}");
    }
    Ok(OK)
}

/// What the scenario's network settings mean for rows whose links are TCP connections: a
/// duplicate segment is discarded and a lost one is retransmitted, so `duplicate` changes nothing
/// and `loss` is a delay.
fn tcp_notes(scenario: &locksim_simulator::scenario::Scenario) -> Vec<String> {
    let net = &scenario.setup.network;
    let duplicate = net.duplicate > 0.0 || net.links.iter().any(|l| l.duplicate.is_some_and(|d| d > 0.0));
    let loss = net.loss > 0.0 || net.links.iter().any(|l| l.loss.is_some_and(|d| d > 0.0));
    let tcp: Vec<&str> =
        scenario.runs.iter().filter(|r| r.model.topology(&r.params).ordered_links).map(|r| r.label.as_str()).collect();
    let mut notes = Vec::new();
    if tcp.is_empty() {
        return notes;
    }
    let rows =
        if tcp.len() == scenario.runs.len() { "every row".to_string() } else { format!("rows [{}]", tcp.join(", ")) };
    if duplicate {
        notes.push(format!(
            "`duplicate` has no effect on {rows}: their links are TCP connections, and TCP discards duplicate segments"
        ));
    }
    if loss {
        notes.push(format!(
            "`loss` delays messages on {rows} instead of dropping them: TCP retransmits a lost segment after \
             Linux's back-off (200 ms plus a round trip, doubling), and later messages wait behind it"
        ));
    }
    notes
}
