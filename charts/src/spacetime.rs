//! The space-time diagram of one violation: one vertical lane per node involved (the two
//! clients, the servers they talked to, the resource), true time going down; messages as arrows
//! between lanes (a lost one ends in a cross), fault windows shaded on their lanes, marks for
//! grants, writes, expiries and the violation (a red line across every lane), each labelled
//! with the lane's own wall clock reading. Quiet stretches are cut out and drawn as a marked
//! break, so a 40 s pause does not squeeze the interesting milliseconds into one pixel row.
//!
//! Input is plain data ([`SpacetimeChart`]) in milliseconds; the caller chooses which stretches
//! are drawn to scale ([`SpacetimeChart::shown`]); the gaps between them are the elided ones.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::data::Span;
use crate::font::fit_text;
use crate::layout::{
    draw_note, draw_text, legend_area, legend_height, text_style, title_area, LegendItem, Swatch, GRID, INK,
    LABEL_SIZE_PX, MUTED, NOTE_SIZE_PX, WIDTH_PX,
};
use crate::output::{render, ChartError, ChartFiles, DrawResult, Drawing, OrDrawErr};

/// What a mark on a lane is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkKind {
    /// A client was granted the lock.
    Grant,
    /// A write reached the resource.
    Write,
    /// A lease, session, key or TTL ran out (as the model recorded it).
    Expiry,
    /// A paused node ran again.
    Resume,
    /// A hold ended, or a library said the lock was lost.
    End,
    /// A fault began on this lane.
    Fault,
    /// The violation: drawn as a red line across every lane.
    Violation,
}

/// A message between two lanes.
#[derive(Debug, Clone, PartialEq)]
pub struct SpaceMessage {
    /// Sending lane (index into [`SpacetimeChart::lanes`]).
    pub from: usize,
    /// Receiving lane.
    pub to: usize,
    /// When it was sent, ms.
    pub sent_ms: f64,
    /// When it arrived (or was dropped at the receiver), ms; `None`: lost on the way (drawn
    /// half-way, ending in a cross).
    pub arrive_ms: Option<f64>,
    /// It never got through: the arrow ends in a cross.
    pub lost: bool,
    /// A short name (`Write`, `Ping`), drawn beside the arrow when there is room.
    pub label: String,
}

/// A fault window on one lane (a pause, a crash), shaded.
#[derive(Debug, Clone, PartialEq)]
pub struct SpaceWindow {
    /// The lane.
    pub lane: usize,
    /// The fault kind (`pause`, `crash (process)`, …).
    pub kind: String,
    /// When, ms (clipped to the diagram).
    pub span: Span,
}

/// A marked event on a lane.
#[derive(Debug, Clone, PartialEq)]
pub struct SpaceMark {
    /// The lane (ignored for [`MarkKind::Violation`], which spans every lane).
    pub lane: usize,
    /// When, ms.
    pub at_ms: f64,
    /// What.
    pub kind: MarkKind,
    /// What to write beside it (`granted, token 3`).
    pub label: String,
    /// The lane's own clock then (`wall 306.154 ms`), written after the label.
    pub clock: Option<String>,
}

/// A stretch left out of the diagram, with what to say about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Elided {
    /// The stretch, ms.
    pub span: Span,
    /// What the break says (`41 693 ms elided; 12 messages not drawn`).
    pub note: String,
}

/// A space-time diagram.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SpacetimeChart {
    /// The title.
    pub title: String,
    /// Lane names, left to right.
    pub lanes: Vec<String>,
    /// The stretches drawn to scale, in time order and not overlapping; the diagram runs from
    /// the first's start to the last's end. Between two of them is an [`Elided`] break.
    pub shown: Vec<Span>,
    /// What each break between shown stretches says (matched by position: `elided[i]` lies
    /// between `shown[i]` and `shown[i + 1]`; missing notes say only how long the break is).
    pub elided: Vec<Elided>,
    /// The messages.
    pub messages: Vec<SpaceMessage>,
    /// Fault windows.
    pub windows: Vec<SpaceWindow>,
    /// Marks.
    pub marks: Vec<SpaceMark>,
}

