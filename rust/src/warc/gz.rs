//! Gzip members of a `.warc.gz`, inflated one after another into the scanner's buffer, with the file offset
//! and decoded position where each member starts, so a record maps to the member that holds it.
//!
//! Three rules make a damaged member cost that member only (`mdf_text.io.warc_units.Members` keeps the same
//! rules for the Python path):
//!
//! * **Held until verified.** A member's inflated bytes are *released* to the scanner when the member ends
//!   with a good CRC, or once they lie more than [`HOLD`] bytes behind its inflated end (a file written as one
//!   member must not be held whole). So a record whose member turns out bad (flipped bytes inflate to garbage
//!   before zlib notices, or only the CRC notices) is never read, where it used to be kept *and* reported.
//!   A member cut short by the input's end keeps its whole records (see [`Inflater::release_records`]).
//! * **Resync.** A bad member (bad deflate data, a bad CRC, bytes that are no gzip member) is one error at its
//!   file offset; its bytes not yet released are dropped, a *cut* marks where they were (a record running into
//!   it is cut, and the error covers it), and inflating goes on at the next gzip header after the bad
//!   member's start whose data inflates to `WARC/1.` (the rule `mdf_text.io.warc_split` plans cuts by). The
//!   member's compressed bytes are kept while it is open (up to [`KEEP`]) so the search can start there: a
//!   corrupt block header can make zlib read past the member's real end before it fails.
//! * **Bounded output.** [`Inflater::pump`] inflates until the scanner has the bytes it asked for, not the
//!   whole input at once: 256 KiB of a gzip bomb inflate to 256 MB (a reader holding a 200 MB record whole
//!   peaked at 505 MB, measured by `test_warc_loss.py`; 156 MB since).
//!
//! Why not `flate2::read::MultiGzDecoder`: it hides member boundaries (the reader's `offset` column is the
//! member's file offset) and calls any error "corrupt deflate stream"; the reader reports *which* member is
//! bad and why, in the words the Python reader uses.

use std::collections::VecDeque;
use std::io::Read;

use flate2::{Decompress, FlushDecompress, Status};

use super::whole::Whole;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// A member the resync may start at: gzip magic and the deflate method.
const MEMBER_HEAD: [u8; 3] = [0x1f, 0x8b, 0x08];
/// What a member holding records inflates to first.
const WARC_HEAD: &[u8] = b"WARC/1.";
/// Inflated bytes per call. Why a scratch buffer and not `decompress_vec`: that zero-fills the vector's whole
/// spare capacity on every call, once per member: megabytes of zeroes per few KB inflated.
const SCRATCH: usize = 1 << 20;
/// Inflated bytes of an open member held back from the scanner until the member is verified (see the module).
pub const HOLD: u64 = 1 << 20;
/// Compressed bytes of the open member kept for a resync search from its start.
const KEEP: usize = 8 << 20;

/// The members inflated so far, where each starts, and what went wrong.
pub struct Inflater {
    member: Option<Decompress>,
    whole: Whole,
    scratch: Vec<u8>,
    /// Compressed bytes: `input[used..]` not inflated yet, `input[keep..used]` the open member's inflated ones.
    input: Vec<u8>,
    used: usize,
    keep: usize,
    /// File offset of `input[0]`.
    input_at: u64,
    /// No input follows `input`.
    last: bool,
    decoded: u64,
    /// Decoded bytes the scanner may read: up to here.
    pub released: u64,
    /// Decoded position where each member starts (non-decreasing) ...
    pub starts: Vec<u64>,
    /// ... and its file offset.
    pub ats: Vec<u64>,
    /// `(offset, message)` of each bad member, in order, for the scanner to take.
    pub errors: Vec<(u64, String)>,
    /// Decoded positions where a bad member's bytes were dropped: a record running into one is cut.
    pub cuts: VecDeque<u64>,
    /// Looking for the next member from this file offset.
    resync_from: Option<u64>,
}

impl Inflater {
    /// `base`: file offset of the first byte that will be fed.
    pub fn new(base: u64) -> Self {
        Inflater {
            member: None,
            whole: Whole::default(),
            scratch: vec![0; SCRATCH],
            input: Vec::new(),
            used: 0,
            keep: 0,
            input_at: base,
            last: false,
            decoded: 0,
            released: 0,
            starts: Vec::new(),
            ats: Vec::new(),
            errors: Vec::new(),
            cuts: VecDeque::new(),
            resync_from: None,
        }
    }

