//! The timeline chart: one panel per algorithm, stacked on one shared time axis; in each, a lane
//! per client (waiting thin and light, holding solid, shared holds in another shade), fault
//! windows shaded across the panel with labels, instants (clock steps) as vertical lines, and
//! overlaps in red on the two clients' lanes, linked (in the SVG) to the explanation of the
//! row's first violation.
//!
//! A 60 s run with millisecond holds has thousands of spans per lane, far more than the plot has
//! pixels, so spans are coalesced in pixel space before drawing (see `raster`): the SVG stays
//! small and the picture is the same.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::data::{Span, TimelineChart, TimelinePanel};
use crate::font::{fit_text, text_width, FAMILY};
use crate::layout::{
    draw_note, draw_text, fmt_sig, legend_area, legend_height, linear_ticks, text_style, title_area, Axis, LegendItem,
    Swatch, AXIS_DESC_SIZE_PX, GRID, INK, LABEL_SIZE_PX, NOTE_SIZE_PX, TICK_SIZE_PX, WIDTH_PX,
};
use crate::output::{render, ChartError, ChartFiles, DrawResult, Drawing, OrDrawErr};
use crate::raster::{runs_of, Columns, LaneState};

/// The image never gets taller than this (lanes get thinner instead), unless even one-pixel lanes
/// would not fit.
pub const MAX_HEIGHT_PX: u32 = 2400;
/// A lane's height when there is room, px.
const ROW_PX: f64 = 18.0;
/// The thinnest lane, px.
const MIN_ROW_PX: f64 = 1.0;
/// The smallest lane area of a panel, px.
const MIN_LANES_PX: u32 = 24;
/// The panel header (label and seed), px.
const HEADER_PX: u32 = 26;
/// The band above the lanes where fault labels go, px (when the panel has faults).
const BAND_PX: u32 = 34;
/// One line of fault labels in the band, px.
const BAND_LINE_PX: i32 = 15;
/// The band when the panel has no faults, px.
const NO_BAND_PX: u32 = 6;
/// Space between panels, px.
const GAP_PX: u32 = 12;
/// The time axis under the last panel, px.
const X_AXIS_PX: u32 = 50;
/// Space below everything, px.
const BOTTOM_PX: u32 = 10;
/// Title height, px (see [`title_area`]).
const TITLE_PX: u32 = 44;

/// Waiting for the lock.
const WAITING: RGBColor = RGBColor(0xA6, 0xCE, 0xE3);
/// Holding it exclusively.
const HOLDING: RGBColor = RGBColor(0x1F, 0x4E, 0x99);
/// Holding it shared.
const SHARED: RGBColor = RGBColor(0x4A, 0xA8, 0x4A);
/// Two holders at once.
const OVERLAP: RGBColor = RGBColor(0xD6, 0x27, 0x28);
/// Alternate lane background.
const LANE_BG: RGBColor = RGBColor(0xF5, 0xF5, 0xF5);
/// Panel border.
const BORDER: RGBColor = RGBColor(0xAA, 0xAA, 0xAA);

/// Known fault kinds: kind, how the label names it, colour. Legend entries follow this order.
const FAULT_KINDS: [(&str, &str, RGBColor); 10] = [
    ("crash (process)", "process killed", RGBColor(0x50, 0x50, 0x50)),
    ("crash (machine)", "host down", RGBColor(0x20, 0x20, 0x20)),
    // Results written before crashes had a mode.
    ("crash", "crash", RGBColor(0x50, 0x50, 0x50)),
    ("pause", "pause", RGBColor(0xFF, 0x7F, 0x0E)),
    ("partition", "partition", RGBColor(0x94, 0x67, 0xBD)),
    ("isolate", "isolate", RGBColor(0xE3, 0x77, 0xC2)),
    ("clock_jump", "clock step", RGBColor(0x17, 0xBE, 0xCF)),
    ("clock_drift", "clock drift", RGBColor(0x1F, 0x9E, 0x89)),
    ("slow", "slow network", RGBColor(0xBC, 0xBD, 0x22)),
    ("loss", "message loss", RGBColor(0x8C, 0x56, 0x4B)),
];
/// Colours for fault kinds not in [`FAULT_KINDS`], given in the kinds' alphabetical order.
const OTHER_FAULT_COLORS: [RGBColor; 4] =
    [RGBColor(0x7F, 0x7F, 0x7F), RGBColor(0xB8, 0x86, 0x0B), RGBColor(0x00, 0x80, 0x80), RGBColor(0x80, 0x00, 0x80)];

