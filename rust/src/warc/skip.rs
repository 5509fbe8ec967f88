//! A record's edge cases that wait on bytes: a block too long to hold streams past (its rejected row is
//! pushed once the block is whole), and a record the scanned bytes cut short waits, is dropped or is damage.
//! Split from [`super::record`], which parses the records these come from.

use super::batch::Row;
use super::record::push;
use super::{Edge, Scanner, Step, STEP};

/// A rejected row waiting for its record's block to stream past (only then is the record known whole).
pub struct Pending {
    pub(super) id: Option<String>,
    pub(super) url: Option<String>,
    pub(super) date: Option<String>,
    pub(super) warc_type: &'static str,
    pub(super) status: Option<u16>,
    pub(super) content_type: Option<String>,
    pub(super) offset: u64,
    pub(super) member_index: i32,
    pub(super) reason: &'static str,
    pub(super) detail: String,
}

impl Scanner {
    /// The record at `pos` needs bytes up to `need` past it that are not there: wait (more may come), drop it
    /// (a cut: its member's damage covers it), or report it cut short by the input's end (`msg(offset)`).
    pub(super) fn short(
        &mut self,
        end: usize,
        edge: Edge,
        need: usize,
        msg: impl FnOnce(u64) -> String,
    ) -> Option<Step> {
        match edge {
            Edge::Open => {
                self.need = need;
                Some(Step::More)
            }
            Edge::Eof => {
                let offset = self.file_offset(self.pos);
                self.damage(offset, msg(offset));
                self.pos = end;
                None
            }
            Edge::Cut => {
                self.pos = end;
                None
            }
        }
    }

    /// Stream past the block of the record being skipped; its rejected row once the block is whole.
    pub(super) fn skip_block(&mut self, end: usize, edge: Edge) -> Option<Step> {
        let skip = self.skip.as_mut().expect("skipping");
        let n = skip.left.min((end - self.pos) as u64);
        self.pos += n as usize;
        skip.left -= n;
        if skip.left > 0 {
            match edge {
                Edge::Open => {
                    self.need = skip.left.min(STEP as u64) as usize;
                    return Some(Step::More);
                }
                Edge::Eof => {
                    let (offset, length) = (skip.offset, skip.length);
                    let msg = format!(
                        "truncated WARC record at byte {offset}: {} of {length} bytes",
                        length - skip.left
                    );
                    self.damage(offset, msg);
                }
                Edge::Cut => {}
            }
            self.skip = None;
            return None;
        }
        if let Some(p) = self.skip.take().and_then(|s| s.row) {
            let row = Row {
                id: p.id.as_deref(),
                url: p.url.as_deref(),
                date: p.date.as_deref(),
                warc_type: p.warc_type,
                status: p.status,
                content_type: p.content_type.as_deref(),
                body: &[],
                offset: p.offset,
                member_index: p.member_index,
                chunked: false,
                content_encoding: None,
                reason: Some(p.reason),
                detail: Some(&p.detail),
            };
            push(&mut self.batch, &mut self.ready, &self.cfg, &row);
        }
        None
    }
}
