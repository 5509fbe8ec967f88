//! Perceptual hashes as `imagehash` defines them, plus a crop-tolerant companion.
//!
//! * `phash`: grey image, LANCZOS resize to 32x32, `dct(dct(px, axis=0), axis=1)`, top-left
//!   8x8, bit = coefficient > median of those 64, row-major, first bit most significant
//!   (`int(str(imagehash.phash(img)), 16)`).
//! * `dhash`: grey, LANCZOS resize to 9 wide x 8 high, bit = `px[y][x + 1] > px[y][x]`,
//!   row-major, first bit most significant (`int(str(imagehash.dhash(img)), 16)`).
//! * `phash_crop`: `phash` of the centre of the image with [`CROP_FRACTION`] cut off each
//!   side (a Pillow `resize` box, so no extra resampling). A copy cropped by about that much
//!   has a plain `phash` close to the original's `phash_crop`: compare `phash` with the other
//!   image's `phash_crop` as well as with its `phash` to catch crops.
//! * `phash_flip`: `phash` of the left-right mirror of the same 32x32 thumbnail (no second
//!   resize), which a mirrored copy's plain `phash` matches.
//!
//! Speed, and where we deviate from imagehash: large images are first shrunk by an integer
//! box reduction to at least [`PRE_SIDE`] pixels a side (Pillow's `reducing_gap` idea), and
//! JPEGs whose sides are all >= 8 * [`PRE_SIDE`] are decoded at 1/8 scale (block means from
//! the DC coefficients). JPEG grey is the decoded Y plane, which is what `convert("L")` of the
//! decoded RGB approximates (to about one grey level). The LANCZOS kernel then sees a slightly
//! different input; the benchmark and tests measure the agreement with imagehash.

use super::decode::{decode, Channels, Pixels};
use super::meta::{self, Format};
use super::resize::{reduce, resample, Filter};
use super::{dct::dct2_corner, ImgResult};

/// Share of the width (height) removed on each side for `phash_crop`.
pub const CROP_FRACTION: f32 = 0.05;
/// Side, in pixels, that the pre-reduction (and the 1/8 JPEG decode) keeps at least.
pub const PRE_SIDE: usize = 128;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hashes {
    pub phash: u64,
    pub dhash: u64,
    pub phash_crop: u64,
    pub phash_flip: u64,
}

/// Pack booleans, first one as the most significant of the 64 bits.
fn pack(bits: impl Iterator<Item = bool>) -> u64 {
    bits.fold(0u64, |acc, b| (acc << 1) | u64::from(b))
}

/// pHash of a 32x32 grey image.
pub fn phash_of_32(px: &[u8]) -> u64 {
    let d = dct2_corner::<8, 32>(px);
    let mut sorted: Vec<f64> = d.iter().flatten().copied().collect();
    sorted.sort_by(f64::total_cmp);
    let median = (sorted[31] + sorted[32]) / 2.0;
    pack(d.iter().flatten().map(|&v| v > median))
}

/// dHash of a 9x8 grey image.
pub fn dhash_of_9x8(px: &[u8]) -> u64 {
    pack(
        px.chunks_exact(9)
            .flat_map(|r| r.windows(2).map(|p| p[1] > p[0])),
    )
}

/// Grey image ready for hashing: decoded (1/8 scale when allowed) and box-reduced so that
/// each side stays >= `PRE_SIDE` (or keeps its size when smaller), with the width and height
/// of the image content in its pixels.
pub fn hash_input(b: &[u8], max_pixels: u64) -> ImgResult<(Pixels, (f32, f32))> {
    let m = meta::read(b, max_pixels)?;
    let min_side = m.width.min(m.height) as usize;
    let eighth = m.format == Format::Jpeg && min_side >= 8 * PRE_SIDE;
    let px = decode(b, &m, Channels::Grey, eighth)?;
    let (kx, ky) = ((px.width / PRE_SIDE).max(1), (px.height / PRE_SIDE).max(1));
    // The original extent in reduced pixels (Pillow's `reducing_gap` box): a partial box at
    // the right/bottom edge counts for the fraction of a pixel it covers.
    let extent = (px.width as f32 / kx as f32, px.height as f32 / ky as f32);
    if kx == 1 && ky == 1 {
        return Ok((px, extent));
    }
    let data = reduce(&px.data, (px.width, px.height, 1), (kx, ky));
    let (width, height) = (px.width.div_ceil(kx), px.height.div_ceil(ky));
    Ok((
        Pixels {
            width,
            height,
            channels: 1,
            data,
        },
        extent,
    ))
}

/// The three hashes of one grey image whose content spans `w` x `h` of its pixels.
pub fn hashes_of(px: &Pixels, (w, h): (f32, f32)) -> Hashes {
    let dims = (px.width, px.height, 1);
    let full = [0.0, 0.0, w, h];
    let p32 = resample(&px.data, dims, (32, 32), full, Filter::Lanczos);
    let d98 = resample(&px.data, dims, (9, 8), full, Filter::Lanczos);
    let (cx, cy) = (w * CROP_FRACTION, h * CROP_FRACTION);
    let crop = resample(
        &px.data,
        dims,
        (32, 32),
        [cx, cy, w - cx, h - cy],
        Filter::Lanczos,
    );
    let mirrored: Vec<u8> = p32
        .chunks_exact(32)
        .flat_map(|row| row.iter().rev().copied())
        .collect();
    Hashes {
        phash: phash_of_32(&p32),
        dhash: dhash_of_9x8(&d98),
        phash_crop: phash_of_32(&crop),
        phash_flip: phash_of_32(&mirrored),
    }
}

/// Decode `b` and hash it.
pub fn hashes(b: &[u8], max_pixels: u64) -> ImgResult<Hashes> {
    let (px, extent) = hash_input(b, max_pixels)?;
    Ok(hashes_of(&px, extent))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_msb_first() {
        assert_eq!(pack([true, false, true].into_iter()), 0b101);
        let mut px = vec![0u8; 72];
        px[1] = 9; // row 0: 0 < 9 is the first comparison, then 9 > 0 is not an increase.
        assert_eq!(dhash_of_9x8(&px), 1 << 63);
    }

    #[test]
    fn flat_image_hashes_are_zero() {
        let px = Pixels {
            width: 40,
            height: 30,
            channels: 1,
            data: vec![77; 1200],
        };
        let h = hashes_of(&px, (40.0, 30.0));
        // No increase anywhere; the DC coefficient is the only one above the median (the
        // other 63 bits hang on floating-point noise around zero, in imagehash too).
        assert_eq!(h.dhash, 0);
        assert_eq!(h.phash >> 63, 1);
    }
}
