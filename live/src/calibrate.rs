//! What `sim compare` measures before it simulates, so that the simulated side describes this
//! machine: the loopback round trip (a TCP echo on 127.0.0.1: its median and spread) and a real
//! server's service time per request: the median `SET` round trip on a fresh `redis-server`, sent
//! the way a live client sends it (from its event loop through the adapter's connection thread
//! and back), less the loopback round trip. So the client process's own hops are counted in the
//! service time, not left out. The simulation then runs with a one-way latency drawn uniformly
//! between half the 10th and half the 90th percentile round trip (a constant would make
//! simultaneous wake-ups tie, which a real network never does) and the measured service time as
//! the model's `service_ms`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crate::servers;
use crate::supervisor::Supervisor;

/// The figures measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// Median loopback TCP round trip, milliseconds.
    pub rtt_ms: f64,
    /// 10th percentile loopback round trip, milliseconds.
    pub rtt_ms_p10: f64,
    /// 90th percentile loopback round trip, milliseconds.
    pub rtt_ms_p90: f64,
    /// Median service time of one request on the real server, milliseconds (`None`: not measured
    /// for this model).
    pub service_ms: Option<f64>,
}

fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
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

/// The median round trip of `n` `SET` commands on a fresh `redis-server`, milliseconds, each
/// sent as a live client sends it: handed to a connection thread, answered back over a channel.
pub fn redis_set_rtt_ms(n: usize) -> Result<f64, String> {
    let root = std::env::temp_dir().join(format!("locksim-calibrate-{}", std::process::id()));
    let mut sup = Supervisor::default();
    let mut server = servers::redis_server(&root, "server-0", "none")?;
    server.start(&mut sup)?;
    let result = (|| {
        let client = redis::Client::open(format!("redis://{}/", server.addr())).map_err(|e| e.to_string())?;
        let mut con = client.get_connection_with_timeout(Duration::from_secs(2)).map_err(|e| e.to_string())?;
        let (req_tx, req_rx) = std::sync::mpsc::channel::<usize>();
        let (rep_tx, rep_rx) = std::sync::mpsc::channel::<Result<(), String>>();
        let worker = std::thread::spawn(move || {
            for i in req_rx {
                let r = redis::cmd("SET").arg("calibrate").arg(i).query::<()>(&mut con).map_err(|e| e.to_string());
                if rep_tx.send(r).is_err() {
                    return;
                }
            }
        });
        let mut samples = Vec::with_capacity(n);
        for i in 0..n + 100 {
            let t = Instant::now();
            req_tx.send(i).map_err(|e| e.to_string())?;
            rep_rx.recv().map_err(|e| e.to_string())??;
            if i >= 100 {
                samples.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        drop(req_tx);
        let _ = worker.join();
        Ok(quantile(&samples, 0.5))
    })();
    sup.stop_all();
    let _ = std::fs::remove_dir_all(&root);
    result
}

/// Measures this machine for `model` (a model backed by `redis-server` gets its service time).
pub fn calibrate(model: &str) -> Result<Calibration, String> {
    let samples = loopback_rtt_samples_ms(1000)?;
    let rtt_ms = quantile(&samples, 0.5);
    let service_ms = match model {
        "redis" | "redlock" => Some((redis_set_rtt_ms(2000)? - rtt_ms).max(0.001)),
        _ => None,
    };
    Ok(Calibration { rtt_ms, rtt_ms_p10: quantile(&samples, 0.1), rtt_ms_p90: quantile(&samples, 0.9), service_ms })
}
