//! `sim sweep`'s machinery, apart from the command itself ([`crate::commands::sweep`]):
//!
//! - [`values`]: the `--param KEY=FROM..TO:STEP` / `KEY=a,b,c` syntax, and the points of a sweep
//!   (the cartesian product of the parameters' values, the first parameter varying slowest)
//! - [`path`]: setting a dotted key path (`faults.0.duration_ms`, `models.redis.ttl_ms`) in the
//!   scenario's TOML document, and building the scenario of one point through the parser
//! - [`output`]: the files a sweep writes: `sweep.csv`, `sweep.json`, and the charts

pub mod output;
pub mod path;
pub mod values;
