//! Test helpers: a small magic-2 record batch encoder (all codecs) and
//! convenience constructors for logs in temporary directories.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;

use _rust_log::{LogConfig, PartitionLog};

pub fn put_varint(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        if z < 0x80 {
            out.push(z as u8);
            return;
        }
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
}

#[derive(Clone, Debug)]
pub struct Rec {
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl Rec {
    pub fn new(timestamp: i64, value: &[u8]) -> Rec {
        Rec {
            timestamp,
            key: None,
            value: Some(value.to_vec()),
            headers: vec![],
        }
    }
}

#[derive(Clone, Debug)]
pub struct BatchSpec {
    pub records: Vec<Rec>,
    pub codec: u8,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub extra_attributes: i16,
    pub magic: i8,
}

impl BatchSpec {
    pub fn new(records: Vec<Rec>) -> BatchSpec {
        BatchSpec {
            records,
            codec: 0,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            extra_attributes: 0,
            magic: 2,
        }
    }
    pub fn codec(mut self, c: u8) -> Self {
        self.codec = c;
        self
    }
    pub fn producer(mut self, id: i64, epoch: i16, seq: i32) -> Self {
        self.producer_id = id;
        self.producer_epoch = epoch;
        self.base_sequence = seq;
        self
    }
}

pub fn encode_records(records: &[Rec], base_ts: i64) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let mut body = vec![0u8];
        put_varint(&mut body, r.timestamp - base_ts);
        put_varint(&mut body, i as i64);
        match &r.key {
            None => put_varint(&mut body, -1),
            Some(k) => {
                put_varint(&mut body, k.len() as i64);
                body.extend_from_slice(k);
            }
        }
        match &r.value {
            None => put_varint(&mut body, -1),
            Some(v) => {
                put_varint(&mut body, v.len() as i64);
                body.extend_from_slice(v);
            }
        }
        put_varint(&mut body, r.headers.len() as i64);
        for (k, v) in &r.headers {
            put_varint(&mut body, k.len() as i64);
            body.extend_from_slice(k);
            match v {
                None => put_varint(&mut body, -1),
                Some(v) => {
                    put_varint(&mut body, v.len() as i64);
                    body.extend_from_slice(v);
                }
            }
        }
        put_varint(&mut out, body.len() as i64);
        out.extend_from_slice(&body);
    }
    out
}

