//! The shipped font (DejaVu Sans, `charts/fonts/`), registered with plotters' `ab_glyph`
//! support, and text measurement with it.
//!
//! Every chart uses this family only, so the PNGs render, and both outputs are laid out, the same
//! on any machine: no system font is ever looked up. An SVG names the family as the CSS list
//! `DejaVu Sans, sans-serif`: `index.html` embeds the font itself (see [`TTF`]), so the page's
//! charts render exactly; a standalone SVG renders exactly where DejaVu Sans is installed and
//! with the viewer's sans-serif elsewhere (the layout still comes from this font's metrics).

use std::sync::OnceLock;

use plotters::style::{register_font, FontStyle, IntoFont};

/// The family name every chart's text uses. plotters writes it verbatim into the SVG's
/// `font-family` attribute, where a CSS list is valid: the font by name, then a fallback that is
/// not a serif face.
pub const FAMILY: &str = "DejaVu Sans, sans-serif";

/// The shipped font file, for pages that embed it (`@font-face { font-family: "DejaVu Sans" }`).
pub const TTF: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();

/// Registers the shipped font with plotters (once per process) and says whether it worked.
///
/// Every public drawing function calls this first; calling it again is free.
pub fn ensure_registered() -> Result<(), String> {
    REGISTERED
        .get_or_init(|| {
            register_font(FAMILY, FontStyle::Normal, TTF)
                .map_err(|_| "the embedded DejaVuSans.ttf is not a valid font".to_string())
        })
        .clone()
}

/// The width in pixels of `text` at `size` px, as plotters will lay it out.
pub(crate) fn text_width(text: &str, size: f64) -> i32 {
    match (FAMILY, size).into_font().box_size(text) {
        Ok((w, _)) => i32::try_from(w).unwrap_or(i32::MAX),
        // Only if the font could not be registered, and then nothing is drawn anyway.
        Err(_) => (text.chars().count() as f64 * size * 0.6) as i32,
    }
}

/// `text` shortened with an ellipsis so that it is at most `max_width` px wide at `size` px.
pub(crate) fn fit_text(text: &str, size: f64, max_width: i32) -> String {
    if text_width(text, size) <= max_width {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut keep = chars.len();
    while keep > 0 {
        keep -= 1;
        let candidate: String = chars[..keep].iter().collect::<String>() + "…";
        if text_width(&candidate, size) <= max_width {
            return candidate;
        }
    }
    String::new()
}
