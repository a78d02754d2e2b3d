//! End-to-end tests: every chart is written as SVG and PNG, says what it must say, is
//! byte-identical when drawn twice, survives degenerate input, and stays small.

use std::fs;
use std::path::{Path, PathBuf};

use locksim_charts::{
    cost_chart, latency_cdf_chart, scorecard_chart, sweep_chart, throughput_chart, timeline_chart, violations_chart,
    AlgorithmChartData, ChartError, ChartFiles, Fairness, FaultWindow, FencedRate, Hold, Interval95, Lane, Span,
    SweepChart, SweepPoint, SweepSeries, TimelineChart, TimelinePanel,
};

// ---------------------------------------------------------------------------------------------
// Helpers

/// A fresh, empty directory for one test.
fn out_dir(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("locksim-charts").join(test);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1A, b'\n'];

/// The PNG's width and height, after checking its signature and that the first chunk is IHDR.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(bytes.len() > 24, "{} is too short", path.display());
    assert_eq!(bytes[..8], PNG_SIGNATURE, "{} is not a PNG", path.display());
    assert_eq!(&bytes[12..16], b"IHDR", "{}: first chunk is not IHDR", path.display());
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

/// The SVG's `width` and `height` attributes.
fn svg_size(svg: &str) -> (u32, u32) {
    let attr = |name: &str| -> u32 {
        let start = svg.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        let end = start + svg[start..].find('"').unwrap();
        svg[start..end].parse().unwrap()
    };
    (attr("width"), attr("height"))
}

/// The text content of every `<text>` element, unescaped.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .map(|chunk| {
            let body = &chunk[chunk.find('>').unwrap() + 1..chunk.find("</text>").unwrap()];
            body.trim()
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .replace("&amp;", "&")
        })
        .collect()
}

/// Checks both files of a chart and returns the SVG text.
fn check_files(files: &ChartFiles, dir: &Path, name: &str) -> String {
    assert_eq!(files.svg, dir.join(format!("{name}.svg")));
    assert_eq!(files.png, dir.join(format!("{name}.png")));
    let svg = fs::read_to_string(&files.svg).unwrap();
    assert!(svg.starts_with("<svg"), "not an SVG: {}", &svg[..svg.len().min(80)]);
    assert!(svg.trim_end().ends_with("</svg>"));
    let (w, h) = svg_size(&svg);
    assert_eq!(w, 1000, "charts are 1000 px wide");
    assert!((150..=2400).contains(&h), "height {h}");
    assert_eq!(png_size(&files.png), (w, h), "the PNG has the SVG's size");
    // Only the shipped font's family (with its fallback), never another font name.
    for family in svg.split("font-family=\"").skip(1) {
        assert!(
            family.starts_with("DejaVu Sans, sans-serif\""),
            "unexpected font family: {}",
            &family[..40.min(family.len())]
        );
    }
    svg
}

fn has(texts: &[String], wanted: &str) -> bool {
    texts.iter().any(|t| t == wanted)
}

fn assert_has(texts: &[String], wanted: &str) {
    assert!(has(texts, wanted), "no text {wanted:?} in {texts:?}");
}

fn iv(rate: f64, lo: f64, hi: f64) -> Option<Interval95> {
    Some(Interval95 { rate, lo, hi })
}

fn cdf(p50: f64) -> Vec<(f64, f64)> {
    (1..=100).map(|i| (p50 * (f64::from(i) / 50.0).powi(3), f64::from(i) / 100.0)).collect()
}

fn algorithms() -> Vec<AlgorithmChartData> {
    vec![
        AlgorithmChartData {
            label: "db".into(),
            runs: 200,
            throughput_per_s: Some(13.7),
            latency_cdf_ms: cdf(4.75),
            overlap: iv(0.0, 0.0, 0.015),
            stale_unfenced: iv(0.0, 0.0, 0.015),
            stale_fenced: FencedRate::Rate(iv(0.0, 0.0, 0.015)),
            messages_per_acquisition: Some(16.1),
            notifications_per_release: Some(0.0),
            outage_ms_mean: Some(20_000.0),
            outage_ms_max: Some(20_000.0),
            fairness: Some(Fairness { mean: 0.485, min: 0.128, max: 0.99 }),
        },
        AlgorithmChartData {
            label: "redlock".into(),
            runs: 200,
            throughput_per_s: Some(20.8),
            latency_cdf_ms: cdf(94.7),
            overlap: iv(0.12, 0.08, 0.17),
            stale_unfenced: iv(0.1, 0.065, 0.15),
            stale_fenced: FencedRate::CannotBeFenced,
            messages_per_acquisition: Some(99.2),
            notifications_per_release: None,
            outage_ms_mean: Some(54.2),
            outage_ms_max: Some(140.0),
            fairness: Some(Fairness { mean: 0.987, min: 0.961, max: 0.998 }),
        },
        AlgorithmChartData {
            label: "zookeeper & co".into(),
            runs: 10,
            throughput_per_s: None,
            latency_cdf_ms: Vec::new(),
            overlap: iv(1.0, 0.72, 1.0),
            stale_unfenced: iv(1.0, 0.72, 1.0),
            stale_fenced: FencedRate::Rate(None),
            messages_per_acquisition: Some(37.1),
            notifications_per_release: Some(0.996),
            outage_ms_mean: None,
            outage_ms_max: None,
            fairness: None,
        },
    ]
}

