//! Parsing of the individual records inside a magic-2 batch (varint
//! framing, timestamp and offset deltas), from a byte slice or a stream of
//! decompressed bytes. Used for validation and timestamp lookups only; the
//! log never rewrites records.

use std::io::{self, Read};

use crate::error::{LogError, Result};

/// A forward-only byte source records are parsed from.
pub trait ByteSource {
    /// Reads one byte; `Ok(None)` at the clean end of the input.
    fn next_byte(&mut self) -> Result<Option<u8>>;
    /// Skips exactly `n` bytes or fails.
    fn skip(&mut self, n: usize) -> Result<()>;
}

/// Records held in memory (uncompressed batches).
pub struct SliceSource<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> SliceSource<'a> {
    /// Wraps a slice.
    pub fn new(data: &'a [u8]) -> Self {
        SliceSource { data, pos: 0 }
    }
    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
}

impl ByteSource for SliceSource<'_> {
    fn next_byte(&mut self) -> Result<Option<u8>> {
        let b = self.data.get(self.pos).copied();
        if b.is_some() {
            self.pos += 1;
        }
        Ok(b)
    }
    fn skip(&mut self, n: usize) -> Result<()> {
        if n > self.remaining() {
            return Err(LogError::invalid_record(
                "record field extends past end of batch",
            ));
        }
        self.pos += n;
        Ok(())
    }
}

/// Records produced by a decompressing reader.
pub struct ReadSource<R: Read> {
    inner: io::BufReader<R>,
}

impl<R: Read> ReadSource<R> {
    /// Wraps a reader (buffered internally).
    pub fn new(inner: R) -> Self {
        ReadSource {
            inner: io::BufReader::with_capacity(16 * 1024, inner),
        }
    }
}

fn decompress_err(e: io::Error) -> LogError {
    LogError::corrupt(format!("failed to decompress records: {e}"))
}

impl<R: Read> ByteSource for ReadSource<R> {
    fn next_byte(&mut self) -> Result<Option<u8>> {
        let mut b = [0u8; 1];
        loop {
            match self.inner.read(&mut b) {
                Ok(0) => return Ok(None),
                Ok(_) => return Ok(Some(b[0])),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(decompress_err(e)),
            }
        }
    }
    fn skip(&mut self, n: usize) -> Result<()> {
        let copied = io::copy(&mut (&mut self.inner).take(n as u64), &mut io::sink())
            .map_err(decompress_err)?;
        if copied != n as u64 {
            return Err(LogError::invalid_record(
                "record field extends past end of batch",
            ));
        }
        Ok(())
    }
}

fn read_unsigned_varint<S: ByteSource>(src: &mut S, max_bytes: u32) -> Result<Option<u64>> {
    let mut value: u64 = 0;
    let mut shift = 0u32;
    for i in 0..max_bytes {
        let Some(b) = src.next_byte()? else {
            if i == 0 {
                return Ok(None);
            }
            return Err(LogError::invalid_record("truncated varint"));
        };
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(Some(value));
        }
        shift += 7;
    }
    Err(LogError::invalid_record("varint too long"))
}

fn zigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Reads a zigzag varint (int32); `Ok(None)` at clean end of input.
fn varint_opt<S: ByteSource>(src: &mut S) -> Result<Option<i32>> {
    match read_unsigned_varint(src, 5)? {
        None => Ok(None),
        Some(v) => {
            let z = zigzag(v);
            i32::try_from(z)
                .map(Some)
                .map_err(|_| LogError::invalid_record("varint out of int32 range"))
        }
    }
}

fn varint<S: ByteSource>(src: &mut S) -> Result<i32> {
    varint_opt(src)?.ok_or_else(|| LogError::invalid_record("truncated record"))
}

fn varlong<S: ByteSource>(src: &mut S) -> Result<i64> {
    read_unsigned_varint(src, 10)?
        .map(zigzag)
        .ok_or_else(|| LogError::invalid_record("truncated record"))
}

/// The parts of a record the log cares about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordMeta {
    /// Timestamp delta relative to the batch's baseTimestamp.
    pub timestamp_delta: i64,
    /// Offset delta relative to the batch's baseOffset.
    pub offset_delta: i32,
    /// False for a record with a null key.
    pub has_key: bool,
    /// False for a record with a null value (a tombstone).
    pub has_value: bool,
}