/// The fault kind's label and colour.
fn fault_style(kind: &str, others: &[&str]) -> (String, RGBColor) {
    if let Some((_, label, color)) = FAULT_KINDS.iter().find(|(k, _, _)| *k == kind) {
        return (label.to_string(), *color);
    }
    let i = others.iter().position(|k| *k == kind).unwrap_or(0);
    (kind.replace('_', " "), OTHER_FAULT_COLORS[i % OTHER_FAULT_COLORS.len()])
}

/// How high one panel is.
#[derive(Debug, Clone, Copy)]
struct PanelLayout {
    /// Lanes drawn (at least 1, for the "no clients" note).
    rows: usize,
    /// Height of the lane area, px.
    lanes_px: u32,
    /// Height of the fault-label band above the lanes, px.
    band_px: u32,
}

impl PanelLayout {
    fn height(&self, last: bool) -> u32 {
        HEADER_PX + self.band_px + self.lanes_px + if last { X_AXIS_PX } else { GAP_PX }
    }
}

/// The timeline chart with its layout worked out.
struct Timeline<'a> {
    chart: &'a TimelineChart,
    /// Axis length in axis units.
    length: f64,
    /// Axis units per ms.
    scale: f64,
    /// The time axis description.
    x_desc: &'static str,
    legend: Vec<LegendItem>,
    /// Unknown fault kinds, sorted.
    other_kinds: Vec<&'a str>,
    panels: Vec<PanelLayout>,
    /// Width of the lane-name column, px.
    label_w: u32,
    height: u32,
    /// Overlap rectangles each panel drew, in drawing order (filled while drawing; read by
    /// [`Drawing::finish_svg`] to wrap each panel's in its link).
    overlap_rects: RefCell<Vec<usize>>,
}

