//! batch_codec: encode -> validate/append -> read -> decode round trips for
//! every codec, decoding of independently built batches (raw and xerial
//! snappy, varying timestamps), header-only decoding, and corrupt input.
mod common;

use _rust_log::batch_codec::{
    DecodedRecord, EncodeOptions, RecordData, codec_from_name, decode_batch_headers,
    decode_batches, encode_batch,
};
use _rust_log::error::codes;
use _rust_log::record_batch::BatchHeader;
use _rust_log::validator;
use common::*;

const CODECS: [(&str, u8); 5] = [
    ("none", 0),
    ("gzip", 1),
    ("snappy", 2),
    ("lz4", 3),
    ("zstd", 4),
];

/// Owned version of a decoded record, for comparisons.
type Owned = (
    i64,
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(Vec<u8>, Option<Vec<u8>>)>,
);

fn owned(r: DecodedRecord<'_>) -> Owned {
    (
        r.offset,
        r.timestamp,
        r.key.map(<[u8]>::to_vec),
        r.value.map(<[u8]>::to_vec),
        r.headers
            .into_iter()
            .map(|(k, v)| (k.to_vec(), v.map(<[u8]>::to_vec)))
            .collect(),
    )
}

fn decode_all(data: &[u8]) -> Vec<Owned> {
    decode_batches(data)
        .unwrap()
        .iter()
        .flat_map(|b| b.records().map(owned).collect::<Vec<_>>())
        .collect()
}

fn sample_records() -> Vec<RecordData<'static>> {
    vec![
        RecordData {
            key: Some(b"k0"),
            value: Some(b"v0"),
            headers: vec![],
        },
        RecordData {
            key: None,
            value: Some(b"no key"),
            headers: vec![(b"h1", Some(b"x")), (b"h2", None), (b"", Some(b""))],
        },
        RecordData {
            key: Some(b"tombstone"),
            value: None,
            headers: vec![],
        },
        RecordData {
            key: None,
            value: None,
            headers: vec![("caf\u{e9}".as_bytes(), Some(b"\x00\xff"))],
        },
        RecordData {
            key: Some(b""),
            value: Some(b""),
            headers: vec![],
        },
    ]
}