/// Height of the lane-name header, px.
const HEADER_PX: i32 = 34;
/// Height of one elided break, px.
const BREAK_PX: f64 = 46.0;
/// The least height of a stretch drawn to scale, px.
const MIN_SHOWN_PX: f64 = 90.0;
/// Height shared among the shown stretches by length, px.
const SHARED_PX: f64 = 620.0;
/// The gutter at the left for true times, px.
const GUTTER_PX: i32 = 120;
/// Space at the bottom, px.
const BOTTOM_PX: i32 = 24;
/// At most this many arrows carry their label (more would be unreadable).
const MAX_LABELLED: usize = 40;

const LANE: RGBColor = RGBColor(0x88, 0x88, 0x88);
const ARROW: RGBColor = RGBColor(0x44, 0x66, 0x99);
const LOST: RGBColor = RGBColor(0xCC, 0x44, 0x00);
const GRANT: RGBColor = RGBColor(0x2C, 0xA0, 0x2C);
const WRITE: RGBColor = RGBColor(0x1F, 0x4E, 0x99);
const EXPIRY: RGBColor = RGBColor(0xE6, 0x8A, 0x00);
const END: RGBColor = RGBColor(0x66, 0x66, 0x66);
const VIOLATION: RGBColor = RGBColor(0xD6, 0x27, 0x28);
const FAULT: RGBColor = RGBColor(0xFF, 0x7F, 0x0E);

fn mark_color(kind: MarkKind) -> RGBColor {
    match kind {
        MarkKind::Grant => GRANT,
        MarkKind::Write => WRITE,
        MarkKind::Expiry => EXPIRY,
        MarkKind::Resume | MarkKind::End => END,
        MarkKind::Fault => FAULT,
        MarkKind::Violation => VIOLATION,
    }
}

/// One vertical piece of the picture: a shown stretch or a break.
#[derive(Debug, Clone, Copy)]
struct Piece {
    start_ms: f64,
    end_ms: f64,
    top_px: f64,
    height_px: f64,
    shown: bool,
}

/// The diagram with its vertical layout worked out.
struct Spacetime<'a> {
    chart: &'a SpacetimeChart,
    legend: Vec<LegendItem>,
    pieces: Vec<Piece>,
    height: u32,
}

/// The label of the break between `a` and `b`.
fn default_break_note(a: f64, b: f64) -> String {
    format!("{} ms elided", fmt_ms(b - a))
}

/// Milliseconds with thousands grouped and at most three decimals.
fn fmt_ms(ms: f64) -> String {
    if !ms.is_finite() {
        return "?".to_string();
    }
    let us = (ms * 1000.0).round() as i128;
    let sign = if us < 0 { "-" } else { "" };
    let a = us.unsigned_abs();
    let digits = (a / 1000).to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(' ');
        }
        grouped.push(c);
    }
    let frac = format!("{:03}", a % 1000);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{frac}")
    }
}

