//! What `sim compare` measures before it simulates, so that the simulated side describes this
//! machine: the loopback round trip (a TCP echo on 127.0.0.1: its median and spread) and the real
//! servers' service time per request kind: the median round trip of each kind of request a model
//! parameter stands for (each backend's `probe_requests_ms`), on servers started for the purpose
//! from the row's parameters, sent the way a live client sends it (from its event loop through a
//! connection thread and back):
//! - `service_ms`: the request the model's `service_ms` stands for (a Redis `SET`; for MariaDB
//!   the row's own kind, a committed `REPLACE` or a `GET_LOCK`; on the ZooKeeper or etcd leader
//!   a read the server answers itself), less the loopback round trip. So the client process's own
//!   hops are counted in the service time, not left out;
//! - `fsync_ms` (ZooKeeper, etcd): a write on the leader (`setData`, a put), less the read and
//!   one more loopback round trip (the leader's to a follower and back): what the follower's disk
//!   sync adds to every write.
//!
//! The simulation then runs with a one-way latency drawn uniformly between half the 10th and half
//! the 90th percentile round trip (a constant would make simultaneous wake-ups tie, which a real
//! network never does) and the measured values as the model's parameters.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crate::backends::backend_for;
use crate::probe::{quantile, Probe, ProbeSets};
use crate::supervisor::Supervisor;

/// The figures measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// Median loopback TCP round trip, milliseconds.
    pub rtt_ms: f64,
    /// 10th percentile loopback round trip, milliseconds.
    pub rtt_ms_p10: f64,
    /// 90th percentile loopback round trip, milliseconds.
    pub rtt_ms_p90: f64,
    /// Each kind of request timed on the real servers (empty: none for this model).
    pub probes: Vec<Probe>,
    /// The model's `service_ms` on this machine, milliseconds (`None`: not measured).
    pub service_ms: Option<f64>,
    /// The model's `fsync_ms` on this machine, milliseconds (`None`: not measured).
    pub fsync_ms: Option<f64>,
}

impl Calibration {
    /// `service_ms` and `fsync_ms` from the probes: a service probe's round trip less the
    /// loopback's; a log write's less the service probe's and one more loopback round trip
    /// (the leader's to a follower). Each at least a microsecond, or 0 for a sync.
    fn derive(rtt_ms: f64, probes: &[Probe]) -> (Option<f64>, Option<f64>) {
        let service_rt = probes.iter().find(|p| p.sets == ProbeSets::Service).map(|p| p.round_trip_ms);
        let service_ms = service_rt.map(|ms| (ms - rtt_ms).max(0.001));
        let fsync_ms = probes
            .iter()
            .find(|p| p.sets == ProbeSets::LogWrite)
            .zip(service_rt)
            .map(|(w, read)| (w.round_trip_ms - read - rtt_ms).max(0.0));
        (service_ms, fsync_ms)
    }
}

/// The round trips of `n` one-byte messages over a loopback TCP connection, milliseconds.
pub fn loopback_rtt_samples_ms(n: usize) -> Result<Vec<f64>, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let echo = std::thread::spawn(move || {
        if let Ok((mut c, _)) = listener.accept() {
            let _ = c.set_nodelay(true);
            let mut b = [0u8; 1];
            while c.read_exact(&mut b).is_ok() {
                if c.write_all(&b).is_err() {
                    return;
                }
            }
        }
    });
    let mut c = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    c.set_nodelay(true).map_err(|e| e.to_string())?;
    c.set_read_timeout(Some(Duration::from_secs(2))).map_err(|e| e.to_string())?;
    let mut samples = Vec::with_capacity(n);
    let mut b = [7u8; 1];
    for _ in 0..n {
        let t = Instant::now();
        c.write_all(&b).and_then(|_| c.read_exact(&mut b)).map_err(|e| e.to_string())?;
        samples.push(t.elapsed().as_secs_f64() * 1e3);
    }
    drop(c);
    let _ = echo.join();
    Ok(samples)
}

/// Measures this machine for `run`: the loopback round trip, and (for a model whose backend
/// probes) its servers' service time per request, on servers started for the purpose from the
/// row's parameters and stopped again.
pub fn calibrate(run: &locksim_simulator::scenario::RunSpec) -> Result<Calibration, String> {
    let samples = loopback_rtt_samples_ms(1000)?;
    let rtt_ms = quantile(&samples, 0.5);
    let backend = backend_for(run.model.name())?;
    let root = std::env::temp_dir().join(format!("locksim-calibrate-{}-{}", std::process::id(), run.label));
    let mut sup = Supervisor::default();
    let probed = (|| {
        let mut servers = backend.servers(&run.params, &root)?;
        for s in servers.iter_mut() {
            s.start(&mut sup)?;
        }
        backend.ready(&servers)?;
        backend.probe_requests_ms(&run.params, &servers, 1000).transpose()
    })();
    sup.stop_all();
    let _ = std::fs::remove_dir_all(&root);
    let probes = probed?.unwrap_or_default();
    let (service_ms, fsync_ms) = Calibration::derive(rtt_ms, &probes);
    Ok(Calibration {
        rtt_ms,
        rtt_ms_p10: quantile(&samples, 0.1),
        rtt_ms_p90: quantile(&samples, 0.9),
        probes,
        service_ms,
        fsync_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read of 0.3 ms and a write of 2.5 ms on a 0.05 ms loopback: the service time is the
    /// read less the loopback, the sync the write less the read and one more loopback.
    #[test]
    fn service_and_sync_come_from_the_read_and_the_write() {
        let probes = [
            Probe { what: "a read", round_trip_ms: 0.3, sets: ProbeSets::Service },
            Probe { what: "a write", round_trip_ms: 2.5, sets: ProbeSets::LogWrite },
        ];
        let (service, sync) = Calibration::derive(0.05, &probes);
        assert!((service.unwrap() - 0.25).abs() < 1e-12);
        assert!((sync.unwrap() - 2.15).abs() < 1e-12);
        // Without a write, no sync; a write faster than read + loopback is a free sync.
        assert_eq!(Calibration::derive(0.05, &probes[..1]).1, None);
        let fast = [probes[0].clone(), Probe { round_trip_ms: 0.32, ..probes[1].clone() }];
        assert_eq!(Calibration::derive(0.05, &fast).1, Some(0.0));
        assert_eq!(Calibration::derive(0.05, &[]), (None, None));
    }
}
