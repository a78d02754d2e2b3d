//! What the charts share: sizes, colours, number formats, axis ticks, text, titles, hatching and
//! the legend row drawn under each title.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::font::{fit_text, text_width, FAMILY};
use crate::output::{DrawResult, OrDrawErr};

/// Image width of every chart, px: readable on a laptop screen.
pub(crate) const WIDTH_PX: u32 = 1000;
/// Title font size, px.
pub(crate) const TITLE_SIZE_PX: f64 = 22.0;
/// Axis description font size, px.
pub(crate) const AXIS_DESC_SIZE_PX: f64 = 16.0;
/// Tick label font size, px.
pub(crate) const TICK_SIZE_PX: f64 = 14.0;
/// Legend and category label font size, px.
pub(crate) const LABEL_SIZE_PX: f64 = 14.0;
/// Small annotation font size, px.
pub(crate) const NOTE_SIZE_PX: f64 = 12.0;

/// Text colour.
pub(crate) const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
/// Secondary text colour (run counts, "n/a").
pub(crate) const MUTED: RGBColor = RGBColor(0x66, 0x66, 0x66);
/// Background of hatched markers.
pub(crate) const HATCH_BG: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
/// Hatch lines and hatched-marker borders.
pub(crate) const HATCH_FG: RGBColor = RGBColor(0x88, 0x88, 0x88);
/// Grid lines.
pub(crate) const GRID: RGBColor = RGBColor(0xE4, 0xE4, 0xE4);

/// Series colours (Tableau 10), used in order and then again.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4E, 0x79, 0xA7),
    RGBColor(0xF2, 0x8E, 0x2B),
    RGBColor(0xE1, 0x57, 0x59),
    RGBColor(0x76, 0xB7, 0xB2),
    RGBColor(0x59, 0xA1, 0x4F),
    RGBColor(0xED, 0xC9, 0x48),
    RGBColor(0xB0, 0x7A, 0xA1),
    RGBColor(0xFF, 0x9D, 0xA7),
    RGBColor(0x9C, 0x75, 0x5F),
    RGBColor(0x79, 0x70, 0x6E),
];

/// The colour of series number `i`.
pub(crate) fn series_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// A text style in the shipped font.
pub(crate) fn text_style(size: f64, color: &RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(color).pos(Pos::new(h, v))
}

/// Draws `text` at `pos` (coordinates of `area`).
pub(crate) fn draw_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    pos: (i32, i32),
    style: &TextStyle<'_>,
) -> DrawResult {
    if text.is_empty() {
        return Ok(());
    }
    area.draw(&Text::new(text.to_string(), pos, style.clone())).de()
}

/// Draws `title` centred at the top of `area` and returns the area below it.
pub(crate) fn title_area<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
) -> DrawResult<DrawingArea<DB, Shift>> {
    let (w, _) = area.dim_in_pixel();
    let text = fit_text(title, TITLE_SIZE_PX, w as i32 - 40);
    let style = text_style(TITLE_SIZE_PX, &INK, HPos::Center, VPos::Center);
    draw_text(area, &text, (w as i32 / 2, 22), &style)?;
    Ok(area.split_vertically(44).1)
}

/// A finite value, or `None`.
pub(crate) fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

/// `v` with `sig` significant digits, without trailing zeros: `16.1`, `0.996`, `3494`, `1.5e-5`.
pub(crate) fn fmt_sig(v: f64, sig: usize) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let mag = libm::log10(v.abs()).floor() as i32;
    if !(-4..6).contains(&mag) {
        let s = format!("{:.*e}", sig.saturating_sub(1), v);
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa =
            if mantissa.contains('.') { mantissa.trim_end_matches('0').trim_end_matches('.') } else { mantissa };
        return format!("{mantissa}e{exponent}");
    }
    let decimals = (sig as i32 - 1 - mag).max(0) as usize;
    let mut s = format!("{v:.decimals$}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s
}

/// A fraction as a percentage for axis ticks and labels: `0.015` → `1.5%`.
pub(crate) fn fmt_pct(fraction: f64) -> String {
    format!("{}%", fmt_sig(fraction * 100.0, 3))
}