fn expected(recs: &[RecordData<'_>], base: i64, ts: i64) -> Vec<Owned> {
    recs.iter()
        .enumerate()
        .map(|(i, r)| {
            (
                base + i as i64,
                ts,
                r.key.map(<[u8]>::to_vec),
                r.value.map(<[u8]>::to_vec),
                r.headers
                    .iter()
                    .map(|(k, v)| (k.to_vec(), v.map(<[u8]>::to_vec)))
                    .collect(),
            )
        })
        .collect()
}

fn opts(codec: u8) -> EncodeOptions {
    EncodeOptions {
        compression: codec,
        ..EncodeOptions::default()
    }
}

#[test]
fn codec_names() {
    for (name, id) in CODECS {
        assert_eq!(codec_from_name(name), Some(id));
    }
    assert_eq!(codec_from_name("brotli"), None);
    assert_eq!(codec_from_name("GZIP"), None);
}

#[test]
fn encoded_header_fields_are_correct() {
    let recs = sample_records();
    for (_, codec) in CODECS {
        let b = encode_batch(
            &recs,
            1_700_000_000_123,
            &EncodeOptions {
                base_offset: 42,
                producer_id: 9,
                producer_epoch: 3,
                base_sequence: 17,
                transactional: true,
                control: false,
                compression: codec,
            },
        )
        .unwrap();
        let h = BatchHeader::parse(&b).unwrap();
        assert_eq!(h.total_size(), b.len());
        assert_eq!(h.base_offset, 42);
        assert_eq!(h.partition_leader_epoch, -1);
        assert_eq!(h.magic, 2);
        assert_eq!(h.crc, crc32c::crc32c(&b[21..]));
        assert_eq!(h.compression(), codec);
        assert!(h.is_transactional() && !h.is_control() && !h.is_log_append_time());
        assert_eq!(h.last_offset_delta, 4);
        assert_eq!(h.records_count, 5);
        assert_eq!(
            (h.base_timestamp, h.max_timestamp),
            (1_700_000_000_123, 1_700_000_000_123)
        );
        assert_eq!(
            (h.producer_id, h.producer_epoch, h.base_sequence),
            (9, 3, 17)
        );
        assert_eq!(decode_batch_headers(&b).unwrap(), vec![h]);
        assert_eq!(decode_all(&b), expected(&recs, 42, 1_700_000_000_123));
    }
}

#[test]
fn uncompressed_encoding_matches_reference_encoder() {
    let recs = vec![
        Rec {
            timestamp: 5000,
            key: Some(b"key".to_vec()),
            value: Some(b"value".to_vec()),
            headers: vec![(b"a".to_vec(), Some(b"b".to_vec())), (b"n".to_vec(), None)],
        },
        Rec {
            timestamp: 5000,
            key: None,
            value: None,
            headers: vec![],
        },
    ];
    let reference = build(&BatchSpec::new(recs));
    let ours = encode_batch(
        &[
            RecordData {
                key: Some(b"key"),
                value: Some(b"value"),
                headers: vec![(b"a", Some(b"b")), (b"n", None)],
            },
            RecordData::default(),
        ],
        5000,
        &EncodeOptions::default(),
    )
    .unwrap();
    assert_eq!(ours, reference);
}

#[test]
fn round_trip_through_validator_and_log_every_codec() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    let recs = sample_records();
    let mut want = Vec::new();
    for (i, (_, codec)) in CODECS.iter().enumerate() {
        let ts = 10_000 + i as i64 * 100;
        let b = encode_batch(&recs, ts, &opts(*codec)).unwrap();
        let validated = validator::validate(&b, 1 << 20).unwrap();
        assert_eq!(validated.len(), 1);
        if *codec == 0 {
            assert_eq!(validated[0].record_max_timestamp, Some(ts));
        }
        let info = log.append(b, 7, None).unwrap();
        assert_eq!(
            (info.base_offset, info.last_offset),
            (i as i64 * 5, i as i64 * 5 + 4)
        );
        want.extend(expected(&recs, info.base_offset, ts));
    }
    let data = log.read(0, 1 << 20, true).unwrap();
    assert_eq!(decode_all(&data), want);
    let headers = decode_batch_headers(&data).unwrap();
    assert_eq!(headers.len(), 5);
    for (i, h) in headers.iter().enumerate() {
        assert_eq!(h.compression(), CODECS[i].1);
        assert_eq!(h.partition_leader_epoch, 7);
        assert_eq!(
            (h.base_offset, h.last_offset()),
            (i as i64 * 5, i as i64 * 5 + 4)
        );
    }
    // The log's own record-level timestamp search reads our compressed output.
    assert_eq!(
        log.offset_for_timestamp(10_150).unwrap(),
        Some((10, 10_200))
    );
    assert_eq!(
        log.offset_for_timestamp(10_400).unwrap(),
        Some((20, 10_400))
    );
    // Reading from the middle returns the whole containing batch.
    let mid = log.read(12, 1 << 20, true).unwrap();
    assert_eq!(decode_all(&mid), want[10..]);
}

#[test]
fn idempotent_encoded_batch_is_accepted_and_deduplicated() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    let o = EncodeOptions {
        producer_id: 11,
        producer_epoch: 0,
        base_sequence: 0,
        compression: 3,
        ..EncodeOptions::default()
    };
    let b = encode_batch(&sample_records(), 1, &o).unwrap();
    assert!(!log.append(b.clone(), 0, None).unwrap().duplicate);
    assert!(log.append(b, 0, None).unwrap().duplicate);
    let h = decode_batch_headers(&log.read(0, 1 << 20, true).unwrap()).unwrap();
    assert_eq!(
        (h[0].producer_id, h[0].base_sequence, h[0].last_sequence()),
        (11, 0, 4)
    );
}

