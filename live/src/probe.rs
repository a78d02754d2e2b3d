//! One kind of request timed on a model's real servers for `sim compare`'s calibration
//! ([`Probe`], and the model parameter it measures), and how a backend times it: through a worker
//! thread, as a live client's event loop hands its requests to an adapter's connection thread.

use std::time::Instant;

/// One kind of request `sim compare` timed on the real servers.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// The request, as the output names it (`a committed single-row REPLACE`).
    pub what: &'static str,
    /// Its median round trip through a live client's connection thread, milliseconds.
    pub round_trip_ms: f64,
    /// Which model parameter it measures.
    pub sets: ProbeSets,
}

/// What a [`Probe`] measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeSets {
    /// `service_ms`: the round trip less the loopback's.
    Service,
    /// `fsync_ms`: a write through the replicated log, sent to the leader: its round trip less
    /// the [`ProbeSets::Service`] probe's (the member's own handling) and less one loopback
    /// round trip (the leader's to a follower and back) is the follower's sync.
    LogWrite,
}

/// The `q` quantile of `v` (0.5: the median), by the nearest rank.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// The median of `samples`.
pub fn median_ms(samples: &[f64]) -> f64 {
    quantile(samples, 0.5)
}

/// Times `n` requests (after 50 unmeasured ones) made by `call`, each handed to a worker thread
/// and answered over a channel, as a live client's event loop hands its requests to an adapter's
/// connection thread; the median, milliseconds.
pub fn through_a_thread(
    n: usize,
    mut call: impl FnMut(usize) -> Result<(), String> + Send + 'static,
) -> Result<f64, String> {
    let (req_tx, req_rx) = std::sync::mpsc::channel::<usize>();
    let (rep_tx, rep_rx) = std::sync::mpsc::channel::<Result<(), String>>();
    let worker = std::thread::spawn(move || {
        for i in req_rx {
            if rep_tx.send(call(i)).is_err() {
                return;
            }
        }
    });
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + 50 {
        let t = Instant::now();
        req_tx.send(i).map_err(|e| e.to_string())?;
        rep_rx.recv().map_err(|e| e.to_string())??;
        if i >= 50 {
            samples.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    drop(req_tx);
    let _ = worker.join();
    Ok(median_ms(&samples))
}
