//! Header-only metadata: format, size, Pillow mode and EXIF orientation, read from the
//! JPEG markers before SOS, the PNG chunks before IDAT, the WebP RIFF chunks and the GIF
//! screen and first image descriptor. No pixel data is touched, so this is also the guard run
//! before any decode (the size is known before a single pixel buffer is allocated).

use super::{decode_err, ImageError, ImgResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Jpeg,
    Png,
    Webp,
    Gif,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Self::Jpeg => "jpeg",
            Self::Png => "png",
            Self::Webp => "webp",
            Self::Gif => "gif",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    pub format: Format,
    pub width: u32,
    pub height: u32,
    /// Mode name as `PIL.Image.open(...).mode` reports it.
    pub mode: &'static str,
    /// EXIF orientation tag (1..=8); 1 when absent or out of range.
    pub orientation: u8,
}

impl Meta {
    pub fn pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }
}

/// Format from the magic bytes.
pub fn sniff(b: &[u8]) -> Option<Format> {
    if b.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(Format::Jpeg)
    } else if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(Format::Png)
    } else if b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        Some(Format::Webp)
    } else if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        Some(Format::Gif)
    } else {
        None
    }
}

/// Parse the header of `b`, then refuse images of more than `max_pixels` pixels.
pub fn read(b: &[u8], max_pixels: u64) -> ImgResult<Meta> {
    let m = parse(b)?;
    if m.pixels() > max_pixels {
        return Err(ImageError::TooManyPixels);
    }
    Ok(m)
}

/// Parse the header of `b` (no size limit).
pub fn parse(b: &[u8]) -> ImgResult<Meta> {
    if b.is_empty() {
        return Err(ImageError::Empty);
    }
    let m = match sniff(b).ok_or(ImageError::Unsupported)? {
        Format::Jpeg => jpeg(b)?,
        Format::Png => png(b)?,
        Format::Webp => webp(b)?,
        Format::Gif => gif(b)?,
    };
    if m.width == 0 || m.height == 0 {
        return Err(decode_err(format!("zero size {}x{}", m.width, m.height)));
    }
    Ok(m)
}

fn truncated() -> ImageError {
    decode_err("truncated header")
}

fn be16(b: &[u8], at: usize) -> ImgResult<u16> {
    b.get(at..at + 2)
        .map(|s| u16::from_be_bytes([s[0], s[1]]))
        .ok_or_else(truncated)
}

fn be32(b: &[u8], at: usize) -> ImgResult<u32> {
    b.get(at..at + 4)
        .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(truncated)
}

fn le16(b: &[u8], at: usize) -> ImgResult<u16> {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(truncated)
}

fn le24(b: &[u8], at: usize) -> ImgResult<u32> {
    b.get(at..at + 3)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], 0]))
        .ok_or_else(truncated)
}

fn le32(b: &[u8], at: usize) -> ImgResult<u32> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(truncated)
}

/// Orientation tag (0x0112) of IFD0 in a TIFF-structured EXIF block; 1 if absent or invalid.
/// A leading `Exif\0\0` is skipped (PNG eXIf chunks sometimes carry it).
pub fn exif_orientation(tiff: &[u8]) -> u8 {
    let tiff = tiff.strip_prefix(b"Exif\0\0").unwrap_or(tiff);
    let big = match tiff.get(..2) {
        Some(b"MM") => true,
        Some(b"II") => false,
        _ => return 1,
    };
    let u16_at = |at: usize| {
        tiff.get(at..at + 2).map(|s| {
            if big {
                u16::from_be_bytes([s[0], s[1]])
            } else {
                u16::from_le_bytes([s[0], s[1]])
            }
        })
    };
    let u32_at = |at: usize| {
        tiff.get(at..at + 4).map(|s| {
            let a = [s[0], s[1], s[2], s[3]];
            if big {
                u32::from_be_bytes(a)
            } else {
                u32::from_le_bytes(a)
            }
        })
    };
    let Some(ifd) = u32_at(4).map(|o| o as usize) else {
        return 1;
    };
    let Some(count) = u16_at(ifd) else { return 1 };
    for i in 0..usize::from(count) {
        let e = ifd + 2 + 12 * i;
        if u16_at(e) == Some(0x0112) {
            // SHORT, count 1: the value sits in the first two bytes of the value field.
            return match (u16_at(e + 2), u16_at(e + 8)) {
                (Some(3), Some(v @ 1..=8)) => v as u8,
                _ => 1,
            };
        }
    }
    1
}

