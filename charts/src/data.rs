//! The plain data the charts are drawn from.
//!
//! These types carry no behaviour beyond a few constructors: the callers (the `sim` commands)
//! fill them from their aggregated results, and this crate never depends on the other locksim
//! crates. Rates are fractions in `0..=1`, times are milliseconds of simulated (true) time.

/// A rate with its 95% confidence interval (a Wilson interval in locksim's reports).
///
/// All three numbers are fractions in `0..=1`; `lo <= rate <= hi` is expected, and the charts
/// widen the interval to contain `rate` if it does not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval95 {
    /// The observed rate, e.g. runs with an overlap divided by runs.
    pub rate: f64,
    /// Lower end of the 95% interval.
    pub lo: f64,
    /// Upper end of the 95% interval. With a rate of 0 this is what the runs rule out.
    pub hi: f64,
}

impl Interval95 {
    /// An interval from its rate and its two ends.
    pub fn new(rate: f64, lo: f64, hi: f64) -> Self {
        Self { rate, lo, hi }
    }
}

/// The stale-write rate against the fenced resource.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FencedRate {
    /// The model has no fencing token (Redlock, a plain Redis lock): the rate does not exist and
    /// the violations chart draws a hatched "cannot be fenced" marker, never a zero bar.
    CannotBeFenced,
    /// The rate, or `None` when there were no runs.
    Rate(Option<Interval95>),
}

/// One algorithm's (or variant's) aggregated results, as the comparison charts need them.
#[derive(Debug, Clone, PartialEq)]
pub struct AlgorithmChartData {
    /// The label the scenario gives the algorithm, e.g. `"redlock"`.
    pub label: String,
    /// Number of runs (seeds) aggregated.
    pub runs: u64,
    /// Completed critical sections per simulated second; `None` = no data.
    pub throughput_per_s: Option<f64>,
    /// A latency CDF (the acquire latency, or the wait for a critical section: the chart function
    /// says which): `(latency ms, cumulative fraction 0..1)` pairs in ascending latency. May be
    /// empty. Points with a latency `<= 0` cannot be drawn on the log axis and are
    /// skipped.
    pub latency_cdf_ms: Vec<(f64, f64)>,
    /// Runs with an overlap (two holders at once), as a rate of runs.
    pub overlap: Option<Interval95>,
    /// Runs in which the unfenced resource accepted a stale write.
    pub stale_unfenced: Option<Interval95>,
    /// Runs in which the fenced resource accepted a stale write, or why there is no such rate.
    pub stale_fenced: FencedRate,
    /// Messages sent on the simulated network per successful acquisition.
    pub messages_per_acquisition: Option<f64>,
    /// Watch or pub/sub wake-ups delivered per release (the herd effect).
    pub notifications_per_release: Option<f64>,
    /// The outage, ms: the longest stretch of a run with a waiter and no holder, its mean over
    /// runs; `None` = no data.
    pub outage_ms_mean: Option<f64>,
    /// The longest outage of any run, ms.
    pub outage_ms_max: Option<f64>,
    /// Jain's fairness index of sections per client over runs (1: equal shares).
    pub fairness: Option<Fairness>,
}

/// Jain's fairness index over runs: mean, lowest and highest, each in `0..=1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fairness {
    /// The mean over runs.
    pub mean: f64,
    /// The lowest run's.
    pub min: f64,
    /// The highest run's.
    pub max: f64,
}

impl AlgorithmChartData {
    /// An entry with a label and a run count and no data yet (every value `None`, empty CDF, no
    /// fenced-write runs).
    pub fn new(label: impl Into<String>, runs: u64) -> Self {
        Self {
            label: label.into(),
            runs,
            throughput_per_s: None,
            latency_cdf_ms: Vec::new(),
            overlap: None,
            stale_unfenced: None,
            stale_fenced: FencedRate::Rate(None),
            messages_per_acquisition: None,
            notifications_per_release: None,
            outage_ms_mean: None,
            outage_ms_max: None,
            fairness: None,
        }
    }
}