pub fn compress(codec: u8, data: &[u8]) -> Vec<u8> {
    match codec {
        0 => data.to_vec(),
        1 => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        2 => snap::raw::Encoder::new().compress_vec(data).unwrap(),
        3 => {
            let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        4 => zstd::encode_all(data, 3).unwrap(),
        _ => panic!("codec"),
    }
}

/// snappy-java (xerial) framing with small blocks.
pub fn xerial_snappy(data: &[u8], block: usize) -> Vec<u8> {
    let mut out = vec![
        0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1,
    ];
    for chunk in data.chunks(block) {
        let c = snap::raw::Encoder::new().compress_vec(chunk).unwrap();
        out.extend_from_slice(&(c.len() as u32).to_be_bytes());
        out.extend_from_slice(&c);
    }
    out
}

pub fn build_with_payload(spec: &BatchSpec, payload: &[u8]) -> Vec<u8> {
    let n = spec.records.len() as i32;
    let base_ts = spec.records.first().map_or(0, |r| r.timestamp);
    let max_ts = spec.records.iter().map(|r| r.timestamp).max().unwrap_or(-1);
    let mut b = Vec::new();
    b.extend_from_slice(&0i64.to_be_bytes()); // base offset
    b.extend_from_slice(&0i32.to_be_bytes()); // length placeholder
    b.extend_from_slice(&(-1i32).to_be_bytes()); // leader epoch
    b.push(spec.magic as u8);
    b.extend_from_slice(&0u32.to_be_bytes()); // crc placeholder
    b.extend_from_slice(&((spec.codec as i16) | spec.extra_attributes).to_be_bytes());
    b.extend_from_slice(&(n - 1).to_be_bytes());
    b.extend_from_slice(&base_ts.to_be_bytes());
    b.extend_from_slice(&max_ts.to_be_bytes());
    b.extend_from_slice(&spec.producer_id.to_be_bytes());
    b.extend_from_slice(&spec.producer_epoch.to_be_bytes());
    b.extend_from_slice(&spec.base_sequence.to_be_bytes());
    b.extend_from_slice(&n.to_be_bytes());
    b.extend_from_slice(payload);
    let len = (b.len() - 12) as i32;
    b[8..12].copy_from_slice(&len.to_be_bytes());
    fix_crc(&mut b);
    b
}

pub fn fix_crc(b: &mut [u8]) {
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
}

pub fn build(spec: &BatchSpec) -> Vec<u8> {
    let base_ts = spec.records.first().map_or(0, |r| r.timestamp);
    let raw = encode_records(&spec.records, base_ts);
    build_with_payload(spec, &compress(spec.codec, &raw))
}

/// An uncompressed batch of `n` records with timestamps ts0, ts0+1, ...
pub fn simple(n: usize, ts0: i64, value_len: usize) -> Vec<u8> {
    let recs = (0..n)
        .map(|i| Rec::new(ts0 + i as i64, &vec![b'x'; value_len]))
        .collect();
    build(&BatchSpec::new(recs))
}

pub fn cfg() -> LogConfig {
    LogConfig::default()
}

pub fn small_cfg(segment_bytes: u64, index_interval: u64) -> LogConfig {
    LogConfig {
        segment_bytes,
        index_interval_bytes: index_interval,
        ..LogConfig::default()
    }
}

pub fn open(dir: &Path, c: LogConfig, clean: bool) -> PartitionLog {
    PartitionLog::open(dir, c, clean).unwrap()
}

pub fn base_offset_of(batch: &[u8]) -> i64 {
    i64::from_be_bytes(batch[0..8].try_into().unwrap())
}

/// Splits a read result into (base offset, last offset) per batch.
pub fn batches_in(data: &[u8]) -> Vec<(i64, i64)> {
    let mut out = vec![];
    let mut p = 0;
    while p < data.len() {
        let base = i64::from_be_bytes(data[p..p + 8].try_into().unwrap());
        let len = i32::from_be_bytes(data[p + 8..p + 12].try_into().unwrap()) as usize;
        let lod = i32::from_be_bytes(data[p + 23..p + 27].try_into().unwrap()) as i64;
        out.push((base, base + lod));
        p += 12 + len;
    }
    assert_eq!(p, data.len(), "read result not batch aligned");
    out
}

/// A keyed record (`value == None` is a tombstone).
pub fn keyed(ts: i64, key: &str, value: Option<&str>) -> Rec {
    Rec {
        timestamp: ts,
        key: Some(key.as_bytes().to_vec()),
        value: value.map(|v| v.as_bytes().to_vec()),
        headers: vec![],
    }
}

/// One decoded record of a read result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Got {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
}

/// Decodes every record of batch-aligned log data (any codec), checking
/// each batch's CRC.
pub fn records_of(data: &[u8]) -> Vec<Got> {
    use _rust_log::record_batch::{BatchHeader, crc_matches};
    let mut out = vec![];
    let mut p = 0;
    while p < data.len() {
        let h = BatchHeader::parse(&data[p..]).unwrap();
        let batch = &data[p..p + h.total_size()];
        assert!(
            crc_matches(batch, &h),
            "bad CRC at offset {}",
            h.base_offset
        );
        let raw = _rust_log::recompress::raw_records(batch, &h).unwrap();
        for r in _rust_log::record_view::parse_records(&raw).unwrap() {
            let ts = if h.is_log_append_time() {
                h.max_timestamp
            } else {
                h.base_timestamp + r.timestamp_delta
            };
            out.push(Got {
                offset: h.base_offset + r.offset_delta as i64,
                timestamp: ts,
                key: r.key.map(|k| k.to_vec()),
                value: r.value.map(|v| v.to_vec()),
            });
        }
        p += h.total_size();
    }
    out
}

/// Every record of the log, reading segment after segment.
pub fn all_records(log: &PartitionLog) -> Vec<Got> {
    let mut out = vec![];
    let mut off = log.log_start_offset();
    while off < log.log_end_offset() {
        let data = log.read(off, 1 << 24, true).unwrap();
        if data.is_empty() {
            break;
        }
        let mut next = off;
        for (_, last) in batches_in(&data) {
            next = next.max(last + 1);
        }
        out.extend(records_of(&data).into_iter().filter(|g| g.offset >= off));
        off = next;
    }
    out
}
