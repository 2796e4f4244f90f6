//! Topic `compression.type`: every producer codec against every topic
//! setting, inner-record validation of compressed batches, and the
//! allow_zstd rule of old fetch versions.
mod common;

use _rust_log::error::codes;
use _rust_log::log_config::TopicCompression;
use _rust_log::record_batch::BatchHeader;
use common::*;

fn recs() -> Vec<Rec> {
    (0..50)
        .map(|i| Rec {
            timestamp: 1000 + i,
            key: Some(format!("key{i}").into_bytes()),
            value: Some(vec![b'a' + (i % 26) as u8; 100]),
            headers: vec![(b"h".to_vec(), Some(b"v".to_vec()))],
        })
        .collect()
}

const XERIAL: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];

#[test]
fn every_producer_codec_against_every_topic_compression() {
    let topics = ["producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"];
    for topic in topics {
        for producer_codec in 0..=4u8 {
            for xerial in [false, true] {
                if xerial && producer_codec != 2 {
                    continue;
                }
                let dir = tempfile::tempdir().unwrap();
                let c = _rust_log::LogConfig {
                    compression: TopicCompression::parse(topic).unwrap(),
                    ..cfg()
                };
                let mut log = open(dir.path(), c, true);
                let spec = BatchSpec::new(recs()).codec(producer_codec);
                let batch = if xerial {
                    let raw = encode_records(&spec.records, 1000);
                    build_with_payload(&spec, &xerial_snappy(&raw, 1000))
                } else {
                    build(&spec)
                };
                let info = log.append(batch, 3, Some(5)).unwrap();
                assert_eq!((info.base_offset, info.last_offset), (0, 49));
                let data = log.read(0, 1 << 20, true).unwrap();
                let h = BatchHeader::parse(&data).unwrap();
                let want = match TopicCompression::parse(topic).unwrap() {
                    TopicCompression::Producer => producer_codec,
                    TopicCompression::Codec(c) => c,
                };
                assert_eq!(
                    h.compression(),
                    want,
                    "topic {topic} producer {producer_codec}"
                );
                assert_eq!(h.records_count, 50);
                assert_eq!(h.max_timestamp, 1049);
                assert_eq!(h.partition_leader_epoch, 3);
                if want == 2 && (producer_codec != 2) {
                    assert_eq!(data[61..69], XERIAL, "Kafka writes snappy-java framing");
                }
                let got = records_of(&data);
                assert_eq!(got.len(), 50);
                for (i, g) in got.iter().enumerate() {
                    assert_eq!(g.offset, i as i64);
                    assert_eq!(g.timestamp, 1000 + i as i64);
                    assert_eq!(g.key.as_deref(), Some(format!("key{i}").as_bytes()));
                    assert_eq!(g.value.as_ref().unwrap().len(), 100);
                }
                assert_eq!(log.offset_for_timestamp(1020).unwrap(), Some((20, 1020)));
                // Survives recovery (CRC and framing valid on disk).
                std::mem::forget(log);
                let log = open(dir.path(), c, false);
                assert_eq!(log.log_end_offset(), 50, "{:?}", log.recovery_report());
            }
        }
    }
}

#[test]
fn compression_levels_are_validated_and_used() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = _rust_log::LogConfig {
        compression: TopicCompression::parse("gzip").unwrap(),
        compression_level: Some(10),
        ..cfg()
    };
    assert_eq!(
        _rust_log::PartitionLog::open(dir.path(), c, true)
            .unwrap_err()
            .code,
        codes::INVALID_CONFIG
    );
    for (name, level) in [
        ("gzip", 1),
        ("gzip", 9),
        ("zstd", -5),
        ("zstd", 19),
        ("lz4", 17),
    ] {
        c.compression = TopicCompression::parse(name).unwrap();
        c.compression_level = Some(level);
        let dir = tempfile::tempdir().unwrap();
        let mut log = open(dir.path(), c, true);
        log.append(build(&BatchSpec::new(recs())), 0, None).unwrap();
        assert_eq!(records_of(&log.read(0, 1 << 20, true).unwrap()).len(), 50);
    }
}

#[test]
fn compressed_inner_records_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    // Inner offset deltas 0, 0 instead of 0, 1.
    let spec = BatchSpec::new(vec![Rec::new(1, b"a"), Rec::new(2, b"b")]).codec(1);
    let mut raw = encode_records(&spec.records, 1);
    let second = (raw[0] >> 1) as usize + 1;
    // record layout: len, attrs, tsDelta, offsetDelta
    assert_eq!(raw[second + 3], 2); // zigzag(1)
    raw[second + 3] = 0;
    let b = build_with_payload(&spec, &compress(1, &raw));
    assert_eq!(
        log.append(b, 0, None).unwrap_err().code,
        codes::INVALID_RECORD
    );
    // Count mismatch inside a compressed batch.
    let spec3 = BatchSpec::new(vec![
        Rec::new(1, b"a"),
        Rec::new(2, b"b"),
        Rec::new(3, b"c"),
    ])
    .codec(4);
    let raw2 = encode_records(&spec.records, 1);
    let b = build_with_payload(&spec3, &compress(4, &raw2));
    assert_eq!(
        log.append(b, 0, None).unwrap_err().code,
        codes::INVALID_RECORD
    );
    // Undecodable payload.
    let b = build_with_payload(&spec, b"definitely not gzip data");
    assert_eq!(
        log.append(b, 0, None).unwrap_err().code,
        codes::CORRUPT_MESSAGE
    );
    assert_eq!(log.log_end_offset(), 0);
}

#[test]
fn zstd_needs_fetch_v10() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    log.append(build(&BatchSpec::new(recs()).codec(1)), 0, None)
        .unwrap(); // 0..49 gzip
    log.append(build(&BatchSpec::new(recs()).codec(4)), 0, None)
        .unwrap(); // 50..99 zstd
    log.append(build(&BatchSpec::new(recs()).codec(0)), 0, None)
        .unwrap(); // 100..149
    let all = log.read_with(0, 1 << 20, true, true).unwrap();
    assert_eq!(batches_in(&all).len(), 3);
    let old = log.read_with(0, 1 << 20, true, false).unwrap();
    assert_eq!(
        batches_in(&old),
        vec![(0, 49)],
        "stops before the zstd batch"
    );
    let e = log.read_with(60, 1 << 20, true, false).unwrap_err();
    assert_eq!(e.code, codes::UNSUPPORTED_COMPRESSION_TYPE);
    assert_eq!(e.code, 76);
    assert_eq!(
        batches_in(&log.read_with(100, 1 << 20, true, false).unwrap()),
        vec![(100, 149)]
    );
}