impl<'a> Timeline<'a> {
    fn new(chart: &'a TimelineChart) -> Self {
        let all_spans = chart.panels.iter().flat_map(|p| {
            p.lanes
                .iter()
                .flat_map(|l| l.waiting.iter().copied().chain(l.holding.iter().map(|h| h.span)))
                .chain(p.faults.iter().map(|f| f.span))
                .chain(p.overlaps.iter().copied())
        });
        let duration = if chart.duration_ms.is_finite() && chart.duration_ms > 0.0 {
            chart.duration_ms
        } else {
            all_spans.flat_map(|s| [s.start_ms, s.end_ms]).filter(|v| v.is_finite()).fold(0.0, f64::max)
        };
        let duration = if duration > 0.0 { duration } else { 1.0 };
        let (scale, x_desc) = if duration >= 2000.0 { (1e-3, "time (s)") } else { (1.0, "time (ms)") };

        let kinds: BTreeSet<&str> =
            chart.panels.iter().flat_map(|p| p.faults.iter().map(|f| f.kind.as_str())).collect();
        let other_kinds: Vec<&str> =
            kinds.iter().copied().filter(|k| !FAULT_KINDS.iter().any(|(known, _, _)| known == k)).collect();
        let mut legend = vec![
            LegendItem::new(Swatch::Thin(WAITING), "waiting"),
            LegendItem::new(Swatch::Fill(HOLDING.to_rgba()), "holding"),
        ];
        if chart.panels.iter().flat_map(|p| &p.lanes).flat_map(|l| &l.holding).any(|h| h.shared) {
            legend.push(LegendItem::new(Swatch::Fill(SHARED.to_rgba()), "holding (shared)"));
        }
        legend.push(LegendItem::new(Swatch::Fill(OVERLAP.mix(0.45)), "overlap (two holders)"));
        let ordered_kinds =
            FAULT_KINDS.iter().map(|(k, _, _)| *k).filter(|k| kinds.contains(k)).chain(other_kinds.iter().copied());
        for kind in ordered_kinds {
            let (label, color) = fault_style(kind, &other_kinds);
            let faults = chart.panels.iter().flat_map(|p| &p.faults).filter(|f| f.kind == kind);
            let windows = faults.clone().any(|f| f.span.end_ms > f.span.start_ms);
            let swatch = if windows { Swatch::Fill(color.mix(0.3)) } else { Swatch::VLine(color) };
            legend.push(LegendItem::new(swatch, label));
        }

        let label_w = chart
            .panels
            .iter()
            .flat_map(|p| &p.lanes)
            .map(|l| text_width(&l.name, LABEL_SIZE_PX - 1.0))
            .max()
            .unwrap_or(0)
            .saturating_add(18)
            .clamp(70, 240) as u32;

        let n = chart.panels.len();
        let band = |p: &TimelinePanel| if p.faults.is_empty() { NO_BAND_PX } else { BAND_PX };
        let fixed = TITLE_PX
            + legend_height(&legend, WIDTH_PX)
            + BOTTOM_PX
            + chart
                .panels
                .iter()
                .enumerate()
                .map(|(i, p)| PanelLayout { rows: 1, lanes_px: 0, band_px: band(p) }.height(i + 1 == n))
                .sum::<u32>();
        let total_rows: usize = chart.panels.iter().map(|p| p.lanes.len().max(1)).sum();
        let row_px =
            (f64::from(MAX_HEIGHT_PX.saturating_sub(fixed)) / total_rows.max(1) as f64).clamp(MIN_ROW_PX, ROW_PX);
        let panels: Vec<PanelLayout> = chart
            .panels
            .iter()
            .map(|p| {
                let rows = p.lanes.len().max(1);
                let lanes_px = ((rows as f64 * row_px).floor() as u32).max(MIN_LANES_PX);
                PanelLayout { rows, lanes_px, band_px: band(p) }
            })
            .collect();
        let height =
            if panels.is_empty() { fixed + 200 } else { fixed + panels.iter().map(|p| p.lanes_px).sum::<u32>() };
        Self {
            chart,
            length: duration * scale,
            scale,
            x_desc,
            legend,
            other_kinds,
            panels,
            label_w,
            height,
            overlap_rects: RefCell::new(Vec::new()),
        }
    }