impl<'a> Spacetime<'a> {
    fn new(chart: &'a SpacetimeChart) -> Self {
        let mut legend = vec![
            LegendItem::new(Swatch::LineMarker(GRANT), "grant"),
            LegendItem::new(Swatch::LineMarker(WRITE), "write"),
            LegendItem::new(Swatch::LineMarker(EXPIRY), "expiry / lost"),
            LegendItem::new(Swatch::Fill(FAULT.mix(0.3)), "fault window"),
            LegendItem::new(Swatch::LineMarker(ARROW), "message"),
            LegendItem::new(Swatch::LineMarker(LOST), "lost message (×)"),
            LegendItem::new(Swatch::VLine(VIOLATION), "violation"),
        ];
        if chart.shown.len() > 1 {
            legend.push(LegendItem::new(Swatch::Fill(GRID.to_rgba()), "quiet stretch elided"));
        }
        let shown: Vec<Span> = chart
            .shown
            .iter()
            .filter(|s| s.start_ms.is_finite() && s.end_ms.is_finite())
            .map(|s| Span::new(s.start_ms, s.end_ms.max(s.start_ms)))
            .collect();
        let total: f64 = shown.iter().map(|s| s.end_ms - s.start_ms).sum();
        let mut pieces = Vec::new();
        let mut y = 0.0;
        for (i, s) in shown.iter().enumerate() {
            if i > 0 {
                let prev = shown[i - 1].end_ms;
                pieces.push(Piece { start_ms: prev, end_ms: s.start_ms, top_px: y, height_px: BREAK_PX, shown: false });
                y += BREAK_PX;
            }
            let share = if total > 0.0 { (s.end_ms - s.start_ms) / total } else { 1.0 / shown.len() as f64 };
            let h = MIN_SHOWN_PX + SHARED_PX * share;
            pieces.push(Piece { start_ms: s.start_ms, end_ms: s.end_ms, top_px: y, height_px: h, shown: true });
            y += h;
        }
        let fixed = 44 + legend_height(&legend, WIDTH_PX) as i32 + HEADER_PX + BOTTOM_PX;
        let height = (fixed + y.ceil() as i32).max(fixed + 160) as u32;
        let mut diagram = Self { chart, legend, pieces, height };
        // Labels stacked below the last instant may reach past the lanes' end: the image grows
        // to hold them (the last labels were clipped at the bottom edge).
        let lowest = diagram.label_rows().iter().map(|(_, ly, lines)| ly + 12 * (lines - 1) + 8).max();
        if let Some(lowest) = lowest {
            let past = lowest - (y.ceil() as i32 + BOTTOM_PX);
            if past > 0 {
                diagram.height += past as u32;
            }
        }
        diagram
    }

    /// The marks in time order (violations included), each with the y (from the top of the lane
    /// area) of its label's first line and its number of lines: labels at one instant on one lane
    /// stack downwards, 12 px a line. A violation's label sits on its own line (0 lines here).
    fn label_rows(&self) -> Vec<(&SpaceMark, i32, i32)> {
        let mut marks: Vec<&SpaceMark> = self.chart.marks.iter().filter(|m| m.at_ms.is_finite()).collect();
        marks.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
        // A violation's red line crosses every lane: no label sits on it (a grant at the same
        // instant had its label struck through).
        let mut taken: Vec<(usize, i32)> = marks
            .iter()
            .filter(|m| m.kind == MarkKind::Violation)
            .flat_map(|m| {
                let yy = HEADER_PX + self.y(m.at_ms).round() as i32;
                (0..self.chart.lanes.len()).map(move |lane| (lane, yy))
            })
            .collect();
        let mut rows = Vec::with_capacity(marks.len());
        for m in marks {
            let yy = HEADER_PX + self.y(m.at_ms).round() as i32;
            if m.kind == MarkKind::Violation || m.lane >= self.chart.lanes.len() {
                rows.push((m, yy, 1));
                continue;
            }
            // The first free line at or below the mark.
            let lines = if m.clock.is_some() { 2 } else { 1 };
            let mut ly = yy;
            while taken.iter().any(|(l, ty)| *l == m.lane && (ty - ly).abs() < 12 * lines) {
                ly += 12;
            }
            taken.push((m.lane, ly));
            if lines == 2 {
                taken.push((m.lane, ly + 12));
            }
            rows.push((m, ly, lines));
        }
        rows
    }

    /// The y pixel (from the top of the lane area) of time `ms`: linear inside a shown stretch,
    /// proportional inside a break, clamped to the ends.
    fn y(&self, ms: f64) -> f64 {
        let Some(first) = self.pieces.first() else { return 0.0 };
        if !ms.is_finite() || ms <= first.start_ms {
            return first.top_px;
        }
        for p in &self.pieces {
            if ms <= p.end_ms {
                let len = p.end_ms - p.start_ms;
                let f = if len > 0.0 { (ms - p.start_ms) / len } else { 0.0 };
                return p.top_px + f * p.height_px;
            }
        }
        self.pieces.last().map_or(0.0, |p| p.top_px + p.height_px)
    }

