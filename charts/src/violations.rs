//! The violations chart: per algorithm, three bars (overlap, stale write unfenced, stale write
//! fenced) with their 95% intervals as error bars.
//!
//! Three cases never look like an ordinary bar: a model without a fencing token gets a grey
//! hatched column labelled "cannot be fenced" (never a zero bar); a rate of 0 is a flat mark at
//! zero labelled "0", under a dotted grey line up to what the runs rule out, capped and labelled
//! "<x%" (a line with no area, so the bound never reads as a tall measured bar); a missing rate is
//! written "n/a".

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::FontTransform;

use crate::bars::runs_text;
use crate::data::{AlgorithmChartData, FencedRate, Interval95};
use crate::font::{fit_text, text_width, FAMILY};
use crate::layout::{
    ceil_to, draw_error_bar, draw_hatched, draw_note, draw_rule_out_bound, draw_text, fmt_pct, legend_area,
    linear_ticks, nice_step, text_style, title_area, Axis, LegendItem, Swatch, AXIS_DESC_SIZE_PX, GRID, INK,
    LABEL_SIZE_PX, MUTED, NOTE_SIZE_PX, TICK_SIZE_PX, WIDTH_PX,
};
use crate::output::{render, ChartError, ChartFiles, DrawResult, Drawing, OrDrawErr};

/// Image height, px.
const HEIGHT_PX: u32 = 620;
/// The text on a model's fenced column when it has no fencing token.
pub const CANNOT_BE_FENCED: &str = "cannot be fenced";

/// The three metrics, their legend labels and colours.
const METRICS: [(&str, RGBColor); 3] = [
    ("overlap (two holders)", RGBColor(0xD6, 0x27, 0x28)),
    ("stale write accepted, unfenced", RGBColor(0xF2, 0x8E, 0x2B)),
    ("stale write accepted, fenced", RGBColor(0x4E, 0x79, 0xA7)),
];
/// Distance between the centres of neighbouring bars in a group, in group widths.
const PITCH: f64 = 0.27;
/// Half a bar's width, in group widths.
const HALF_BAR: f64 = 0.12;

/// What one bar shows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cell {
    /// No runs: "n/a".
    NoData,
    /// No fencing token: the hatched marker.
    CannotBeFenced,
    /// A rate with its interval, all in `0..=1` and `lo <= rate <= hi`.
    Rate(Interval95),
}

impl Cell {
    /// A cell from an interval, clamped into `0..=1` and widened to contain its rate; anything
    /// not finite is "no data".
    fn from_interval(i: Option<Interval95>) -> Self {
        match i {
            Some(Interval95 { rate, lo, hi }) if rate.is_finite() && lo.is_finite() && hi.is_finite() => {
                let rate = rate.clamp(0.0, 1.0);
                Cell::Rate(Interval95 { rate, lo: lo.clamp(0.0, 1.0).min(rate), hi: hi.clamp(0.0, 1.0).max(rate) })
            }
            _ => Cell::NoData,
        }
    }

    fn from_fenced(f: FencedRate) -> Self {
        match f {
            FencedRate::CannotBeFenced => Cell::CannotBeFenced,
            FencedRate::Rate(i) => Cell::from_interval(i),
        }
    }
}

/// One algorithm's group of bars.
struct Group {
    label: String,
    runs: u64,
    cells: [Cell; 3],
}

/// The violations chart.
struct Violations<'a> {
    title: &'a str,
    groups: Vec<Group>,
}

impl Violations<'_> {
    fn cells(&self) -> impl Iterator<Item = &Cell> {
        self.groups.iter().flat_map(|g| g.cells.iter())
    }

    fn legend(&self) -> Vec<LegendItem> {
        let mut items: Vec<LegendItem> =
            METRICS.iter().map(|(label, color)| LegendItem::new(Swatch::Fill(color.to_rgba()), *label)).collect();
        if self.cells().any(|c| matches!(c, Cell::Rate(i) if i.rate > 0.0 && i.hi > i.lo)) {
            items.push(LegendItem::new(Swatch::ErrorBar, "95% interval"));
        }
        if self.cells().any(|c| matches!(c, Cell::Rate(i) if i.rate == 0.0 && i.hi > 0.0)) {
            items.push(LegendItem::new(Swatch::RuledOut, "none seen (0): dotted up to the rate ruled out (95%)"));
        }
        if self.cells().any(|c| matches!(c, Cell::CannotBeFenced)) {
            items.push(LegendItem::new(Swatch::Hatch, "cannot be fenced (no fencing token)"));
        }
        items
    }
}

