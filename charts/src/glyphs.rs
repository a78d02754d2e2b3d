//! Text in the PNGs, rasterised with each glyph where the font puts it.
//!
//! plotters 0.3.7's `ab_glyph` text drawing (`style/font/ab_glyph.rs`) draws every glyph's bitmap
//! from the left edge of its ink, at the caret truncated to a whole pixel: it drops each glyph's
//! left side bearing. Narrow glyphs with a wide bearing (`l`, `i`, `1`) are therefore drawn up to
//! a pixel and a half too far left, onto the glyph before them: "client-1" read as "dient-1" in
//! every PNG (the SVGs, drawn by the viewer, were right). [`TextFix`] wraps the bitmap backend
//! and draws text itself: the caret advances in fractions of a pixel, each glyph is outlined at
//! the caret (so its bearing and sub-pixel offset are kept) and drawn at its ink's place. The
//! text's box, anchors, rotation and the vertical placement are plotters' own, so every layout
//! measured with [`crate::font::text_width`] stays as it was.

use ab_glyph::{point, Font, FontRef, GlyphId, ScaleFont};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind};

use crate::font::{FAMILY, TTF};

/// Calls `put(x, y, coverage)` for every pixel of `text` at `size` px, in the coordinates
/// plotters' own text drawing uses (x from the caret's start, y from the top of the text box
/// with the baseline at `size / 2`), each glyph placed at the caret with its side bearing.
pub(crate) fn glyph_pixels(font: &FontRef<'_>, size: f64, text: &str, mut put: impl FnMut(i32, i32, f32)) {
    let scaled = font.as_scaled(size as f32);
    let mut caret = 0f32;
    let mut prev: Option<GlyphId> = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = prev {
            caret += scaled.kern(p, id);
        }
        let glyph = id.with_scale_and_position(scaled.scale(), point(caret, 0.0));
        if let Some(outlined) = font.outline_glyph(glyph) {
            let bounds = outlined.px_bounds();
            // As plotters places a glyph vertically, so text stays where layouts expect it.
            let top = (size as f32 / 2.0 + bounds.min.y) as i32;
            let left = bounds.min.x as i32;
            outlined.draw(|x, y, coverage| put(left + x as i32, top + y as i32, coverage));
        }
        caret += scaled.h_advance(id);
        prev = Some(id);
    }
}

/// A drawing backend that is `inner` except for text in the shipped font, which it rasterises
/// with [`glyph_pixels`]. Used for the PNGs only: the SVG backend writes text as `<text>`.
pub(crate) struct TextFix<DB> {
    inner: DB,
    font: Option<FontRef<'static>>,
}

impl<DB> TextFix<DB> {
    /// `inner`, its text drawn with the shipped font's glyphs placed correctly.
    pub(crate) fn new(inner: DB) -> Self {
        Self { inner, font: FontRef::try_from_slice(TTF).ok() }
    }
}

impl<DB: DrawingBackend> DrawingBackend for TextFix<DB> {
    type ErrorType = DB::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        self.inner.estimate_text_size(text, style)
    }

    /// plotters' default `draw_text` (box, anchor, rotation, clipping to the image) with the
    /// glyphs from [`glyph_pixels`].
    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let font = match &self.font {
            Some(font) if style.family().as_str() == FAMILY => font.clone(),
            _ => return self.inner.draw_text(text, style, pos),
        };
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) =
            style.layout_box(text).map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let (w, h) = self.inner.get_size();
        let mut result = Ok(());
        glyph_pixels(&font, style.size(), text, |x, y, coverage| {
            if result.is_err() {
                return;
            }
            let (x, y) = transform.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
                let mixed = BackendColor { alpha: color.alpha * f64::from(coverage), rgb: color.rgb };
                result = self.inner.draw_pixel((x, y), mixed);
            }
        });
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::prelude::*;
    use plotters::style::text_anchor::Pos;

    /// The columns (from the left of the image) that have ink in `buf`, a white RGB image
    /// `width` px wide.
    fn ink_columns(buf: &[u8], width: usize) -> Vec<bool> {
        let mut ink = vec![false; width];
        for (i, px) in buf.chunks(3).enumerate() {
            if px.iter().any(|&v| v < 160) {
                ink[i % width] = true;
            }
        }
        ink
    }

    /// The runs of inked columns, as (first, end).
    fn ink_runs(ink: &[bool]) -> Vec<(usize, usize)> {
        crate::raster::runs_of(ink).into_iter().filter(|r| r.0).map(|r| (r.1, r.2)).collect()
    }

    /// "cl" at the tick label size, drawn by `draw` into a 40x24 white image: its ink runs.
    fn drawn_cl(fix: bool) -> Vec<(usize, usize)> {
        crate::font::ensure_registered().unwrap();
        let (w, h) = (40u32, 24u32);
        let mut buf = vec![255u8; (w * h * 3) as usize];
        {
            let bitmap = BitMapBackend::with_buffer(&mut buf, (w, h));
            let style = TextStyle::from((FAMILY, 13.0)).pos(Pos::new(HPos::Left, VPos::Top));
            if fix {
                let mut backend = TextFix::new(bitmap);
                backend.draw_text("cl", &style, (4, 6)).unwrap();
                backend.present().unwrap();
            } else {
                let mut backend = bitmap;
                backend.draw_text("cl", &style, (4, 6)).unwrap();
                backend.present().unwrap();
            }
        }
        ink_runs(&ink_columns(&buf, w as usize))
    }

    /// The cause of "client-1" reading "dient-1": plotters' own drawing puts the `l` against the
    /// `c` (one run of ink); with the bearing kept, a blank column parts them.
    #[test]
    fn c_and_l_are_apart_only_with_the_bearing_kept() {
        let plain = drawn_cl(false);
        assert_eq!(plain.len(), 1, "plotters 0.3.7 drops the bearing, so c and l touch: {plain:?}");
        let fixed = drawn_cl(true);
        assert_eq!(fixed.len(), 2, "c and l must be two runs of ink: {fixed:?}");
        assert!(fixed[1].0 > fixed[0].1, "{fixed:?}");
    }

    /// Fixing the glyphs moves no text's box: the text starts where it did, within the bearing.
    #[test]
    fn text_starts_where_its_box_does() {
        let plain = drawn_cl(false);
        let fixed = drawn_cl(true);
        assert!(fixed[0].0 >= plain[0].0 && fixed[0].0 <= plain[0].0 + 2, "{plain:?} {fixed:?}");
        assert!(fixed[1].1.abs_diff(plain[0].1) <= 2, "{plain:?} {fixed:?}");
    }
}
