//! Writing a chart: the same drawing code runs once on plotters' SVG backend and once on its
//! bitmap backend, giving `NAME.svg` and `NAME.png` side by side, and every failure becomes a
//! [`ChartError`] that names the file.

use std::fmt::Display;
use std::fs;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::atomic::{commit_partial, partial_path, write_atomic};
use crate::font;
use crate::glyphs::TextFix;

/// The two files a chart was written to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartFiles {
    /// `DIR/NAME.svg`: the vector chart (text as `<text>`, font family `sans-serif`).
    pub svg: PathBuf,
    /// `DIR/NAME.png`: the same chart rasterised with the shipped font.
    pub png: PathBuf,
}

/// Why a chart could not be written.
#[derive(thiserror::Error, Debug)]
pub enum ChartError {
    /// The chart name is not a plain file name (empty, or with a path separator, or `.`/`..`).
    #[error("invalid chart name {name:?}: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The output directory could not be created.
    #[error("cannot create directory {}: {source}", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {}: {reason}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The underlying error, as text.
        reason: String,
    },
    /// plotters failed while drawing the chart.
    #[error("drawing {} failed: {reason}", path.display())]
    Draw {
        /// The file being drawn.
        path: PathBuf,
        /// The underlying error, as text.
        reason: String,
    },
    /// The embedded font could not be registered (nothing can be drawn without it).
    #[error("cannot draw {}: {reason}", path.display())]
    Font {
        /// The file that was to be drawn.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// The result of a drawing step; the error is the backend's error as text (backend error types
/// are generic and not `'static`, so they cannot be boxed).
pub(crate) type DrawResult<T = ()> = Result<T, String>;

/// Turns any displayable error into a drawing error.
pub(crate) trait OrDrawErr<T> {
    /// `map_err(to_string)`.
    fn de(self) -> DrawResult<T>;
}

impl<T, E: Display> OrDrawErr<T> for Result<T, E> {
    fn de(self) -> DrawResult<T> {
        self.map_err(|e| e.to_string())
    }
}

/// A chart ready to be drawn on any backend.
pub(crate) trait Drawing {
    /// The image size in pixels, `(width, height)`.
    fn size(&self) -> (u32, u32);
    /// Draws the whole chart on `root`, the full image (white background already filled).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult;
    /// The SVG text as drawn, changed before it is written (links, which plotters cannot draw);
    /// by default unchanged.
    fn finish_svg(&self, svg: String) -> String {
        svg
    }
}

/// Checks that `name` can be used as a file stem inside the output directory.
fn check_name(name: &str) -> Result<(), ChartError> {
    let bad = |reason| Err(ChartError::InvalidName { name: name.to_string(), reason });
    if name.is_empty() {
        return bad("it is empty");
    }
    if name == "." || name == ".." {
        return bad("it is not a file name");
    }
    if name.contains(['/', '\\', '\0']) {
        return bad("it contains a path separator");
    }
    Ok(())
}

/// Draws `chart` into `DIR/NAME.svg` and `DIR/NAME.png`, creating `dir` if needed.
pub(crate) fn render(dir: &Path, name: &str, chart: &impl Drawing) -> Result<ChartFiles, ChartError> {
    check_name(name)?;
    let svg = dir.join(format!("{name}.svg"));
    let png = dir.join(format!("{name}.png"));
    font::ensure_registered().map_err(|reason| ChartError::Font { path: svg.clone(), reason })?;
    fs::create_dir_all(dir).map_err(|source| ChartError::CreateDir { dir: dir.to_path_buf(), source })?;
    let size = chart.size();

    let text = svg_string(chart).map_err(|reason| ChartError::Draw { path: svg.clone(), reason })?;
    write_atomic(&svg, text).map_err(|e| ChartError::Write { path: svg.clone(), reason: e.to_string() })?;

    write_png(chart, &png, size)?;
    Ok(ChartFiles { svg, png })
}

/// The chart drawn as an SVG document.
pub(crate) fn svg_string(chart: &impl Drawing) -> DrawResult<String> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, chart.size()).into_drawing_area();
        root.fill(&WHITE).de()?;
        chart.draw(&root)?;
        root.present().de()?;
    }
    Ok(chart.finish_svg(text))
}

/// Draws the chart with the bitmap backend, which encodes and writes the PNG on `present`.
fn write_png(chart: &impl Drawing, png: &Path, size: (u32, u32)) -> Result<(), ChartError> {
    // Drawn beside the target and moved into place once complete.
    let partial = partial_path(png);
    let drawn = {
        let root = TextFix::new(BitMapBackend::new(&partial, size)).into_drawing_area();
        match root.fill(&WHITE).de().and_then(|()| chart.draw(&root)) {
            Ok(()) => root.present().map_err(|e| ChartError::Write { path: png.to_path_buf(), reason: e.to_string() }),
            Err(reason) => Err(ChartError::Draw { path: png.to_path_buf(), reason }),
        }
        // Dropping the backend here would write a half-drawn image if drawing failed.
    };
    match drawn {
        Ok(()) => commit_partial(png).map_err(|e| ChartError::Write { path: png.to_path_buf(), reason: e.to_string() }),
        Err(e) => {
            // Best effort: do not leave a partial image behind.
            let _ = fs::remove_file(&partial);
            Err(e)
        }
    }
}