    /// File offset of the member holding decoded position `pos` (the last one starting at or before it).
    pub fn member_of(&self, pos: u64) -> u64 {
        let k = self.starts.partition_point(|&s| s <= pos);
        if k == 0 {
            self.ats.first().copied().unwrap_or(self.input_at)
        } else {
            self.ats[k - 1]
        }
    }

    /// True once every byte fed is inflated (or found bad) and no more will come.
    pub fn finished(&self) -> bool {
        self.last
            && self.used >= self.input.len()
            && self.member.is_none()
            && self.resync_from.is_none()
    }

    /// Drop compressed bytes no longer needed: before the open member (or the resync point), and of a big open
    /// member all but its last [`KEEP`].
    fn compact(&mut self) {
        let keep = self.keep.max(self.used.saturating_sub(KEEP)).min(self.used);
        if keep > 0 && (keep >= 1 << 20 || keep * 2 >= self.input.len()) {
            self.input.drain(..keep);
            self.input_at += keep as u64;
            self.used -= keep;
            self.keep -= keep.min(self.keep);
        }
    }

    /// Append the next `data` bytes of the file; `last`: no bytes follow them.
    pub fn push(&mut self, data: &[u8], last: bool) {
        self.compact();
        self.input.extend_from_slice(data);
        self.last = last;
    }

    /// Append up to `n` bytes read from `r`; `last`: `n` bytes end the input (fewer always do).
    pub fn read_from(
        &mut self,
        r: &mut impl Read,
        n: usize,
        last: bool,
    ) -> std::io::Result<usize> {
        self.compact();
        let got = r.take(n as u64).read_to_end(&mut self.input)?;
        self.last = last || got < n;
        Ok(got)
    }

    /// Inflate onto `out` (whose end is decoded position `self.decoded`) until `released >= target`, or the
    /// input runs out. Returns true when it stopped for want of input (feed more), false when `target` was met.
    pub fn pump(&mut self, out: &mut Vec<u8>, target: u64) -> bool {
        while self.released < target {
            if self.resync_from.is_some() {
                if !self.resync() {
                    return true;
                }
                continue;
            }
            if self.member.is_none() && !self.open(out) {
                return true;
            }
            if self.member.is_some() && !self.stream(out) {
                return true;
            }
        }
        false
    }

    /// Start the member at `input[used]` (inflated whole when it can be); false when there is none yet.
    fn open(&mut self, out: &mut Vec<u8>) -> bool {
        let rest = self.input.len() - self.used;
        if rest == 0 || (rest < GZIP_MAGIC.len() && !self.last) {
            return false; // the end, or a member's first bytes split across reads: read on
        }
        let at = self.input_at + self.used as u64;
        if !self.input[self.used..].starts_with(&GZIP_MAGIC) {
            let msg = format!("bytes at {at}, after the last gzip member, are not a gzip member");
            self.fail(out, at, msg, false);
            return true;
        }
        self.starts.push(self.decoded);
        self.ats.push(at);
        self.keep = self.used;
        let before = out.len();
        if let Some(used) = self.whole.member(&self.input[self.used..], out, SCRATCH) {
            self.decoded += (out.len() - before) as u64;
            self.used += used;
            self.verified();
            return true;
        }
        self.member = Some(Decompress::new_gzip(15));
        true
    }

    /// Inflate one scratch buffer of the open member; false when it needs more input.
    fn stream(&mut self, out: &mut Vec<u8>) -> bool {
        let member = self.member.as_mut().expect("a member is open");
        let (in0, out0) = (member.total_in(), member.total_out());
        let status = member.decompress(
            &self.input[self.used..],
            &mut self.scratch,
            FlushDecompress::None,
        );
        let used = (member.total_in() - in0) as usize;
        let made = (member.total_out() - out0) as usize;
        out.extend_from_slice(&self.scratch[..made]);
        self.decoded += made as u64;
        self.used += used;
        let member_at = *self.ats.last().expect("a member is open");
        match status {
            Ok(Status::StreamEnd) => {
                self.member = None;
                self.verified();
            }
            Ok(_) if used == 0 && made == 0 => {
                if !self.last {
                    return false;
                }
                self.release_records(out);
                let msg = format!("gzip member at byte {member_at} is cut short");
                self.fail(out, member_at, msg, true);
            }
            Ok(_) => self.released = self.released.max(self.decoded.saturating_sub(HOLD)),
            Err(e) => {
                let why = e.message().unwrap_or("invalid deflate data");
                let msg = format!(
                    "bad gzip data in the member at byte {member_at}: Error -3 while decompressing data: {why}"
                );
                self.fail(out, member_at, msg, true);
            }
        }
        true
    }

