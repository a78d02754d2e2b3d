//! The latency CDF charts (acquire latency, or the wait for a critical section): one line per
//! algorithm on a logarithmic time axis, with guide lines at p50 and p99.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::data::AlgorithmChartData;
use crate::font::FAMILY;
use crate::layout::{
    draw_note, draw_text, fmt_sig, legend_area, linear_ticks, log_axis, series_color, text_style, title_area, Axis,
    LegendItem, Swatch, AXIS_DESC_SIZE_PX, GRID, INK, MUTED, NOTE_SIZE_PX, TICK_SIZE_PX, WIDTH_PX,
};
use crate::output::{render, ChartError, ChartFiles, DrawResult, Drawing, OrDrawErr};

/// Image height, px.
const HEIGHT_PX: u32 = 620;
/// Guide-line colour.
const GUIDE: RGBColor = RGBColor(0x99, 0x99, 0x99);

/// The points of one CDF that can be drawn on a log axis: latency finite and `> 0`, fraction
/// finite (clamped to `0..=1`).
fn drawable(cdf: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = cdf
        .iter()
        .filter(|(x, y)| x.is_finite() && *x > 0.0 && y.is_finite())
        .map(|&(x, y)| (x, y.clamp(0.0, 1.0)))
        .collect();
    // Ascending already by contract; a stable sort keeps equal latencies in the given order.
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// The latency CDF chart.
struct Cdf<'a> {
    title: &'a str,
    /// What the x axis measures, and what the y axis counts.
    x_desc: &'a str,
    y_desc: &'a str,
    labels: Vec<&'a str>,
    curves: Vec<Vec<(f64, f64)>>,
}

impl Drawing for Cdf<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH_PX, HEIGHT_PX)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let area = title_area(root, self.title)?;
        let legend: Vec<LegendItem> = self
            .labels
            .iter()
            .zip(&self.curves)
            .enumerate()
            .map(|(i, (label, curve))| {
                let text = if curve.is_empty() { format!("{label} (no data)") } else { label.to_string() };
                LegendItem::new(Swatch::LineMarker(series_color(i)), text)
            })
            .collect();
        let area = legend_area(&area, &legend)?;

        let (min, max) = self
            .curves
            .iter()
            .flatten()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(x, _)| (lo.min(x), hi.max(x)));
        let axis = log_axis(min, max);
        let y_top = 1.03;
        let mut chart = ChartBuilder::on(&area)
            .margin_top(8)
            .margin_right(30)
            .margin_left(10)
            .margin_bottom(8)
            .x_label_area_size(52)
            .y_label_area_size(74)
            .build_cartesian_2d(Axis::log(&axis), Axis::linear(0.0, y_top, linear_ticks(0.0, 1.0, 10)))
            .de()?;
        chart
            .configure_mesh()
            .bold_line_style(GRID)
            .light_line_style(RGBColor(0xF2, 0xF2, 0xF2))
            .axis_style(INK)
            .x_desc(self.x_desc)
            .y_desc(self.y_desc)
            .axis_desc_style((FAMILY, AXIS_DESC_SIZE_PX))
            .label_style((FAMILY, TICK_SIZE_PX))
            .x_label_formatter(&|v| fmt_sig(*v, 3))
            .y_label_formatter(&|v| fmt_sig(*v, 2))
            .draw()
            .de()?;

        let (px_range, py_range) = chart.plotting_area().get_pixel_range();
        for (q, name) in [(0.5, "p50"), (0.99, "p99")] {
            chart.draw_series(LineSeries::new([(axis.lo, q), (axis.hi, q)], GUIDE.stroke_width(1))).de()?;
            let (_, py) = chart.backend_coord(&(axis.lo, q));
            let style = text_style(NOTE_SIZE_PX, &MUTED, HPos::Left, VPos::Bottom);
            draw_text(root, name, (px_range.start + 6, py - 3), &style)?;
        }

        if self.curves.iter().all(Vec::is_empty) {
            let note = if self.labels.is_empty() { "no algorithms" } else { "no latency data" };
            return draw_note(root, note, (px_range.start, py_range.start), (px_range.end, py_range.end));
        }
        for (i, curve) in self.curves.iter().enumerate() {
            let color = series_color(i);
            // Drop points that land on the same pixel as the previous one: long CDFs stay small.
            let mut points: Vec<(f64, f64)> = Vec::with_capacity(curve.len());
            let mut last_px = None;
            for (k, &p) in curve.iter().enumerate() {
                let px = chart.backend_coord(&p);
                if last_px != Some(px) || k + 1 == curve.len() {
                    points.push(p);
                    last_px = Some(px);
                }
            }
            if points.len() == 1 {
                chart.draw_series(std::iter::once(Circle::new(points[0], 4, color.filled()))).de()?;
            } else {
                chart.draw_series(LineSeries::new(points, color.stroke_width(2))).de()?;
            }
        }
        Ok(())
    }
}

/// Draws the acquire-latency CDF of each algorithm, one line per algorithm (in the algorithm's
/// colour) on a logarithmic latency axis in ms, the cumulative fraction 0..1 on the y axis.
/// Latencies `<= 0` cannot be placed on the log axis and are skipped; an algorithm without points
/// is listed in the legend as "(no data)".
pub fn latency_cdf_chart(
    dir: &Path,
    name: &str,
    title: &str,
    algs: &[AlgorithmChartData],
) -> Result<ChartFiles, ChartError> {
    cdf_chart(dir, name, title, algs, "acquire latency (ms, log scale)", "fraction of acquisitions within latency")
}

/// Draws the wait CDF of each algorithm, as [`latency_cdf_chart`] does, from the same
/// `latency_cdf_ms` points, which here hold the wait for a critical section (from its first
/// acquire call to its grant, failed calls included); only the axis descriptions differ.
pub fn wait_cdf_chart(
    dir: &Path,
    name: &str,
    title: &str,
    algs: &[AlgorithmChartData],
) -> Result<ChartFiles, ChartError> {
    cdf_chart(
        dir,
        name,
        title,
        algs,
        "wait for a critical section (ms, log scale)",
        "fraction of sections granted within wait",
    )
}

/// The one CDF drawing both charts share; they differ only in what the axes say.
fn cdf_chart(
    dir: &Path,
    name: &str,
    title: &str,
    algs: &[AlgorithmChartData],
    x_desc: &str,
    y_desc: &str,
) -> Result<ChartFiles, ChartError> {
    let chart = Cdf {
        title,
        x_desc,
        y_desc,
        labels: algs.iter().map(|a| a.label.as_str()).collect(),
        curves: algs.iter().map(|a| drawable(&a.latency_cdf_ms)).collect(),
    };
    render(dir, name, &chart)
}