    /// Whether `ms` is inside a shown stretch (not elided).
    fn visible(&self, ms: f64) -> bool {
        self.pieces.iter().any(|p| p.shown && ms >= p.start_ms && ms <= p.end_ms)
    }

    fn lane_x(&self, i: usize, width: i32) -> i32 {
        let n = self.chart.lanes.len().max(1) as i32;
        let left = GUTTER_PX + 40;
        let right = width - 200;
        if n == 1 {
            return (left + right) / 2;
        }
        left + (right - left) * i as i32 / (n - 1)
    }
}

impl Drawing for Spacetime<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH_PX, self.height)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let area = title_area(root, &self.chart.title)?;
        let area = legend_area(&area, &self.legend)?;
        let (w, h) = area.dim_in_pixel();
        let width = w as i32;
        if self.chart.lanes.is_empty() || self.pieces.is_empty() {
            return draw_note(&area, "nothing to draw", (0, 0), (width, h as i32));
        }
        let top = HEADER_PX;
        let y = |ms: f64| top + self.y(ms).round() as i32;
        let lanes = &self.chart.lanes;
        let xs: Vec<i32> = (0..lanes.len()).map(|i| self.lane_x(i, width)).collect();

        // Lane names, then the breaks (a grey band with its note) behind everything.
        let name_style = text_style(LABEL_SIZE_PX, &INK, HPos::Center, VPos::Center);
        let name_w = if lanes.len() > 1 { (xs[1] - xs[0] - 6).max(40) } else { 200 };
        for (x, name) in xs.iter().zip(lanes) {
            draw_text(&area, &fit_text(name, LABEL_SIZE_PX, name_w), (*x, HEADER_PX / 2), &name_style)?;
        }
        let note_style = text_style(NOTE_SIZE_PX, &MUTED, HPos::Center, VPos::Center);
        for (breaks, p) in self.pieces.iter().filter(|p| !p.shown).enumerate() {
            let (y0, y1) = (top + p.top_px.round() as i32, top + (p.top_px + p.height_px).round() as i32);
            area.draw(&Rectangle::new([(GUTTER_PX, y0 + 4), (width - 10, y1 - 4)], GRID.filled())).de()?;
            let note = self
                .chart
                .elided
                .get(breaks)
                .map_or_else(|| default_break_note(p.start_ms, p.end_ms), |e| e.note.clone());
            let note = fit_text(&format!("≈ {note} ≈"), NOTE_SIZE_PX, width - GUTTER_PX - 40);
            draw_text(&area, &note, ((GUTTER_PX + width) / 2, (y0 + y1) / 2), &note_style)?;
        }
        // Lanes: drawn through shown stretches, dashed across breaks.
        for &x in &xs {
            for p in &self.pieces {
                let (y0, y1) = (top + p.top_px.round() as i32, top + (p.top_px + p.height_px).round() as i32);
                if p.shown {
                    area.draw(&PathElement::new(vec![(x, y0), (x, y1)], LANE.stroke_width(1))).de()?;
                } else {
                    let mut yy = y0;
                    while yy < y1 {
                        let e = (yy + 4).min(y1);
                        area.draw(&PathElement::new(vec![(x, yy), (x, e)], LANE.stroke_width(1))).de()?;
                        yy += 8;
                    }
                }
            }
        }
        // Fault windows on their lanes (their start's mark names them).
        for win in &self.chart.windows {
            let Some(&x) = xs.get(win.lane) else { continue };
            let (y0, y1) = (y(win.span.start_ms), y(win.span.end_ms.max(win.span.start_ms)));
            area.draw(&Rectangle::new([(x - 12, y0), (x + 12, y1.max(y0 + 2))], FAULT.mix(0.3).filled())).de()?;
        }
        // Messages whose both ends are drawn to scale.
        let label_style = text_style(NOTE_SIZE_PX - 2.0, &ARROW, HPos::Center, VPos::Bottom);
        let drawn: Vec<&SpaceMessage> = self
            .chart
            .messages
            .iter()
            .filter(|m| m.from < xs.len() && m.to < xs.len() && m.from != m.to && self.visible(m.sent_ms))
            .filter(|m| m.arrive_ms.is_none_or(|a| self.visible(a)))
            .collect();
        for m in &drawn {
            let (x0, y0) = (xs[m.from], y(m.sent_ms));
            let (mut x1, mut y1) = (xs[m.to], m.arrive_ms.map_or(y0 + 10, y));
            if m.arrive_ms.is_none() {
                // Lost on the way: half-way across.
                x1 = (x0 + x1) / 2;
                y1 = y1.max(y0 + 6);
            }
            let color = if m.lost { LOST } else { ARROW };
            area.draw(&PathElement::new(vec![(x0, y0), (x1, y1)], color.mix(0.8).stroke_width(1))).de()?;
            if m.lost {
                area.draw(&Cross::new((x1, y1), 5, color.stroke_width(2))).de()?;
            } else {
                // An arrowhead: two short strokes back along the line.
                let (dx, dy) = (f64::from(x1 - x0), f64::from(y1 - y0));
                let len = (dx * dx + dy * dy).sqrt().max(1.0);
                let (ux, uy) = (dx / len, dy / len);
                let head = |s: f64| {
                    let (c, si) = (libm::cos(0.5), s * libm::sin(0.5));
                    let (rx, ry) = (ux * c - uy * si, uy * c + ux * si);
                    (x1 - (rx * 8.0).round() as i32, y1 - (ry * 8.0).round() as i32)
                };
                area.draw(&PathElement::new(vec![head(1.0), (x1, y1), head(-1.0)], color.stroke_width(1))).de()?;
            }
            if drawn.len() <= MAX_LABELLED && !m.label.is_empty() {
                let max = ((x1 - x0).abs() - 8).max(30);
                let label = fit_text(&m.label, NOTE_SIZE_PX - 2.0, max);
                draw_text(&area, &label, ((x0 + x1) / 2, (y0 + y1) / 2 - 2), &label_style)?;
            }
        }
        // Marks and their labels; labels at one spot stack downwards. True times in the gutter.
        let mut gutter_last = i32::MIN;
        let time_style = text_style(NOTE_SIZE_PX, &MUTED, HPos::Right, VPos::Center);
        for (m, ly, _) in self.label_rows() {
            let yy = y(m.at_ms);
            let color = mark_color(m.kind);
            if yy >= gutter_last + 13 {
                draw_text(&area, &format!("{} ms", fmt_ms(m.at_ms)), (GUTTER_PX - 6, yy), &time_style)?;
                gutter_last = yy;
            }
            if m.kind == MarkKind::Violation {
                let (x0, x1) = (xs[0] - 20, xs[xs.len() - 1] + 20);
                area.draw(&PathElement::new(vec![(x0, yy), (x1, yy)], VIOLATION.stroke_width(3))).de()?;
                let style = text_style(LABEL_SIZE_PX, &VIOLATION, HPos::Left, VPos::Center);
                draw_text(&area, &fit_text(&m.label, LABEL_SIZE_PX, width - x1 - 12), (x1 + 6, yy), &style)?;
                continue;
            }
            let Some(&x) = xs.get(m.lane) else { continue };
            area.draw(&Circle::new((x, yy), 5, color.filled())).de()?;
            // The label's line from label_rows: labels at one instant stack downwards.
            // A label may run over the next lane's line, not past the one after it.
            let room = match xs.get(m.lane + 2) {
                Some(x2) => x2 - x - 16,
                None => width - x - 12,
            };
            let style = text_style(NOTE_SIZE_PX, &color, HPos::Left, VPos::Center);
            draw_text(&area, &fit_text(&m.label, NOTE_SIZE_PX, room.max(60)), (x + 8, ly), &style)?;
            if let Some(clock) = &m.clock {
                let clock_style = text_style(NOTE_SIZE_PX - 1.0, &MUTED, HPos::Left, VPos::Center);
                draw_text(&area, &fit_text(clock, NOTE_SIZE_PX - 1.0, room.max(60)), (x + 8, ly + 12), &clock_style)?;
            }
        }
        Ok(())
    }
}

