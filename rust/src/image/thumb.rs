//! Square RGB thumbnails for embedding models: the whole image (no centre crop, aspect ratio
//! not kept) resized to `size` x `size` with Pillow's BILINEAR (antialiased) filter. Large
//! images are first shrunk by an integer box reduction that keeps each side >= 2 * `size`
//! (JPEGs with all sides >= 16 * `size` are decoded at 1/8 scale instead), the same shortcut
//! as Pillow's `reducing_gap=2.0` (for PNG, WebP and GIF the result equals
//! `img.convert("RGB").resize((size, size), Image.BILINEAR, reducing_gap=2.0)`).

use super::decode::{decode, Channels};
use super::meta::{self, Format};
use super::resize::{reduce, resample, Filter};
use super::ImgResult;

/// `size * size * 3` RGB bytes, row-major.
pub fn thumbnail(b: &[u8], size: usize, max_pixels: u64) -> ImgResult<Vec<u8>> {
    let m = meta::read(b, max_pixels)?;
    let keep = 2 * size;
    let eighth = m.format == Format::Jpeg && (m.width.min(m.height) as usize) >= 8 * keep;
    let mut px = decode(b, &m, Channels::Rgb, eighth)?;
    let (kx, ky) = ((px.width / keep).max(1), (px.height / keep).max(1));
    // As Pillow: the resize box is the original extent in reduced pixels, so a partial box
    // at the right/bottom edge counts for the fraction of a pixel it covers.
    let bx = [
        0.0,
        0.0,
        px.width as f32 / kx as f32,
        px.height as f32 / ky as f32,
    ];
    if kx > 1 || ky > 1 {
        px.data = reduce(&px.data, (px.width, px.height, 3), (kx, ky));
        px.width = px.width.div_ceil(kx);
        px.height = px.height.div_ceil(ky);
    }
    Ok(resample(
        &px.data,
        (px.width, px.height, 3),
        (size, size),
        bx,
        Filter::Bilinear,
    ))
}
