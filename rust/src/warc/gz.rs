//! Gzip members of a `.warc.gz`, inflated one after another into the scanner's buffer, with the file offset
//! and decoded position where each member starts, so a record maps to the member that holds it.
//!
//! Why not `flate2::read::MultiGzDecoder`: it hides member boundaries (the reader's `offset` column is the
//! member's file offset) and calls any error "corrupt deflate stream"; the reader reports *which* member is
//! bad and why, in the words the Python reader used (`mdf_text.io.warc_frame.Members`).

use flate2::{Decompress, FlushDecompress, Status};

use super::whole::Whole;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// Inflated bytes per call. Why a scratch buffer and not `decompress_vec`: that zero-fills the vector's whole
/// spare capacity on every call, once per member: megabytes of zeroes per few KB inflated.
const SCRATCH: usize = 1 << 20;

/// Where each member starts and why the stream ended early, if it did.
pub struct Inflater {
    member: Option<Decompress>,
    whole: Whole,
    scratch: Vec<u8>,
    pending: Vec<u8>,
    fed: u64,
    decoded: u64,
    /// Decoded position where each member starts (non-decreasing) ...
    pub starts: Vec<u64>,
    /// ... and its file offset.
    pub ats: Vec<u64>,
    /// `(offset, message)` once the compressed stream is found bad or cut; nothing is inflated after it.
    pub error: Option<(u64, String)>,
}

impl Inflater {
    /// `base`: file offset of the first byte that will be fed.
    pub fn new(base: u64) -> Self {
        Inflater {
            member: None,
            whole: Whole::default(),
            scratch: vec![0; SCRATCH],
            pending: Vec::new(),
            fed: base,
            decoded: 0,
            starts: Vec::new(),
            ats: Vec::new(),
            error: None,
        }
    }

    /// File offset of the member holding decoded position `pos` (the last one starting at or before it).
    pub fn member_of(&self, pos: u64) -> u64 {
        let k = self.starts.partition_point(|&s| s <= pos);
        if k == 0 {
            self.ats.first().copied().unwrap_or(self.fed)
        } else {
            self.ats[k - 1]
        }
    }

    /// Inflate the next `data` bytes of the file onto `out`; `last`: no bytes follow (a member still open
    /// then is cut short). Returns once every byte is inflated or kept for the next call.
    pub fn push(&mut self, data: &[u8], out: &mut Vec<u8>, last: bool) {
        self.fed += data.len() as u64;
        if self.error.is_some() {
            return;
        }
        let mut carried = std::mem::take(&mut self.pending);
        let input: &[u8] = if carried.is_empty() {
            data
        } else {
            carried.extend_from_slice(data);
            &carried
        };
        let end = self.fed; // file offset just past `input`
        let mut i = 0;
        let mut full = false; // the last call filled the scratch: zlib may hold more output
        while i < input.len() || (full && self.member.is_some()) {
            let at = end - (input.len() - i) as u64;
            if self.member.is_none() {
                if input.len() - i < GZIP_MAGIC.len() && !last {
                    break; // a member's first bytes split across reads: read on
                }
                if !input[i..].starts_with(&GZIP_MAGIC) {
                    let msg =
                        format!("bytes at {at}, after the last gzip member, are not a gzip member");
                    self.error = Some((at, msg));
                    return;
                }
                self.starts.push(self.decoded);
                self.ats.push(at);
                let before = out.len();
                if let Some(used) = self.whole.member(&input[i..], out, SCRATCH) {
                    self.decoded += (out.len() - before) as u64;
                    i += used;
                    continue;
                }
                self.member = Some(Decompress::new_gzip(15));
            }
            let member = self.member.as_mut().expect("member set above");
            let (in0, out0) = (member.total_in(), member.total_out());
            let status = member.decompress(&input[i..], &mut self.scratch, FlushDecompress::None);
            let used = (member.total_in() - in0) as usize;
            let made = (member.total_out() - out0) as usize;
            out.extend_from_slice(&self.scratch[..made]);
            full = made == SCRATCH;
            self.decoded += made as u64;
            i += used;
            match status {
                Ok(Status::StreamEnd) => self.member = None,
                Ok(_) if used == 0 && made == 0 => break, // needs more input
                Ok(_) => {}
                Err(e) => {
                    let member_at = *self.ats.last().expect("a member is open");
                    let why = e.message().unwrap_or("invalid deflate data");
                    let msg = format!(
                        "bad gzip data in the member at byte {member_at}: Error -3 while decompressing data: {why}"
                    );
                    self.error = Some((member_at, msg));
                    self.member = None;
                    return;
                }
            }
        }
        self.pending = input[i..].to_vec();
        if last && self.member.is_some() {
            let member_at = *self.ats.last().expect("a member is open");
            self.error = Some((
                member_at,
                format!("gzip member at byte {member_at} is cut short"),
            ));
            self.member = None;
        }
    }
}
