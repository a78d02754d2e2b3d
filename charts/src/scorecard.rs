//! The scorecard: every row of a run on one figure, so "which lock for this fault?" is answered
//! at a glance. One line per algorithm; six columns left to right:
//!
//! - safety (one scale shared by the three): runs with an overlap, with a stale write accepted by
//!   the unfenced resource, by the fenced one, each a dot with its 95% interval; a class no run
//!   showed is a dot at 0 with a dotted line to what the runs rule out (as in the violations
//!   chart: a bound is never drawn as a bar); a model without a fencing token is a hatched "no
//!   token" box, never a zero;
//! - availability: the outage (the longest stretch with a waiter and no holder), its mean over
//!   runs as a bar and its longest as a tick;
//! - cost: messages per successful acquisition, a bar;
//! - fairness: Jain's index of sections per client, the mean as a dot on its min–max range
//!   (1: equal shares).
//!
//! Each cell also writes its value, so the figure reads without the table. Missing values are
//! "n/a", never 0.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::data::{AlgorithmChartData, FencedRate, Interval95};
use crate::font::{fit_text, text_width};
use crate::layout::{
    ceil_to, draw_hatched, draw_text, fmt_pct, fmt_sig, nice_step, text_style, title_area, GRID, INK, LABEL_SIZE_PX,
    MUTED, NOTE_SIZE_PX, WIDTH_PX,
};
use crate::output::{render, ChartError, ChartFiles, DrawResult, Drawing, OrDrawErr};

/// The safety columns' colours: the violations chart's, so a metric keeps its colour.
const SAFETY: [(&str, RGBColor); 3] = [
    ("overlap", RGBColor(0xD6, 0x27, 0x28)),
    ("stale write, unfenced", RGBColor(0xF2, 0x8E, 0x2B)),
    ("stale write, fenced", RGBColor(0x4E, 0x79, 0xA7)),
];
/// Bars of the availability, cost and fairness columns.
const BAR: RGBColor = RGBColor(0x76, 0x9F, 0xC6);
/// The row label column's width, px.
const LABEL_W_PX: i32 = 128;
/// Space between columns, px.
const GAP_PX: i32 = 16;
/// Right margin, px.
const RIGHT_PX: i32 = 14;
/// Height of the column headings (two lines: the group, the column), px.
const HEAD_PX: i32 = 58;
/// Height of one row, px: the value's text on top, its mark below.
const ROW_PX: i32 = 38;
/// Height of the axis under the rows and the note under it, px.
const FOOT_PX: i32 = 64;
/// The notes under the axes.
const NOTE: &str = "safety: runs with the violation, dot and 95% interval; 0 runs: dotted up to the rate ruled out. \
outage: mean bar, longest tick.";

/// One cell of a safety column.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Rate {
    /// No runs.
    NoData,
    /// No fencing token.
    NoToken,
    /// The rate with its interval, in `0..=1`.
    Seen(Interval95),
}

impl Rate {
    fn of(i: Option<Interval95>) -> Self {
        match i {
            Some(Interval95 { rate, lo, hi }) if rate.is_finite() && lo.is_finite() && hi.is_finite() => {
                let rate = rate.clamp(0.0, 1.0);
                Rate::Seen(Interval95 { rate, lo: lo.clamp(0.0, 1.0).min(rate), hi: hi.clamp(0.0, 1.0).max(rate) })
            }
            _ => Rate::NoData,
        }
    }

    fn hi(&self) -> Option<f64> {
        match self {
            Rate::Seen(i) => Some(i.hi),
            _ => None,
        }
    }
}

/// One algorithm's line.
struct Line {
    label: String,
    runs: u64,
    safety: [Rate; 3],
    outage_ms: Option<(f64, f64)>,
    messages: Option<f64>,
    fairness: Option<(f64, f64, f64)>,
}

/// The scorecard.
struct Scorecard<'a> {
    title: &'a str,
    lines: Vec<Line>,
}

/// The horizontal extent of one column, px.
#[derive(Clone, Copy)]
struct Column {
    x0: i32,
    x1: i32,
}

impl Column {
    /// The pixel of `v` on a scale from 0 to `max`, clamped to the column.
    fn x(&self, v: f64, max: f64) -> i32 {
        let f = if max > 0.0 && v.is_finite() { (v / max).clamp(0.0, 1.0) } else { 0.0 };
        self.x0 + (f * f64::from(self.x1 - self.x0)).round() as i32
    }

