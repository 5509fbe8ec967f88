//! Pixel decoding through the usual crates: zune-jpeg (full-size JPEG, luma-only output when
//! only grey is needed, which skips the chroma IDCT), jpeg-decoder (1/8-scale JPEG decode via
//! its DC-only IDCT, used when the caller can do with an eighth of the size), png, image-webp
//! and gif. Callers pass the [`Meta`] from `meta::read`, so the pixel limit has already been
//! enforced before any decoder allocates.

use std::io::Cursor;

use zune_core::bytestream::ZCursor;
use zune_core::colorspace::ColorSpace;
use zune_core::options::DecoderOptions;

use super::meta::{Format, Meta};
use super::{decode_err, ImgResult};

/// Wanted output channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channels {
    /// One channel, ITU-R 601 luma. JPEG: the decoded Y plane; other formats: Pillow's
    /// `convert("L")` of the RGB pixels, `(19595 R + 38470 G + 7471 B + 0x8000) >> 16`.
    Grey,
    /// Three interleaved channels; alpha is dropped, grey is replicated.
    Rgb,
}

impl Channels {
    pub fn count(self) -> usize {
        match self {
            Self::Grey => 1,
            Self::Rgb => 3,
        }
    }
}

/// A decoded image, `channels` interleaved `u8` samples per pixel, rows packed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pixels {
    pub width: usize,
    pub height: usize,
    pub channels: usize,
    pub data: Vec<u8>,
}

/// Pillow's RGB -> L conversion (`L24` in Convert.c).
#[inline]
pub fn luma(r: u8, g: u8, b: u8) -> u8 {
    ((u32::from(r) * 19595 + u32::from(g) * 38470 + u32::from(b) * 7471 + 0x8000) >> 16) as u8
}

/// Convert `n`-channel samples (1 = L, 2 = LA, 3 = RGB, 4 = RGBA) to `want`.
fn convert(data: Vec<u8>, n: usize, want: Channels) -> Vec<u8> {
    match (n, want) {
        (1, Channels::Grey) | (3, Channels::Rgb) => data,
        (2, Channels::Grey) => data.chunks_exact(2).map(|p| p[0]).collect(),
        (_, Channels::Grey) => data
            .chunks_exact(n)
            .map(|p| luma(p[0], p[1], p[2]))
            .collect(),
        (1 | 2, Channels::Rgb) => data.chunks_exact(n).flat_map(|p| [p[0]; 3]).collect(),
        (_, Channels::Rgb) => data
            .chunks_exact(n)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect(),
    }
}

/// Decode `b` (whose header gave `meta`). `eighth_ok`: a JPEG may be decoded at 1/8 of its
/// size (each 8x8 block becomes its DC value, i.e. its mean) — callers that reduce the
/// image far anyway set it when both sides stay large enough.
pub fn decode(b: &[u8], meta: &Meta, want: Channels, eighth_ok: bool) -> ImgResult<Pixels> {
    let (w, h) = (meta.width as usize, meta.height as usize);
    let (data, n, w, h) = match meta.format {
        Format::Jpeg if eighth_ok => jpeg_eighth(b, meta)?,
        Format::Jpeg => {
            // zune-jpeg maps only YCbCr/grey to luma; CMYK goes through RGB.
            let grey = want == Channels::Grey && meta.mode != "CMYK";
            let out = if grey { Channels::Grey } else { Channels::Rgb };
            (jpeg_full(b, out)?, out.count(), w, h)
        }
        Format::Png => png(b, meta)?,
        Format::Webp => webp(b)?,
        Format::Gif => (gif(b, meta)?, 4, w, h),
    };
    if data.len() != w * h * n {
        return Err(decode_err(format!(
            "decoder returned {} bytes for {w}x{h}x{n}",
            data.len()
        )));
    }
    Ok(Pixels {
        width: w,
        height: h,
        channels: want.count(),
        data: convert(data, n, want),
    })
}

fn jpeg_full(b: &[u8], want: Channels) -> ImgResult<Vec<u8>> {
    let space = match want {
        Channels::Grey => ColorSpace::Luma,
        Channels::Rgb => ColorSpace::RGB,
    };
    // Strict mode turns a truncated or corrupt scan into an error instead of grey padding,
    // as Pillow's "image file is truncated".
    let opts = DecoderOptions::default()
        .set_max_width(1 << 16)
        .set_max_height(1 << 16)
        .set_strict_mode(true)
        .jpeg_set_out_colorspace(space);
    let mut d = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(b), opts);
    d.decode().map_err(decode_err)
}