/// Draws the space-time diagram into `DIR/NAME.svg` and `DIR/NAME.png`.
pub fn spacetime_chart(dir: &Path, name: &str, chart: &SpacetimeChart) -> Result<ChartFiles, ChartError> {
    render(dir, name, &Spacetime::new(chart))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breaks_take_a_fixed_height_and_times_map_in_order() {
        let chart = SpacetimeChart {
            lanes: vec!["a".into(), "b".into()],
            shown: vec![Span::new(0.0, 10.0), Span::new(40_000.0, 40_010.0)],
            ..SpacetimeChart::default()
        };
        let s = Spacetime::new(&chart);
        assert_eq!(s.pieces.len(), 3);
        assert!(!s.pieces[1].shown);
        assert_eq!(s.pieces[1].height_px, BREAK_PX);
        // Equal shown lengths get equal heights, whatever the break in between.
        assert_eq!(s.pieces[0].height_px, s.pieces[2].height_px);
        let ys: Vec<f64> = [0.0, 5.0, 10.0, 20_000.0, 40_000.0, 40_010.0].iter().map(|&t| s.y(t)).collect();
        assert!(ys.windows(2).all(|w| w[0] < w[1]), "{ys:?}");
        assert!(s.visible(5.0) && !s.visible(20_000.0));
        assert_eq!(fmt_ms(42_001.394_331), "42 001.394");
    }

    /// Labels stacked at the last instant (a release, a lost connection, a resume, each with its
    /// wall clock) fit in the image: it grows to hold them instead of clipping them at the
    /// bottom edge (issue 37).
    #[test]
    fn labels_stacked_at_the_end_fit_in_the_image() {
        let mark = |label: &str| SpaceMark {
            lane: 0,
            at_ms: 100.0,
            kind: MarkKind::Grant,
            label: label.into(),
            clock: Some("wall 100 ms".into()),
        };
        let chart = |n: usize| SpacetimeChart {
            lanes: vec!["client-1".into(), "server-0".into()],
            shown: vec![Span::new(0.0, 100.0)],
            marks: (0..n).map(|i| mark(&format!("event {i}"))).collect(),
            ..SpacetimeChart::default()
        };
        let (one, many) = (chart(1), chart(12));
        let (one, many) = (Spacetime::new(&one), Spacetime::new(&many));
        let above = 44 + legend_height(&many.legend, WIDTH_PX) as i32;
        let lowest = many.label_rows().iter().map(|(_, ly, lines)| ly + 12 * (lines - 1) + 6).max().unwrap();
        assert!(
            above + lowest < many.height as i32,
            "label bottom {} past the image's {}",
            above + lowest,
            many.height
        );
        assert!(many.height > one.height, "{} {}", many.height, one.height);
    }

    /// A label at the instant of a violation goes below its red line, not through it.
    #[test]
    fn no_label_sits_on_a_violations_line() {
        let at = |kind, label: &str| SpaceMark { lane: 1, at_ms: 50.0, kind, label: label.into(), clock: None };
        let chart = SpacetimeChart {
            lanes: vec!["client-2".into(), "client-1".into()],
            shown: vec![Span::new(0.0, 100.0)],
            marks: vec![at(MarkKind::Grant, "granted, token 7"), at(MarkKind::Violation, "overlap")],
            ..SpacetimeChart::default()
        };
        let s = Spacetime::new(&chart);
        let rows = s.label_rows();
        let line = rows.iter().find(|(m, _, _)| m.kind == MarkKind::Violation).unwrap().1;
        let grant = rows.iter().find(|(m, _, _)| m.kind == MarkKind::Grant).unwrap().1;
        assert!(grant >= line + 12, "the grant's label at {grant}, the red line at {line}");
    }
}