#[test]
fn log_append_time_sets_record_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let c = _rust_log::LogConfig {
        log_append_time: true,
        ..cfg()
    };
    let mut log = open(dir.path(), c, true);
    for (_, codec) in CODECS {
        log.append(
            encode_batch(&sample_records(), 1, &opts(codec)).unwrap(),
            0,
            Some(777),
        )
        .unwrap();
    }
    let data = log.read(0, 1 << 20, true).unwrap();
    let recs = decode_all(&data);
    assert_eq!(recs.len(), 25);
    assert!(recs.iter().all(|r| r.1 == 777));
    assert!(
        decode_batch_headers(&data)
            .unwrap()
            .iter()
            .all(|h| h.is_log_append_time())
    );
}

#[test]
fn control_batch_encodes_and_decodes() {
    // COMMIT marker: key = (version 0, type 1), value = (version 0, coordinator epoch 5).
    let key = [0u8, 0, 0, 1];
    let value = [0u8, 0, 0, 0, 0, 5];
    let o = EncodeOptions {
        producer_id: 4,
        producer_epoch: 2,
        transactional: true,
        control: true,
        ..EncodeOptions::default()
    };
    let b = encode_batch(
        &[RecordData {
            key: Some(&key),
            value: Some(&value),
            headers: vec![],
        }],
        99,
        &o,
    )
    .unwrap();
    let h = decode_batch_headers(&b).unwrap();
    assert!(h[0].is_control() && h[0].is_transactional());
    let batches = decode_batches(&b).unwrap();
    assert_eq!(batches.len(), 1);
    let r: Vec<_> = batches[0].records().collect();
    assert_eq!(r[0].key, Some(&key[..]));
    assert_eq!(r[0].value, Some(&value[..]));
    // Clients may not produce control batches: the validator refuses it.
    assert_eq!(
        validator::validate(&b, 1 << 20).unwrap_err().code,
        codes::INVALID_RECORD
    );
}

#[test]
fn decodes_independently_built_batches() {
    let recs: Vec<Rec> = (0..50)
        .map(|i| Rec {
            timestamp: 1000 + (i * 37 % 11),
            key: if i % 3 == 0 {
                None
            } else {
                Some(format!("k{i}").into_bytes())
            },
            value: Some(vec![b'a' + (i % 26) as u8; (i * 13) as usize]),
            headers: vec![(b"i".to_vec(), Some(i.to_string().into_bytes()))],
        })
        .collect();
    let want: Vec<Owned> = recs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            (
                i as i64,
                r.timestamp,
                r.key.clone(),
                r.value.clone(),
                r.headers.clone(),
            )
        })
        .collect();
    for codec in 0..=4u8 {
        let b = build(&BatchSpec::new(recs.clone()).codec(codec));
        assert_eq!(decode_all(&b), want, "codec {codec}");
    }
    // snappy-java (xerial) framing, several small blocks.
    let spec = BatchSpec::new(recs.clone()).codec(2);
    let raw = encode_records(&recs, 1000);
    let b = build_with_payload(&spec, &xerial_snappy(&raw, 100));
    assert_eq!(decode_all(&b), want);
}

#[test]
fn concatenated_batches_and_partial_tail() {
    let a = encode_batch(&sample_records(), 1, &opts(0)).unwrap();
    let mut b = encode_batch(&sample_records()[..2], 2, &opts(4)).unwrap();
    b[0..8].copy_from_slice(&5i64.to_be_bytes());
    let mut data = a.clone();
    data.extend_from_slice(&b);
    let full = decode_all(&data);
    assert_eq!(full.len(), 7);
    assert_eq!(
        full.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4, 5, 6]
    );
    // Every truncation inside the second batch just drops it.
    for cut in a.len()..data.len() {
        assert_eq!(decode_all(&data[..cut]).len(), 5, "cut at {cut}");
        assert_eq!(decode_batch_headers(&data[..cut]).unwrap().len(), 1);
    }
    assert!(decode_all(&[]).is_empty());
    assert!(decode_all(&data[..11]).is_empty());
}