fn span(start_ms: f64, end_ms: f64) -> Span {
    Span { start_ms, end_ms }
}

fn fault(kind: &str, targets: &str, start_ms: f64, end_ms: f64) -> FaultWindow {
    FaultWindow { kind: kind.into(), targets: targets.into(), span: span(start_ms, end_ms) }
}

/// `lanes` clients each with `spans` holds (and as many waits) spread over `duration_ms`.
fn busy_panel(label: &str, lanes: usize, spans: usize, duration_ms: f64) -> TimelinePanel {
    let step = duration_ms / spans as f64;
    TimelinePanel {
        label: label.into(),
        seed: 42,
        lanes: (0..lanes)
            .map(|c| Lane {
                name: format!("client-{c}"),
                waiting: (0..spans).map(|i| span(i as f64 * step, i as f64 * step + step * 0.3)).collect(),
                holding: (0..spans)
                    .map(|i| Hold {
                        span: span(i as f64 * step + step * 0.3, i as f64 * step + step * 0.6),
                        shared: i % 7 == 0,
                    })
                    .collect(),
            })
            .collect(),
        faults: vec![
            fault("crash", "server-0", 10_000.0, 30_000.0),
            fault("pause", "client-1", 12_000.0, 20_000.0),
            fault("clock_jump", "server-2", 40_000.0, 40_000.0),
            fault("partition", "client-3 | rest", 45_000.0, 50_000.0),
        ],
        overlaps: vec![span(20_000.0, 20_400.0)],
        ..TimelinePanel::default()
    }
}

fn timeline() -> TimelineChart {
    TimelineChart {
        title: "failover timelines".into(),
        duration_ms: 60_000.0,
        panels: vec![busy_panel("redis", 4, 300, 60_000.0), busy_panel("redlock", 3, 200, 60_000.0)],
    }
}

fn sweep(log_y: bool) -> SweepChart {
    let point = |x: f64, y: Option<f64>| SweepPoint { x, y, band: y.map(|y| (y * 0.5, y * 1.5)) };
    SweepChart {
        title: "overlap rate against TTL".into(),
        x_label: "lease TTL (ms)".into(),
        y_label: "runs with overlap (fraction)".into(),
        log_y,
        series: vec![
            SweepSeries {
                label: "redis".into(),
                points: vec![point(1000.0, Some(0.2)), point(5000.0, None), point(10_000.0, Some(0.02))],
            },
            SweepSeries {
                label: "zookeeper".into(),
                // Unsorted, with a zero the log axis must skip.
                points: vec![point(10_000.0, Some(0.001)), point(1000.0, Some(0.0)), point(5000.0, Some(0.01))],
            },
        ],
    }
}

/// Draws every chart kind into `dir`.
fn draw_all(dir: &Path) -> Vec<ChartFiles> {
    let algs = algorithms();
    vec![
        throughput_chart(dir, "throughput", "throughput, failover", &algs).unwrap(),
        latency_cdf_chart(dir, "latency", "acquire latency, failover", &algs).unwrap(),
        violations_chart(dir, "violations", "violations, failover", &algs).unwrap(),
        cost_chart(dir, "cost", "cost, failover", &algs).unwrap(),
        timeline_chart(dir, "timeline", &timeline()).unwrap(),
        sweep_chart(dir, "sweep", &sweep(false)).unwrap(),
        sweep_chart(dir, "sweep-log", &sweep(true)).unwrap(),
    ]
}

// ---------------------------------------------------------------------------------------------
// What each chart says

#[test]
fn throughput_chart_labels_every_algorithm_and_says_na_for_no_data() {
    let dir = out_dir("throughput");
    let files = throughput_chart(&dir, "thr", "throughput, failover", &algorithms()).unwrap();
    // Taller with more algorithms.
    let more: Vec<AlgorithmChartData> = (0..12).map(|i| AlgorithmChartData::new(format!("alg-{i}"), 1)).collect();
    let taller = throughput_chart(&dir, "thr12", "t", &more).unwrap();
    assert!(png_size(&taller.png).1 > png_size(&files.png).1);
    let texts = svg_texts(&check_files(&files, &dir, "thr"));
    assert_has(&texts, "throughput, failover");
    for label in ["db", "redlock", "zookeeper & co"] {
        assert_has(&texts, label);
    }
    assert_has(&texts, "200 runs");
    assert_has(&texts, "10 runs");
    assert_has(&texts, "13.7");
    assert_has(&texts, "20.8");
    assert_has(&texts, "n/a");
    assert!(texts.iter().any(|t| t.contains("per simulated second")), "x axis has its unit: {texts:?}");
}