/// A stretch of simulated time, in milliseconds from the start of the run.
///
/// `start_ms == end_ms` is an instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Start, ms.
    pub start_ms: f64,
    /// End, ms (not before `start_ms`; a reversed span is drawn as an instant at its start).
    pub end_ms: f64,
}

impl Span {
    /// The span from `start_ms` to `end_ms`.
    pub fn new(start_ms: f64, end_ms: f64) -> Self {
        Self { start_ms, end_ms }
    }
}

/// A client holding the lock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hold {
    /// When it held it.
    pub span: Span,
    /// A shared (read) hold rather than an exclusive one; drawn in a different shade.
    pub shared: bool,
}

/// One client's row in a timeline panel.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Lane {
    /// The client's name, e.g. `"client-3"`.
    pub name: String,
    /// When it waited for the lock (drawn thin, in a light colour).
    pub waiting: Vec<Span>,
    /// When it held the lock (drawn solid).
    pub holding: Vec<Hold>,
}

/// A fault injected during the run, shaded across the whole panel.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultWindow {
    /// The fault kind: `"pause"`, `"crash"`, `"partition"`, `"isolate"`, `"clock_jump"`,
    /// `"clock_drift"`, `"slow"`, `"loss"`, …; unknown kinds get a colour of their own.
    pub kind: String,
    /// What it hit, as text for the label, e.g. `"server-0"` or `"client-1 | rest"`.
    pub targets: String,
    /// When. `start == end` is an instant (a clock step), drawn as a vertical line.
    pub span: Span,
}

/// One algorithm's run (one seed) in a timeline chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimelinePanel {
    /// The algorithm's label.
    pub label: String,
    /// The seed the run used (shown in the panel's header so it can be replayed).
    pub seed: u64,
    /// One lane per client, drawn top to bottom in this order.
    pub lanes: Vec<Lane>,
    /// Faults injected during the run.
    pub faults: Vec<FaultWindow>,
    /// When mutual exclusion was lost (two holders at once), drawn in red.
    pub overlaps: Vec<Span>,
    /// The two lanes (indexes into `lanes`) of each overlap, in the order of `overlaps`: the red
    /// is drawn on those lanes only. Empty: every overlap is drawn across the whole panel.
    pub overlap_lanes: Vec<[usize; 2]>,
    /// Where the overlaps link to in the SVG (an `href`, e.g. `#explain-redis`, the report
    /// page's explanation of the row's first violation); `None`: no link.
    pub overlap_link: Option<String>,
}

/// Timelines of several algorithms' runs, stacked on one shared time axis.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimelineChart {
    /// The chart's title.
    pub title: String,
    /// The runs' length in ms; the time axis goes from 0 to here. `<= 0` means "as far as the
    /// last span".
    pub duration_ms: f64,
    /// One panel per algorithm, top to bottom.
    pub panels: Vec<TimelinePanel>,
}

/// One point of a sweep series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepPoint {
    /// The swept parameter's value.
    pub x: f64,
    /// The measured value; `None` leaves a gap in the line.
    pub y: Option<f64>,
    /// An interval around `y` as `(low, high)`, drawn as a translucent band.
    pub band: Option<(f64, f64)>,
}

/// One line of a sweep chart (usually one algorithm).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepSeries {
    /// The legend label.
    pub label: String,
    /// The points, in any order (they are drawn in ascending `x`).
    pub points: Vec<SweepPoint>,
}

/// A metric plotted against a swept scenario parameter.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepChart {
    /// The chart's title.
    pub title: String,
    /// The x axis label, with its unit, e.g. `"lease TTL (ms)"`.
    pub x_label: String,
    /// The y axis label, with its unit, e.g. `"runs with overlap (fraction)"`.
    pub y_label: String,
    /// A logarithmic y axis; values `<= 0` are then skipped.
    pub log_y: bool,
    /// The lines.
    pub series: Vec<SweepSeries>,
}
