//! Building and taking apart whole magic-2 record batches: an encoder for
//! the broker's own batches (transaction markers, internal topics,
//! recompression) and a decoder for fetched log data (every record of
//! possibly several concatenated batches, any codec).
//!
//! Decoding never panics on hostile input: every malformation is a
//! CORRUPT_MESSAGE (2) [`LogError`]. Encoding errors (empty record list,
//! unknown codec, sizes beyond the int32 fields) are INVALID_RECORD (87).

use std::borrow::Cow;
use std::io::Read;
use std::ops::Range;

use crate::compression;
use crate::error::{LogError, Result};
use crate::record_batch::{
    self, BatchHeader, CONTROL_BIT, HEADER_SIZE, LOG_OVERHEAD, MIN_BATCH_LENGTH, TRANSACTIONAL_BIT,
};

/// Largest decompressed record payload accepted for one batch; a batch that
/// inflates beyond this is refused as corrupt (decompression-bomb guard).
pub const MAX_DECOMPRESSED_BATCH_BYTES: usize = 256 * 1024 * 1024;

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

/// One record to encode. Header keys are raw bytes (UTF-8 by convention).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordData<'a> {
    /// Record key, `None` for a null key.
    pub key: Option<&'a [u8]>,
    /// Record value, `None` for a null value (tombstone).
    pub value: Option<&'a [u8]>,
    /// Record headers as (key, value).
    pub headers: Vec<(&'a [u8], Option<&'a [u8]>)>,
}

/// Batch-level fields for [`encode_batch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodeOptions {
    /// baseOffset written into the batch (the log reassigns it on append).
    pub base_offset: i64,
    /// Producer id, -1 for none.
    pub producer_id: i64,
    /// Producer epoch, -1 for none.
    pub producer_epoch: i16,
    /// Sequence number of the first record, -1 for none.
    pub base_sequence: i32,
    /// Sets the transactional attribute bit.
    pub transactional: bool,
    /// Sets the control attribute bit (transaction markers).
    pub control: bool,
    /// Codec id (see [`compression`]).
    pub compression: u8,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            base_offset: 0,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            transactional: false,
            control: false,
            compression: compression::NONE,
        }
    }
}

/// Codec id for a codec name ("none", "gzip", "snappy", "lz4", "zstd").
pub fn codec_from_name(name: &str) -> Option<u8> {
    match name {
        "none" => Some(compression::NONE),
        "gzip" => Some(compression::GZIP),
        "snappy" => Some(compression::SNAPPY),
        "lz4" => Some(compression::LZ4),
        "zstd" => Some(compression::ZSTD),
        _ => None,
    }
}

