//! Damage costs what is damaged: a bad gzip member, a record without `Content-Length`, bytes that are no record
//! are one damage entry each and the records after them are read; records whose framing is whole but that
//! cannot be read (no HTTP status line, a header over 32 KiB, a block over `max_record_bytes`) are one rejected
//! row each; every record is exactly one of kept, rejected or inside a damaged part. Issue 46 item 8.

use arrow_array::{Array, BinaryArray, Int64Array, StringArray, StructArray};
use proptest::prelude::*;

use super::tests::{config, crawl, gz, record, scan_all};
use super::{Config, Scanner};

const RESPONSE: u32 = 4;

/// One row: url, reason, detail, body, offset.
type Row = (String, Option<String>, Option<String>, Vec<u8>, i64);

/// Rows (with their reasons), damages, and the most bytes the scan buffer held, feeding `chunk`-byte pieces.
fn read(data: &[u8], cfg: Config, chunk: usize) -> (Vec<Row>, Vec<(u64, String)>, usize) {
    let mut s = Scanner::new(cfg);
    let mut batches: Vec<StructArray> = Vec::new();
    let mut held = 0;
    let pieces: Vec<&[u8]> = data.chunks(chunk.max(1)).collect();
    for (i, p) in pieces.iter().enumerate() {
        s.feed(p, i + 1 == pieces.len());
        held = held.max(s.buf.capacity());
        batches.extend(s.take_batches());
    }
    if pieces.is_empty() {
        s.feed(b"", true);
    }
    assert!(s.done());
    let mut out = Vec::new();
    for b in &batches {
        let text = |name: &str| {
            let c = b.column_by_name(name).unwrap();
            let c = c.as_any().downcast_ref::<StringArray>().unwrap();
            (0..b.len())
                .map(|i| c.is_valid(i).then(|| c.value(i).to_owned()))
                .collect::<Vec<_>>()
        };
        let (url, reason, detail) = (text("url"), text("reason"), text("reason_detail"));
        let body = b.column_by_name("body").unwrap();
        let body = body.as_any().downcast_ref::<BinaryArray>().unwrap();
        let off = b.column_by_name("offset").unwrap();
        let off = off.as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.len() {
            out.push((
                url[i].clone().unwrap_or_default(),
                reason[i].clone(),
                detail[i].clone(),
                body.value(i).to_vec(),
                off.value(i),
            ));
        }
    }
    (out, s.damages().to_vec(), held)
}

fn responses(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let body = format!("<html>page {i} {}</html>", "word ".repeat(20 + i * 7));
            record("response", &format!("http://x/{i}"), body.as_bytes())
        })
        .collect()
}

fn starts(parts: &[Vec<u8>]) -> Vec<u64> {
    let mut at = 0;
    parts
        .iter()
        .map(|p| {
            let s = at;
            at += p.len() as u64;
            s
        })
        .collect()
}

#[test]
fn flipped_bytes_in_a_member_cost_that_record_only() {
    // Seen red on eefbc81: in 53 of 116 flip positions of member 50 of 101 the record was kept (as garbage,
    // or an empty page with status 200) *and* reported damaged, and the 50 records after it were lost.
    let recs = responses(101);
    let members: Vec<Vec<u8>> = recs.iter().map(|r| gz(r)).collect();
    let at = starts(&members)[50];
    let m = &members[50];
    for k in (0..m.len()).step_by(3) {
        let mut bad = m.clone();
        bad[k] ^= 0x55;
        let data = [&members[..50].concat()[..], &bad, &members[51..].concat()].concat();
        for chunk in [data.len(), 4096, 97] {
            let (rows, damages, _) = read(&data, config(true, RESPONSE), chunk);
            assert_eq!(rows.len() + damages.len(), 101, "flip at {k}, chunk {chunk}: {damages:?}");
            for r in &rows {
                let i: usize = r.0.trim_start_matches("http://x/").parse().unwrap();
                assert!(recs[i].ends_with(&[&r.3[..], b"\r\n\r\n"].concat()), "flip at {k}: {} differs", r.0);
            }
            if let Some(d) = damages.first() {
                assert_eq!(d.0, at, "flip at {k}: {d:?}");
            }
        }
    }
}

#[test]
fn a_record_without_content_length_is_damage_and_the_next_ones_are_read() {
    let mut recs = responses(16);
    let text = String::from_utf8(recs[10].clone()).unwrap();
    recs[10] = text.replacen("Content-Length:", "X-Length:", 1).into_bytes();
    for (data, gzip) in [
        (recs.concat(), false),
        (recs.iter().map(|r| gz(r)).collect::<Vec<_>>().concat(), true),
    ] {
        for chunk in [data.len(), 333, 7] {
            let (rows, damages, _) = read(&data, config(gzip, RESPONSE), chunk);
            let urls: Vec<_> = rows.iter().map(|r| r.0.clone()).collect();
            let want: Vec<_> = (0..16).filter(|&i| i != 10).map(|i| format!("http://x/{i}")).collect();
            assert_eq!(urls, want, "gzip {gzip}, chunk {chunk}");
            assert_eq!(damages.len(), 1);
            assert!(damages[0].1.contains("has no valid Content-Length"), "{damages:?}");
        }
    }
}