    /// The open member ended with a good CRC: release it.
    fn verified(&mut self) {
        self.released = self.decoded;
        self.keep = self.used;
    }

    /// The input ended inside the open member. A cut does not spoil what was inflated before it, so the whole
    /// records among the held bytes are released: up to the last `WARC/1.` line start. The record the cut falls
    /// in is the member's damage, and so is a record followed by no record start (a corrupt end-of-block can
    /// read on into the trailer and end the same way, with garbage after a record zlib never verified).
    fn release_records(&mut self, out: &[u8]) {
        let held = out.len() - (self.decoded - self.released) as usize;
        let mut end = out.len();
        while let Some(k) = memchr::memmem::rfind(&out[held..end], WARC_HEAD) {
            if k > 0 && out[held + k - 1] == b'\n' {
                self.released += k as u64;
                return;
            }
            end = held + k;
        }
    }

    /// A bad member (`member`: one was opened at `at`) or bytes that are no member at `at`: drop what was not
    /// released, mark the cut, and look for the next member after `at`.
    fn fail(&mut self, out: &mut Vec<u8>, at: u64, msg: String, member: bool) {
        self.errors.push((at, msg));
        let dropped = (self.decoded - self.released) as usize;
        out.truncate(out.len() - dropped);
        self.decoded = self.released;
        if member && self.starts.last() == Some(&self.decoded) {
            self.starts.pop(); // none of its bytes stay
            self.ats.pop();
        }
        self.cuts.push_back(self.decoded);
        self.member = None;
        self.resync_from = Some(at + 1);
    }

    /// Look for the next member from `resync_from`: false when the input must grow to decide.
    fn resync(&mut self) -> bool {
        let from = self.resync_from.expect("resyncing");
        let mut i = from.saturating_sub(self.input_at) as usize;
        loop {
            let Some(k) = memchr::memmem::find(&self.input[i.min(self.input.len())..], &MEMBER_HEAD)
            else {
                if self.last {
                    self.used = self.input.len(); // no member follows: the rest was the damage
                    self.resync_from = None;
                    return true;
                }
                // keep what may be a member's first bytes; before them is the damage (zlib may have read past
                // the bad member's end into its bit buffer: `used` says nothing now)
                let tail = self.input.len().saturating_sub(MEMBER_HEAD.len() - 1).max(i);
                self.resync_from = Some(self.input_at + tail as u64);
                self.used = tail;
                self.keep = tail;
                return false;
            };
            let c = i + k;
            match inflates_to_warc(&self.input[c..]) {
                Some(true) => {
                    self.used = c;
                    self.keep = c;
                    self.resync_from = None;
                    return true;
                }
                Some(false) => i = c + 1,
                None if self.last => i = c + 1,
                None => {
                    self.resync_from = Some(self.input_at + c as u64);
                    self.used = c;
                    self.keep = c;
                    return false;
                }
            }
        }
    }
}

/// Does the gzip member at the start of `data` inflate to `WARC/1.`? `None`: `data` is too short to tell.
fn inflates_to_warc(data: &[u8]) -> Option<bool> {
    let mut d = Decompress::new_gzip(15);
    let mut head = [0u8; WARC_HEAD.len()];
    match d.decompress(data, &mut head, FlushDecompress::None) {
        Err(_) => Some(false),
        Ok(_) if d.total_out() as usize == head.len() => Some(head == WARC_HEAD),
        Ok(Status::StreamEnd) => Some(false),
        Ok(_) if (d.total_in() as usize) < data.len() => Some(false), // stuck with input left: not deflate
        Ok(_) => None,
    }
}