/// `10^e`, correctly rounded (so `0.1` is the same `0.1` as everywhere else).
fn pow10(e: i32) -> f64 {
    format!("1e{e}").parse().unwrap_or(1.0)
}

/// A "nice" step (1, 2 or 5 times a power of ten) splitting `span` into about `target` parts, as
/// `(mantissa, exponent)`.
fn nice_step_parts(span: f64, target: usize) -> (i64, i32) {
    if !(span.is_finite() && span > 0.0) {
        return (1, 0);
    }
    let raw = span / target.max(1) as f64;
    let e = libm::log10(raw).floor() as i32;
    let m = raw / pow10(e);
    if m <= 1.0 {
        (1, e)
    } else if m <= 2.0 {
        (2, e)
    } else if m <= 5.0 {
        (5, e)
    } else {
        (1, e + 1)
    }
}

/// A "nice" step (1, 2 or 5 times a power of ten) splitting `span` into about `target` parts.
pub(crate) fn nice_step(span: f64, target: usize) -> f64 {
    let (m, e) = nice_step_parts(span, target);
    m as f64 * pow10(e)
}

/// Round `v` up to a multiple of `step`.
pub(crate) fn ceil_to(v: f64, step: f64) -> f64 {
    (v / step - 1e-9).ceil() * step
}

/// Ticks at multiples of a nice step from `lo` to `hi` (both included if on the grid).
pub(crate) fn linear_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo];
    }
    let (m, e) = nice_step_parts(hi - lo, target);
    let step = m as f64 * pow10(e);
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    // Each tick is parsed from its decimal form, so it is the same `0.6` as everywhere else
    // rather than an accumulated `0.6000000000000001`.
    (first..=last).take(1000).map(|k| format!("{}e{e}", k * m).parse().unwrap_or(k as f64 * step)).collect()
}

/// A logarithmic axis: its range and its labelled (bold) and unlabelled (light) grid values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LogAxis {
    /// Lower end (a 1-2-5 value at or below the smallest datum).
    pub lo: f64,
    /// Upper end (a 1-2-5 value at or above the largest datum).
    pub hi: f64,
    /// Labelled grid values.
    pub bold: Vec<f64>,
    /// Minor grid values.
    pub light: Vec<f64>,
}

/// The 1-2-5 value at or below `v > 0`.
fn floor125(v: f64) -> f64 {
    let e = libm::log10(v).floor() as i32;
    let base = pow10(e);
    let m = v / base * (1.0 + 1e-9);
    let k = if m >= 10.0 {
        10.0
    } else if m >= 5.0 {
        5.0
    } else if m >= 2.0 {
        2.0
    } else {
        1.0
    };
    k * base
}

/// The 1-2-5 value at or above `v > 0`.
fn ceil125(v: f64) -> f64 {
    let e = libm::log10(v).floor() as i32;
    let base = pow10(e);
    let m = v / base * (1.0 - 1e-9);
    let k = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    k * base
}

/// A log axis covering `min..=max` (both `> 0`; anything else gives `0.1..1000`).
pub(crate) fn log_axis(min: f64, max: f64) -> LogAxis {
    let (min, max) =
        if min.is_finite() && max.is_finite() && min > 0.0 && max >= min { (min, max) } else { (0.1, 1000.0) };
    let mut lo = floor125(min);
    let mut hi = ceil125(max);
    if hi <= lo * (1.0 + 1e-9) {
        lo = floor125(lo / 1.5);
        hi = ceil125(hi * 1.5);
    }
    let e_lo = libm::log10(lo).floor() as i32;
    let e_hi = libm::log10(hi).ceil() as i32;
    let in_range = |v: f64| v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9);
    let decades = (e_hi - e_lo).max(1);
    let mut bold = Vec::new();
    for e in e_lo..=e_hi {
        for m in [1.0, 2.0, 5.0] {
            let v = m * pow10(e);
            if in_range(v) && (decades <= 3 || m == 1.0) {
                bold.push(v);
            }
        }
    }
    if bold.len() > 12 {
        let every = bold.len().div_ceil(10);
        bold = bold.into_iter().enumerate().filter(|(i, _)| i % every == 0).map(|(_, v)| v).collect();
    }
    let mut light = Vec::new();
    if decades <= 8 {
        for e in e_lo..=e_hi {
            for m in 1..10 {
                let v = f64::from(m) * pow10(e);
                if in_range(v) {
                    light.push(v);
                }
            }
        }
    }
    LogAxis { lo, hi, bold, light }
}