/// JPEG: walk the marker segments up to SOS; SOFn gives size and components, APP1 the EXIF.
fn jpeg(b: &[u8]) -> ImgResult<Meta> {
    let mut at = 2;
    let mut sof = None;
    let mut orientation = 1;
    let mut exif_seen = false;
    loop {
        // Markers may be preceded by any number of 0xFF fill bytes.
        while b.get(at) == Some(&0xFF) && b.get(at + 1) == Some(&0xFF) {
            at += 1;
        }
        if *b.get(at).ok_or_else(truncated)? != 0xFF {
            return Err(decode_err(format!("no JPEG marker at byte {at}")));
        }
        let marker = *b.get(at + 1).ok_or_else(truncated)?;
        at += 2;
        if matches!(marker, 0x01 | 0xD0..=0xD7) {
            continue;
        }
        if matches!(marker, 0xD9 | 0xDA) {
            break;
        }
        let len = usize::from(be16(b, at)?);
        let seg = b
            .get(at + 2..at + len)
            .filter(|_| len >= 2)
            .ok_or_else(truncated)?;
        match marker {
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                if seg.len() < 6 {
                    return Err(truncated());
                }
                let h = u32::from(u16::from_be_bytes([seg[1], seg[2]]));
                let w = u32::from(u16::from_be_bytes([seg[3], seg[4]]));
                sof.get_or_insert((w, h, seg[5]));
            }
            0xE1 if !exif_seen && seg.starts_with(b"Exif\0\0") => {
                exif_seen = true;
                orientation = exif_orientation(&seg[6..]);
            }
            _ => {}
        }
        at += len;
    }
    let (width, height, ncomp) = sof.ok_or_else(|| decode_err("no SOF marker before SOS"))?;
    let mode = match ncomp {
        1 => "L",
        3 => "RGB",
        4 => "CMYK",
        n => return Err(decode_err(format!("{n} JPEG components"))),
    };
    Ok(Meta {
        format: Format::Jpeg,
        width,
        height,
        mode,
        orientation,
    })
}

/// PNG: IHDR gives size and mode (Pillow's `_MODES` table); an eXIf chunk before IDAT gives
/// the orientation.
fn png(b: &[u8]) -> ImgResult<Meta> {
    if b.get(12..16) != Some(b"IHDR") || be32(b, 8)? < 13 {
        return Err(decode_err("PNG without IHDR"));
    }
    let (width, height) = (be32(b, 16)?, be32(b, 20)?);
    let (depth, color) = (
        *b.get(24).ok_or_else(truncated)?,
        *b.get(25).ok_or_else(truncated)?,
    );
    let mode = match (depth, color) {
        (1, 0) => "1",
        (2 | 4 | 8, 0) => "L",
        (16, 0) => "I;16",
        (8 | 16, 2) => "RGB",
        (1 | 2 | 4 | 8, 3) => "P",
        (8, 4) => "LA",
        (16, 4) | (8 | 16, 6) => "RGBA",
        _ => {
            return Err(decode_err(format!(
                "PNG bit depth {depth} with colour type {color}"
            )))
        }
    };
    let mut orientation = 1;
    let mut at = 33;
    while let (Ok(len), Some(kind)) = (be32(b, at), b.get(at + 4..at + 8)) {
        match kind {
            b"IDAT" | b"IEND" => break,
            b"eXIf" => {
                if let Some(data) = b.get(at + 8..at + 8 + len as usize) {
                    orientation = exif_orientation(data);
                }
                break;
            }
            _ => at += 12 + len as usize,
        }
    }
    Ok(Meta {
        format: Format::Png,
        width,
        height,
        mode,
        orientation,
    })
}