fn put_varint(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

fn varint_len(v: i64) -> usize {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    let mut n = 1;
    while z >= 0x80 {
        z >>= 7;
        n += 1;
    }
    n
}

fn field_len(what: &str, data: &[u8]) -> Result<i64> {
    i32::try_from(data.len()).map(i64::from).map_err(|_| {
        LogError::invalid_record(format!("{what} of {} bytes is too large", data.len()))
    })
}

fn bytes_field_size(what: &str, data: Option<&[u8]>) -> Result<usize> {
    Ok(match data {
        None => 1,
        Some(d) => varint_len(field_len(what, d)?) + d.len(),
    })
}

fn put_bytes_field(out: &mut Vec<u8>, data: Option<&[u8]>) {
    match data {
        None => put_varint(out, -1),
        Some(d) => {
            put_varint(out, d.len() as i64);
            out.extend_from_slice(d);
        }
    }
}

/// Size of a record body (everything after its length varint).
fn record_body_size(index: usize, rec: &RecordData<'_>) -> Result<usize> {
    let mut n = 1 + 1 + varint_len(index as i64); // attributes, timestampDelta 0, offsetDelta
    n += bytes_field_size("record key", rec.key)?;
    n += bytes_field_size("record value", rec.value)?;
    let hcount = i32::try_from(rec.headers.len())
        .map_err(|_| LogError::invalid_record("too many record headers"))?;
    n += varint_len(i64::from(hcount));
    for (k, v) in &rec.headers {
        n += bytes_field_size("header key", Some(k))?;
        n += bytes_field_size("header value", *v)?;
    }
    if n > i32::MAX as usize {
        return Err(LogError::invalid_record("record too large"));
    }
    Ok(n)
}

/// Appends the records in Kafka's record format (timestampDelta 0,
/// offsetDelta = index) to `out`.
fn write_records(out: &mut Vec<u8>, records: &[RecordData<'_>]) -> Result<()> {
    for (i, rec) in records.iter().enumerate() {
        let body = record_body_size(i, rec)?;
        put_varint(out, body as i64);
        out.push(0); // attributes
        put_varint(out, 0); // timestampDelta
        put_varint(out, i as i64);
        put_bytes_field(out, rec.key);
        put_bytes_field(out, rec.value);
        put_varint(out, rec.headers.len() as i64);
        for (k, v) in &rec.headers {
            put_bytes_field(out, Some(k));
            put_bytes_field(out, *v);
        }
    }
    Ok(())
}

fn records_size(records: &[RecordData<'_>]) -> Result<usize> {
    let mut total = 0usize;
    for (i, rec) in records.iter().enumerate() {
        let body = record_body_size(i, rec)?;
        total = total.saturating_add(varint_len(body as i64) + body);
    }
    Ok(total)
}

/// Encodes one magic-2 record batch. Every record gets `timestamp_ms`
/// (timestampDelta 0) and offsetDelta = its index; the header carries
/// base/max timestamp `timestamp_ms`, partitionLeaderEpoch -1, CreateTime,
/// and a CRC-32C over attributes..end.
pub fn encode_batch(
    records: &[RecordData<'_>],
    timestamp_ms: i64,
    opts: &EncodeOptions,
) -> Result<Vec<u8>> {
    if records.is_empty() {
        return Err(LogError::invalid_record(
            "a record batch needs at least one record",
        ));
    }
    let count = i32::try_from(records.len())
        .map_err(|_| LogError::invalid_record("too many records for one batch"))?;
    if !compression::is_known_codec(opts.compression) {
        return Err(LogError::invalid_record(format!(
            "unknown compression codec {}",
            opts.compression
        )));
    }
    let raw_size = records_size(records)?;
    let mut out = Vec::with_capacity(
        HEADER_SIZE
            + if opts.compression == compression::NONE {
                raw_size
            } else {
                raw_size / 2 + 64
            },
    );
    out.extend_from_slice(&opts.base_offset.to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes()); // batchLength, patched below
    out.extend_from_slice(&(-1i32).to_be_bytes()); // partitionLeaderEpoch
    out.push(2); // magic
    out.extend_from_slice(&0u32.to_be_bytes()); // crc, patched below
    let mut attributes = i16::from(opts.compression);
    if opts.transactional {
        attributes |= TRANSACTIONAL_BIT;
    }
    if opts.control {
        attributes |= CONTROL_BIT;
    }
    out.extend_from_slice(&attributes.to_be_bytes());
    out.extend_from_slice(&(count - 1).to_be_bytes()); // lastOffsetDelta
    out.extend_from_slice(&timestamp_ms.to_be_bytes()); // baseTimestamp
    out.extend_from_slice(&timestamp_ms.to_be_bytes()); // maxTimestamp
    out.extend_from_slice(&opts.producer_id.to_be_bytes());
    out.extend_from_slice(&opts.producer_epoch.to_be_bytes());
    out.extend_from_slice(&opts.base_sequence.to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    debug_assert_eq!(out.len(), HEADER_SIZE);

    if opts.compression == compression::NONE {
        write_records(&mut out, records)?;
    } else {
        // Kafka's formats: gzip level 6, snappy-java (xerial) framing with
        // 32 KiB blocks, lz4 frames of independent 64 KiB blocks, zstd level 3.
        let mut raw = Vec::with_capacity(raw_size);
        write_records(&mut raw, records)?;
        let compressed = compression::compress(opts.compression, None, &raw)
            .map_err(|e| LogError::invalid_record(e.message))?;
        out.extend_from_slice(&compressed);
    }

    let batch_length = i32::try_from(out.len() - LOG_OVERHEAD)
        .map_err(|_| LogError::invalid_record("record batch larger than 2 GiB"))?;
    out[8..12].copy_from_slice(&batch_length.to_be_bytes());
    let crc = record_batch::compute_crc(&out);
    out[17..21].copy_from_slice(&crc.to_be_bytes());
    Ok(out)
}

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

/// One decoded record, borrowing from its [`DecodedBatch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedRecord<'d> {
    /// Absolute offset (baseOffset + offsetDelta).
    pub offset: i64,
    /// baseTimestamp + timestampDelta, or maxTimestamp for LogAppendTime.
    pub timestamp: i64,
    /// Key, `None` if null.
    pub key: Option<&'d [u8]>,
    /// Value, `None` if null.
    pub value: Option<&'d [u8]>,
    /// Headers as (raw key bytes, value).
    pub headers: Vec<(&'d [u8], Option<&'d [u8]>)>,
}

#[derive(Debug, Clone)]
struct RecordSpan {
    offset: i64,
    timestamp: i64,
    key: Option<Range<usize>>,
    value: Option<Range<usize>>,
    headers: Range<usize>,
}

type HeaderSpan = (Range<usize>, Option<Range<usize>>);

/// A batch whose records have been parsed: the header plus the record
/// bytes (borrowed from the input when uncompressed, owned otherwise).
#[derive(Debug, Clone)]
pub struct DecodedBatch<'a> {
    /// The batch header.
    pub header: BatchHeader,
    data: Cow<'a, [u8]>,
    records: Vec<RecordSpan>,
    header_spans: Vec<HeaderSpan>,
}

impl DecodedBatch<'_> {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }
    /// True if the batch holds no records.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
    /// The records in batch order.
    pub fn records(&self) -> impl Iterator<Item = DecodedRecord<'_>> + '_ {
        let data: &[u8] = &self.data;
        self.records.iter().map(move |r| DecodedRecord {
            offset: r.offset,
            timestamp: r.timestamp,
            key: r.key.clone().map(|k| &data[k]),
            value: r.value.clone().map(|v| &data[v]),
            headers: self.header_spans[r.headers.clone()]
                .iter()
                .map(|(k, v)| (&data[k.clone()], v.clone().map(|v| &data[v])))
                .collect(),
        })
    }
}

/// Cursor over record bytes; every failure is CORRUPT_MESSAGE.
struct Cursor<'d> {
    data: &'d [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn byte(&mut self) -> Result<u8> {
        let b = *self
            .data
            .get(self.pos)
            .ok_or_else(|| LogError::corrupt("record truncated"))?;
        self.pos += 1;
        Ok(b)
    }

    fn unsigned_varint(&mut self, max_bytes: u32) -> Result<u64> {
        let mut value = 0u64;
        for i in 0..max_bytes {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(LogError::corrupt("varint too long"))
    }

    fn varint(&mut self) -> Result<i32> {
        let v = self.unsigned_varint(5)?;
        let z = ((v >> 1) as i64) ^ -((v & 1) as i64);
        i32::try_from(z).map_err(|_| LogError::corrupt("varint out of int32 range"))
    }

    fn varlong(&mut self) -> Result<i64> {
        let v = self.unsigned_varint(10)?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// A length-prefixed byte field; `None` for length -1 when allowed.
    fn bytes(&mut self, allow_null: bool, what: &str) -> Result<Option<Range<usize>>> {
        let len = self.varint()?;
        if len < 0 {
            if allow_null && len == -1 {
                return Ok(None);
            }
            return Err(LogError::corrupt(format!("invalid {what} length {len}")));
        }
        let start = self.pos;
        let end = start
            .checked_add(len as usize)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| LogError::corrupt(format!("{what} extends past end of record data")))?;
        self.pos = end;
        Ok(Some(start..end))
    }
}

fn parse_records(
    header: &BatchHeader,
    data: &[u8],
    records: &mut Vec<RecordSpan>,
    header_spans: &mut Vec<HeaderSpan>,
) -> Result<()> {
    let mut cur = Cursor { data, pos: 0 };
    let count = header.records_count;
    // Every record takes at least 7 bytes; bound the reservation by the data.
    records.reserve((count as usize).min(data.len() / 7 + 1));
    for _ in 0..count {
        let length = cur.varint()?;
        if length < 0 {
            return Err(LogError::corrupt(format!(
                "negative record length {length}"
            )));
        }
        let start = cur.pos;
        let end = start
            .checked_add(length as usize)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| LogError::corrupt("record extends past end of batch"))?;
        let mut rec = Cursor {
            data: &data[..end],
            pos: start,
        };
        rec.byte()?; // attributes (unused)
        let timestamp_delta = rec.varlong()?;
        let offset_delta = rec.varint()?;
        let key = rec.bytes(true, "key")?;
        let value = rec.bytes(true, "value")?;
        let hcount = rec.varint()?;
        if hcount < 0 {
            return Err(LogError::corrupt(format!("negative header count {hcount}")));
        }
        let hstart = header_spans.len();
        for _ in 0..hcount {
            let hk = rec
                .bytes(false, "header key")?
                .ok_or_else(|| LogError::corrupt("null header key"))?;
            let hv = rec.bytes(true, "header value")?;
            header_spans.push((hk, hv));
        }
        if rec.pos != end {
            return Err(LogError::corrupt(format!(
                "record length {length} does not match its content ({} bytes)",
                rec.pos - start
            )));
        }
        cur.pos = end;
        let timestamp = if header.is_log_append_time() {
            header.max_timestamp
        } else {
            header.base_timestamp.wrapping_add(timestamp_delta)
        };
        records.push(RecordSpan {
            offset: header.base_offset.wrapping_add(i64::from(offset_delta)),
            timestamp,
            key,
            value,
            headers: hstart..header_spans.len(),
        });
    }
    if cur.pos != data.len() {
        return Err(LogError::corrupt(format!(
            "{} bytes follow the {count} declared records of the batch at offset {}",
            data.len() - cur.pos,
            header.base_offset
        )));
    }
    Ok(())
}