/// A numeric axis, linear or logarithmic, with the grid values to draw and label.
///
/// (plotters' own `WithKeyPoints<RangedCoordf64>` cannot take a label formatter, so the charts
/// use this one; it maps values exactly as plotters' linear and log axes do.)
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    bold: Vec<f64>,
    light: Vec<f64>,
}

impl Axis {
    /// A linear axis from `lo` to `hi`, labelled at `ticks`.
    pub(crate) fn linear(lo: f64, hi: f64, ticks: Vec<f64>) -> Self {
        Self { lo, hi, log: false, bold: ticks, light: Vec::new() }
    }

    /// A logarithmic axis.
    pub(crate) fn log(axis: &LogAxis) -> Self {
        Self { lo: axis.lo, hi: axis.hi, log: true, bold: axis.bold.clone(), light: axis.light.clone() }
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let (a, b, v) = if self.log {
            (libm::log(self.lo), libm::log(self.hi), libm::log(*value))
        } else {
            (self.lo, self.hi, *value)
        };
        let length = limit.1 - limit.0;
        if b == a || length == 0 {
            return limit.0 + length / 2;
        }
        let fraction = (v - a) / (b - a);
        if fraction.is_nan() {
            return limit.0;
        }
        // Far-off values (a log of 0) stay a bounded distance outside the plot.
        let fraction = fraction.clamp(-10.0, 11.0);
        if length > 0 {
            limit.0 + (f64::from(length) * fraction + 1e-3).floor() as i32
        } else {
            limit.0 + (f64::from(length) * fraction - 1e-3).ceil() as i32
        }
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// How a legend entry's swatch looks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Swatch {
    /// A filled box.
    Fill(RGBAColor),
    /// A thin filled bar (timeline waiting).
    Thin(RGBColor),
    /// A rule-out bound: a dotted vertical line ending in a cap, over a flat mark at zero (a
    /// rate of 0 and what the runs rule out; no area, so it never reads as a measured bar).
    RuledOut,
    /// A grey hatched box ("cannot be fenced").
    Hatch,
    /// A line with a round marker.
    LineMarker(RGBColor),
    /// A vertical line (an instant).
    VLine(RGBColor),
    /// An error bar.
    ErrorBar,
}

/// One legend entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LegendItem {
    /// The swatch.
    pub swatch: Swatch,
    /// The text after it.
    pub label: String,
}

impl LegendItem {
    /// A legend entry.
    pub(crate) fn new(swatch: Swatch, label: impl Into<String>) -> Self {
        Self { swatch, label: label.into() }
    }
}

const SWATCH_W_PX: i32 = 24;
const LEGEND_ROW_H_PX: i32 = 24;
const LEGEND_GAP_PX: i32 = 22;

/// Lays legend items out in centred rows no wider than `width`: the items of each row.
fn legend_rows(items: &[LegendItem], width: i32) -> Vec<Vec<(usize, i32)>> {
    let max_label = (width - 80).max(60);
    let mut rows: Vec<Vec<(usize, i32)>> = Vec::new();
    let mut used = 0;
    for (i, item) in items.iter().enumerate() {
        let w = SWATCH_W_PX + 6 + text_width(&item.label, LABEL_SIZE_PX).min(max_label);
        let need = if used == 0 { w } else { used + LEGEND_GAP_PX + w };
        match rows.last_mut() {
            Some(row) if need <= width - 40 => {
                row.push((i, w));
                used = need;
            }
            _ => {
                rows.push(vec![(i, w)]);
                used = w;
            }
        }
    }
    rows
}

/// The height the legend for `items` takes in an area `width` px wide.
pub(crate) fn legend_height(items: &[LegendItem], width: u32) -> u32 {
    if items.is_empty() {
        return 0;
    }
    legend_rows(items, width as i32).len() as u32 * LEGEND_ROW_H_PX as u32 + 8
}

