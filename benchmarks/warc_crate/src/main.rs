//! The `fastwarc` crate route, measured: the per-record work of mdf's `warc` reader (record id, URI, date,
//! HTTP status and Content-Type, raw body and its length check, offset) done in Rust into Arrow-shaped
//! buffers (values + offsets), beside the bare crate loop. CPU time of the process, best of 7. Compare with
//! `benchmarks/bench_warc_read.py` on the same files (it generates them into `benchmarks/.data/warc/`).
use fastwarc::warc::iter::{ArchiveIterator, ArchiveIteratorOptions};
use fastwarc::warc::record::{AutoDecode, SharedWarcRecord, WarcRecordType};
use std::io::Read;

fn cpu() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn opts() -> ArchiveIteratorOptions {
    ArchiveIteratorOptions {
        parse_http: true,
        decode_http_payload: AutoDecode::None,
        inplace: true,
        ..Default::default()
    }
}

fn bare(path: &str) -> (usize, usize) {
    let (mut n, mut bytes) = (0, 0);
    let mut buf = Vec::new();
    for rec in ArchiveIterator::from_path_with_options(path, opts()).unwrap() {
        let rec = rec.unwrap();
        rec.with_mut(|r| {
            if r.record_type() != WarcRecordType::Response {
                return;
            }
            buf.clear();
            r.reader_mut().unwrap().read_to_end(&mut buf).unwrap();
            n += 1;
            bytes += buf.len();
        });
    }
    (n, bytes)
}

fn columns(path: &str) -> (usize, usize) {
    // what an Arrow batch needs: string columns as (values, offsets), body values + offsets
    let mut body: Vec<u8> = Vec::new();
    let mut body_off: Vec<i32> = vec![0];
    let mut strs: Vec<u8> = Vec::new();
    let mut str_off: Vec<i32> = vec![0];
    let mut status: Vec<Option<u16>> = Vec::new();
    let mut offsets: Vec<u64> = Vec::new();
    let mut n = 0;
    let mut total = 0;
    for rec in ArchiveIterator::from_path_with_options(path, opts()).unwrap() {
        let rec = rec.unwrap();
        rec.with_mut(|r| {
            if r.record_type() != WarcRecordType::Response {
                return;
            }
            for key in ["WARC-Record-ID", "WARC-Target-URI", "WARC-Date"] {
                if let Some(v) = r.headers().get(key) {
                    strs.extend_from_slice(v.as_bytes());
                }
                str_off.push(strs.len() as i32);
            }
            let (st, ct) = match r.http_headers() {
                Some(h) => (h.status_code(), h.get("Content-Type").map(|c| c.into_owned())),
                None => (None, None),
            };
            if let Some(ct) = ct {
                strs.extend_from_slice(ct.as_bytes());
            }
            str_off.push(strs.len() as i32);
            status.push(st);
            offsets.push(r.stream_pos());
            body.reserve(r.content_length() as usize);
            let before = body.len();
            r.reader_mut().unwrap().read_to_end(&mut body).unwrap();
            let got = body.len() - before;
            assert!(got as u64 >= r.content_length());
            body_off.push(body.len() as i32);
            n += 1;
            if n % 1024 == 0 {
                total += body.len();
                body = Vec::new();
                body_off = vec![0];
                strs = Vec::new();
                str_off = vec![0];
                status.clear();
                offsets.clear();
            }
        });
    }
    (n, total + body.len())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    for path in &args[1..] {
        let mut best = [f64::MAX; 2];
        let mut counts = (0, 0);
        for _ in 0..7 {
            let t = cpu();
            counts = bare(path);
            best[0] = best[0].min(cpu() - t);
            let t = cpu();
            let c = columns(path);
            best[1] = best[1].min(cpu() - t);
            assert_eq!(c.0, counts.0);
        }
        println!(
            "{path}: {} responses; crate bare {:.4} CPU s, crate columns {:.4} CPU s",
            counts.0, best[0], best[1]
        );
    }
}