fn jpeg_eighth(b: &[u8], meta: &Meta) -> ImgResult<(Vec<u8>, usize, usize, usize)> {
    let mut d = jpeg_decoder::Decoder::new(b);
    d.read_info().map_err(decode_err)?;
    let (w, h) = (
        meta.width.div_ceil(8) as u16,
        meta.height.div_ceil(8) as u16,
    );
    let (w, h) = d.scale(w, h).map_err(decode_err)?;
    let data = d.decode().map_err(decode_err)?;
    let n = match d.info().map(|i| i.pixel_format) {
        Some(jpeg_decoder::PixelFormat::L8) => 1,
        Some(jpeg_decoder::PixelFormat::RGB24) => 3,
        other => {
            return Err(decode_err(format!(
                "unsupported JPEG pixel format {other:?}"
            )))
        }
    };
    Ok((data, n, usize::from(w), usize::from(h)))
}

fn png(b: &[u8], meta: &Meta) -> ImgResult<(Vec<u8>, usize, usize, usize)> {
    let mut d = png::Decoder::new(Cursor::new(b));
    // The pixel count is already bounded by `max_pixels`; lift the crate's 64 MiB default so
    // that every image within that bound decodes (8 bytes per pixel covers RGBA16 input).
    d.set_limits(png::Limits {
        bytes: (meta.pixels() as usize).saturating_mul(8).max(1 << 20),
    });
    d.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut r = d.read_info().map_err(decode_err)?;
    let size = r
        .output_buffer_size()
        .ok_or_else(|| decode_err("PNG too large"))?;
    let mut buf = vec![0; size];
    let info = r.next_frame(&mut buf).map_err(decode_err)?;
    let n = info.color_type.samples();
    let (w, h) = (info.width as usize, info.height as usize);
    if info.line_size != w * n {
        buf = buf
            .chunks(info.line_size)
            .take(h)
            .flat_map(|row| &row[..w * n])
            .copied()
            .collect();
    }
    buf.truncate(w * h * n);
    Ok((buf, n, w, h))
}

fn webp(b: &[u8]) -> ImgResult<(Vec<u8>, usize, usize, usize)> {
    let mut d = image_webp::WebPDecoder::new(Cursor::new(b)).map_err(decode_err)?;
    let (w, h) = d.dimensions();
    let n = if d.has_alpha() { 4 } else { 3 };
    let size = d
        .output_buffer_size()
        .ok_or_else(|| decode_err("WebP too large"))?;
    let mut buf = vec![0; size];
    d.read_image(&mut buf).map_err(decode_err)?;
    Ok((buf, n, w as usize, h as usize))
}

/// First GIF frame as RGBA on a canvas of the header size (Pillow's frame 0): pixels outside
/// the frame are black, transparent pixels keep their palette colour (as `convert("L")` of
/// Pillow's "P" image does).
fn gif(b: &[u8], meta: &Meta) -> ImgResult<Vec<u8>> {
    let mut opts = gif::DecodeOptions::new();
    opts.set_color_output(gif::ColorOutput::Indexed);
    let limit = std::num::NonZeroU64::new(meta.pixels().max(1 << 20)).expect("non-zero");
    opts.set_memory_limit(gif::MemoryLimit::Bytes(limit));
    let mut d = opts.read_info(Cursor::new(b)).map_err(decode_err)?;
    let global = d.global_palette().map(<[u8]>::to_vec);
    let frame = d
        .read_next_frame()
        .map_err(decode_err)?
        .ok_or_else(|| decode_err("no frame"))?;
    let palette = frame
        .palette
        .as_deref()
        .or(global.as_deref())
        .unwrap_or(&[]);
    let (cw, ch) = (meta.width as usize, meta.height as usize);
    let mut out = vec![0u8; cw * ch * 4];
    let (fl, ft, fw) = (
        usize::from(frame.left),
        usize::from(frame.top),
        usize::from(frame.width),
    );
    for (y, row) in frame
        .buffer
        .chunks(fw.max(1))
        .enumerate()
        .take(ch.saturating_sub(ft))
    {
        for (x, &idx) in row.iter().enumerate().take(cw.saturating_sub(fl)) {
            let o = ((ft + y) * cw + fl + x) * 4;
            let c = palette
                .get(usize::from(idx) * 3..usize::from(idx) * 3 + 3)
                .unwrap_or(&[0, 0, 0]);
            out[o..o + 4].copy_from_slice(&[c[0], c[1], c[2], 255]);
        }
    }
    Ok(out)
}