#[test]
fn latency_cdf_has_a_log_axis_and_a_legend_entry_per_algorithm() {
    let dir = out_dir("cdf");
    let files = latency_cdf_chart(&dir, "cdf", "acquire latency", &algorithms()).unwrap();
    let svg = check_files(&files, &dir, "cdf");
    assert_eq!(png_size(&files.png), (1000, 620));
    let texts = svg_texts(&svg);
    assert_has(&texts, "acquire latency");
    assert_has(&texts, "db");
    assert_has(&texts, "redlock");
    assert_has(&texts, "zookeeper & co (no data)");
    assert_has(&texts, "acquire latency (ms, log scale)");
    assert!(texts.iter().any(|t| t.starts_with("fraction of acquisitions")));
    // Decades are labelled: the data runs from about 0.0003 ms to 750 ms.
    for tick in ["0.01", "1", "100"] {
        assert_has(&texts, tick);
    }
    assert_has(&texts, "p50");
    assert_has(&texts, "p99");
    // A line per algorithm with data, in its colour (Tableau blue, orange, red), besides its
    // legend swatch; the algorithm without data has the swatch only.
    let lines = |color: &str| svg.matches(&format!("stroke=\"{color}\" stroke-width=\"2\"")).count();
    assert_eq!(lines("#4E79A7"), 2);
    assert_eq!(lines("#F28E2B"), 2);
    assert_eq!(lines("#E15759"), 1);
}

#[test]
fn violations_chart_marks_cannot_be_fenced_and_zero_rates() {
    let dir = out_dir("violations");
    let files = violations_chart(&dir, "v", "violations", &algorithms()).unwrap();
    assert_eq!(png_size(&files.png), (1000, 620));
    let texts = svg_texts(&check_files(&files, &dir, "v"));
    assert_has(&texts, "violations");
    for label in ["db", "redlock", "zookeeper & co"] {
        assert_has(&texts, label);
    }
    // redlock's fenced column: the marker and its legend entry.
    assert_has(&texts, "cannot be fenced");
    assert_has(&texts, "cannot be fenced (no fencing token)");
    // Legend entries for the three metrics and the interval.
    assert_has(&texts, "overlap (two holders)");
    assert_has(&texts, "stale write accepted, unfenced");
    assert_has(&texts, "stale write accepted, fenced");
    assert_has(&texts, "95% interval");
    // db saw none: the bars show what the runs rule out.
    assert_has(&texts, "<1.5%");
    assert_has(&texts, "none seen (0): dotted up to the rate ruled out (95%)");
    // Observed rates are labelled; the y axis is in percent and stops at 100%.
    assert_has(&texts, "12%");
    assert_has(&texts, "100%");
    assert!(!texts.iter().any(|t| t == "120%" || t == "110%"), "{texts:?}");
    // zookeeper & co has no fenced runs.
    assert_has(&texts, "n/a");
    assert!(texts.iter().any(|t| t.starts_with("runs with the violation (%")));
}

/// The `height` of every `<rect>` filled with `colour` in `svg`.
fn rect_heights(svg: &str, colour: &str) -> Vec<f64> {
    svg.split("<rect ")
        .skip(1)
        .filter(|r| r.contains(&format!("fill=\"{colour}\"")))
        .filter_map(|r| r.split("height=\"").nth(1)?.split('"').next()?.parse().ok())
        .collect()
}

/// A row that saw no violation is not drawn as a bar up to the bound it rules out (issue 37:
/// a clean row's "< 7.5%" outline read, at a glance, as the biggest bar): the only areas in the
/// metrics' colours are the legend's swatches and a flat mark at zero; the bound is a dotted
/// line with its "<x%" label.
#[test]
fn violations_chart_draws_a_rule_out_bound_as_a_line_not_a_bar() {
    let dir = out_dir("violations-clean");
    let clean = vec![AlgorithmChartData {
        overlap: iv(0.0, 0.0, 0.75),
        stale_unfenced: iv(0.0, 0.0, 0.75),
        stale_fenced: FencedRate::Rate(iv(0.0, 0.0, 0.75)),
        ..AlgorithmChartData::new("db", 4)
    }];
    let files = violations_chart(&dir, "v", "violations", &clean).unwrap();
    let svg = check_files(&files, &dir, "v");
    for colour in ["#D62728", "#F28E2B", "#4E79A7"] {
        let tall: Vec<f64> = rect_heights(&svg, colour).into_iter().filter(|&h| h > 3.0).collect();
        // The legend swatch (14 px) alone.
        assert_eq!(tall, vec![14.0], "{colour}: an area taller than the zero mark");
    }
    assert!(!svg.contains("opacity=\"0.15\""), "no tinted area up to the bound");
    let texts = svg_texts(&svg);
    assert_eq!(texts.iter().filter(|t| *t == "<75%").count(), 3, "{texts:?}");
    assert_eq!(texts.iter().filter(|t| *t == "0").count(), 3, "{texts:?}");
}

