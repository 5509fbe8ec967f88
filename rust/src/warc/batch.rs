//! The columns of the batch being built, appended per record and handed over as one Arrow struct array.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Int16Builder, Int32Builder, Int64Builder, StringBuilder,
};
use arrow_array::{ArrayRef, BinaryArray, StructArray};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{Field, Fields};

use crate::recycle::POOL;

/// One row's fields (bodies raw: the Python side undoes the rare transfer or content encodings).
pub struct Row<'a> {
    pub id: Option<&'a str>,
    pub url: Option<&'a str>,
    pub date: Option<&'a str>,
    pub warc_type: &'a str,
    pub status: Option<u16>,
    pub content_type: Option<&'a str>,
    pub body: &'a [u8],
    pub offset: u64,
    pub member_index: i32,
    pub chunked: bool,
    pub content_encoding: Option<&'a str>,
    /// Why the record is rejected (`bad_http`, ...; the reader prefixes `reader:`), and the detail.
    pub reason: Option<&'a str>,
    pub detail: Option<&'a str>,
}

/// Column builders of one batch.
pub struct Batch {
    id: StringBuilder,
    url: StringBuilder,
    date: StringBuilder,
    warc_type: StringBuilder,
    status: Int16Builder,
    content_type: StringBuilder,
    /// `content_type` split ([`super::ctype`]); both null where it is not ASCII (Python splits those rows).
    mime: StringBuilder,
    charset: StringBuilder,
    /// The body column's bytes, in a buffer of the recycling pool (see `crate::recycle`: it is most of a
    /// batch's memory, and a fresh one faulted in page by page cost more than the whole scan), and offsets.
    body: Vec<u8>,
    body_offsets: Vec<i32>,
    offset: Int64Builder,
    member_index: Int32Builder,
    chunked: BooleanBuilder,
    content_encoding: StringBuilder,
    reason: StringBuilder,
    detail: StringBuilder,
    pub rows: usize,
    pub body_bytes: usize,
}

impl Batch {
    /// Room for `rows` rows and `bytes` body bytes (the previous batch's size: a batch's bodies are copied
    /// once, not again each time the buffer doubles).
    pub fn new(rows: usize, bytes: usize) -> Self {
        let text = || StringBuilder::with_capacity(rows, rows * 64);
        Batch {
            id: text(),
            url: text(),
            date: StringBuilder::with_capacity(rows, rows * 20),
            warc_type: StringBuilder::with_capacity(rows, rows * 8),
            status: Int16Builder::with_capacity(rows),
            content_type: text(),
            mime: StringBuilder::with_capacity(rows, rows * 16),
            charset: StringBuilder::with_capacity(rows, rows * 8),
            body: POOL.take(bytes),
            body_offsets: {
                let mut o = Vec::with_capacity(rows + 1);
                o.push(0);
                o
            },
            offset: Int64Builder::with_capacity(rows),
            member_index: Int32Builder::with_capacity(rows),
            chunked: BooleanBuilder::with_capacity(rows),
            content_encoding: StringBuilder::new(),
            reason: StringBuilder::new(),
            detail: StringBuilder::new(),
            rows: 0,
            body_bytes: 0,
        }
    }

    pub fn push(&mut self, r: &Row<'_>) {
        self.id.append_option(r.id);
        self.url.append_option(r.url);
        self.date.append_option(r.date);
        self.warc_type.append_value(r.warc_type);
        // int16 as the schema says; a status past 32767 is not an HTTP status
        self.status
            .append_option(r.status.and_then(|s| i16::try_from(s).ok()));
        self.content_type.append_option(r.content_type);
        let (mime, charset) = r
            .content_type
            .and_then(super::ctype::split)
            .unwrap_or_default();
        self.mime.append_option(mime);
        self.charset.append_option(charset);
        self.body.extend_from_slice(r.body);
        // as BinaryBuilder does: a batch past 2 GiB of bodies is a bug in the caller's byte limit
        let end = i32::try_from(self.body.len()).expect("batch body bytes exceed i32 offsets");
        self.body_offsets.push(end);
        self.offset.append_value(r.offset as i64);
        self.member_index.append_value(r.member_index);
        self.chunked.append_value(r.chunked);
        self.content_encoding.append_option(r.content_encoding);
        self.reason.append_option(r.reason);
        self.detail.append_option(r.detail);
        self.rows += 1;
        self.body_bytes += r.body.len();
    }

    /// The batch as a struct array (field names: see `FIELDS`).
    pub fn finish(&mut self) -> StructArray {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.id.finish()),
            Arc::new(self.url.finish()),
            Arc::new(self.date.finish()),
            Arc::new(self.warc_type.finish()),
            Arc::new(self.status.finish()),
            Arc::new(self.content_type.finish()),
            Arc::new(self.finish_body()),
            Arc::new(self.offset.finish()),
            Arc::new(self.member_index.finish()),
            Arc::new(self.chunked.finish()),
            Arc::new(self.content_encoding.finish()),
            Arc::new(self.mime.finish()),
            Arc::new(self.charset.finish()),
            Arc::new(self.reason.finish()),
            Arc::new(self.detail.finish()),
        ];
        let fields: Fields = FIELDS
            .iter()
            .zip(&columns)
            .map(|(name, c)| Field::new(*name, c.data_type().clone(), true))
            .collect();
        self.rows = 0;
        self.body_bytes = 0;
        StructArray::new(fields, columns, None)
    }

    /// The body column, its bytes lent to Arrow from the pool (the scanner starts a new batch after this).
    fn finish_body(&mut self) -> BinaryArray {
        let values = std::mem::take(&mut self.body);
        let offsets = std::mem::replace(&mut self.body_offsets, vec![0]);
        // `OffsetBuffer::new` checks that the offsets start at 0 and never decrease
        let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
        BinaryArray::new(offsets, POOL.lend(values), None)
    }
}

impl Drop for Batch {
    /// A batch never finished (the reader stopped early) gives its body buffer back.
    fn drop(&mut self) {
        POOL.give(std::mem::take(&mut self.body));
    }
}

/// Column names of a batch, in order.
pub const FIELDS: [&str; 15] = [
    "id",
    "url",
    "date",
    "warc_type",
    "http_status",
    "content_type",
    "body",
    "offset",
    "member_index",
    "chunked",
    "content_encoding",
    "mime",
    "charset",
    "reason",
    "reason_detail",
];
