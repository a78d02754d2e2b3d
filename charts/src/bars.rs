//! Horizontal bar panels (one bar per algorithm, its label and run count on the left, the value
//! at the bar's end, "n/a" where there is no value) and the throughput chart built from one.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::data::AlgorithmChartData;
use crate::font::{fit_text, text_width, FAMILY};
use crate::layout::{
    ceil_to, draw_note, draw_text, finite, fmt_sig, linear_ticks, nice_step, series_color, text_style, title_area,
    Axis, AXIS_DESC_SIZE_PX, GRID, INK, LABEL_SIZE_PX, MUTED, NOTE_SIZE_PX, TICK_SIZE_PX, WIDTH_PX,
};
use crate::output::{render, ChartError, ChartFiles, DrawResult, Drawing, OrDrawErr};

/// One bar.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BarRow {
    /// The algorithm's label.
    pub label: String,
    /// Its run count, shown under the label.
    pub runs: u64,
    /// The value; `None` (or not finite) is written as "n/a".
    pub value: Option<f64>,
    /// The bar's colour (the algorithm's colour in every chart).
    pub color: RGBColor,
}

impl BarRow {
    /// Rows for `algs`, each with the value `value` picks and the algorithm's colour.
    pub(crate) fn from_algs(
        algs: &[AlgorithmChartData],
        value: impl Fn(&AlgorithmChartData) -> Option<f64>,
    ) -> Vec<Self> {
        algs.iter()
            .enumerate()
            .map(|(i, a)| BarRow { label: a.label.clone(), runs: a.runs, value: value(a), color: series_color(i) })
            .collect()
    }
}

/// A panel of horizontal bars.
pub(crate) struct HBarPanel<'a> {
    /// A caption above the panel (`None` when the chart's title says it all).
    pub caption: Option<&'a str>,
    /// The value axis description, with its unit.
    pub x_desc: &'a str,
    /// The bars, top to bottom.
    pub rows: &'a [BarRow],
}

/// Height of the plot area per bar, px.
const ROW_PX: u32 = 46;
/// Most bars get [`ROW_PX`]; beyond this image height the rows get thinner.
const MAX_HEIGHT_PX: u32 = 1400;

/// The image height for a chart of horizontal bar panels with `n` bars each.
pub(crate) fn hbar_height(n: usize, caption: bool) -> u32 {
    let fixed = 44 + 16 + 56 + if caption { 30 } else { 0 };
    (fixed + ROW_PX.saturating_mul(n as u32)).clamp(300, MAX_HEIGHT_PX)
}

/// Formats a "runs" count.
pub(crate) fn runs_text(runs: u64) -> String {
    if runs == 1 {
        "1 run".to_string()
    } else {
        format!("{runs} runs")
    }
}