/// The scorecard puts every row's safety, availability, cost and fairness on one figure, each
/// cell with its value: intervals for seen rates, the bound for a clean class, "no token" for a
/// model that cannot be fenced, "n/a" (never 0) for a missing value.
#[test]
fn scorecard_shows_every_row_and_every_column_with_its_value() {
    let dir = out_dir("scorecard");
    let files = scorecard_chart(&dir, "s", "failover: scorecard", &algorithms()).unwrap();
    let svg = check_files(&files, &dir, "s");
    let texts = svg_texts(&svg);
    for wanted in [
        "failover: scorecard",
        "safety: runs with the violation",
        "availability",
        "cost",
        "fairness",
        "overlap",
        "stale write, unfenced",
        "stale write, fenced",
        "outage",
        "msgs / acquisition",
        "Jain's index",
        "db",
        "redlock",
        "zookeeper & co",
        // db: clean, with its bound; its outage and fairness.
        "0 (<1.5%)",
        "20s / 20s",
        "0.485 [0.128–0.99]",
        "16.1",
        // redlock: seen rates with their intervals; no fencing token; short outages.
        "12% [8%–17%]",
        "no fencing token",
        "54.2ms / 140ms",
        // zookeeper & co: every rate, no fenced runs, no outage or fairness data.
        "100% [72%–100%]",
        "n/a",
    ] {
        assert_has(&texts, wanted);
    }
    // The outage axis reaches past the longest outage; the rate axis is shared and stops at 100%.
    assert_has(&texts, "100%");
    assert_eq!(texts.iter().filter(|t| *t == "n/a").count(), 3, "fenced, outage and fairness of the third row");
    // Three rows: the height grows with them.
    let (_, h3) = png_size(&files.png);
    let one = scorecard_chart(&dir, "one", "t", &algorithms()[..1]).unwrap();
    let (_, h1) = png_size(&one.png);
    assert!(h3 > h1 + 60, "{h1} {h3}");
    // No rows: a note, not a failure.
    let none = scorecard_chart(&dir, "none", "t", &[]).unwrap();
    assert_has(&svg_texts(&fs::read_to_string(none.svg).unwrap()), "no algorithms");
}

#[test]
fn violations_chart_without_unfenceable_models_has_no_marker_and_no_zero_bar_for_them() {
    let dir = out_dir("violations-fenced");
    let mut algs = algorithms();
    algs.retain(|a| a.stale_fenced != FencedRate::CannotBeFenced);
    let files = violations_chart(&dir, "v", "violations", &algs).unwrap();
    let texts = svg_texts(&check_files(&files, &dir, "v"));
    assert!(!texts.iter().any(|t| t.contains("cannot be fenced")), "{texts:?}");

    // An unfenceable model whose other rates are non-zero: its fenced column is the marker, not
    // a "0" and not "n/a".
    let only = vec![AlgorithmChartData {
        overlap: iv(0.2, 0.1, 0.3),
        stale_unfenced: iv(0.3, 0.2, 0.4),
        stale_fenced: FencedRate::CannotBeFenced,
        ..AlgorithmChartData::new("redlock", 50)
    }];
    let files = violations_chart(&dir, "only", "violations", &only).unwrap();
    let texts = svg_texts(&check_files(&files, &dir, "only"));
    assert_has(&texts, "cannot be fenced");
    assert!(!has(&texts, "0") && !has(&texts, "n/a"), "{texts:?}");
}

#[test]
fn cost_chart_has_two_panels_and_na_not_zero() {
    let dir = out_dir("cost");
    let files = cost_chart(&dir, "cost", "cost", &algorithms()).unwrap();
    let texts = svg_texts(&check_files(&files, &dir, "cost"));
    assert_has(&texts, "messages per acquisition");
    assert_has(&texts, "wake-ups per release");
    assert_has(&texts, "messages / acquisition");
    assert_has(&texts, "notifications delivered / release");
    // Each algorithm is labelled in both panels.
    for label in ["db", "redlock", "zookeeper & co"] {
        assert_eq!(texts.iter().filter(|t| *t == label).count(), 2, "{label}");
    }
    assert_has(&texts, "99.2");
    assert_has(&texts, "0.996");
    // redlock's wake-ups are unknown: "n/a"; db's are a real 0.
    assert_eq!(texts.iter().filter(|t| *t == "n/a").count(), 1, "{texts:?}");
    assert_has(&texts, "0");
}