#[test]
fn bytes_that_are_no_record_are_damage_and_the_scan_goes_on() {
    let recs = responses(6);
    let mut data = recs[..3].concat();
    data.extend_from_slice(b"garbage that is no record\r\nWARC/1.0 but not at a line start\r\n\r\n");
    data.extend(recs[3..].concat());
    for chunk in [data.len(), 50, 3] {
        let (rows, damages, _) = read(&data, config(false, RESPONSE), chunk);
        assert_eq!(rows.len(), 6, "chunk {chunk}");
        assert_eq!(damages.len(), 1);
        assert!(damages[0].1.contains("Invalid WARC header"));
    }
}

#[test]
fn a_response_without_a_status_line_is_rejected_as_bad_http() {
    // Seen red on eefbc81: kept as a page with no status and no reason.
    let mut data = responses(2).concat();
    let block = b"<html>no HTTP head at all</html>";
    let rec = format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://x/bad\r\n\
         Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
        block.len()
    );
    data.extend([rec.as_bytes(), block, b"\r\n\r\n"].concat());
    data.extend(responses(1).concat());
    let (rows, damages, _) = read(&data, config(false, RESPONSE), 64);
    assert!(damages.is_empty());
    let bad: Vec<_> = rows.iter().filter(|r| r.1.is_some()).collect();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].0, "http://x/bad");
    assert_eq!(
        (bad[0].1.as_deref(), bad[0].2.as_deref()),
        (Some("bad_http"), Some("no HTTP status line"))
    );
    assert_eq!(rows.len(), 4);
}

#[test]
fn a_header_over_32_kib_rejects_that_record_only() {
    // Seen red on eefbc81: one damage entry, and the five records after it lost.
    for big_http in [false, true] {
        let filler = "a".repeat(2 << 20);
        let (extra_warc, extra_http) = if big_http {
            (String::new(), format!("Set-Cookie: {filler}\r\n"))
        } else {
            (format!("X-Big: {filler}\r\n"), String::new())
        };
        let block = format!("HTTP/1.1 200 OK\r\n{extra_http}Content-Type: text/html\r\n\r\n<html>big</html>");
        let rec = format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://x/big\r\n{extra_warc}\
             Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
            block.len()
        );
        let recs = responses(8);
        let parts = [&recs[..3], &[rec.into_bytes()], &recs[3..]].concat();
        for (data, gzip) in [
            (parts.concat(), false),
            (parts.iter().map(|r| gz(r)).collect::<Vec<_>>().concat(), true),
        ] {
            let (rows, damages, _) = read(&data, config(gzip, RESPONSE), 1 << 16);
            assert!(damages.is_empty(), "{damages:?}");
            assert_eq!(rows.len(), 9);
            let bad: Vec<_> = rows.iter().filter(|r| r.1.is_some()).collect();
            assert_eq!(bad.len(), 1);
            let reason = if big_http { "bad_http" } else { "bad_warc_header" };
            assert_eq!((bad[0].0.as_str(), bad[0].1.as_deref()), ("http://x/big", Some(reason)));
        }
    }
}

#[test]
fn a_record_over_max_record_bytes_is_rejected_and_never_held_whole() {
    // On eefbc81 a 200 MB record inflated from a ~200 KB member was held whole and kept: the reader peaked at
    // 505 MB (test_warc_loss.py's bomb test, seen red there; the probe saw 1.16 GB). Here the record is
    // 64 MiB of zeros (one gzip member of ~64 KB) read with a 1 MiB cap: the scan buffer stays under 16 MiB.
    let big = vec![0u8; 64 << 20];
    let recs = responses(3);
    let bomb = record("response", "http://x/bomb", &big);
    for gzip in [true, false] {
        let parts = [&recs[..2], std::slice::from_ref(&bomb), &recs[2..]].concat();
        let parts: Vec<Vec<u8>> = if gzip { parts.iter().map(|r| gz(r)).collect() } else { parts };
        let data = parts.concat();
        let bomb_end = parts[..3].concat().len();
        let mut cfg = config(gzip, RESPONSE);
        cfg.max_record_bytes = 1 << 20;
        let (rows, damages, held) = read(&data, cfg, 256 << 10);
        assert!(damages.is_empty(), "{damages:?}");
        let urls: Vec<_> = rows.iter().map(|r| (r.0.as_str(), r.1.as_deref())).collect();
        assert_eq!(
            urls,
            [
                ("http://x/0", None),
                ("http://x/1", None),
                ("http://x/bomb", Some("record_too_large")),
                ("http://x/2", None)
            ]
        );
        if gzip {
            assert!(held < 16 << 20, "the scan buffer grew to {held} bytes");
        }
        // the cut at the end of the skipped block is damage, reported once, with no rejected row
        let cut = &data[..bomb_end - 100];
        let mut cfg = config(gzip, RESPONSE);
        cfg.max_record_bytes = 1 << 20;
        let (rows, damages, _) = read(cut, cfg, 1 << 20);
        assert!(rows.iter().all(|r| r.1.is_none()));
        assert_eq!(damages.len(), 1, "{damages:?}");
    }
}