fn check_header(header: &BatchHeader) -> Result<()> {
    if header.magic != 2 {
        return Err(LogError::corrupt(format!(
            "record batch at offset {} has unsupported magic {}",
            header.base_offset, header.magic
        )));
    }
    if header.last_offset_delta < 0 {
        return Err(LogError::corrupt(format!(
            "record batch at offset {} has negative lastOffsetDelta",
            header.base_offset
        )));
    }
    if header.records_count < 0 {
        return Err(LogError::corrupt(format!(
            "record batch at offset {} has negative recordsCount",
            header.base_offset
        )));
    }
    Ok(())
}

/// Splits `data` into whole batches (each with its parsed, sanity-checked
/// header). A trailing partial batch is ignored, as fetch responses may end
/// with one; anything else malformed is CORRUPT_MESSAGE.
pub fn split_batches(data: &[u8]) -> Result<Vec<(BatchHeader, &[u8])>> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while data.len() - pos >= LOG_OVERHEAD {
        let rest = &data[pos..];
        let (base_offset, batch_length) = BatchHeader::parse_overhead(rest)?;
        if batch_length < MIN_BATCH_LENGTH {
            return Err(LogError::corrupt(format!(
                "record batch at offset {base_offset} has length {batch_length}, below the minimum {MIN_BATCH_LENGTH}"
            )));
        }
        let size = LOG_OVERHEAD + batch_length as usize;
        if rest.len() < size {
            break; // partial trailing batch
        }
        let batch = &rest[..size];
        let header = BatchHeader::parse(batch)?;
        check_header(&header)?;
        out.push((header, batch));
        pos += size;
    }
    Ok(out)
}