#[test]
fn timeline_chart_shows_lanes_faults_overlaps_and_a_legend() {
    let dir = out_dir("timeline");
    let files = timeline_chart(&dir, "tl", &timeline()).unwrap();
    let svg = check_files(&files, &dir, "tl");
    let texts = svg_texts(&svg);
    assert_has(&texts, "failover timelines");
    assert_has(&texts, "redis (seed 42)");
    assert_has(&texts, "redlock (seed 42)");
    for lane in ["client-0", "client-1", "client-2", "client-3"] {
        assert_has(&texts, lane);
    }
    for legend in ["waiting", "holding", "holding (shared)", "overlap (two holders)", "crash", "pause", "partition"] {
        assert_has(&texts, legend);
    }
    assert_has(&texts, "clock step");
    assert_has(&texts, "crash server-0");
    assert_has(&texts, "pause client-1");
    assert_has(&texts, "clock step server-2");
    assert_has(&texts, "partition client-3 | rest");
    assert_has(&texts, "time (s)");
    assert_has(&texts, "60");
    // The clock step is a vertical line in each panel (and in the legend): polylines in its
    // colour with a single x.
    let lines: Vec<&str> = svg.split("<polyline").filter(|p| p.contains("stroke=\"#17BECF\"")).collect();
    assert_eq!(lines.len(), 3);
    for line in lines {
        let points = &line[line.find("points=\"").unwrap() + 8..];
        let points: Vec<&str> = points[..points.find('"').unwrap()].split_whitespace().collect();
        let xs: Vec<&str> = points.iter().map(|p| p.split(',').next().unwrap()).collect();
        assert!(xs.len() == 2 && xs[0] == xs[1], "{points:?}");
    }
    // Overlaps are red.
    assert!(svg.contains("fill=\"#D62728\""));
    // Only the bottom panel carries the time axis labels: "30" appears once.
    assert_eq!(texts.iter().filter(|t| *t == "30").count(), 1);
}

#[test]
fn short_timelines_use_milliseconds() {
    let dir = out_dir("timeline-ms");
    let chart =
        TimelineChart { title: "handoff".into(), duration_ms: 500.0, panels: vec![busy_panel("etcd", 2, 20, 500.0)] };
    let texts = svg_texts(&check_files(&timeline_chart(&dir, "tl", &chart).unwrap(), &dir, "tl"));
    assert_has(&texts, "time (ms)");
    assert_has(&texts, "500");
}

#[test]
fn sweep_chart_draws_lines_bands_and_a_log_axis() {
    let dir = out_dir("sweep");
    let files = sweep_chart(&dir, "s", &sweep(false)).unwrap();
    let svg = check_files(&files, &dir, "s");
    let texts = svg_texts(&svg);
    assert_has(&texts, "overlap rate against TTL");
    assert_has(&texts, "lease TTL (ms)");
    assert_has(&texts, "runs with overlap (fraction)");
    assert_has(&texts, "redis");
    assert_has(&texts, "zookeeper");
    assert_has(&texts, "shaded: interval");
    assert!(svg.contains("<polygon"), "bands are polygons");
    // redis has a gap at 5000: its two points are not joined by a line (only the legend swatch
    // has its colour), but both have markers; zookeeper's three points are joined.
    assert_eq!(svg.matches("stroke=\"#4E79A7\" stroke-width=\"2\"").count(), 1, "no redis line across the gap");
    assert_eq!(svg.matches("stroke=\"#F28E2B\" stroke-width=\"2\"").count(), 2);
    assert_eq!(svg.matches("<circle").count(), 2 + 2 + 3, "legend markers, redis, zookeeper");

    let files = sweep_chart(&dir, "log", &sweep(true)).unwrap();
    let texts = svg_texts(&check_files(&files, &dir, "log"));
    for tick in ["0.001", "0.01", "0.1"] {
        assert_has(&texts, tick);
    }
}

#[test]
fn legends_list_every_series() {
    let dir = out_dir("legends");
    let chart = SweepChart {
        series: (0..12)
            .map(|i| SweepSeries {
                label: format!("variant-{i}"),
                points: vec![SweepPoint { x: 1.0, y: Some(f64::from(i)), band: None }],
            })
            .collect(),
        ..sweep(false)
    };
    let texts = svg_texts(&check_files(&sweep_chart(&dir, "many", &chart).unwrap(), &dir, "many"));
    for i in 0..12 {
        assert_has(&texts, &format!("variant-{i}"));
    }
}

// ---------------------------------------------------------------------------------------------
// Determinism