/// Counting wrapper so a record body can be checked against its length prefix.
struct Counted<'s, S: ByteSource> {
    src: &'s mut S,
    consumed: usize,
}

impl<S: ByteSource> ByteSource for Counted<'_, S> {
    fn next_byte(&mut self) -> Result<Option<u8>> {
        let b = self.src.next_byte()?;
        if b.is_some() {
            self.consumed += 1;
        }
        Ok(b)
    }
    fn skip(&mut self, n: usize) -> Result<()> {
        self.src.skip(n)?;
        self.consumed += n;
        Ok(())
    }
}

/// Skips a length-prefixed bytes field; returns false if it was null.
fn skip_bytes_field<S: ByteSource>(src: &mut S, allow_null: bool, what: &str) -> Result<bool> {
    let len = varint(src)?;
    if len < 0 {
        if allow_null && len == -1 {
            return Ok(false);
        }
        return Err(LogError::invalid_record(format!(
            "invalid {what} length {len}"
        )));
    }
    src.skip(len as usize)?;
    Ok(true)
}

/// Parses the next record, fully walking its key, value and headers so that
/// its length prefix is verified. `Ok(None)` at the clean end of input.
pub fn next_record<S: ByteSource>(src: &mut S) -> Result<Option<RecordMeta>> {
    let Some(length) = varint_opt(src)? else {
        return Ok(None);
    };
    if length < 0 {
        return Err(LogError::invalid_record(format!(
            "negative record length {length}"
        )));
    }
    let mut body = Counted { src, consumed: 0 };
    body.next_byte()?
        .ok_or_else(|| LogError::invalid_record("truncated record"))?; // attributes
    let timestamp_delta = varlong(&mut body)?;
    let offset_delta = varint(&mut body)?;
    let has_key = skip_bytes_field(&mut body, true, "key")?;
    let has_value = skip_bytes_field(&mut body, true, "value")?;
    let headers = varint(&mut body)?;
    if headers < 0 {
        return Err(LogError::invalid_record(format!(
            "negative header count {headers}"
        )));
    }
    for _ in 0..headers {
        skip_bytes_field(&mut body, false, "header key")?;
        skip_bytes_field(&mut body, true, "header value")?;
    }
    if body.consumed != length as usize {
        return Err(LogError::invalid_record(format!(
            "record length {length} does not match its content ({} bytes)",
            body.consumed
        )));
    }
    Ok(Some(RecordMeta {
        timestamp_delta,
        offset_delta,
        has_key,
        has_value,
    }))
}

/// Summary of a fully validated record set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordsSummary {
    /// Number of records.
    pub count: i32,
    /// Largest timestamp delta seen (None if no records).
    pub max_timestamp_delta: Option<i64>,
    /// Smallest timestamp delta seen (None if no records).
    pub min_timestamp_delta: Option<i64>,
    /// Number of records with a null key.
    pub keyless: i32,
}

/// Walks all records, checking offset deltas run 0..n-1 in order and that
/// nothing trails the last record.
pub fn validate_records<S: ByteSource>(src: &mut S) -> Result<RecordsSummary> {
    let mut count: i32 = 0;
    let mut keyless: i32 = 0;
    let mut max_delta: Option<i64> = None;
    let mut min_delta: Option<i64> = None;
    while let Some(rec) = next_record(src)? {
        if !rec.has_key {
            keyless = keyless.saturating_add(1);
        }
        if rec.offset_delta != count {
            return Err(LogError::invalid_record(format!(
                "record offset delta {} where {} was expected",
                rec.offset_delta, count
            )));
        }
        max_delta = Some(max_delta.map_or(rec.timestamp_delta, |m| m.max(rec.timestamp_delta)));
        min_delta = Some(min_delta.map_or(rec.timestamp_delta, |m| m.min(rec.timestamp_delta)));
        count = count
            .checked_add(1)
            .ok_or_else(|| LogError::invalid_record("too many records in batch"))?;
    }
    Ok(RecordsSummary {
        count,
        max_timestamp_delta: max_delta,
        min_timestamp_delta: min_delta,
        keyless,
    })
}
