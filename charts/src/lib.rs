//! locksim's charts: SVG and PNG drawn with plotters from plain data.
//!
//! The `sim` commands (`sim run --report DIR`, `sim report`, `sim sweep`) fill the plain structs
//! of [`data`] from their results and call one function per chart; each writes `NAME.svg` and
//! `NAME.png` side by side in the directory given and returns their paths. This crate depends on
//! no other locksim crate.
//!
//! Modules, one per chart kind plus what they share:
//!
//! | module | what |
//! |---|---|
//! | [`data`] | the input structs: [`AlgorithmChartData`], [`TimelineChart`], [`SweepChart`], … |
//! | [`font`] | the shipped DejaVu Sans, registered with plotters as `"sans-serif"`; the only font used |
//! | [`output`] | drawing once per backend into `NAME.svg` and `NAME.png`; [`ChartFiles`], [`ChartError`] |
//! | `layout` | sizes, colours, number formats, axis ticks, titles, legend rows, hatching |
//! | `glyphs` | the PNGs' text, each glyph at its place (plotters' own drawing drops side bearings) |
//! | `raster` | coalescing timeline spans into pixel columns, so dense timelines stay small |
//! | [`bars`] | horizontal bar panels; [`throughput_chart`] |
//! | [`compare`] | [`compare_chart`]: `sim compare`'s live runs against the simulated range, metric by metric |
//! | [`cdf`] | [`latency_cdf_chart`], [`wait_cdf_chart`]: acquire-latency or wait CDFs on a log time axis |
//! | [`violations`] | [`violations_chart`]: overlap and stale-write rates with 95% intervals |
//! | [`cost`] | [`cost_chart`]: messages per acquisition and wake-ups per release |
//! | [`scorecard`] | [`scorecard_chart`]: every row on one figure: safety rates, outage, messages, fairness |
//! | [`timeline`] | [`timeline_chart`]: per-client lanes of several runs on one time axis |
//! | [`sweep`] | [`sweep_chart`]: a metric against a swept parameter, with interval bands |
//! | [`spacetime`] | [`spacetime_chart`]: one violation's nodes as lanes, time going down, messages as arrows |
//!
//! Every chart is 1000 px wide and has a title, axis labels with units, and a legend where there
//! are several series. Output is byte-identical for the same input: nothing reads the clock or
//! iterates an unordered map, and text is measured with the embedded font, never a system one.
//! Degenerate input (no algorithms, no values, empty CDFs, zero-width spans, a zero duration, a
//! single sweep point, values a log axis cannot show) draws a chart with a note rather than
//! failing; errors are for what cannot be written.

#![warn(missing_docs)]

pub mod atomic;
pub mod bars;
pub mod cdf;
pub mod compare;
pub mod cost;
pub mod data;
pub mod font;
mod glyphs;
mod layout;
pub mod output;
mod raster;
pub mod scorecard;
pub mod spacetime;
pub mod sweep;
pub mod timeline;
pub mod violations;

pub use atomic::{resolve_output, write_atomic, OutputTarget};
pub use bars::throughput_chart;
pub use cdf::{latency_cdf_chart, wait_cdf_chart};
pub use compare::{compare_chart, CompareChart, CompareMetric};
pub use cost::cost_chart;
pub use data::{
    AlgorithmChartData, Fairness, FaultWindow, FencedRate, Hold, Interval95, Lane, Span, SweepChart, SweepPoint,
    SweepSeries, TimelineChart, TimelinePanel,
};
pub use output::{ChartError, ChartFiles};
pub use scorecard::scorecard_chart;
pub use spacetime::{spacetime_chart, Elided, MarkKind, SpaceMark, SpaceMessage, SpaceWindow, SpacetimeChart};
pub use sweep::sweep_chart;
pub use timeline::timeline_chart;
pub use violations::violations_chart;