    fn width(&self) -> i32 {
        self.x1 - self.x0
    }
}

/// A scale's top: a round number a little above `max`, at least `floor`.
fn scale_top(max: Option<f64>, floor: f64) -> f64 {
    match max.filter(|m| m.is_finite() && *m > 0.0) {
        None => floor,
        Some(m) => {
            let padded = m * 1.08;
            ceil_to(padded, nice_step(padded, 4)).max(floor)
        }
    }
}

/// A duration for a cell: `850ms`, `7.02s`, `2.5min`.
fn fmt_duration(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{}ms", fmt_sig(ms, 3))
    } else if ms < 120_000.0 {
        format!("{}s", fmt_sig(ms / 1000.0, 3))
    } else {
        format!("{}min", fmt_sig(ms / 60_000.0, 3))
    }
}

fn max_of(values: impl Iterator<Item = f64>) -> Option<f64> {
    values.filter(|v| v.is_finite()).fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
}

impl Scorecard<'_> {
    fn columns(&self) -> [Column; 6] {
        let left = LABEL_W_PX;
        let right = WIDTH_PX as i32 - RIGHT_PX;
        let w = (right - left - 5 * GAP_PX) / 6;
        std::array::from_fn(|i| {
            let x0 = left + i as i32 * (w + GAP_PX);
            Column { x0, x1: x0 + w }
        })
    }

    fn rows_top(&self) -> i32 {
        44 + HEAD_PX
    }
}

impl Drawing for Scorecard<'_> {
    fn size(&self) -> (u32, u32) {
        let rows = self.lines.len().max(1) as i32;
        (WIDTH_PX, (44 + HEAD_PX + rows * ROW_PX + FOOT_PX) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        title_area(root, self.title)?;
        let cols = self.columns();
        let top = self.rows_top();
        let rows_end = top + self.lines.len().max(1) as i32 * ROW_PX;
        let head = |size: f64, color: &RGBColor| text_style(size, color, HPos::Center, VPos::Top);

        // The groups over their columns, then each column's name.
        let groups = [
            ("safety: runs with the violation", cols[0].x0, cols[2].x1),
            ("availability", cols[3].x0, cols[3].x1),
            ("cost", cols[4].x0, cols[4].x1),
            ("fairness", cols[5].x0, cols[5].x1),
        ];
        for (text, x0, x1) in groups {
            let text = fit_text(text, LABEL_SIZE_PX, x1 - x0);
            draw_text(root, &text, ((x0 + x1) / 2, 44 + 6), &head(LABEL_SIZE_PX, &INK))?;
            root.draw(&PathElement::new(vec![(x0, 44 + 26), (x1, 44 + 26)], INK.stroke_width(1))).de()?;
        }
        let names = [SAFETY[0].0, SAFETY[1].0, SAFETY[2].0, "outage", "msgs / acquisition", "Jain's index"];
        for (c, name) in cols.iter().zip(names) {
            let text = fit_text(name, NOTE_SIZE_PX + 1.0, c.width());
            draw_text(root, &text, ((c.x0 + c.x1) / 2, 44 + 34), &head(NOTE_SIZE_PX + 1.0, &MUTED))?;
        }

        if self.lines.is_empty() {
            let style = text_style(NOTE_SIZE_PX + 1.0, &MUTED, HPos::Center, VPos::Center);
            return draw_text(root, "no algorithms", (WIDTH_PX as i32 / 2, top + ROW_PX / 2), &style);
        }

        // Scales: one for the three safety columns, one per other column.
        let rate_top =
            scale_top(max_of(self.lines.iter().flat_map(|l| l.safety.iter().filter_map(Rate::hi))), 0.01).min(1.0);
        let outage_top = scale_top(max_of(self.lines.iter().filter_map(|l| l.outage_ms.map(|o| o.1.max(o.0)))), 1.0);
        let messages_top = scale_top(max_of(self.lines.iter().filter_map(|l| l.messages)), 1.0);

        for (i, line) in self.lines.iter().enumerate() {
            let y = top + i as i32 * ROW_PX;
            if i % 2 == 1 {
                root.draw(&Rectangle::new(
                    [(4, y), (WIDTH_PX as i32 - 4, y + ROW_PX)],
                    RGBColor(0xF6, 0xF6, 0xF6).filled(),
                ))
                .de()?;
            }
            let label = fit_text(&line.label, LABEL_SIZE_PX, LABEL_W_PX - 16);
            draw_text(root, &label, (10, y + 5), &text_style(LABEL_SIZE_PX, &INK, HPos::Left, VPos::Top))?;
            let runs = if line.runs == 1 { "1 run".to_string() } else { format!("{} runs", line.runs) };
            draw_text(root, &runs, (10, y + 22), &text_style(NOTE_SIZE_PX - 1.0, &MUTED, HPos::Left, VPos::Top))?;
            let cell = Cell { root, y };
            for (k, rate) in line.safety.iter().enumerate() {
                cell.rate(cols[k], *rate, rate_top, SAFETY[k].1)?;
            }
            cell.outage(cols[3], line.outage_ms, outage_top)?;
            cell.bar(cols[4], line.messages, messages_top)?;
            cell.fairness(cols[5], line.fairness)?;
        }

        // An axis under each column: its zero and its top.
        let tops = [rate_top, rate_top, rate_top, outage_top, messages_top, 1.0];
        let fmt: [&dyn Fn(f64) -> String; 6] =
            [&fmt_pct, &fmt_pct, &fmt_pct, &fmt_duration, &|v| fmt_sig(v, 3), &|v| fmt_sig(v, 3)];
        let tick = |h| text_style(NOTE_SIZE_PX - 1.0, &MUTED, h, VPos::Top);
        for ((c, max), f) in cols.iter().zip(tops).zip(fmt) {
            for x in [c.x0, c.x1] {
                root.draw(&PathElement::new(vec![(x, top), (x, rows_end)], GRID.stroke_width(1))).de()?;
            }
            root.draw(&PathElement::new(vec![(c.x0, rows_end), (c.x1, rows_end)], INK.stroke_width(1))).de()?;
            draw_text(root, "0", (c.x0, rows_end + 4), &tick(HPos::Left))?;
            draw_text(root, &f(max), (c.x1, rows_end + 4), &tick(HPos::Right))?;
        }
        let note = fit_text(NOTE, NOTE_SIZE_PX, WIDTH_PX as i32 - 20);
        draw_text(root, &note, (10, rows_end + 30), &text_style(NOTE_SIZE_PX, &MUTED, HPos::Left, VPos::Top))
    }
}