/// Draws `panel` in `area`; `root` is the whole image (for pixel-placed labels).
pub(crate) fn draw_hbar_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    panel: &HBarPanel<'_>,
) -> DrawResult {
    let (area_w, _) = area.dim_in_pixel();
    let area = match panel.caption {
        Some(caption) => {
            let style = text_style(AXIS_DESC_SIZE_PX + 1.0, &INK, HPos::Center, VPos::Center);
            draw_text(
                area,
                &fit_text(caption, AXIS_DESC_SIZE_PX + 1.0, area_w as i32 - 20),
                (area_w as i32 / 2, 14),
                &style,
            )?;
            area.split_vertically(30).1
        }
        None => area.clone(),
    };
    let rows = panel.rows;
    let n = rows.len();
    let label_w = rows
        .iter()
        .map(|r| text_width(&r.label, LABEL_SIZE_PX).max(text_width(&runs_text(r.runs), NOTE_SIZE_PX)))
        .max()
        .unwrap_or(0)
        .saturating_add(20)
        .clamp(60, (area_w as i32 * 2 / 5).max(60));

    let max_value = rows.iter().filter_map(|r| finite(r.value)).fold(0.0_f64, f64::max);
    let x_max = if max_value > 0.0 {
        let padded = max_value * 1.2;
        ceil_to(padded, nice_step(padded, 10))
    } else {
        1.0
    };
    let ticks = linear_ticks(0.0, x_max, if area_w < 600 { 4 } else { 6 });
    let y_max = n.max(1) as f64;

    let mut chart = ChartBuilder::on(&area)
        .margin_top(10)
        .margin_right(28)
        .margin_left(6)
        .margin_bottom(6)
        .x_label_area_size(50)
        .y_label_area_size(label_w as u32)
        .build_cartesian_2d(Axis::linear(0.0, x_max, ticks), Axis::linear(0.0, y_max, vec![]))
        .de()?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .bold_line_style(GRID)
        .axis_style(INK)
        .x_desc(panel.x_desc)
        .axis_desc_style((FAMILY, AXIS_DESC_SIZE_PX))
        .label_style((FAMILY, TICK_SIZE_PX))
        .x_label_formatter(&|v| fmt_sig(*v, 3))
        .draw()
        .de()?;

    let (px_range, py_range) = chart.plotting_area().get_pixel_range();
    if n == 0 {
        return draw_note(root, "no algorithms", (px_range.start, py_range.start), (px_range.end, py_range.end));
    }
    let row_px = f64::from((py_range.end - py_range.start).max(1)) / n as f64;
    let half = (0.32_f64).min(15.0 / row_px);
    let label_size = LABEL_SIZE_PX.min(row_px * 0.8).max(7.0);
    let two_lines = row_px >= 34.0;
    // With very thin rows, label every k-th one only.
    let every = if row_px >= 9.0 { 1 } else { (9.0 / row_px).ceil() as usize };

    for (i, row) in rows.iter().enumerate() {
        let yc = y_max - i as f64 - 0.5;
        let (px0, py) = chart.backend_coord(&(0.0, yc));
        if i % every == 0 {
            let label = fit_text(&row.label, label_size, label_w - 14);
            let label_style = text_style(label_size, &INK, HPos::Right, VPos::Center);
            if two_lines {
                draw_text(root, &label, (px0 - 10, py - 8), &label_style)?;
                let runs_style = text_style(NOTE_SIZE_PX, &MUTED, HPos::Right, VPos::Center);
                draw_text(root, &runs_text(row.runs), (px0 - 10, py + 9), &runs_style)?;
            } else {
                draw_text(root, &label, (px0 - 10, py), &label_style)?;
            }
        }
        let value_size = NOTE_SIZE_PX.max(label_size.min(LABEL_SIZE_PX));
        match finite(row.value) {
            Some(v) => {
                let drawn = v.clamp(0.0, x_max);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(0.0, yc - half), (drawn, yc + half)],
                        row.color.filled(),
                    )))
                    .de()?;
                let text = fmt_sig(v, 3);
                let (px_end, _) = chart.backend_coord(&(drawn, yc));
                let tw = text_width(&text, value_size);
                if px_end + 6 + tw <= px_range.end || px_end - px0 < tw + 12 {
                    let style = text_style(value_size, &INK, HPos::Left, VPos::Center);
                    draw_text(root, &text, (px_end + 6, py), &style)?;
                } else {
                    let style = text_style(value_size, &WHITE, HPos::Right, VPos::Center);
                    draw_text(root, &text, (px_end - 6, py), &style)?;
                }
            }
            None => {
                let style = text_style(value_size, &MUTED, HPos::Left, VPos::Center);
                draw_text(root, "n/a", (px0 + 8, py), &style)?;
            }
        }
    }
    Ok(())
}

/// The throughput chart.
struct Throughput<'a> {
    title: &'a str,
    rows: Vec<BarRow>,
}

impl Drawing for Throughput<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH_PX, hbar_height(self.rows.len(), false))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let area = title_area(root, self.title)?;
        let panel = HBarPanel {
            caption: None,
            x_desc: "throughput (completed critical sections per simulated second)",
            rows: &self.rows,
        };
        draw_hbar_panel(root, &area, &panel)
    }
}

/// Draws throughput (completed critical sections per simulated second), one horizontal bar per
/// algorithm with its value at the end, and "n/a" where there is no data, into `DIR/NAME.svg`
/// and `DIR/NAME.png`.
pub fn throughput_chart(
    dir: &Path,
    name: &str,
    title: &str,
    algs: &[AlgorithmChartData],
) -> Result<ChartFiles, ChartError> {
    let chart = Throughput { title, rows: BarRow::from_algs(algs, |a| a.throughput_per_s) };
    render(dir, name, &chart)
}
