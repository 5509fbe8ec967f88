//! Header parser tests on hand-built headers (Pillow agreement on real files is tested from
//! Python in `tests/test_kernels_image.py`).

use super::*;

fn png_header(w: u32, h: u32, depth: u8, color: u8) -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&h.to_be_bytes());
    b.extend_from_slice(&[depth, color, 0, 0, 0, 0, 0, 0, 0]);
    b
}

type Put16 = fn(u16) -> [u8; 2];
type Put32 = fn(u32) -> [u8; 4];

fn tiff_orientation(big: bool, v: u16) -> Vec<u8> {
    let (p16, p32): (Put16, Put32) = if big {
        (u16::to_be_bytes, u32::to_be_bytes)
    } else {
        (u16::to_le_bytes, u32::to_le_bytes)
    };
    let mut t = if big { b"MM".to_vec() } else { b"II".to_vec() };
    t.extend_from_slice(&p16(42));
    t.extend_from_slice(&p32(8));
    t.extend_from_slice(&p16(1));
    t.extend_from_slice(&p16(0x0112));
    t.extend_from_slice(&p16(3));
    t.extend_from_slice(&p32(1));
    t.extend_from_slice(&p16(v));
    t.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    t
}

#[test]
fn png_modes_and_bomb() {
    let m = parse(&png_header(3, 2, 8, 6)).unwrap();
    assert_eq!(
        (m.format, m.width, m.height, m.mode, m.orientation),
        (Format::Png, 3, 2, "RGBA", 1)
    );
    assert_eq!(parse(&png_header(3, 2, 16, 0)).unwrap().mode, "I;16");
    assert_eq!(parse(&png_header(3, 2, 4, 3)).unwrap().mode, "P");
    assert!(matches!(
        parse(&png_header(3, 2, 3, 2)),
        Err(ImageError::Decode(_))
    ));
    let bomb = png_header(100_000, 100_000, 8, 2);
    assert_eq!(
        read(&bomb, MAX_PIXELS_DEFAULT),
        Err(ImageError::TooManyPixels)
    );
    assert!(read(&bomb, 10_000_000_000).is_ok());
}

const MAX_PIXELS_DEFAULT: u64 = crate::image::MAX_PIXELS;

#[test]
fn jpeg_sof_and_exif() {
    for big in [false, true] {
        let mut app1 = b"Exif\0\0".to_vec();
        app1.extend(tiff_orientation(big, 6));
        let mut b = vec![0xFF, 0xD8, 0xFF, 0xE1];
        b.extend_from_slice(&((app1.len() + 2) as u16).to_be_bytes());
        b.extend(app1);
        b.extend_from_slice(&[
            0xFF, 0xC2, 0, 17, 8, 0, 20, 0, 30, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1,
        ]);
        b.extend_from_slice(&[0xFF, 0xDA]);
        let m = parse(&b).unwrap();
        assert_eq!(
            (m.width, m.height, m.mode, m.orientation),
            (30, 20, "RGB", 6)
        );
        // Cut inside the SOF segment.
        assert_eq!(
            parse(&b[..b.len() - 12]),
            Err(decode_err("truncated header"))
        );
    }
    assert_eq!(exif_orientation(&tiff_orientation(false, 9)), 1);
    assert_eq!(exif_orientation(b"II*\0"), 1);
}

#[test]
fn webp_and_gif_headers() {
    let mut lossless = b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2f".to_vec();
    let bits: u32 = 99 | (49 << 14) | (1 << 28);
    lossless.extend_from_slice(&bits.to_le_bytes());
    let m = parse(&lossless).unwrap();
    assert_eq!(
        (m.format, m.width, m.height, m.mode),
        (Format::Webp, 100, 50, "RGBA")
    );
    let mut g = b"GIF89a\x0a\0\x05\0\x80\0\0".to_vec();
    g.extend_from_slice(&[0, 0, 0, 1, 1, 1]); // identity grey ramp: Pillow says "L"
    g.extend_from_slice(&[0x2C, 0, 0, 0, 0, 12, 0, 5, 0, 0]);
    let m = parse(&g).unwrap();
    assert_eq!((m.width, m.height, m.mode), (12, 5, "L"));
    g[13] = 9;
    assert_eq!(parse(&g).unwrap().mode, "P");
}

#[test]
fn rejects_empty_unknown_and_truncated() {
    assert_eq!(parse(b""), Err(ImageError::Empty));
    assert_eq!(parse(b"BM\x00\x00"), Err(ImageError::Unsupported));
    assert_eq!(parse(b"II*\x00"), Err(ImageError::Unsupported));
    assert!(matches!(
        parse(&png_header(3, 2, 8, 6)[..20]),
        Err(ImageError::Decode(_))
    ));
    assert!(matches!(parse(b"GIF89a\x01"), Err(ImageError::Decode(_))));
    assert!(matches!(
        parse(&[0xFF, 0xD8, 0xFF]),
        Err(ImageError::Decode(_))
    ));
}
