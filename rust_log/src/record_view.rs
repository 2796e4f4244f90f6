//! Borrowed views of the records of a decompressed magic-2 record payload
//! (attributes, timestamp and offset deltas, key, whether a value is
//! present, and the raw bytes), and re-encoding of a record with new
//! deltas. Used by the cleaner, which must read keys and rewrite batches.

use crate::error::{LogError, Result};

/// One record inside a payload.
#[derive(Debug, Clone, Copy)]
pub struct RecordView<'a> {
    /// Record attributes byte (unused by Kafka today).
    pub attributes: u8,
    /// Timestamp relative to the batch's base timestamp.
    pub timestamp_delta: i64,
    /// Offset relative to the batch's base offset.
    pub offset_delta: i32,
    /// Key bytes; `None` for a null key.
    pub key: Option<&'a [u8]>,
    /// False for a tombstone (null value).
    pub has_value: bool,
    /// Value bytes; `None` for a tombstone.
    pub value: Option<&'a [u8]>,
    /// Bytes from the key length to the end of the record (key, value,
    /// headers), copied verbatim when re-encoding.
    pub tail: &'a [u8],
    /// The whole record including its length prefix.
    pub raw: &'a [u8],
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

fn bad(what: &str) -> LogError {
    LogError::corrupt(format!("malformed record: {what}"))
}

impl<'a> Cursor<'a> {
    fn unsigned(&mut self, max_bytes: u32) -> Result<u64> {
        let mut value = 0u64;
        for i in 0..max_bytes {
            let b = *self
                .data
                .get(self.pos)
                .ok_or_else(|| bad("truncated varint"))?;
            self.pos += 1;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(bad("varint too long"))
    }
    fn varint(&mut self) -> Result<i32> {
        let v = self.unsigned(5)?;
        i32::try_from(((v >> 1) as i64) ^ -((v & 1) as i64)).map_err(|_| bad("varint range"))
    }
    fn varlong(&mut self) -> Result<i64> {
        let v = self.unsigned(10)?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }
    fn bytes(&mut self, len: usize) -> Result<&'a [u8]> {
        let s = self
            .data
            .get(self.pos..self.pos.saturating_add(len))
            .ok_or_else(|| bad("field past end of record"))?;
        self.pos += len;
        Ok(s)
    }
    fn nullable(&mut self, what: &str) -> Result<Option<&'a [u8]>> {
        let len = self.varint()?;
        match len {
            -1 => Ok(None),
            l if l < 0 => Err(bad(what)),
            l => Ok(Some(self.bytes(l as usize)?)),
        }
    }
}

/// Parses every record of an uncompressed payload.
pub fn parse_records(payload: &[u8]) -> Result<Vec<RecordView<'_>>> {
    let mut out = Vec::new();
    let mut outer = Cursor {
        data: payload,
        pos: 0,
    };
    while outer.pos < payload.len() {
        let start = outer.pos;
        let len = outer.varint()?;
        if len < 0 {
            return Err(bad("negative length"));
        }
        let body = outer.bytes(len as usize)?;
        let raw = &payload[start..outer.pos];
        let mut c = Cursor { data: body, pos: 0 };
        let attributes = *c.bytes(1)?.first().ok_or_else(|| bad("attributes"))?;
        let timestamp_delta = c.varlong()?;
        let offset_delta = c.varint()?;
        let tail_start = c.pos;
        let key = c.nullable("key length")?;
        let value = c.nullable("value length")?;
        let headers = c.varint()?;
        if headers < 0 {
            return Err(bad("negative header count"));
        }
        for _ in 0..headers {
            if c.nullable("header key")?.is_none() {
                return Err(bad("null header key"));
            }
            c.nullable("header value")?;
        }
        if c.pos != body.len() {
            return Err(bad("length does not match content"));
        }
        out.push(RecordView {
            attributes,
            timestamp_delta,
            offset_delta,
            key,
            has_value: value.is_some(),
            value,
            tail: &body[tail_start..],
            raw,
        });
    }
    Ok(out)
}

fn put_varlong(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// Appends `rec` to `out` with new timestamp and offset deltas.
pub fn encode_record(out: &mut Vec<u8>, rec: &RecordView<'_>, timestamp_delta: i64) {
    let mut body = Vec::with_capacity(rec.tail.len() + 16);
    body.push(rec.attributes);
    put_varlong(&mut body, timestamp_delta);
    put_varlong(&mut body, i64::from(rec.offset_delta));
    body.extend_from_slice(rec.tail);
    put_varlong(out, body.len() as i64);
    out.extend_from_slice(&body);
}
