//! The comparison chart of `sim compare --report`: one row per metric, each value as a ratio to
//! its simulated median on a log axis; a grey bar for the middle 95% of the simulated runs, a
//! dot per live run (green inside the bar, red outside). Ratios let metrics of different units
//! share one axis; a metric whose simulated median is 0 has no ratio and says so.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::layout::{
    draw_text, text_style, title_area, GRID, HATCH_BG, INK, LABEL_SIZE_PX, MUTED, NOTE_SIZE_PX, TICK_SIZE_PX, WIDTH_PX,
};
use crate::output::{render, ChartError, ChartFiles, DrawResult, Drawing, OrDrawErr};

/// One metric of one row, both sides.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareMetric {
    /// The metric's name.
    pub metric: String,
    /// The simulated median.
    pub sim_mid: f64,
    /// The low end of the middle 95% of simulated runs.
    pub sim_lo: f64,
    /// The high end.
    pub sim_hi: f64,
    /// Each live run's value.
    pub live: Vec<f64>,
    /// Whether every live run is inside the simulated range.
    pub inside: bool,
}

/// The chart of one row.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareChart {
    /// The title.
    pub title: String,
    /// The metrics, top to bottom.
    pub metrics: Vec<CompareMetric>,
}

const LEFT_PX: i32 = 240;
const RIGHT_PX: i32 = 40;
const ROW_PX: i32 = 34;
const RATIO_MIN: f64 = 0.1;
const RATIO_MAX: f64 = 10.0;
const GREEN: RGBColor = RGBColor(0x2E, 0x8B, 0x57);
const RED: RGBColor = RGBColor(0xD6, 0x27, 0x28);

impl CompareChart {
    fn x_px(&self, ratio: f64, width: i32) -> i32 {
        let r = ratio.clamp(RATIO_MIN, RATIO_MAX);
        let span = libm::log10(RATIO_MAX) - libm::log10(RATIO_MIN);
        let f = (libm::log10(r) - libm::log10(RATIO_MIN)) / span;
        LEFT_PX + (f * f64::from(width - LEFT_PX - RIGHT_PX)) as i32
    }
}

impl Drawing for CompareChart {
    fn size(&self) -> (u32, u32) {
        (WIDTH_PX, 44 + 30 + (self.metrics.len().max(1) as u32) * ROW_PX as u32 + 70)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let area = title_area(root, &self.title)?;
        let (w, _) = area.dim_in_pixel();
        let w = w as i32;
        let top = 20;
        let bottom = top + self.metrics.len().max(1) as i32 * ROW_PX;
        // Grid and ticks.
        for tick in [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0] {
            let x = self.x_px(tick, w);
            let color = if tick == 1.0 { INK } else { GRID };
            area.draw(&PathElement::new(vec![(x, top), (x, bottom)], color.stroke_width(1))).de()?;
            let label = if tick < 1.0 { format!("×{tick}") } else { format!("×{tick:.0}") };
            draw_text(&area, &label, (x, bottom + 12), &text_style(TICK_SIZE_PX, &MUTED, HPos::Center, VPos::Center))?;
        }
        draw_text(
            &area,
            "live and simulated values as a ratio to the simulated median (log axis; beyond ×0.1 or ×10 drawn at the edge)",
            (w / 2, bottom + 34),
            &text_style(NOTE_SIZE_PX, &MUTED, HPos::Center, VPos::Center),
        )?;
        draw_text(
            &area,
            "grey: middle 95% of the simulated runs · dot: one live run, green inside, red outside",
            (w / 2, bottom + 52),
            &text_style(NOTE_SIZE_PX, &MUTED, HPos::Center, VPos::Center),
        )?;
        for (i, m) in self.metrics.iter().enumerate() {
            let y = top + i as i32 * ROW_PX + ROW_PX / 2;
            draw_text(
                &area,
                &m.metric,
                (LEFT_PX - 10, y),
                &text_style(LABEL_SIZE_PX, &INK, HPos::Right, VPos::Center),
            )?;
            if !(m.sim_mid > 0.0 && m.sim_mid.is_finite()) {
                draw_text(
                    &area,
                    "simulated median 0: no ratio (see the table)",
                    (self.x_px(1.0, w), y),
                    &text_style(NOTE_SIZE_PX, &MUTED, HPos::Center, VPos::Center),
                )?;
                continue;
            }
            let (x0, x1) = (self.x_px(m.sim_lo / m.sim_mid, w), self.x_px(m.sim_hi / m.sim_mid, w));
            area.draw(&Rectangle::new([(x0.min(x1 - 2), y - 7), (x1.max(x0 + 2), y + 7)], HATCH_BG.filled())).de()?;
            for v in &m.live {
                let inside = *v >= m.sim_lo - 1e-9 && *v <= m.sim_hi + 1e-9;
                let color = if inside { GREEN } else { RED };
                area.draw(&Circle::new((self.x_px(v / m.sim_mid, w), y), 5, color.filled())).de()?;
            }
        }
        Ok(())
    }
}

/// Draws one row's comparison into `NAME.svg` and `NAME.png` in `dir`.
pub fn compare_chart(dir: &Path, name: &str, chart: &CompareChart) -> Result<ChartFiles, ChartError> {
    render(dir, name, chart)
}