    /// `span` in axis units.
    fn units(&self, span: &Span) -> (f64, f64) {
        (span.start_ms * self.scale, span.end_ms * self.scale)
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        area: &DrawingArea<DB, Shift>,
        panel: &TimelinePanel,
        layout: &PanelLayout,
        last: bool,
    ) -> DrawResult {
        let (area_w, _) = area.dim_in_pixel();
        let header = format!("{} (seed {})", panel.label, panel.seed);
        let header = fit_text(&header, LABEL_SIZE_PX + 1.0, area_w as i32 - 20);
        draw_text(
            area,
            &header,
            (10, HEADER_PX as i32 / 2 + 2),
            &text_style(LABEL_SIZE_PX + 1.0, &INK, HPos::Left, VPos::Center),
        )?;
        let chart_area = area.split_vertically(HEADER_PX).1;
        let chart_area =
            if last { chart_area } else { chart_area.split_vertically(layout.band_px + layout.lanes_px).0 };

        let rows = layout.rows as f64;
        let row_px = f64::from(layout.lanes_px) / rows;
        let y_top = rows + f64::from(layout.band_px) / row_px;
        let mut builder = ChartBuilder::on(&chart_area);
        builder.margin_left(10).margin_right(24).margin_top(0).margin_bottom(0).y_label_area_size(self.label_w);
        if last {
            builder.x_label_area_size(X_AXIS_PX);
        }
        let mut chart = builder
            .build_cartesian_2d(
                Axis::linear(0.0, self.length, linear_ticks(0.0, self.length, 12)),
                Axis::linear(0.0, y_top, vec![]),
            )
            .de()?;
        let mut mesh = chart.configure_mesh();
        mesh.disable_y_mesh()
            .bold_line_style(GRID)
            .axis_style(INK)
            .axis_desc_style((FAMILY, AXIS_DESC_SIZE_PX))
            .label_style((FAMILY, TICK_SIZE_PX))
            .x_label_formatter(&|v| fmt_sig(*v, 4));
        if last {
            mesh.x_desc(self.x_desc);
        }
        mesh.draw().de()?;

        let (px_range, py_range) = chart.plotting_area().get_pixel_range();
        // One column per pixel as the chart maps x (its last pixel is the axis end).
        let width_px = chart.backend_coord(&(self.length, 0.0)).0 - chart.backend_coord(&(0.0, 0.0)).0;
        let grid = Columns::new(self.length, width_px.max(1) as usize);
        let length = self.length;
        let lane_y = |i: usize| rows - i as f64 - 0.5;
        // A run of columns `[a, b)` as x coordinates, at least `min` columns wide.
        let xs = |(a, b): (usize, usize), min: usize| {
            let b = b.max(a + min).min(grid.cols);
            (grid.x(b.saturating_sub(min).min(a)), grid.x(b))
        };

        // Lane backgrounds, faults behind everything else.
        let backgrounds = (0..panel.lanes.len())
            .filter(|i| i % 2 == 1)
            .map(|i| Rectangle::new([(0.0, lane_y(i) - 0.5), (length, lane_y(i) + 0.5)], LANE_BG.filled()));
        chart.draw_series(backgrounds).de()?;
        let kinds: BTreeSet<&str> = panel.faults.iter().map(|f| f.kind.as_str()).collect();
        for kind in &kinds {
            let (_, color) = fault_style(kind, &self.other_kinds);
            let windows = panel.faults.iter().filter(|f| f.kind == *kind && f.span.end_ms > f.span.start_ms);
            let runs = grid.runs(windows.map(|f| self.units(&f.span)));
            let rects = runs.into_iter().map(|run| {
                let (s, e) = xs(run, 2);
                Rectangle::new([(s, 0.0), (e, y_top)], color.mix(0.2).filled())
            });
            chart.draw_series(rects).de()?;
        }

        // Each lane: one rectangle per run of pixel columns in the same state.
        for (i, lane) in panel.lanes.iter().enumerate() {
            let y = lane_y(i);
            let cells = grid.lane(
                lane.waiting.iter().map(|s| self.units(s)),
                lane.holding.iter().filter(|h| !h.shared).map(|h| self.units(&h.span)),
                lane.holding.iter().filter(|h| h.shared).map(|h| self.units(&h.span)),
            );
            let rects = runs_of(&cells).into_iter().filter_map(|(state, a, b)| {
                let (half, color) = match state {
                    LaneState::Idle => return None,
                    LaneState::Waiting => (0.17, WAITING),
                    LaneState::Holding => (0.36, HOLDING),
                    LaneState::Shared => (0.36, SHARED),
                };
                let (s, e) = xs((a, b), 1);
                Some(Rectangle::new([(s, y - half), (e, y + half)], color.filled()))
            });
            chart.draw_series(rects).de()?;
        }

        // Overlaps on the two clients' lanes when the data says which (else across the panel);
        // how many rectangles each panel drew is kept so the SVG can wrap them in its link.
        let mut overlap_rects = Vec::new();
        if !panel.overlaps.is_empty() && panel.overlap_lanes.len() == panel.overlaps.len() {
            for lane in 0..panel.lanes.len() {
                let spans = panel
                    .overlaps
                    .iter()
                    .zip(&panel.overlap_lanes)
                    .filter(|(_, lanes)| lanes.contains(&lane))
                    .map(|(s, _)| self.units(s));
                let y = lane_y(lane);
                overlap_rects.extend(grid.runs(spans).into_iter().map(|run| {
                    let (s, e) = xs(run, 2);
                    Rectangle::new([(s, y - 0.5), (e, y + 0.5)], OVERLAP.mix(0.45).filled())
                }));
            }
        } else {
            overlap_rects.extend(grid.runs(panel.overlaps.iter().map(|s| self.units(s))).into_iter().map(|run| {
                let (s, e) = xs(run, 2);
                Rectangle::new([(s, 0.0), (e, y_top)], OVERLAP.mix(0.45).filled())
            }));
        }
        self.overlap_rects.borrow_mut().push(overlap_rects.len());
        chart.draw_series(overlap_rects).de()?;

        // Instants (clock steps) as vertical lines, then all fault labels in the band.
        for fault in panel.faults.iter().filter(|f| f.span.end_ms <= f.span.start_ms && f.span.start_ms.is_finite()) {
            let (_, color) = fault_style(&fault.kind, &self.other_kinds);
            let x = (fault.span.start_ms * self.scale).clamp(0.0, length);
            chart
                .draw_series(std::iter::once(PathElement::new(vec![(x, 0.0), (x, y_top)], color.stroke_width(2))))
                .de()?;
        }
        self.draw_fault_labels(root, &chart, panel, py_range.start)?;

        root.draw(&Rectangle::new(
            [(px_range.start, py_range.start), (px_range.end, py_range.end)],
            BORDER.stroke_width(1),
        ))
        .de()?;

        // Lane names; with thin lanes, every k-th only.
        let label_size = (LABEL_SIZE_PX - 1.0).min(row_px * 0.85);
        let every = if row_px >= 8.0 { 1 } else { (9.0 / row_px).ceil() as usize };
        let style = text_style(label_size.max(7.0), &INK, HPos::Right, VPos::Center);
        for (i, lane) in panel.lanes.iter().enumerate().filter(|(i, _)| i % every == 0) {
            let (x, y) = chart.backend_coord(&(0.0, lane_y(i)));
            let name = fit_text(&lane.name, label_size.max(7.0), self.label_w as i32 - 14);
            draw_text(root, &name, (x - 8, y), &style)?;
        }
        if panel.lanes.is_empty() {
            let (_, top) = chart.backend_coord(&(0.0, rows));
            draw_note(root, "no clients", (px_range.start, top), (px_range.end, py_range.end))?;
        }
        Ok(())
    }

