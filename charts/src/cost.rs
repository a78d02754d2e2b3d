//! The cost chart: two bar panels side by side, messages per acquisition and wake-ups
//! (notifications) per release, with "n/a" (never 0) where a value is missing.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::bars::{draw_hbar_panel, hbar_height, BarRow, HBarPanel};
use crate::data::AlgorithmChartData;
use crate::layout::{title_area, WIDTH_PX};
use crate::output::{render, ChartError, ChartFiles, DrawResult, Drawing};

/// The cost chart.
struct Cost<'a> {
    title: &'a str,
    messages: Vec<BarRow>,
    wakeups: Vec<BarRow>,
}

impl Drawing for Cost<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH_PX, hbar_height(self.messages.len(), true))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let area = title_area(root, self.title)?;
        let (w, _) = area.dim_in_pixel();
        let (left, right) = area.split_horizontally(w / 2);
        let messages = HBarPanel {
            caption: Some("messages per acquisition"),
            x_desc: "messages / acquisition",
            rows: &self.messages,
        };
        draw_hbar_panel(root, &left, &messages)?;
        let wakeups = HBarPanel {
            caption: Some("wake-ups per release"),
            x_desc: "notifications delivered / release",
            rows: &self.wakeups,
        };
        draw_hbar_panel(root, &right, &wakeups)
    }
}

/// Draws the cost of each algorithm in two panels side by side: messages sent per successful
/// acquisition, and watch or pub/sub wake-ups delivered per release (the herd effect). A missing
/// value is written "n/a", not drawn as 0.
pub fn cost_chart(dir: &Path, name: &str, title: &str, algs: &[AlgorithmChartData]) -> Result<ChartFiles, ChartError> {
    let chart = Cost {
        title,
        messages: BarRow::from_algs(algs, |a| a.messages_per_acquisition),
        wakeups: BarRow::from_algs(algs, |a| a.notifications_per_release),
    };
    render(dir, name, &chart)
}