#[test]
fn bytes_after_the_last_member_that_are_no_member_then_a_member_again() {
    let recs = responses(4);
    let members: Vec<Vec<u8>> = recs.iter().map(|r| gz(r)).collect();
    let data = [&members[..2].concat()[..], b"junk between members", &members[2..].concat()].concat();
    let (rows, damages, _) = read(&data, config(true, RESPONSE), 100);
    assert_eq!(rows.len(), 4);
    assert_eq!(damages.len(), 1);
    assert!(damages[0].1.contains("not a gzip member"));
}

/// A crawl of `n` responses in plain or gzip-per-record layout, and its records.
fn layout(n: usize, gzip: bool) -> (Vec<u8>, Vec<Vec<u8>>) {
    let recs = responses(n);
    let data = if gzip {
        recs.iter().map(|r| gz(r)).collect::<Vec<_>>().concat()
    } else {
        recs.concat()
    };
    (data, recs)
}

proptest! {
    #![proptest_config(crate::fuzz_cases(300))]

    /// One damaged byte anywhere (flipped, dropped, or an inserted one), fed in pieces of any size: no panic,
    /// and the records before it are rows as written. In a `.warc.gz` of one member per record (each checked
    /// by its CRC) every record is a row equal to the original or inside the one damage entry (a byte put between
    /// two members is a damage entry that costs no record). Seen red with the resync keeping zlib's read position
    /// when it waited for more input: the member after a bad one was skipped when its first bytes came late. In a
    /// plain file a byte inside a record's body spares every other record (nothing checks a plain body: the
    /// record itself is kept as it reads); one in a header or between records may change the record's type,
    /// length or URL, which no reader can tell from a real one: the damaged record's row is told by its offset.
    /// The URL case was seen red in CI (plain file, the `1` of `http://x/10` dropped: the row said `x/0`).
    #[test]
    fn one_damaged_byte_costs_at_most_its_record(
        gzip in any::<bool>(),
        at in any::<prop::sample::Index>(),
        how in 0u8..3,
        value in any::<u8>(),
        chunk in 1usize..5000,
    ) {
        let (mut data, recs) = layout(12, gzip);
        let k = at.index(data.len());
        match how {
            0 => data[k] ^= value | 1,
            1 => { data.remove(k); }
            _ => data.insert(k, value),
        }
        let (rows, damages, _) = read(&data, config(gzip, RESPONSE), chunk);
        let parts: Vec<Vec<u8>> = if gzip { recs.iter().map(|r| gz(r)).collect() } else { recs.clone() };
        let at_start = starts(&parts);
        let hit = at_start.iter().rposition(|&s| s as usize <= k).unwrap();
        // the damaged record's row is the one read at its offset: its URL may be the damaged byte ("x/10" -> "x/0")
        let urls: Vec<usize> = rows
            .iter()
            .map(|r| match r.4 as u64 == at_start[hit] {
                true => hit,
                false => r.0.trim_start_matches("http://x/").parse().unwrap_or(hit),
            })
            .collect();
        prop_assert_eq!(&urls[..hit.min(urls.len())], &(0..hit).collect::<Vec<_>>()[..]);
        if gzip {  // one damage entry at most, covering at most its record (a byte between members: none)
            prop_assert!(damages.len() <= 1 && rows.len() <= 12, "{:?}", damages);
            prop_assert!(rows.len() + damages.len() >= 12, "{} rows, {:?}", rows.len(), damages);
        } else {
            let head = recs[hit].windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
            let body = k - starts(&parts)[hit] as usize;
            if body > head + 20 && body + 8 < recs[hit].len() {
                let others: Vec<usize> = urls.iter().copied().filter(|&u| u != hit).collect();
                prop_assert_eq!(others, (0..12).filter(|&u| u != hit).collect::<Vec<_>>());
            }
        }
        for (r, &i) in rows.iter().zip(&urls) {
            prop_assert!(i == hit || recs[i].ends_with(&[&r.3[..], b"\r\n\r\n"].concat()), "{} differs", i);
        }
    }
}

#[test]
fn scan_all_reads_every_record_of_a_whole_crawl() {
    // the helper of the other tests agrees with the framing tests' own
    let data = crawl(3).concat();
    let (rows, damages) = scan_all(&data, config(false, RESPONSE), 10);
    assert_eq!((rows.len(), damages.len()), (3, 0));
}
