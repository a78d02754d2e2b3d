//! Coalescing timeline spans in pixel space.
//!
//! A 60 s run with millisecond holds has thousands of spans per lane and the plot has under a
//! thousand pixel columns. Spans are therefore reduced to pixel columns first: each column of a
//! lane gets one state (holding beats waiting beats idle, so a short hold is never lost; between
//! exclusive and shared holds the one held longer in that column wins), and each run of equal
//! columns becomes one rectangle. Spans narrower than a pixel, or closer than a pixel to the next,
//! merge; what is left is at least a pixel wide; and the number of rectangles is bounded by the
//! number of state changes across the columns, not by the number of spans.

/// A column's coverage by a span, in axis units, for a span of zero width.
const INSTANT_WEIGHT: f64 = 1e-9;

/// The pixel grid of a time axis: `cols` columns of `px` axis units each from 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Columns {
    /// Number of columns (the plot's width in pixels, at least 1).
    pub cols: usize,
    /// Width of a column, in axis units.
    pub px: f64,
}

impl Columns {
    /// The grid for an axis `length` units long drawn `width_px` pixels wide.
    pub(crate) fn new(length: f64, width_px: usize) -> Self {
        let cols = width_px.max(1);
        Self { cols, px: length / cols as f64 }
    }

    /// The axis length.
    fn length(&self) -> f64 {
        self.px * self.cols as f64
    }

    /// The span `(start, end)` cleaned up (non-finite dropped, reversed made an instant at its
    /// start, clamped to the axis), with the first and last column it touches.
    fn touch(&self, (s, e): (f64, f64)) -> Option<(f64, f64, usize, usize)> {
        if !(s.is_finite() && e.is_finite() && self.px > 0.0) {
            return None;
        }
        let length = self.length();
        let s = s.clamp(0.0, length);
        let e = e.clamp(s, length);
        let last = self.cols - 1;
        let c0 = ((s / self.px).floor() as usize).min(last);
        // A span ending exactly on a column boundary does not touch the next column.
        let c1 = if e > s { ((e / self.px).ceil() as usize).saturating_sub(1) } else { c0 };
        Some((s, e, c0, c1.clamp(c0, last)))
    }

    /// The start, in axis units, of column `c`.
    pub(crate) fn x(&self, c: usize) -> f64 {
        c as f64 * self.px
    }

    /// Adds, for each span, the time it covers in each column to `acc`.
    fn accumulate(&self, spans: impl IntoIterator<Item = (f64, f64)>, acc: &mut [f64]) {
        for span in spans {
            if let Some((s, e, c0, c1)) = self.touch(span) {
                for (c, slot) in acc.iter_mut().enumerate().take(c1 + 1).skip(c0) {
                    let lo = s.max(self.x(c));
                    let hi = e.min(self.x(c + 1));
                    *slot += (hi - lo).max(0.0) + INSTANT_WEIGHT * self.px;
                }
            }
        }
    }

    /// The runs of columns that any of `spans` touches, as `[first, end)` column ranges.
    pub(crate) fn runs(&self, spans: impl IntoIterator<Item = (f64, f64)>) -> Vec<(usize, usize)> {
        let mut covered = vec![0.0; self.cols];
        self.accumulate(spans, &mut covered);
        runs_of(&covered.iter().map(|&t| t > 0.0).collect::<Vec<_>>())
            .into_iter()
            .filter(|r| r.0)
            .map(|r| (r.1, r.2))
            .collect()
    }

    /// One lane's state in each column.
    pub(crate) fn lane(
        &self,
        waiting: impl IntoIterator<Item = (f64, f64)>,
        exclusive: impl IntoIterator<Item = (f64, f64)>,
        shared: impl IntoIterator<Item = (f64, f64)>,
    ) -> Vec<LaneState> {
        let mut wait = vec![0.0; self.cols];
        let mut excl = vec![0.0; self.cols];
        let mut shar = vec![0.0; self.cols];
        self.accumulate(waiting, &mut wait);
        self.accumulate(exclusive, &mut excl);
        self.accumulate(shared, &mut shar);
        (0..self.cols)
            .map(|c| {
                if excl[c] > 0.0 || shar[c] > 0.0 {
                    if shar[c] > excl[c] {
                        LaneState::Shared
                    } else {
                        LaneState::Holding
                    }
                } else if wait[c] > 0.0 {
                    LaneState::Waiting
                } else {
                    LaneState::Idle
                }
            })
            .collect()
    }
}

/// What a lane shows in one pixel column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LaneState {
    /// Nothing.
    Idle,
    /// Waiting for the lock.
    Waiting,
    /// Holding it exclusively.
    Holding,
    /// Holding it shared.
    Shared,
}

/// The runs of equal values: `(value, first, end)` with `end` exclusive.
pub(crate) fn runs_of<T: PartialEq + Copy>(cells: &[T]) -> Vec<(T, usize, usize)> {
    let mut out: Vec<(T, usize, usize)> = Vec::new();
    for (i, &v) in cells.iter().enumerate() {
        match out.last_mut() {
            Some(run) if run.0 == v => run.2 = i + 1,
            _ => out.push((v, i, i + 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_what_is_closer_than_a_pixel() {
        let grid = Columns::new(100.0, 100);
        let spans = [(0.0, 1.0), (1.5, 2.0), (10.0, 10.0), (30.0, 20.0), (f64::NAN, 1.0), (95.0, 200.0)];
        assert_eq!(grid.runs(spans), vec![(0, 2), (10, 11), (30, 31), (95, 100)]);
        // Ten thousand spans a tenth of a pixel apart become one run.
        let dense = (0..10_000).map(|i| (f64::from(i) * 0.01, f64::from(i) * 0.01 + 0.005));
        assert_eq!(grid.runs(dense), vec![(0, 100)]);
        // An instant at the very end stays inside the axis.
        assert_eq!(grid.runs([(100.0, 100.0)]), vec![(99, 100)]);
        // Spans a few pixels apart stay apart.
        assert_eq!(grid.runs([(1.2, 1.3), (5.5, 7.0)]), vec![(1, 2), (5, 7)]);
    }

    #[test]
    fn lanes_keep_short_holds_and_pick_the_longer_hold_kind() {
        let grid = Columns::new(10.0, 10);
        let cells = grid.lane([(0.0, 5.0)], [(2.0, 2.0), (6.2, 6.9)], [(6.0, 6.5), (8.0, 9.0), (8.5, 8.6)]);
        use LaneState::*;
        assert_eq!(cells, vec![Waiting, Waiting, Holding, Waiting, Waiting, Idle, Holding, Idle, Shared, Idle]);
        assert_eq!(
            runs_of(&cells),
            vec![
                (Waiting, 0, 2),
                (Holding, 2, 3),
                (Waiting, 3, 5),
                (Idle, 5, 6),
                (Holding, 6, 7),
                (Idle, 7, 8),
                (Shared, 8, 9),
                (Idle, 9, 10)
            ]
        );
    }

    #[test]
    fn a_degenerate_grid_does_not_panic() {
        let grid = Columns::new(0.0, 0);
        assert_eq!(grid.runs([(0.0, 1.0)]), vec![]);
        let grid = Columns::new(1.0, 0);
        assert_eq!(grid.runs([(0.0, 1.0)]), vec![(0, 1)]);
    }
}