#[test]
fn drawing_twice_gives_identical_bytes() {
    let a = draw_all(&out_dir("determinism-a"));
    let b = draw_all(&out_dir("determinism-b"));
    assert_eq!(a.len(), b.len());
    for (a, b) in a.iter().zip(&b) {
        let (svg_a, svg_b) = (fs::read(&a.svg).unwrap(), fs::read(&b.svg).unwrap());
        assert!(svg_a == svg_b, "{} and {} differ", a.svg.display(), b.svg.display());
        let (png_a, png_b) = (fs::read(&a.png).unwrap(), fs::read(&b.png).unwrap());
        assert!(png_a == png_b, "{} and {} differ", a.png.display(), b.png.display());
    }
    // And drawing again into the same place gives the same bytes too.
    let dir = out_dir("determinism-a");
    let again = throughput_chart(&dir, "throughput", "throughput, failover", &algorithms()).unwrap();
    assert_eq!(fs::read(&again.svg).unwrap(), fs::read(&b[0].svg).unwrap());
}

// ---------------------------------------------------------------------------------------------
// Degenerate input

#[test]
fn no_algorithms_draws_empty_charts_with_a_note() {
    let dir = out_dir("no-algorithms");
    let files = [
        throughput_chart(&dir, "t", "none", &[]).unwrap(),
        latency_cdf_chart(&dir, "l", "none", &[]).unwrap(),
        violations_chart(&dir, "v", "none", &[]).unwrap(),
        cost_chart(&dir, "c", "none", &[]).unwrap(),
    ];
    for (f, name) in files.iter().zip(["t", "l", "v", "c"]) {
        let texts = svg_texts(&check_files(f, &dir, name));
        assert_has(&texts, "none");
        assert_has(&texts, "no algorithms");
    }
}

#[test]
fn all_missing_values_draw_na_never_zero() {
    let dir = out_dir("all-none");
    let algs = vec![AlgorithmChartData::new("a", 0), AlgorithmChartData::new("b", 1)];
    let t = svg_texts(&check_files(&throughput_chart(&dir, "t", "t", &algs).unwrap(), &dir, "t"));
    assert_eq!(t.iter().filter(|s| *s == "n/a").count(), 2);
    assert_has(&t, "0 runs");
    assert_has(&t, "1 run");
    let l = svg_texts(&check_files(&latency_cdf_chart(&dir, "l", "l", &algs).unwrap(), &dir, "l"));
    assert_has(&l, "no latency data");
    assert_has(&l, "a (no data)");
    let v = svg_texts(&check_files(&violations_chart(&dir, "v", "v", &algs).unwrap(), &dir, "v"));
    assert_eq!(v.iter().filter(|s| *s == "n/a").count(), 6);
    assert!(!has(&v, "0"), "{v:?}");
    let c = svg_texts(&check_files(&cost_chart(&dir, "c", "c", &algs).unwrap(), &dir, "c"));
    assert_eq!(c.iter().filter(|s| *s == "n/a").count(), 4);
}

#[test]
fn odd_values_do_not_break_charts() {
    let dir = out_dir("odd-values");
    let algs = vec![
        AlgorithmChartData {
            throughput_per_s: Some(0.0),
            // Latencies a log axis cannot show, and a NaN.
            latency_cdf_ms: vec![(0.0, 0.1), (-1.0, 0.2), (f64::NAN, 0.3)],
            overlap: iv(0.0, 0.0, 0.0),
            stale_unfenced: iv(1.0, 1.0, 1.0),
            stale_fenced: FencedRate::Rate(iv(f64::NAN, 0.0, 1.0)),
            messages_per_acquisition: Some(f64::INFINITY),
            notifications_per_release: Some(-0.0),
            outage_ms_mean: None,
            outage_ms_max: None,
            fairness: None,
            ..AlgorithmChartData::new("edge", 3)
        },
        AlgorithmChartData {
            throughput_per_s: Some(1e9),
            latency_cdf_ms: vec![(5.0, 1.0)],
            // Reversed interval, rate outside it.
            overlap: iv(0.5, 0.9, 0.1),
            ..AlgorithmChartData::new(
                "a label that is far too long to fit under its group of bars at all, even with only two groups",
                1,
            )
        },
    ];
    throughput_chart(&dir, "t", "t", &algs).unwrap();
    let l = svg_texts(&check_files(&latency_cdf_chart(&dir, "l", "l", &algs).unwrap(), &dir, "l"));
    assert_has(&l, "edge (no data)");
    let v = svg_texts(&check_files(&violations_chart(&dir, "v", "v", &algs).unwrap(), &dir, "v"));
    // Exactly 0 with a zero interval is a "0"; exactly 1 is "100%".
    assert_has(&v, "0");
    assert_has(&v, "100%");
    assert!(v.iter().any(|t| t.ends_with('…')), "the long label is shortened: {v:?}");
    cost_chart(&dir, "c", "c", &algs).unwrap();
}