/// Draws the legend at the top of `area` and returns the area below it.
pub(crate) fn legend_area<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    items: &[LegendItem],
) -> DrawResult<DrawingArea<DB, Shift>> {
    if items.is_empty() {
        return Ok(area.clone());
    }
    let (w, _) = area.dim_in_pixel();
    let width = w as i32;
    let max_label = (width - 80).max(60);
    let style = text_style(LABEL_SIZE_PX, &INK, HPos::Left, VPos::Center);
    for (r, row) in legend_rows(items, width).iter().enumerate() {
        let total: i32 = row.iter().map(|(_, w)| *w).sum::<i32>() + LEGEND_GAP_PX * (row.len() as i32 - 1);
        let mut x = (width - total) / 2;
        let yc = r as i32 * LEGEND_ROW_H_PX + LEGEND_ROW_H_PX / 2;
        for &(i, w) in row {
            let item = &items[i];
            draw_swatch(area, item.swatch, x, yc)?;
            let label = fit_text(&item.label, LABEL_SIZE_PX, max_label);
            draw_text(area, &label, (x + SWATCH_W_PX + 6, yc), &style)?;
            x += w + LEGEND_GAP_PX;
        }
    }
    Ok(area.split_vertically(legend_height(items, w)).1)
}

/// Draws a legend swatch with its left edge at `x`, centred on `yc`.
fn draw_swatch<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, swatch: Swatch, x: i32, yc: i32) -> DrawResult {
    let (x0, x1) = (x, x + SWATCH_W_PX);
    match swatch {
        Swatch::Fill(c) => area.draw(&Rectangle::new([(x0, yc - 7), (x1, yc + 7)], c.filled())).de(),
        Swatch::Thin(c) => area.draw(&Rectangle::new([(x0, yc - 3), (x1, yc + 3)], c.filled())).de(),
        Swatch::RuledOut => {
            let xm = x0 + SWATCH_W_PX / 2;
            area.draw(&Rectangle::new([(x0 + 2, yc + 6), (x1 - 2, yc + 8)], MUTED.filled())).de()?;
            draw_rule_out_bound(area, xm, yc + 4, yc - 8, 10)
        }
        Swatch::Hatch => draw_hatched(area, (x0, yc - 7), (x1, yc + 7)),
        Swatch::LineMarker(c) => {
            area.draw(&PathElement::new(vec![(x0, yc), (x1, yc)], c.stroke_width(2))).de()?;
            area.draw(&Circle::new((x0 + SWATCH_W_PX / 2, yc), 4, c.filled())).de()
        }
        Swatch::VLine(c) => {
            let xm = x0 + SWATCH_W_PX / 2;
            area.draw(&PathElement::new(vec![(xm, yc - 9), (xm, yc + 9)], c.stroke_width(2))).de()
        }
        Swatch::ErrorBar => draw_error_bar(area, x0 + SWATCH_W_PX / 2, yc + 8, yc - 8, 10),
    }
}

/// A vertical error bar in pixel coordinates of `area`, from `y_lo` to `y_hi`, caps `cap` wide.
pub(crate) fn draw_error_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x: i32,
    y_lo: i32,
    y_hi: i32,
    cap: i32,
) -> DrawResult {
    let style = INK.stroke_width(2);
    let h = cap / 2;
    area.draw(&PathElement::new(vec![(x, y_lo), (x, y_hi)], style)).de()?;
    area.draw(&PathElement::new(vec![(x - h, y_lo), (x + h, y_lo)], style)).de()?;
    area.draw(&PathElement::new(vec![(x - h, y_hi), (x + h, y_hi)], style)).de()
}

/// What the runs rule out when none showed a violation, in pixel coordinates of `area`: a dotted
/// grey line from `y_from` up to `y_bound` with a cap `cap` wide there. A line, not a bar: a
/// bound is not a measured rate, and an area up to it read, at a glance, as the biggest bar.
pub(crate) fn draw_rule_out_bound<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x: i32,
    y_from: i32,
    y_bound: i32,
    cap: i32,
) -> DrawResult {
    let style = MUTED.stroke_width(1);
    // Dots of 2 px every 4 px, from the bound down, so the cap always has its dot.
    let mut y = y_bound;
    while y < y_from {
        let end = (y + 2).min(y_from);
        area.draw(&PathElement::new(vec![(x, y), (x, end)], style)).de()?;
        y += 4;
    }
    let h = cap / 2;
    area.draw(&PathElement::new(vec![(x - h, y_bound), (x + h, y_bound)], MUTED.stroke_width(2))).de()
}

