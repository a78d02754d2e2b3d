//! The sweep chart: a metric against a swept scenario parameter, one line with markers per
//! series, its interval as a translucent band, gaps where a value is missing, and an optional
//! logarithmic y axis (values `<= 0` are then skipped).

use std::path::Path;

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::data::{SweepChart, SweepPoint};
use crate::font::FAMILY;
use crate::layout::{
    draw_note, fmt_sig, legend_area, linear_ticks, log_axis, series_color, title_area, Axis, LegendItem, Swatch,
    AXIS_DESC_SIZE_PX, GRID, INK, TICK_SIZE_PX, WIDTH_PX,
};
use crate::output::{render, ChartError, ChartFiles, DrawResult, Drawing, OrDrawErr};

/// Image height, px.
const HEIGHT_PX: u32 = 620;

/// A point as drawn: `y` and the band only where they can be shown on the y axis.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Drawn {
    x: f64,
    y: Option<f64>,
    band: Option<(f64, f64)>,
}

/// The sweep chart with its points cleaned up.
struct Sweep<'a> {
    chart: &'a SweepChart,
    /// Per series, its drawable points in ascending `x`.
    series: Vec<Vec<Drawn>>,
}

impl<'a> Sweep<'a> {
    fn new(chart: &'a SweepChart) -> Self {
        let ok = |v: f64| v.is_finite() && (!chart.log_y || v > 0.0);
        let series = chart
            .series
            .iter()
            .map(|s| {
                let mut points: Vec<Drawn> = s
                    .points
                    .iter()
                    .filter(|p| p.x.is_finite())
                    .map(|&SweepPoint { x, y, band }| Drawn {
                        x,
                        y: y.filter(|v| ok(*v)),
                        // On a log axis a band's low end <= 0 is clamped to the axis later; a band
                        // whose high end cannot be shown is dropped.
                        band: band
                            .filter(|(lo, hi)| lo.is_finite() && ok(*hi))
                            .map(|(lo, hi)| (lo.min(hi), hi.max(lo))),
                    })
                    .collect();
                points.sort_by(|a, b| a.x.total_cmp(&b.x));
                points
            })
            .collect();
        Self { chart, series }
    }

    /// Every y value and band end that will be drawn (band low ends `<= 0` excluded on a log axis).
    fn y_values(&self) -> Vec<f64> {
        let log = self.chart.log_y;
        self.series
            .iter()
            .flatten()
            .flat_map(|p| {
                let band = p.band.map(|(lo, hi)| [Some(lo).filter(|v| !log || *v > 0.0), Some(hi)]).unwrap_or_default();
                std::iter::once(p.y).chain(band).flatten()
            })
            .collect()
    }

    /// Draws the bands, lines and markers on a chart whatever its y axis; `y_floor` is where a
    /// band's low end goes when it cannot be shown, `half_w` half the width (in x units) of the
    /// band of a lone point.
    fn plot<DB, X, Y>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
        y_floor: f64,
        half_w: f64,
    ) -> DrawResult
    where
        DB: DrawingBackend,
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        // Every band first, so that no band veils another series' line.
        for (i, points) in self.series.iter().enumerate() {
            let color = series_color(i);
            for run in points.split(|p| p.band.is_none()).filter(|r| !r.is_empty()) {
                let bands: Vec<(f64, f64, f64)> =
                    run.iter().filter_map(|p| p.band.map(|(lo, hi)| (p.x, lo.max(y_floor), hi))).collect();
                if bands.len() == 1 {
                    let (x, lo, hi) = bands[0];
                    let rect = Rectangle::new([(x - half_w, lo), (x + half_w, hi)], color.mix(0.3).filled());
                    chart.draw_series(std::iter::once(rect)).de()?;
                } else {
                    let outline: Vec<(f64, f64)> = bands
                        .iter()
                        .map(|&(x, _, hi)| (x, hi))
                        .chain(bands.iter().rev().map(|&(x, lo, _)| (x, lo)))
                        .collect();
                    chart.draw_series(std::iter::once(Polygon::new(outline, color.mix(0.2).filled()))).de()?;
                }
            }
        }
        for (i, points) in self.series.iter().enumerate() {
            let color = series_color(i);
            for run in points.split(|p| p.y.is_none()).filter(|r| r.len() > 1) {
                let line: Vec<(f64, f64)> = run.iter().filter_map(|p| p.y.map(|y| (p.x, y))).collect();
                chart.draw_series(LineSeries::new(line, color.stroke_width(2))).de()?;
            }
            let markers = points.iter().filter_map(|p| p.y.map(|y| Circle::new((p.x, y), 4, color.filled())));
            chart.draw_series(markers).de()?;
        }
        Ok(())
    }
}