/// Headers of every whole batch in `data` (no CRC check, records untouched).
pub fn decode_batch_headers(data: &[u8]) -> Result<Vec<BatchHeader>> {
    Ok(split_batches(data)?.into_iter().map(|(h, _)| h).collect())
}

/// Decodes one whole batch: CRC check, decompression, record parsing.
pub fn decode_batch<'a>(header: BatchHeader, batch: &'a [u8]) -> Result<DecodedBatch<'a>> {
    check_header(&header)?;
    if !record_batch::crc_matches(batch, &header) {
        return Err(LogError::corrupt(format!(
            "CRC mismatch in record batch at offset {} (stored {:#010x}, computed {:#010x})",
            header.base_offset,
            header.crc,
            record_batch::compute_crc(batch)
        )));
    }
    let payload = &batch[HEADER_SIZE..];
    let codec = header.compression();
    let data: Cow<'a, [u8]> = if codec == compression::NONE {
        Cow::Borrowed(payload)
    } else {
        if !compression::is_known_codec(codec) {
            return Err(LogError::corrupt(format!(
                "unknown compression codec {codec} in batch at offset {}",
                header.base_offset
            )));
        }
        let reader = compression::decompressing_reader(codec, payload)
            .map_err(|e| LogError::corrupt(e.message))?;
        let mut out = Vec::with_capacity(payload.len().saturating_mul(4).min(1 << 20));
        reader
            .take(MAX_DECOMPRESSED_BATCH_BYTES as u64 + 1)
            .read_to_end(&mut out)
            .map_err(|e| {
                LogError::corrupt(format!(
                    "failed to decompress batch at offset {}: {e}",
                    header.base_offset
                ))
            })?;
        if out.len() > MAX_DECOMPRESSED_BATCH_BYTES {
            return Err(LogError::corrupt(format!(
                "batch at offset {} decompresses to more than {MAX_DECOMPRESSED_BATCH_BYTES} bytes",
                header.base_offset
            )));
        }
        Cow::Owned(out)
    };
    let mut records = Vec::new();
    let mut header_spans = Vec::new();
    parse_records(&header, &data, &mut records, &mut header_spans)?;
    Ok(DecodedBatch {
        header,
        data,
        records,
        header_spans,
    })
}