/// Drawing one row's cells.
struct Cell<'a, DB: DrawingBackend> {
    root: &'a DrawingArea<DB, Shift>,
    /// The row's top, px.
    y: i32,
}

impl<DB: DrawingBackend> Cell<'_, DB> {
    /// The y of the row's mark.
    fn mark_y(&self) -> i32 {
        self.y + 27
    }

    /// The value's text, on top of the cell.
    fn value(&self, c: Column, text: &str, color: &RGBColor) -> DrawResult {
        let text = fit_text(text, NOTE_SIZE_PX, c.width());
        draw_text(self.root, &text, (c.x0, self.y + 5), &text_style(NOTE_SIZE_PX, color, HPos::Left, VPos::Top))
    }

    fn na(&self, c: Column) -> DrawResult {
        self.value(c, "n/a", &MUTED)
    }

    fn rate(&self, c: Column, rate: Rate, top: f64, color: RGBColor) -> DrawResult {
        let ym = self.mark_y();
        match rate {
            Rate::NoData => self.na(c),
            Rate::NoToken => {
                draw_hatched(self.root, (c.x0, ym - 6), (c.x1, ym + 6))?;
                self.value(c, "no fencing token", &MUTED)
            }
            Rate::Seen(iv) if iv.rate > 0.0 => {
                let (xl, xh) = (c.x(iv.lo, top), c.x(iv.hi, top));
                let style = INK.stroke_width(2);
                self.root.draw(&PathElement::new(vec![(xl, ym), (xh, ym)], style)).de()?;
                for x in [xl, xh] {
                    self.root.draw(&PathElement::new(vec![(x, ym - 4), (x, ym + 4)], style)).de()?;
                }
                self.root.draw(&Circle::new((c.x(iv.rate, top), ym), 5, color.filled())).de()?;
                let text = format!("{} [{}–{}]", fmt_pct(iv.rate), fmt_pct(iv.lo), fmt_pct(iv.hi));
                self.value(c, &text, &RGBColor(0xB0, 0x00, 0x00))
            }
            Rate::Seen(iv) => {
                // None seen: a dot at 0 and a dotted line to the bound, never an area.
                let xh = c.x(iv.hi, top);
                let mut x = c.x0 + 6;
                while x < xh {
                    let end = (x + 2).min(xh);
                    self.root.draw(&PathElement::new(vec![(x, ym), (end, ym)], MUTED.stroke_width(1))).de()?;
                    x += 4;
                }
                if xh > c.x0 + 6 {
                    self.root.draw(&PathElement::new(vec![(xh, ym - 4), (xh, ym + 4)], MUTED.stroke_width(2))).de()?;
                }
                self.root.draw(&Circle::new((c.x0, ym), 4, color.filled())).de()?;
                self.value(c, &format!("0 (<{})", fmt_pct(iv.hi)), &INK)
            }
        }
    }

    fn bar(&self, c: Column, value: Option<f64>, top: f64) -> DrawResult {
        let Some(v) = value.filter(|v| v.is_finite()) else {
            return self.na(c);
        };
        let ym = self.mark_y();
        self.root.draw(&Rectangle::new([(c.x0, ym - 5), (c.x(v, top).max(c.x0 + 1), ym + 5)], BAR.filled())).de()?;
        self.value(c, &fmt_sig(v, 3), &INK)
    }

    fn outage(&self, c: Column, outage_ms: Option<(f64, f64)>, top: f64) -> DrawResult {
        let Some((mean, max)) = outage_ms.filter(|(a, b)| a.is_finite() && b.is_finite()) else {
            return self.na(c);
        };
        let ym = self.mark_y();
        self.root.draw(&Rectangle::new([(c.x0, ym - 5), (c.x(mean, top).max(c.x0 + 1), ym + 5)], BAR.filled())).de()?;
        let xm = c.x(max, top);
        self.root.draw(&PathElement::new(vec![(xm, ym - 7), (xm, ym + 7)], INK.stroke_width(2))).de()?;
        self.value(c, &format!("{} / {}", fmt_duration(mean), fmt_duration(max)), &INK)
    }

    fn fairness(&self, c: Column, fairness: Option<(f64, f64, f64)>) -> DrawResult {
        let Some((mean, min, max)) = fairness.filter(|(a, b, d)| a.is_finite() && b.is_finite() && d.is_finite())
        else {
            return self.na(c);
        };
        let ym = self.mark_y();
        let (xl, xh) = (c.x(min.min(mean), 1.0), c.x(max.max(mean), 1.0));
        self.root.draw(&Rectangle::new([(xl, ym - 2), (xh.max(xl + 1), ym + 2)], BAR.filled())).de()?;
        self.root.draw(&Circle::new((c.x(mean, 1.0), ym), 5, INK.filled())).de()?;
        let text = if (max - min).abs() < 1e-9 {
            fmt_sig(mean, 3)
        } else {
            format!("{} [{}–{}]", fmt_sig(mean, 3), fmt_sig(min, 3), fmt_sig(max, 3))
        };
        let fits = text_width(&text, NOTE_SIZE_PX) <= c.width();
        self.value(c, if fits { &text } else { &text[..text.find(' ').unwrap_or(text.len())] }, &INK)
    }
}

/// Draws the scorecard of `algs`: per algorithm, the three safety rates with their 95%
/// intervals on one shared scale, the outage (mean and longest), messages per acquisition and
/// Jain's fairness index, each cell with its value written.
pub fn scorecard_chart(
    dir: &Path,
    name: &str,
    title: &str,
    algs: &[AlgorithmChartData],
) -> Result<ChartFiles, ChartError> {
    let lines = algs
        .iter()
        .map(|a| Line {
            label: a.label.clone(),
            runs: a.runs,
            safety: [
                Rate::of(a.overlap),
                Rate::of(a.stale_unfenced),
                match a.stale_fenced {
                    FencedRate::CannotBeFenced => Rate::NoToken,
                    FencedRate::Rate(i) => Rate::of(i),
                },
            ],
            outage_ms: a.outage_ms_mean.zip(a.outage_ms_max),
            messages: a.messages_per_acquisition,
            fairness: a.fairness.map(|f| (f.mean, f.min, f.max)),
        })
        .collect();
    render(dir, name, &Scorecard { title, lines })
}
