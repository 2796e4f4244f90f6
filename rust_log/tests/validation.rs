//! Append validation errors and their Kafka error codes.
mod common;

use common::*;

fn code_of(buf: Vec<u8>) -> i16 {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    let err = log.append(buf, 0, None).unwrap_err();
    assert_eq!(log.log_end_offset(), 0, "nothing may be written on error");
    assert_eq!(log.size_bytes(), 0);
    err.code
}

#[test]
fn empty_is_invalid_record() {
    assert_eq!(code_of(vec![]), 87);
}

#[test]
fn bad_crc_is_corrupt() {
    let mut b = simple(2, 0, 10);
    let n = b.len();
    b[n - 1] ^= 0xff;
    assert_eq!(code_of(b), 2);
}

#[test]
fn bad_magic_is_unsupported() {
    let mut spec = BatchSpec::new(vec![Rec::new(0, b"a")]);
    spec.magic = 1;
    assert_eq!(code_of(build(&spec)), 43);
}

#[test]
fn truncated_and_trailing_garbage_are_corrupt() {
    let b = simple(2, 0, 10);
    assert_eq!(code_of(b[..b.len() - 1].to_vec()), 2);
    assert_eq!(code_of(b[..5].to_vec()), 2);
    let mut two = b.clone();
    two.extend_from_slice(&[0, 0, 0]);
    assert_eq!(code_of(two), 2);
    let mut small = b.clone();
    small[8..12].copy_from_slice(&10i32.to_be_bytes());
    assert_eq!(code_of(small), 2);
}

#[test]
fn too_large_batch() {
    let dir = tempfile::tempdir().unwrap();
    let c = _rust_log::LogConfig {
        max_message_bytes: 200,
        ..cfg()
    };
    let mut log = open(dir.path(), c, true);
    let err = log.append(simple(1, 0, 300), 0, None).unwrap_err();
    assert_eq!(err.code, 10);
    assert!(log.append(simple(1, 0, 50), 0, None).is_ok());
}

#[test]
fn count_mismatch_is_invalid_record() {
    // recordsCount != lastOffsetDelta + 1
    let mut b = simple(3, 0, 1);
    b[57..61].copy_from_slice(&2i32.to_be_bytes());
    fix_crc(&mut b);
    assert_eq!(code_of(b), 87);
    // header consistent but the records hold fewer entries than declared
    let spec = BatchSpec::new(vec![
        Rec::new(0, b"a"),
        Rec::new(1, b"b"),
        Rec::new(2, b"c"),
    ]);
    let payload = encode_records(&spec.records[..2], 0);
    assert_eq!(code_of(build_with_payload(&spec, &payload)), 87);
    // records that do not parse
    let spec1 = BatchSpec::new(vec![Rec::new(0, b"a")]);
    assert_eq!(code_of(build_with_payload(&spec1, &[0x10, 0x00, 0x01])), 87);
}

#[test]
fn offset_deltas_must_be_sequential() {
    let spec = BatchSpec::new(vec![Rec::new(0, b"a"), Rec::new(1, b"b")]);
    let mut payload = encode_records(&spec.records, 0);
    // second record: length(1) attrs(1) tsDelta(1) offsetDelta -> set to 5
    let first_len = payload[0] as usize / 2 + 1;
    payload[first_len + 3] = 10; // zigzag(5)
    assert_eq!(code_of(build_with_payload(&spec, &payload)), 87);
}

#[test]
fn control_batch_rejected() {
    let mut spec = BatchSpec::new(vec![Rec::new(0, b"a")]).producer(7, 0, 0);
    spec.extra_attributes = 0x20 | 0x10;
    assert_eq!(code_of(build(&spec)), 87);
}

#[test]
fn unknown_codec_rejected() {
    let spec = BatchSpec::new(vec![Rec::new(0, b"a")]);
    let mut b = build(&spec);
    b[22] |= 0x07;
    fix_crc(&mut b);
    assert_eq!(code_of(b), 87);
}

#[test]
fn compressed_batches_stored_as_received() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    let recs: Vec<Rec> = (0..5).map(|i| Rec::new(100 + i, b"hello world")).collect();
    let b = build(&BatchSpec::new(recs).codec(4));
    log.append(b.clone(), 0, None).unwrap();
    let data = log.read(0, 1 << 20, true).unwrap();
    assert_eq!(&data[16..], &b[16..]);
    // Compressed: header count vs lastOffsetDelta still checked.
    let mut bad = b.clone();
    bad[57..61].copy_from_slice(&9i32.to_be_bytes());
    fix_crc(&mut bad);
    assert_eq!(log.append(bad, 0, None).unwrap_err().code, 87);
}

#[test]
fn idempotent_multi_batch_rejected() {
    let mut buf = build(&BatchSpec::new(vec![Rec::new(0, b"a")]).producer(1, 0, 0));
    buf.extend(build(
        &BatchSpec::new(vec![Rec::new(0, b"a")]).producer(1, 0, 1),
    ));
    assert_eq!(code_of(buf), 87);
}

#[test]
fn keys_headers_and_null_values_parse() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    let r = Rec {
        timestamp: 5,
        key: Some(b"k".to_vec()),
        value: None,
        headers: vec![
            (b"h1".to_vec(), Some(b"v".to_vec())),
            (b"h2".to_vec(), None),
        ],
    };
    log.append(build(&BatchSpec::new(vec![r.clone(), r])), 0, None)
        .unwrap();
    assert_eq!(log.log_end_offset(), 2);
}