impl Drawing for Violations<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH_PX, HEIGHT_PX)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let area = title_area(root, self.title)?;
        let area = legend_area(&area, &self.legend())?;

        let highest = self
            .cells()
            .filter_map(|c| match c {
                Cell::Rate(i) => Some(i.hi),
                _ => None,
            })
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        let y_max = match highest {
            None => 1.0,
            Some(h) if h <= 0.0 => 0.05,
            Some(h) => {
                // Room above the highest bar for its label.
                let padded = h * 1.15;
                if padded >= 1.0 {
                    // Just above 100%, with room for the labels over full bars.
                    1.08
                } else {
                    ceil_to(padded, nice_step(padded, 10))
                }
            }
        };
        let ticks = linear_ticks(0.0, y_max.min(1.0), 6);
        let n = self.groups.len();
        let x_max = n.max(1) as f64;

        let mut chart = ChartBuilder::on(&area)
            .margin_top(8)
            .margin_right(24)
            .margin_left(10)
            .margin_bottom(6)
            .x_label_area_size(50)
            .y_label_area_size(76)
            .build_cartesian_2d(Axis::linear(0.0, x_max, vec![]), Axis::linear(0.0, y_max, ticks))
            .de()?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .bold_line_style(GRID)
            .axis_style(INK)
            .y_desc("runs with the violation (%)")
            .axis_desc_style((FAMILY, AXIS_DESC_SIZE_PX))
            .label_style((FAMILY, TICK_SIZE_PX))
            .y_label_formatter(&|v| fmt_pct(*v))
            .draw()
            .de()?;

        let (px_range, py_range) = chart.plotting_area().get_pixel_range();
        if n == 0 {
            return draw_note(root, "no algorithms", (px_range.start, py_range.start), (px_range.end, py_range.end));
        }
        let group_px = chart.backend_coord(&(1.0, 0.0)).0 - chart.backend_coord(&(0.0, 0.0)).0;
        let pitch_px = (f64::from(group_px) * PITCH) as i32;
        let bar_px = (f64::from(group_px) * HALF_BAR * 2.0) as i32;
        let py0 = chart.backend_coord(&(0.0, 0.0)).1;
        let value_style = text_style(NOTE_SIZE_PX, &INK, HPos::Center, VPos::Bottom);
        let muted_value_style = text_style(NOTE_SIZE_PX, &MUTED, HPos::Center, VPos::Bottom);
        let fits = |text: &str| text_width(text, NOTE_SIZE_PX) <= pitch_px - 2;

        for (i, group) in self.groups.iter().enumerate() {
            let gc = i as f64 + 0.5;
            let (gx, _) = chart.backend_coord(&(gc, 0.0));
            let label = fit_text(&group.label, LABEL_SIZE_PX, group_px - 8);
            draw_text(root, &label, (gx, py0 + 8), &text_style(LABEL_SIZE_PX, &INK, HPos::Center, VPos::Top))?;
            let runs = fit_text(&runs_text(group.runs), NOTE_SIZE_PX, group_px - 8);
            draw_text(root, &runs, (gx, py0 + 27), &text_style(NOTE_SIZE_PX, &MUTED, HPos::Center, VPos::Top))?;

            for (k, (cell, (_, color))) in group.cells.iter().zip(METRICS).enumerate() {
                let xc = gc + (k as f64 - 1.0) * PITCH;
                let (x0, x1) = (xc - HALF_BAR, xc + HALF_BAR);
                let (px, _) = chart.backend_coord(&(xc, 0.0));
                match *cell {
                    Cell::Rate(iv) if iv.rate > 0.0 => {
                        chart
                            .draw_series(std::iter::once(Rectangle::new([(x0, 0.0), (x1, iv.rate)], color.filled())))
                            .de()?;
                        let (_, py_hi) = chart.backend_coord(&(xc, iv.hi));
                        if iv.hi > iv.lo {
                            let (_, py_lo) = chart.backend_coord(&(xc, iv.lo));
                            draw_error_bar(root, px, py_lo, py_hi, (bar_px * 3 / 5).clamp(4, 14))?;
                        }
                        let text = fmt_pct(iv.rate);
                        if fits(&text) {
                            draw_text(root, &text, (px, py_hi - 4), &value_style)?;
                        }
                    }
                    Cell::Rate(iv) => {
                        // Nothing seen: a flat mark at zero in the metric's colour and "0" on it;
                        // above, what the runs rule out as a dotted line to a cap, never an area.
                        let (left, _) = chart.backend_coord(&(x0, 0.0));
                        let (right, _) = chart.backend_coord(&(x1, 0.0));
                        root.draw(&Rectangle::new([(left, py0 - 3), (right, py0)], color.filled())).de()?;
                        draw_text(root, "0", (px, py0 - 5), &value_style)?;
                        if iv.hi > 0.0 {
                            let (_, py_hi) = chart.backend_coord(&(xc, iv.hi));
                            // From above the "0" label, when the bound is higher than that.
                            let from = py0 - 22;
                            if py_hi < from {
                                draw_rule_out_bound(root, px, from, py_hi, (bar_px * 3 / 5).clamp(4, 14))?;
                            }
                            // At the cap, or just above the "0" when the bound is lower.
                            let text = format!("<{}", fmt_pct(iv.hi));
                            if fits(&text) {
                                draw_text(root, &text, (px, py_hi.min(from) - 4), &muted_value_style)?;
                            }
                        }
                    }
                    Cell::CannotBeFenced => {
                        let (left, _) = chart.backend_coord(&(x0, 0.0));
                        let (right, _) = chart.backend_coord(&(x1, 0.0));
                        draw_hatched(root, (left, py_range.start + 4), (right, py0))?;
                        let size = if bar_px >= 16 { NOTE_SIZE_PX + 1.0 } else { NOTE_SIZE_PX - 2.0 };
                        let height = py0 - py_range.start - 4;
                        let text = fit_text(CANNOT_BE_FENCED, size, height - 16);
                        let tw = text_width(&text, size);
                        let yc = py_range.start + 4 + height / 2;
                        let half_h = (size * 0.65) as i32;
                        root.draw(&Rectangle::new(
                            [(px - half_h, yc - tw / 2 - 5), (px + half_h, yc + tw / 2 + 5)],
                            WHITE.filled(),
                        ))
                        .de()?;
                        let style =
                            text_style(size, &INK, HPos::Center, VPos::Center).transform(FontTransform::Rotate270);
                        draw_text(root, &text, (px, yc), &style)?;
                    }
                    Cell::NoData => {
                        let style = if text_width("n/a", NOTE_SIZE_PX) <= bar_px {
                            text_style(NOTE_SIZE_PX, &MUTED, HPos::Center, VPos::Bottom)
                        } else {
                            text_style(NOTE_SIZE_PX, &MUTED, HPos::Left, VPos::Center)
                                .transform(FontTransform::Rotate270)
                        };
                        draw_text(root, "n/a", (px, py0 - 4), &style)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Draws the safety violations of each algorithm as grouped bars: runs with an overlap, with a
/// stale write accepted by the unfenced resource, and by the fenced one, each with its 95%
/// interval as an error bar. A model that cannot be fenced gets a hatched grey column labelled
/// "cannot be fenced" (never a zero bar); a rate of 0 is a flat mark at zero marked "0" under a
/// dotted line up to its interval's upper end, which the caller sets to what the runs rule out;
/// a missing rate is written "n/a".
pub fn violations_chart(
    dir: &Path,
    name: &str,
    title: &str,
    algs: &[AlgorithmChartData],
) -> Result<ChartFiles, ChartError> {
    let chart = Violations {
        title,
        groups: algs
            .iter()
            .map(|a| Group {
                label: a.label.clone(),
                runs: a.runs,
                cells: [
                    Cell::from_interval(a.overlap),
                    Cell::from_interval(a.stale_unfenced),
                    Cell::from_fenced(a.stale_fenced),
                ],
            })
            .collect(),
    };
    render(dir, name, &chart)
}