/// Decodes every whole batch in `data` (concatenated batches, as stored in
/// the log or returned by a fetch; a trailing partial batch is ignored).
/// Control batches are included.
pub fn decode_batches(data: &[u8]) -> Result<Vec<DecodedBatch<'_>>> {
    split_batches(data)?
        .into_iter()
        .map(|(h, b)| decode_batch(h, b))
        .collect()
}

// ---------------------------------------------------------------------------
// Python bindings (registered in `python.rs`)
// ---------------------------------------------------------------------------

#[cfg(feature = "python")]
pub(crate) mod py {
    use pyo3::buffer::PyBuffer;
    use pyo3::exceptions::{PyTypeError, PyValueError};
    use pyo3::prelude::*;
    use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

    use super::{EncodeOptions, RecordData, codec_from_name};
    use crate::python::to_py_err;

    /// Bytes kept alive while the GIL is released: `bytes` objects are
    /// borrowed (immutable, and referenced here), anything else is copied.
    pub(crate) enum Held<'py> {
        Bytes(Bound<'py, PyBytes>),
        Owned(Vec<u8>),
    }

    impl Held<'_> {
        pub(crate) fn as_slice(&self) -> &[u8] {
            match self {
                Held::Bytes(b) => b.as_bytes(),
                Held::Owned(v) => v,
            }
        }
    }

    pub(crate) fn hold<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Held<'py>> {
        if let Ok(b) = obj.cast::<PyBytes>() {
            return Ok(Held::Bytes(b.clone()));
        }
        match PyBuffer::<u8>::get(obj) {
            Ok(buf) => Ok(Held::Owned(buf.to_vec(obj.py())?)),
            Err(_) => Err(PyTypeError::new_err(format!(
                "{what} must be a bytes-like object, not {}",
                type_name(obj)
            ))),
        }
    }

    fn hold_opt<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Option<Held<'py>>> {
        if obj.is_none() {
            Ok(None)
        } else {
            hold(obj, what).map(Some)
        }
    }

    fn type_name(obj: &Bound<'_, PyAny>) -> String {
        obj.get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".to_owned())
    }

    fn items<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
        if let Ok(t) = obj.cast::<PyTuple>() {
            Ok(t.iter().collect())
        } else if let Ok(l) = obj.cast::<PyList>() {
            Ok(l.iter().collect())
        } else {
            Err(PyTypeError::new_err(format!(
                "{what} must be a tuple, not {}",
                type_name(obj)
            )))
        }
    }

    struct HeldRecord<'py> {
        key: Option<Held<'py>>,
        value: Option<Held<'py>>,
        headers: Vec<(Held<'py>, Option<Held<'py>>)>,
    }

    fn hold_record<'py>(item: &Bound<'py, PyAny>, index: usize) -> PyResult<HeldRecord<'py>> {
        let what = format!("record {index}");
        let fields = items(item, &what)?;
        if fields.len() != 2 && fields.len() != 3 {
            return Err(PyValueError::new_err(format!(
                "{what} must be (key, value) or (key, value, headers), got {} items",
                fields.len()
            )));
        }
        let key = hold_opt(&fields[0], &format!("{what} key"))?;
        let value = hold_opt(&fields[1], &format!("{what} value"))?;
        let mut headers = Vec::new();
        if let Some(hs) = fields.get(2).filter(|h| !h.is_none()) {
            for h in hs.try_iter()? {
                let h = h?;
                let pair = items(&h, &format!("{what} header"))?;
                let [k, v] = pair.as_slice() else {
                    return Err(PyValueError::new_err(format!(
                        "{what} header must be (key, value), got {} items",
                        pair.len()
                    )));
                };
                let k = if let Ok(s) = k.cast::<PyString>() {
                    Held::Owned(s.to_str()?.as_bytes().to_vec())
                } else {
                    hold(k, &format!("{what} header key"))?
                };
                headers.push((k, hold_opt(v, &format!("{what} header value"))?));
            }
        }
        Ok(HeldRecord {
            key,
            value,
            headers,
        })
    }

    /// Encodes one magic-2 record batch (see the .pyi for the contract).
    #[pyfunction]
    #[pyo3(signature = (records, timestamp_ms, *, base_offset = 0, producer_id = -1,
        producer_epoch = -1, base_sequence = -1, transactional = false, control = false,
        compression = "none"))]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn encode_batch<'py>(
        py: Python<'py>,
        records: &Bound<'py, PyAny>,
        timestamp_ms: i64,
        base_offset: i64,
        producer_id: i64,
        producer_epoch: i16,
        base_sequence: i32,
        transactional: bool,
        control: bool,
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let codec = codec_from_name(compression).ok_or_else(|| {
            PyValueError::new_err(format!(
                "compression must be one of 'none', 'gzip', 'snappy', 'lz4', 'zstd', not {compression:?}"
            ))
        })?;
        let mut held = Vec::new();
        for (i, item) in records.try_iter()?.enumerate() {
            held.push(hold_record(&item?, i)?);
        }
        if held.is_empty() {
            return Err(PyValueError::new_err(
                "encode_batch needs at least one record",
            ));
        }
        let recs: Vec<RecordData<'_>> = held
            .iter()
            .map(|h| RecordData {
                key: h.key.as_ref().map(Held::as_slice),
                value: h.value.as_ref().map(Held::as_slice),
                headers: h
                    .headers
                    .iter()
                    .map(|(k, v)| (k.as_slice(), v.as_ref().map(Held::as_slice)))
                    .collect(),
            })
            .collect();
        let opts = EncodeOptions {
            base_offset,
            producer_id,
            producer_epoch,
            base_sequence,
            transactional,
            control,
            compression: codec,
        };
        let out = py
            .detach(|| super::encode_batch(&recs, timestamp_ms, &opts))
            .map_err(|e| PyValueError::new_err(e.message))?;
        Ok(PyBytes::new(py, &out))
    }

    /// Every record of the whole batches in `data`.
    #[pyfunction]
    pub(crate) fn decode_batches<'py>(
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let held = hold(data, "data")?;
        let bytes = held.as_slice();
        let batches = py
            .detach(|| super::decode_batches(bytes))
            .map_err(|e| to_py_err(py, e))?;
        let out = PyList::empty(py);
        for batch in &batches {
            for r in batch.records() {
                let headers = PyList::empty(py);
                for (k, v) in &r.headers {
                    headers.append((
                        PyString::new(py, &String::from_utf8_lossy(k)),
                        v.map(|v| PyBytes::new(py, v)),
                    ))?;
                }
                out.append((
                    r.offset,
                    r.timestamp,
                    r.key.map(|k| PyBytes::new(py, k)),
                    r.value.map(|v| PyBytes::new(py, v)),
                    headers,
                ))?;
            }
        }
        Ok(out)
    }

    /// Header fields of the whole batches in `data` (no CRC check).
    #[pyfunction]
    pub(crate) fn decode_batch_headers<'py>(
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let held = hold(data, "data")?;
        let bytes = held.as_slice();
        let headers = py
            .detach(|| super::decode_batch_headers(bytes))
            .map_err(|e| to_py_err(py, e))?;
        let out = PyList::empty(py);
        for h in &headers {
            let d = PyDict::new(py);
            d.set_item("base_offset", h.base_offset)?;
            d.set_item("last_offset", h.last_offset())?;
            d.set_item("partition_leader_epoch", h.partition_leader_epoch)?;
            d.set_item("producer_id", h.producer_id)?;
            d.set_item("producer_epoch", h.producer_epoch)?;
            d.set_item("base_sequence", h.base_sequence)?;
            d.set_item("is_transactional", h.is_transactional())?;
            d.set_item("is_control", h.is_control())?;
            d.set_item("compression", h.compression())?;
            d.set_item("is_log_append_time", h.is_log_append_time())?;
            d.set_item("base_timestamp", h.base_timestamp)?;
            d.set_item("max_timestamp", h.max_timestamp)?;
            d.set_item("record_count", h.records_count)?;
            d.set_item("size", h.total_size())?;
            out.append(d)?;
        }
        Ok(out)
    }
}