/// A grey box with diagonal hatching and a border, in pixel coordinates of `area`.
pub(crate) fn draw_hatched<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x0, y0): (i32, i32),
    (x1, y1): (i32, i32),
) -> DrawResult {
    let (x0, x1) = (x0.min(x1), x0.max(x1));
    let (y0, y1) = (y0.min(y1), y0.max(y1));
    area.draw(&Rectangle::new([(x0, y0), (x1, y1)], HATCH_BG.filled())).de()?;
    // Lines x + y = k ("/" on screen), clipped to the box.
    let spacing = 7;
    let mut k = x0 + y0 + spacing;
    while k < x1 + y1 {
        let xa = x0.max(k - y1);
        let xb = x1.min(k - y0);
        if xa < xb {
            area.draw(&PathElement::new(vec![(xa, k - xa), (xb, k - xb)], HATCH_FG.stroke_width(1))).de()?;
        }
        k += spacing;
    }
    area.draw(&Rectangle::new([(x0, y0), (x1, y1)], HATCH_FG.stroke_width(1))).de()
}

/// Writes `note` centred in the pixel rectangle `(x0, y0)..(x1, y1)` of `area`.
pub(crate) fn draw_note<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    note: &str,
    (x0, y0): (i32, i32),
    (x1, y1): (i32, i32),
) -> DrawResult {
    let style = text_style(AXIS_DESC_SIZE_PX, &MUTED, HPos::Center, VPos::Center);
    draw_text(area, note, ((x0 + x1) / 2, (y0 + y1) / 2), &style)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_significant_digits() {
        assert_eq!(fmt_sig(16.123, 3), "16.1");
        assert_eq!(fmt_sig(0.9961, 3), "0.996");
        assert_eq!(fmt_sig(3494.0, 3), "3494");
        assert_eq!(fmt_sig(1.0, 3), "1");
        assert_eq!(fmt_sig(0.0, 3), "0");
        assert_eq!(fmt_sig(0.30000000000000004, 3), "0.3");
        assert_eq!(fmt_sig(1.5e-5, 2), "1.5e-5");
        assert_eq!(fmt_sig(1e9, 3), "1e9");
        assert_eq!(fmt_sig(-2.5e10, 3), "-2.5e10");
        assert_eq!(fmt_pct(0.015), "1.5%");
        assert_eq!(fmt_pct(1.0), "100%");
        assert_eq!(fmt_sig(f64::NAN, 3), "n/a");
    }

    #[test]
    fn log_axis_snaps_to_125_and_labels_every_decade() {
        let a = log_axis(0.97, 3951.0);
        assert_eq!(a.lo, 0.5);
        assert_eq!(a.hi, 5000.0);
        assert!(a.bold.contains(&1.0) && a.bold.contains(&1000.0), "{:?}", a.bold);
        assert!(a.bold.iter().all(|v| *v >= a.lo && *v <= a.hi));
        // Within one decade there are still at least two labels.
        let b = log_axis(2.1, 4.0);
        assert!(b.bold.len() >= 2, "{b:?}");
        // A single value gets a range around it.
        let c = log_axis(7.0, 7.0);
        assert!(c.lo < 7.0 && c.hi > 7.0, "{c:?}");
        // Nonsense falls back.
        assert_eq!(log_axis(-1.0, 0.0).lo, 0.1);
    }

    #[test]
    fn linear_ticks_are_nice() {
        assert_eq!(linear_ticks(0.0, 1.0, 5), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(linear_ticks(0.0, 0.02, 4), vec![0.0, 0.005, 0.01, 0.015, 0.02]);
        assert_eq!(linear_ticks(1.0, 1.0, 4), vec![1.0]);
    }
}