    /// Labels each fault at the top of its window, on the first line of the band where it does
    /// not run into another label; a label that fits nowhere is left out (the legend still gives
    /// the colour).
    fn draw_fault_labels<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        chart: &ChartContext<'_, DB, Cartesian2d<Axis, Axis>>,
        panel: &TimelinePanel,
        band_top: i32,
    ) -> DrawResult {
        let (px_range, _) = chart.plotting_area().get_pixel_range();
        let lines = (BAND_PX as i32 - 4) / BAND_LINE_PX;
        let mut line_end = vec![i32::MIN; lines.max(1) as usize];
        let mut faults: Vec<_> = panel.faults.iter().filter(|f| f.span.start_ms.is_finite()).collect();
        faults.sort_by(|a, b| a.span.start_ms.total_cmp(&b.span.start_ms));
        for fault in faults {
            let (label, color) = fault_style(&fault.kind, &self.other_kinds);
            let text =
                if fault.targets.trim().is_empty() { label } else { format!("{label} {}", fault.targets.trim()) };
            let text = fit_text(&text, NOTE_SIZE_PX, 260);
            let w = text_width(&text, NOTE_SIZE_PX);
            let x = (fault.span.start_ms * self.scale).clamp(0.0, self.length);
            let (px, _) = chart.backend_coord(&(x, 0.0));
            let left = (px + 3).min(px_range.end - w - 2).max(px_range.start + 2);
            if let Some(line) = line_end.iter().position(|end| left >= end + 8) {
                line_end[line] = left + w;
                let y = band_top + 3 + line as i32 * BAND_LINE_PX;
                let ink = RGBColor(color.0 / 2, color.1 / 2, color.2 / 2);
                draw_text(root, &text, (left, y), &text_style(NOTE_SIZE_PX, &ink, HPos::Left, VPos::Top))?;
            }
        }
        Ok(())
    }
}

