//! Framing edge cases: records and headers split across chunks of every size, several records per gzip
//! member, a plain (not gzip) file, and damage (a cut member, a cut record, bytes that are no record).

use std::io::Write;

use arrow_array::{Array, BinaryArray, Int32Array, Int64Array, StringArray, StructArray};
use flate2::write::GzEncoder;
use flate2::Compression;

use super::{Config, Scanner};

pub(super) fn record(kind: &str, url: &str, body: &[u8]) -> Vec<u8> {
    let (ctype, block) = if kind == "response" {
        let mut b = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n".to_vec();
        b.extend_from_slice(body);
        ("application/http; msgtype=response", b)
    } else {
        ("application/warc-fields", body.to_vec())
    };
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {url}\r\nWARC-Record-ID: <urn:{url}>\r\n\
         WARC-Date: 2024-03-05T10:00:00Z\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    r.extend_from_slice(&block);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

pub(super) fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

pub(super) fn crawl(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .flat_map(|i| {
            let body = format!("<html>page {i} {}</html>", "word ".repeat(i * 50));
            [
                record("response", &format!("http://x/{i}"), body.as_bytes()),
                record("metadata", "m", b"a: b\r\n"),
            ]
        })
        .collect()
}

/// Rows as (url, body, offset, member_index), and the damage, feeding `data` in `chunk`-byte pieces.
pub(super) type Rows = Vec<(String, Vec<u8>, i64, i32)>;

pub(super) fn config(gzip: bool, wanted: u32) -> Config {
    Config {
        gzip,
        base: 0,
        wanted,
        mime_exact: None,
        mime_prefixes: Vec::new(),
        batch_rows: 3,
        max_batch_bytes: 1 << 20,
        max_record_bytes: 1 << 30,
    }
}

fn scan(data: &[u8], gzip: bool, chunk: usize, wanted: u32) -> (Rows, Option<(u64, String)>) {
    let (rows, damages) = scan_all(data, config(gzip, wanted), chunk);
    assert!(damages.len() <= 1, "{damages:?}");
    (rows, damages.into_iter().next())
}

/// Rows and every damage entry of `data` fed in `chunk`-byte pieces.
pub(super) fn scan_all(data: &[u8], cfg: Config, chunk: usize) -> (Rows, Vec<(u64, String)>) {
    let mut s = Scanner::new(cfg);
    let mut batches: Vec<StructArray> = Vec::new();
    let pieces: Vec<&[u8]> = data.chunks(chunk.max(1)).collect();
    for (i, p) in pieces.iter().enumerate() {
        s.feed(p, i + 1 == pieces.len());
        batches.extend(s.take_batches());
    }
    if pieces.is_empty() {
        s.feed(b"", true);
        batches.extend(s.take_batches());
    }
    assert!(s.done());
    let mut rows = Vec::new();
    for b in &batches {
        assert!(b.len() <= 3);
        let col = |name: &str| b.column_by_name(name).unwrap().clone();
        let url = col("url");
        let url = url.as_any().downcast_ref::<StringArray>().unwrap();
        let body = col("body");
        let body = body.as_any().downcast_ref::<BinaryArray>().unwrap();
        let off = col("offset");
        let off = off.as_any().downcast_ref::<Int64Array>().unwrap();
        let idx = col("member_index");
        let idx = idx.as_any().downcast_ref::<Int32Array>().unwrap();
        for i in 0..b.len() {
            rows.push((
                url.value(i).to_owned(),
                body.value(i).to_vec(),
                off.value(i),
                idx.value(i),
            ));
        }
    }
    (rows, s.damages().to_vec())
}

const RESPONSE: u32 = 4;

#[test]
fn plain_records_split_anywhere_read_the_same() {
    let recs = crawl(5);
    let data = recs.concat();
    let (whole, damage) = scan(&data, false, data.len(), RESPONSE);
    assert_eq!(damage, None);
    assert_eq!(whole.len(), 5);
    let mut at = 0i64;
    for (i, r) in whole.iter().enumerate() {
        assert_eq!(r.0, format!("http://x/{i}"));
        assert!(r.1.starts_with(b"<html>page") && r.1.ends_with(b"</html>"));
        assert_eq!((r.2, r.3), (at, 0));
        at += (recs[2 * i].len() + recs[2 * i + 1].len()) as i64;
    }
    for chunk in [1, 2, 3, 7, 64, 333, 4096] {
        assert_eq!(
            scan(&data, false, chunk, RESPONSE),
            (whole.clone(), None),
            "chunk {chunk}"
        );
    }
}

#[test]
fn gzip_members_of_one_or_several_records_map_rows_to_their_member() {
    let recs = crawl(4);
    let one: Vec<Vec<u8>> = recs.iter().map(|r| gz(r)).collect();
    let pairs: Vec<Vec<u8>> = recs.chunks(3).map(|c| gz(&c.concat())).collect();
    let plain = scan(&recs.concat(), false, 1 << 20, RESPONSE | 32).0;
    for members in [one, pairs] {
        let data = members.concat();
        let starts: Vec<i64> = members
            .iter()
            .scan(0i64, |s, m| {
                let at = *s;
                *s += m.len() as i64;
                Some(at)
            })
            .collect();
        for chunk in [1, 5, 100, data.len()] {
            let (rows, damage) = scan(&data, true, chunk, RESPONSE | 32);
            assert_eq!(damage, None);
            assert_eq!(rows.len(), plain.len());
            let mut seen = std::collections::HashMap::new();
            for (r, p) in rows.iter().zip(&plain) {
                assert_eq!((&r.0, &r.1), (&p.0, &p.1));
                assert!(starts.contains(&r.2), "{} is no member start", r.2);
                let n = seen.entry(r.2).or_insert(-1);
                *n += 1;
                assert_eq!(r.3, *n, "member_index counts the records of a member");
            }
        }
    }
}

#[test]
fn a_cut_gzip_member_is_damage_at_that_member() {
    let recs = crawl(3);
    let members: Vec<Vec<u8>> = recs.iter().map(|r| gz(r)).collect();
    let start = members[..5].concat().len();
    let mut data = members[..5].concat();
    data.extend_from_slice(&members[5][..members[5].len() / 2]); // the last metadata record's member
    let (rows, damage) = scan(&data, true, 1000, RESPONSE);
    assert_eq!(rows.len(), 3);
    let (at, msg) = damage.expect("damage");
    assert_eq!(at, start as u64);
    assert!(msg.contains("cut short"), "{msg}");
}

#[test]
fn a_cut_record_is_damage_and_the_rows_before_it_stay() {
    let recs = crawl(3);
    let data = recs.concat();
    let last = data.len() - recs[5].len();
    for keep in [10, 150, recs[5].len() - 20] {
        let (rows, damage) = scan(&data[..last + keep], false, 64, RESPONSE);
        assert_eq!(rows.len(), 3);
        let (at, msg) = damage.expect("damage");
        assert_eq!(at, last as u64);
        assert!(msg.starts_with("truncated WARC"), "{msg}");
    }
    // the cut record is one asked for: the same, counted in body bytes after the HTTP headers
    let cut = data.len() - recs[5].len() - 30;
    let (rows, damage) = scan(&data[..cut], false, 64, RESPONSE);
    assert_eq!(rows.len(), 2);
    assert!(damage
        .unwrap()
        .1
        .starts_with("truncated WARC record at byte"));
}

#[test]
fn bytes_that_are_no_record_are_damage_not_silence() {
    let mut data = crawl(1).concat();
    let end = data.len();
    data.extend_from_slice(b"\r\n\r\nnot a record\r\n");
    let (rows, damage) = scan(&data, false, 10, RESPONSE);
    assert_eq!(rows.len(), 1);
    let (at, msg) = damage.expect("damage");
    assert_eq!(at, end as u64, "the end of the last record");
    assert!(msg.contains("Invalid WARC header"), "{msg}");
    // after the last gzip member
    let mut data = gz(&crawl(1).concat());
    data.extend_from_slice(b"junk");
    let (rows, damage) = scan(&data, true, 10, RESPONSE);
    assert_eq!(rows.len(), 1);
    assert!(damage.unwrap().1.contains("not a gzip member"));
    // bad deflate data inside a member
    let mut data = gz(&crawl(2).concat());
    let n = data.len();
    data[n / 2] ^= 0xff;
    data[n / 2 + 1] ^= 0x55;
    let (_, damage) = scan(&data, true, 100, RESPONSE);
    // zlib either refuses the bytes or inflates garbage that is no record: damage at the member either way
    assert_eq!(damage.expect("damage").0, 0);
}

#[test]
fn blank_lines_and_empty_input_are_no_damage() {
    let mut data = b"\r\n \r\n".to_vec();
    data.extend(crawl(2).concat());
    data.extend_from_slice(b"\r\n\r\n\r\n");
    let (rows, damage) = scan(&data, false, 3, RESPONSE);
    assert_eq!((rows.len(), damage), (2, None));
    assert_eq!(rows[0].2, 5);
    assert_eq!(scan(b"", false, 1, RESPONSE), (vec![], None));
    assert_eq!(scan(b"", true, 1, RESPONSE), (vec![], None));
}

#[test]
fn a_member_inflating_past_the_scratch_buffer_is_read_whole() {
    // one member of ~1 MiB inflated (4x the 256 KiB scratch), fed as one last chunk: zlib's held-back output
    // must still be drained, not reported as a member cut short
    let body = "<p>same words again</p>".repeat(50_000);
    let data = gz(&record("response", "http://big/", body.as_bytes()));
    for chunk in [data.len(), 1000] {
        let (rows, damage) = scan(&data, true, chunk, RESPONSE);
        assert_eq!(damage, None);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].1, body.as_bytes());
    }
}

#[test]
fn reading_from_a_file_gives_what_feeding_bytes_gives() {
    let recs = crawl(4);
    let members: Vec<Vec<u8>> = recs.iter().map(|r| gz(r)).collect();
    for (data, gzip) in [(recs.concat(), false), (members.concat(), true)] {
        let fed = scan(&data, gzip, 100, RESPONSE | 32);
        let mut s = Scanner::new(config(gzip, RESPONSE | 32));
        let mut r = std::io::Cursor::new(&data);
        let mut rows = 0;
        while !s.done() {
            s.feed_read(&mut r, 100, false).unwrap(); // a short read (the file's end) ends the input
            rows += s.take_batches().iter().map(|b| b.len()).sum::<usize>();
        }
        assert_eq!((rows, s.damages().first().cloned()), (fed.0.len(), fed.1));
    }
}