#[test]
fn degenerate_timelines_draw() {
    let dir = out_dir("timeline-degenerate");
    // No panels at all.
    let empty = TimelineChart { title: "nothing".into(), duration_ms: 0.0, panels: vec![] };
    let texts = svg_texts(&check_files(&timeline_chart(&dir, "empty", &empty).unwrap(), &dir, "empty"));
    assert_has(&texts, "no runs to show");

    // Duration 0, zero-width and reversed spans, a panel without lanes, NaN, spans past the end.
    let odd = TimelineChart {
        title: "odd".into(),
        duration_ms: 0.0,
        panels: vec![
            TimelinePanel {
                label: "zero".into(),
                seed: 0,
                lanes: vec![Lane {
                    name: "client-0".into(),
                    waiting: vec![span(5.0, 5.0), span(9.0, 3.0), span(f64::NAN, 1.0)],
                    holding: vec![Hold { span: span(0.0, 0.0), shared: false }],
                }],
                faults: vec![fault("clock_jump", "", 0.0, 0.0), fault("mystery", "x", 2.0, 1e12)],
                overlaps: vec![span(3.0, 3.0)],
                ..TimelinePanel::default()
            },
            TimelinePanel { label: "no lanes".into(), ..TimelinePanel::default() },
        ],
    };
    let texts = svg_texts(&check_files(&timeline_chart(&dir, "odd", &odd).unwrap(), &dir, "odd"));
    assert_has(&texts, "no clients");
    assert_has(&texts, "mystery");

    // Nothing at all to size the axis from.
    let nothing = TimelineChart {
        title: "blank".into(),
        duration_ms: f64::NAN,
        panels: vec![TimelinePanel { label: "p".into(), ..TimelinePanel::default() }],
    };
    check_files(&timeline_chart(&dir, "blank", &nothing).unwrap(), &dir, "blank");
}

#[test]
fn degenerate_sweeps_draw() {
    let dir = out_dir("sweep-degenerate");
    let one = SweepChart {
        series: vec![SweepSeries {
            label: "only".into(),
            points: vec![SweepPoint { x: 3.0, y: Some(0.5), band: Some((0.2, 0.9)) }],
        }],
        ..sweep(false)
    };
    check_files(&sweep_chart(&dir, "one", &one).unwrap(), &dir, "one");
    check_files(&sweep_chart(&dir, "one-log", &SweepChart { log_y: true, ..one.clone() }).unwrap(), &dir, "one-log");

    let none = SweepChart { series: vec![], ..sweep(true) };
    let texts = svg_texts(&check_files(&sweep_chart(&dir, "none", &none).unwrap(), &dir, "none"));
    assert_has(&texts, "no series");

    let non_positive = SweepChart {
        log_y: true,
        series: vec![SweepSeries {
            label: "zeros".into(),
            points: vec![
                SweepPoint { x: 1.0, y: Some(0.0), band: Some((-1.0, 0.0)) },
                SweepPoint { x: 2.0, y: Some(-3.0), band: None },
                SweepPoint { x: f64::NAN, y: Some(1.0), band: None },
                SweepPoint { x: 3.0, y: None, band: None },
            ],
        }],
        ..sweep(true)
    };
    let texts = svg_texts(&check_files(&sweep_chart(&dir, "nonpos", &non_positive).unwrap(), &dir, "nonpos"));
    assert_has(&texts, "no values above 0 to show on the log axis");

    let all_gaps = SweepChart {
        series: vec![SweepSeries {
            label: "gaps".into(),
            points: vec![SweepPoint { x: 0.0, y: None, band: None }, SweepPoint { x: 0.0, y: None, band: None }],
        }],
        ..sweep(false)
    };
    check_files(&sweep_chart(&dir, "gaps", &all_gaps).unwrap(), &dir, "gaps");
}

// ---------------------------------------------------------------------------------------------
// Size and layout of timelines

/// `lanes` clients with `spans` waits and holds each, of irregular lengths: mostly cycles of a
/// few ms, now and then a pause of up to 2 s, some holds shared.
fn irregular_panel(label: &str, lanes: usize, spans: usize, seed: u64) -> TimelinePanel {
    let mut state = seed.wrapping_add(1);
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    TimelinePanel {
        label: label.into(),
        seed: 42,
        lanes: (0..lanes)
            .map(|c| {
                let mut lane = Lane { name: format!("client-{c}"), ..Lane::default() };
                let mut t = next() * 50.0;
                for _ in 0..spans {
                    let wait = next() * 4.0;
                    let hold = 0.5 + next() * 3.0;
                    lane.waiting.push(span(t, t + wait));
                    lane.holding.push(Hold { span: span(t + wait, t + wait + hold), shared: next() < 0.2 });
                    t += wait + hold + if next() < 0.01 { next() * 2000.0 } else { next() * 4.0 };
                }
                lane
            })
            .collect(),
        faults: vec![
            fault("crash", "server-0", 10_000.0, 30_000.0),
            fault("clock_jump", "server-2", 40_000.0, 40_000.0),
        ],
        overlaps: (0..200).map(|i| span(f64::from(i) * 290.0, f64::from(i) * 290.0 + 1.0)).collect(),
        ..TimelinePanel::default()
    }
}