#[test]
fn encode_rejects_bad_input() {
    assert_eq!(
        encode_batch(&[], 0, &opts(0)).unwrap_err().code,
        codes::INVALID_RECORD
    );
    assert_eq!(
        encode_batch(&sample_records(), 0, &opts(5))
            .unwrap_err()
            .code,
        codes::INVALID_RECORD
    );
}

fn corrupt_code(data: &[u8]) -> i16 {
    match decode_batches(data) {
        Ok(_) => panic!("corrupt input decoded"),
        Err(e) => e.code,
    }
}

#[test]
fn corrupt_input_is_corrupt_message() {
    for (_, codec) in CODECS {
        let good = encode_batch(&sample_records(), 1, &opts(codec)).unwrap();
        // CRC mismatch anywhere in the CRC-covered part.
        for pos in 21..good.len() {
            let mut bad = good.clone();
            bad[pos] ^= 0x41;
            assert_eq!(corrupt_code(&bad), codes::CORRUPT_MESSAGE);
        }
        // Same mutations with the CRC fixed up: must error or decode, never panic.
        for pos in 21..good.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[pos] ^= flip;
                fix_crc(&mut bad);
                if let Err(e) = decode_batches(&bad) {
                    assert_eq!(e.code, codes::CORRUPT_MESSAGE);
                }
                let _ = decode_batch_headers(&bad);
            }
        }
        // Bad magic.
        let mut bad = good.clone();
        bad[16] = 1;
        assert_eq!(corrupt_code(&bad), codes::CORRUPT_MESSAGE);
        // batchLength below the minimum.
        let mut bad = good.clone();
        bad[8..12].copy_from_slice(&10i32.to_be_bytes());
        assert_eq!(corrupt_code(&bad), codes::CORRUPT_MESSAGE);
        assert_eq!(
            decode_batch_headers(&bad).unwrap_err().code,
            codes::CORRUPT_MESSAGE
        );
        // Declared record count disagrees with the records.
        for count in [0i32, 4, 6, -1] {
            let mut bad = good.clone();
            bad[57..61].copy_from_slice(&count.to_be_bytes());
            fix_crc(&mut bad);
            assert_eq!(corrupt_code(&bad), codes::CORRUPT_MESSAGE, "count {count}");
        }
    }
    // Garbage "compressed" payloads with a valid CRC.
    for codec in 1..=4u8 {
        let spec = BatchSpec::new(vec![Rec::new(1, b"x")]).codec(codec);
        for payload in [&b""[..], b"\x00", b"garbage garbage garbage", &[0xffu8; 64]] {
            let b = build_with_payload(&spec, payload);
            assert_eq!(corrupt_code(&b), codes::CORRUPT_MESSAGE, "codec {codec}");
        }
    }
    // Unknown codec.
    let mut bad = encode_batch(&sample_records(), 1, &opts(0)).unwrap();
    bad[22] |= 0x07;
    fix_crc(&mut bad);
    assert_eq!(corrupt_code(&bad), codes::CORRUPT_MESSAGE);
    // Trailing bytes after the declared records (uncompressed).
    let spec = BatchSpec::new(vec![Rec::new(1, b"x")]);
    let mut payload = encode_records(&spec.records, 1);
    payload.push(0);
    assert_eq!(
        corrupt_code(&build_with_payload(&spec, &payload)),
        codes::CORRUPT_MESSAGE
    );
}

#[test]
fn large_multi_block_payloads_round_trip() {
    let big: Vec<Vec<u8>> = (0..40u32)
        .map(|i| (0..10_000u32).map(|j| ((i * 7 + j) % 251) as u8).collect())
        .collect();
    let recs: Vec<RecordData<'_>> = big
        .iter()
        .map(|v| RecordData {
            key: Some(&v[..8]),
            value: Some(v),
            headers: vec![],
        })
        .collect();
    for (_, codec) in CODECS {
        let b = encode_batch(&recs, 3, &opts(codec)).unwrap();
        validator::validate(&b, 1 << 24).unwrap();
        assert_eq!(decode_all(&b), expected(&recs, 0, 3), "codec {codec}");
    }
}