impl Drawing for Timeline<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH_PX, self.height)
    }

    fn finish_svg(&self, svg: String) -> String {
        self.link_overlaps(svg)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        self.overlap_rects.borrow_mut().clear();
        let area = title_area(root, &self.chart.title)?;
        let mut area = legend_area(&area, &self.legend)?;
        if self.panels.is_empty() {
            let (w, h) = area.dim_in_pixel();
            return draw_note(&area, "no runs to show", (0, 0), (w as i32, h as i32));
        }
        let n = self.panels.len();
        for (i, (panel, layout)) in self.chart.panels.iter().zip(&self.panels).enumerate() {
            let last = i + 1 == n;
            let (this, rest) = area.split_vertically(layout.height(last));
            self.draw_panel(root, &this, panel, layout, last)?;
            area = rest;
        }
        Ok(())
    }
}

/// The legend's overlap swatch and every overlap rectangle, as the SVG backend writes them.
const OVERLAP_ATTRS: [&str; 2] = ["opacity=\"0.45\"", "fill=\"#D62728\""];

impl Timeline<'_> {
    /// Wraps each panel's overlap rectangles in an `<a>` to the panel's `overlap_link`. The
    /// rectangles are found in drawing order: the legend's swatch first, then each panel's, as
    /// many as it recorded drawing.
    fn link_overlaps(&self, svg: String) -> String {
        if self.chart.panels.iter().all(|p| p.overlap_link.is_none()) {
            return svg;
        }
        let counts = self.overlap_rects.borrow();
        // The link of the n-th overlap rectangle (counting the legend's as none).
        let mut links: Vec<Option<&str>> = vec![None];
        for (panel, &n) in self.chart.panels.iter().zip(counts.iter()) {
            links.extend(std::iter::repeat_n(panel.overlap_link.as_deref(), n));
        }
        let mut out = String::with_capacity(svg.len() + 64 * links.len());
        let mut rest = svg.as_str();
        let mut n = 0;
        while let Some(start) = rest.find("<rect") {
            let Some(len) = rest[start..].find("/>").map(|e| e + 2) else { break };
            let element = &rest[start..start + len];
            out.push_str(&rest[..start]);
            if OVERLAP_ATTRS.iter().all(|a| element.contains(a)) {
                match links.get(n).copied().flatten() {
                    Some(href) => out.push_str(&format!(
                        "<a href=\"{}\"><title>two holders at once: see the explanation of this row's first \
                         violation</title>{element}</a>",
                        xml_escape(href)
                    )),
                    None => out.push_str(element),
                }
                n += 1;
            } else {
                out.push_str(element);
            }
            rest = &rest[start + len..];
        }
        out.push_str(rest);
        out
    }
}

/// Escapes text for an XML attribute value.
fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Draws the timelines of several algorithms' runs, one panel per algorithm stacked on one shared
/// time axis (seconds from 2 s up, else ms). Each client is a lane: waiting thin and light,
/// holding solid (shared holds in another shade). Fault windows are shaded across the panel and
/// labelled (pause, crash, partition, clock step, …), instants are vertical lines, overlaps are
/// red. Lanes get thinner rather than the image taller than [`MAX_HEIGHT_PX`].
pub fn timeline_chart(dir: &Path, name: &str, chart: &TimelineChart) -> Result<ChartFiles, ChartError> {
    render(dir, name, &Timeline::new(chart))
}
