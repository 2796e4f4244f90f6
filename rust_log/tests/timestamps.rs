//! offset_for_timestamp / max_timestamp, including compressed batches of
//! every codec (and both snappy framings).
mod common;

use common::*;

fn recs(ts: &[i64]) -> Vec<Rec> {
    ts.iter()
        .map(|&t| Rec::new(t, b"some value that compresses well well well"))
        .collect()
}

type Framing = fn(&[u8]) -> Vec<u8>;

fn check_codec(codec: u8, payload_override: Option<Framing>) {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), small_cfg(1 << 30, 0), true);
    // batch A: offsets 0..3, timestamps out of order inside the batch
    let a = BatchSpec::new(recs(&[100, 150, 120, 200])).codec(codec);
    let b = BatchSpec::new(recs(&[300, 250, 400])).codec(codec);
    for spec in [&a, &b] {
        let bytes = match payload_override {
            Some(f) => build_with_payload(
                spec,
                &f(&encode_records(&spec.records, spec.records[0].timestamp)),
            ),
            None => build(spec),
        };
        log.append(bytes, 0, None).unwrap();
    }
    assert_eq!(log.offset_for_timestamp(0).unwrap(), Some((0, 100)));
    assert_eq!(log.offset_for_timestamp(100).unwrap(), Some((0, 100)));
    assert_eq!(log.offset_for_timestamp(101).unwrap(), Some((1, 150)));
    assert_eq!(log.offset_for_timestamp(160).unwrap(), Some((3, 200)));
    assert_eq!(log.offset_for_timestamp(201).unwrap(), Some((4, 300)));
    assert_eq!(log.offset_for_timestamp(260).unwrap(), Some((4, 300)));
    assert_eq!(log.offset_for_timestamp(301).unwrap(), Some((6, 400)));
    assert_eq!(log.offset_for_timestamp(401).unwrap(), None);
    assert_eq!(log.max_timestamp().unwrap(), Some((6, 400)));
}

#[test]
fn uncompressed() {
    check_codec(0, None);
}
#[test]
fn gzip() {
    check_codec(1, None);
}
#[test]
fn snappy_raw() {
    check_codec(2, None);
}
#[test]
fn snappy_xerial() {
    check_codec(2, Some(|d| xerial_snappy(d, 16)));
}
#[test]
fn lz4() {
    check_codec(3, None);
}
#[test]
fn zstd() {
    check_codec(4, None);
}

#[test]
fn max_timestamp_first_record_inside_batch_and_empty_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    assert_eq!(log.max_timestamp().unwrap(), None);
    assert_eq!(log.offset_for_timestamp(0).unwrap(), None);
    log.append(
        build(&BatchSpec::new(recs(&[5, 9, 7, 9, 1])).codec(1)),
        0,
        None,
    )
    .unwrap();
    log.append(build(&BatchSpec::new(recs(&[9, 9]))), 0, None)
        .unwrap();
    assert_eq!(log.max_timestamp().unwrap(), Some((1, 9)));
}

#[test]
fn lookups_across_segments_and_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let one = build(&BatchSpec::new(recs(&[0])));
    let c = small_cfg((one.len() * 4) as u64, (one.len() * 2) as u64);
    {
        let mut log = open(dir.path(), c, true);
        for i in 0..30 {
            log.append(build(&BatchSpec::new(recs(&[1000 + 10 * i]))), 0, None)
                .unwrap();
        }
        assert!(log.segment_base_offsets().len() > 5);
        for i in 0..30 {
            assert_eq!(
                log.offset_for_timestamp(1000 + 10 * i - 5).unwrap(),
                Some((i, 1000 + 10 * i))
            );
        }
        assert_eq!(log.max_timestamp().unwrap(), Some((29, 1290)));
        log.close().unwrap();
    }
    for clean in [true, false] {
        let log = open(dir.path(), c, clean);
        for i in 0..30 {
            assert_eq!(
                log.offset_for_timestamp(1000 + 10 * i).unwrap(),
                Some((i, 1000 + 10 * i))
            );
        }
        assert_eq!(log.max_timestamp().unwrap(), Some((29, 1290)));
    }
}

#[test]
fn create_time_records_outside_the_timestamp_bounds_fail_alone() {
    let now = 1_800_000_000_000;
    for codec in 0..=4u8 {
        let dir = tempfile::tempdir().unwrap();
        let mut log = open(dir.path(), small_cfg(1 << 30, 0), true);
        // message.timestamp.after.max.ms is one hour by default; -1 means "no timestamp".
        let late = now + 3_600_001;
        let spec = BatchSpec::new(recs(&[now, late, now + 3_600_000, -1, late])).codec(codec);
        let e = log.append(build(&spec), 0, Some(now)).unwrap_err();
        assert_eq!(e.code, 32, "codec {codec}");
        let failed: Vec<i32> = e.record_errors.iter().map(|(i, _)| *i).collect();
        assert_eq!(failed, vec![1, 4], "codec {codec}");
        assert!(e.record_errors[0].1.starts_with(&format!(
            "Timestamp {late} of message with offset 1 is out of range. The timestamp should be within ["
        )));
        assert_eq!(log.log_end_offset(), 0);
        // The same records are accepted by a LogAppendTime topic, and in time by a CreateTime one.
        let mut c = *log.config();
        c.log_append_time = true;
        log.update_config(c).unwrap();
        log.append(build(&spec), 0, Some(now)).unwrap();
        c.log_append_time = false;
        c.timestamp_after_max_ms = 3_600_001;
        log.update_config(c).unwrap();
        log.append(build(&spec), 0, Some(now)).unwrap();
        assert_eq!(log.log_end_offset(), 10);
    }
}