impl Drawing for Sweep<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH_PX, HEIGHT_PX)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let area = title_area(root, &self.chart.title)?;
        let mut legend: Vec<LegendItem> = self
            .chart
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| LegendItem::new(Swatch::LineMarker(series_color(i)), s.label.clone()))
            .collect();
        if self.series.iter().flatten().any(|p| p.band.is_some()) {
            legend.push(LegendItem::new(Swatch::Fill(INK.mix(0.15)), "shaded: interval"));
        }
        let area = legend_area(&area, &legend)?;

        let xs: Vec<f64> = self.series.iter().flatten().map(|p| p.x).collect();
        let (x_min, x_max) = xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        let (x_lo, x_hi) = if xs.is_empty() {
            (0.0, 1.0)
        } else if x_max > x_min {
            let pad = (x_max - x_min) * 0.04;
            (x_min - pad, x_max + pad)
        } else {
            let pad = if x_min == 0.0 { 1.0 } else { x_min.abs() * 0.1 };
            (x_min - pad, x_max + pad)
        };
        let half_w = (x_hi - x_lo) * 0.006;
        let x_axis = Axis::linear(x_lo, x_hi, linear_ticks(x_lo, x_hi, 10));

        let ys = self.y_values();
        let (y_min, y_max) = ys.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &y| (lo.min(y), hi.max(y)));
        let no_data = self.series.iter().flatten().all(|p| p.y.is_none() && p.band.is_none());

        let mut builder = ChartBuilder::on(&area);
        builder
            .margin_top(8)
            .margin_right(30)
            .margin_left(10)
            .margin_bottom(8)
            .x_label_area_size(52)
            .y_label_area_size(84);
        let (px_range, py_range);
        if self.chart.log_y {
            let axis = log_axis(y_min, y_max);
            let y_axis = Axis::log(&axis);
            let mut chart = builder.build_cartesian_2d(x_axis, y_axis).de()?;
            self.mesh(&mut chart)?;
            self.plot(&mut chart, axis.lo, half_w)?;
            (px_range, py_range) = chart.plotting_area().get_pixel_range();
        } else {
            let (lo, hi) = if ys.is_empty() {
                (0.0, 1.0)
            } else {
                let lo = y_min.min(0.0);
                let hi = if y_max > lo { y_max } else { lo + 1.0 };
                let pad = (hi - lo) * 0.08;
                (if lo < 0.0 { lo - pad } else { lo }, hi + pad)
            };
            let y_axis = Axis::linear(lo, hi, linear_ticks(lo, hi, 8));
            let mut chart = builder.build_cartesian_2d(x_axis, y_axis).de()?;
            self.mesh(&mut chart)?;
            self.plot(&mut chart, lo, half_w)?;
            (px_range, py_range) = chart.plotting_area().get_pixel_range();
        }
        if no_data {
            let note = match (self.chart.series.is_empty(), self.chart.log_y) {
                (true, _) => "no series",
                (false, true) => "no values above 0 to show on the log axis",
                (false, false) => "no data",
            };
            draw_note(root, note, (px_range.start, py_range.start), (px_range.end, py_range.end))?;
        }
        Ok(())
    }
}

impl Sweep<'_> {
    fn mesh<DB, X, Y>(&self, chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>) -> DrawResult
    where
        DB: DrawingBackend,
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        chart
            .configure_mesh()
            .bold_line_style(GRID)
            .light_line_style(RGBColor(0xF2, 0xF2, 0xF2))
            .axis_style(INK)
            .x_desc(self.chart.x_label.as_str())
            .y_desc(self.chart.y_label.as_str())
            .axis_desc_style((FAMILY, AXIS_DESC_SIZE_PX))
            .label_style((FAMILY, TICK_SIZE_PX))
            .x_label_formatter(&|v| fmt_sig(*v, 4))
            .y_label_formatter(&|v| fmt_sig(*v, 3))
            .draw()
            .de()
    }
}

/// Draws a metric against a swept parameter: one line with markers per series (in ascending x;
/// a `None` y leaves a gap), each series' interval as a translucent band, and a logarithmic y
/// axis if asked (values `<= 0` are skipped; a band reaching `<= 0` is drawn down to the axis).
pub fn sweep_chart(dir: &Path, name: &str, chart: &SweepChart) -> Result<ChartFiles, ChartError> {
    render(dir, name, &Sweep::new(chart))
}