#[test]
fn dense_timeline_svg_stays_under_a_megabyte() {
    let dir = out_dir("timeline-dense");
    let chart = TimelineChart {
        title: "five algorithms, twenty clients, 5000 holds each".into(),
        duration_ms: 60_000.0,
        panels: (0..5).map(|i| irregular_panel(&format!("alg-{i}"), 20, 5000, i)).collect(),
    };
    let spans: usize = chart.panels.iter().flat_map(|p| &p.lanes).map(|l| l.waiting.len() + l.holding.len()).sum();
    assert_eq!(spans, 1_000_000);
    let files = timeline_chart(&dir, "dense", &chart).unwrap();
    let svg = check_files(&files, &dir, "dense");
    assert!(svg.len() < 1_000_000, "SVG is {} bytes", svg.len());
    eprintln!("dense timeline: {} bytes of SVG", svg.len());
    // Still every lane name and panel.
    let texts = svg_texts(&svg);
    assert_has(&texts, "alg-4 (seed 42)");
    assert_has(&texts, "client-19");
}

#[test]
fn sparse_holds_are_not_merged_away() {
    let dir = out_dir("timeline-sparse");
    // Ten 1 ms holds, seconds apart: each stays its own rectangle, at least a pixel wide.
    let chart = TimelineChart {
        title: "sparse".into(),
        duration_ms: 60_000.0,
        panels: vec![TimelinePanel {
            label: "p".into(),
            seed: 1,
            lanes: vec![Lane {
                name: "client-0".into(),
                waiting: vec![],
                holding: (0..10)
                    .map(|i| Hold { span: span(f64::from(i) * 5000.0, f64::from(i) * 5000.0 + 1.0), shared: false })
                    .collect(),
            }],
            faults: vec![],
            overlaps: vec![],
            ..TimelinePanel::default()
        }],
    };
    let svg = check_files(&timeline_chart(&dir, "sparse", &chart).unwrap(), &dir, "sparse");
    let holds: Vec<&str> = svg.split("<rect").filter(|r| r.contains("fill=\"#1F4E99\"")).collect();
    // The legend swatch plus ten holds.
    assert_eq!(holds.len(), 11, "{holds:?}");
    for rect in &holds[1..] {
        let width = &rect[rect.find("width=\"").unwrap() + 7..];
        let width: i32 = width[..width.find('"').unwrap()].parse().unwrap();
        assert!(width >= 1, "{rect}");
    }
}

#[test]
fn timeline_height_grows_with_lanes_and_is_capped() {
    let dir = out_dir("timeline-heights");
    let height = |panels: usize, lanes: usize| {
        let chart = TimelineChart {
            title: "h".into(),
            duration_ms: 1000.0,
            panels: (0..panels).map(|i| busy_panel(&format!("p{i}"), lanes, 3, 1000.0)).collect(),
        };
        let name = format!("h{panels}x{lanes}");
        let files = timeline_chart(&dir, &name, &chart).unwrap();
        png_size(&files.png).1
    };
    let small = height(1, 2);
    let medium = height(1, 10);
    let large = height(3, 10);
    assert!(small < medium && medium < large, "{small} {medium} {large}");
    assert!(height(12, 60) <= locksim_charts::timeline::MAX_HEIGHT_PX);
}

// ---------------------------------------------------------------------------------------------
// Errors

#[test]
fn bad_names_and_unwritable_places_are_errors_that_name_the_file() {
    let dir = out_dir("errors");
    let algs = algorithms();
    for name in ["", "a/b", "..", "a\\b"] {
        let err = throughput_chart(&dir, name, "t", &algs).unwrap_err();
        assert!(matches!(err, ChartError::InvalidName { .. }), "{name:?}: {err}");
    }

    // The output directory is a file.
    let file = dir.join("plain-file");
    fs::write(&file, "x").unwrap();
    let err = cost_chart(&file, "c", "t", &algs).unwrap_err();
    assert!(matches!(err, ChartError::CreateDir { .. }), "{err}");
    assert!(err.to_string().contains("plain-file"), "{err}");

    // NAME.svg is a directory.
    fs::create_dir_all(dir.join("taken.svg")).unwrap();
    let err = violations_chart(&dir, "taken", "t", &algs).unwrap_err();
    assert!(matches!(err, ChartError::Write { .. }), "{err}");
    assert!(err.to_string().contains("taken.svg"), "{err}");

    // NAME.png is a directory.
    fs::create_dir_all(dir.join("png-taken.png")).unwrap();
    let err = latency_cdf_chart(&dir, "png-taken", "t", &algs).unwrap_err();
    assert!(err.to_string().contains("png-taken.png"), "{err}");
}

#[test]
fn the_output_directory_is_created() {
    let dir = out_dir("created").join("a").join("b");
    let files = throughput_chart(&dir, "t", "t", &algorithms()).unwrap();
    assert!(files.svg.is_file() && files.png.is_file());
}