/// WebP: the first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended: canvas size,
/// alpha and EXIF flags, EXIF in its own chunk).
fn webp(b: &[u8]) -> ImgResult<Meta> {
    let kind = b.get(12..16).ok_or_else(truncated)?;
    let p = 20; // payload of the first chunk
    let (width, height, alpha) = match kind {
        b"VP8 " => {
            if b.get(p + 3..p + 6) != Some(&[0x9D, 0x01, 0x2A]) {
                return Err(decode_err("VP8 frame without start code"));
            }
            (
                u32::from(le16(b, p + 6)? & 0x3FFF),
                u32::from(le16(b, p + 8)? & 0x3FFF),
                false,
            )
        }
        b"VP8L" => {
            if b.get(p) != Some(&0x2F) {
                return Err(decode_err("VP8L without signature"));
            }
            let bits = le32(b, p + 1)?;
            (
                (bits & 0x3FFF) + 1,
                ((bits >> 14) & 0x3FFF) + 1,
                bits & (1 << 28) != 0,
            )
        }
        b"VP8X" => {
            let flags = *b.get(p).ok_or_else(truncated)?;
            (le24(b, p + 4)? + 1, le24(b, p + 7)? + 1, flags & 0x10 != 0)
        }
        _ => return Err(decode_err("unknown WebP chunk")),
    };
    let mut orientation = 1;
    if kind == b"VP8X" && b[p] & 0x08 != 0 {
        let mut at = 12;
        while let (Some(fourcc), Ok(len)) = (b.get(at..at + 4), le32(b, at + 4)) {
            let len = len as usize;
            if fourcc == b"EXIF" {
                if let Some(data) = b.get(at + 8..at + 8 + len) {
                    orientation = exif_orientation(data);
                }
                break;
            }
            at += 8 + len + (len & 1);
        }
    }
    let mode = if alpha { "RGBA" } else { "RGB" };
    Ok(Meta {
        format: Format::Webp,
        width,
        height,
        mode,
        orientation,
    })
}

/// True unless the palette is the identity grey ramp (Pillow then opens the GIF as "L").
fn gif_palette_needed(p: &[u8]) -> bool {
    p.chunks_exact(3)
        .enumerate()
        .any(|(i, c)| !(c[0] as usize == i && c[1] == c[0] && c[2] == c[0]))
}

/// GIF: logical screen size, enlarged to the first frame's extent as Pillow does; mode "P"
/// when the first frame has a non-trivial palette (local, else global), else "L".
fn gif(b: &[u8]) -> ImgResult<Meta> {
    let (mut width, mut height) = (u32::from(le16(b, 6)?), u32::from(le16(b, 8)?));
    let flags = *b.get(10).ok_or_else(truncated)?;
    let mut at = 13;
    let mut palette = false;
    if flags & 0x80 != 0 {
        let n = 3 << ((flags & 7) + 1);
        palette = gif_palette_needed(b.get(at..at + n).ok_or_else(truncated)?);
        at += n;
    }
    loop {
        match *b.get(at).ok_or_else(truncated)? {
            0x21 => {
                // Extension: label, then data sub-blocks until a zero length.
                at += 2;
                loop {
                    let n = usize::from(*b.get(at).ok_or_else(truncated)?);
                    at += 1 + n;
                    if n == 0 {
                        break;
                    }
                }
            }
            0x2C => {
                let (x, y) = (u32::from(le16(b, at + 1)?), u32::from(le16(b, at + 3)?));
                let (w, h) = (u32::from(le16(b, at + 5)?), u32::from(le16(b, at + 7)?));
                width = width.max(x + w);
                height = height.max(y + h);
                let f = *b.get(at + 9).ok_or_else(truncated)?;
                if f & 0x80 != 0 {
                    let n = 3 << ((f & 7) + 1);
                    let local = b.get(at + 10..at + 10 + n).ok_or_else(truncated)?;
                    palette = gif_palette_needed(local);
                }
                break;
            }
            0x3B => return Err(decode_err("GIF without frames")),
            other => return Err(decode_err(format!("unknown GIF block 0x{other:02x}"))),
        }
    }
    let mode = if palette { "P" } else { "L" };
    Ok(Meta {
        format: Format::Gif,
        width,
        height,
        mode,
        orientation: 1,
    })
}

#[cfg(test)]
#[path = "meta_tests.rs"]
mod tests;
