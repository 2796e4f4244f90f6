//! Append/read round trips, in-place offset assignment, read edge cases,
//! segment rolling and index lookups.
mod common;

use common::*;

#[test]
fn append_assigns_offsets_in_place_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (0, 0));
    let b1 = simple(3, 1000, 10);
    let b2 = simple(2, 2000, 10);
    let r1 = log.append(b1.clone(), 5, None).unwrap();
    assert_eq!(
        (
            r1.base_offset,
            r1.last_offset,
            r1.log_append_time,
            r1.duplicate
        ),
        (0, 2, -1, false)
    );
    let r2 = log.append(b2.clone(), 5, None).unwrap();
    assert_eq!((r2.base_offset, r2.last_offset), (3, 4));
    assert_eq!(log.log_end_offset(), 5);

    let data = log.read(0, 1 << 20, true).unwrap();
    assert_eq!(batches_in(&data), vec![(0, 2), (3, 4)]);
    // Stored verbatim except base offset and leader epoch (not CRC covered).
    let mut expect2 = b2.clone();
    expect2[0..8].copy_from_slice(&3i64.to_be_bytes());
    expect2[12..16].copy_from_slice(&5i32.to_be_bytes());
    assert_eq!(&data[b1.len()..], &expect2[..]);
    assert_eq!(i32::from_be_bytes(data[12..16].try_into().unwrap()), 5);
    // CRC still valid after assignment.
    assert_eq!(
        crc32c::crc32c(&data[21..b1.len()]),
        u32::from_be_bytes(data[17..21].try_into().unwrap())
    );
}

#[test]
fn multi_batch_append() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    let mut buf = simple(2, 10, 5);
    buf.extend(simple(3, 20, 5));
    let r = log.append(buf, 0, None).unwrap();
    assert_eq!((r.base_offset, r.last_offset), (0, 4));
    assert_eq!(
        batches_in(&log.read(0, 1 << 20, true).unwrap()),
        vec![(0, 1), (2, 4)]
    );
}

#[test]
fn mid_batch_offset_returns_containing_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    log.append(simple(5, 0, 10), 0, None).unwrap();
    log.append(simple(5, 0, 10), 0, None).unwrap();
    assert_eq!(
        batches_in(&log.read(3, 1 << 20, true).unwrap()),
        vec![(0, 4), (5, 9)]
    );
    assert_eq!(
        batches_in(&log.read(7, 1 << 20, true).unwrap()),
        vec![(5, 9)]
    );
    assert_eq!(log.read(10, 1 << 20, true).unwrap(), Vec::<u8>::new());
}

#[test]
fn max_bytes_limits_to_whole_batches_and_min_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    let b = simple(1, 0, 100);
    let size = b.len();
    for _ in 0..4 {
        log.append(b.clone(), 0, None).unwrap();
    }
    assert_eq!(
        batches_in(&log.read(0, size * 2 + 10, true).unwrap()),
        vec![(0, 0), (1, 1)]
    );
    assert_eq!(batches_in(&log.read(0, size, true).unwrap()), vec![(0, 0)]);
    // First batch larger than max_bytes: whole with min_one, nothing without.
    assert_eq!(batches_in(&log.read(1, 10, true).unwrap()), vec![(1, 1)]);
    assert!(log.read(1, 10, false).unwrap().is_empty());
    assert!(log.read(1, 0, false).unwrap().is_empty());
}

#[test]
fn out_of_range_reads() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    assert!(log.read(0, 100, true).unwrap().is_empty());
    assert_eq!(log.read(1, 100, true).unwrap_err().code, 1);
    log.append(simple(2, 0, 1), 0, None).unwrap();
    assert_eq!(log.read(3, 100, true).unwrap_err().code, 1);
    assert_eq!(log.read(-1, 100, true).unwrap_err().code, 1);
}

#[test]
fn segments_roll_and_reads_cross_them() {
    let dir = tempfile::tempdir().unwrap();
    let b = simple(2, 0, 200);
    let seg_bytes = (b.len() * 3 + 10) as u64;
    let mut log = open(dir.path(), small_cfg(seg_bytes, 100), true);
    for _ in 0..10 {
        log.append(b.clone(), 0, None).unwrap();
    }
    assert_eq!(log.segment_base_offsets(), vec![0, 6, 12, 18]);
    assert_eq!(log.size_bytes(), (b.len() * 10) as u64);
    let exists = |base: i64, ext: &str| dir.path().join(format!("{base:020}.{ext}")).exists();
    for base in [0i64, 6, 12] {
        assert!(exists(base, "log") && exists(base, "index") && exists(base, "timeindex"));
    }
    // The active segment's indexes are created when first needed: it has
    // no index entry yet (its only batch is at position 0).
    assert!(exists(18, "log") && !exists(18, "index") && !exists(18, "timeindex"));
    // A read stays within one segment (like Kafka) and the next continues.
    let mut next = 0;
    let mut seen = vec![];
    while next < log.log_end_offset() {
        let data = log.read(next, 1 << 20, true).unwrap();
        let bs = batches_in(&data);
        assert!(!bs.is_empty());
        next = bs.last().unwrap().1 + 1;
        seen.extend(bs);
    }
    assert_eq!(seen.len(), 10);
    for (i, (base, last)) in seen.iter().enumerate() {
        assert_eq!((*base, *last), (2 * i as i64, 2 * i as i64 + 1));
    }
    // Every offset is readable and returns its containing batch first.
    for off in 0..20 {
        let bs = batches_in(&log.read(off, 1 << 20, true).unwrap());
        assert_eq!(bs[0].0, off - off % 2);
    }
    // Reopen (clean) keeps everything; closed, every segment has Kafka's
    // three files.
    log.close().unwrap();
    drop(log);
    assert!(exists(18, "log") && exists(18, "index") && exists(18, "timeindex"));
    let log = open(dir.path(), small_cfg(seg_bytes, 100), true);
    assert_eq!(log.segment_base_offsets(), vec![0, 6, 12, 18]);
    assert_eq!(log.log_end_offset(), 20);
    assert_eq!(
        batches_in(&log.read(13, 1 << 20, true).unwrap())[0],
        (12, 13)
    );
}

#[test]
fn sparse_offset_index_entries_and_lookup() {
    let dir = tempfile::tempdir().unwrap();
    let b = simple(1, 0, 100);
    let mut log = open(dir.path(), small_cfg(1 << 30, (b.len() * 3) as u64), true);
    for i in 0..20 {
        log.append(simple(1, 1000 + i, 100), 0, None).unwrap();
    }
    let idx = std::fs::read(dir.path().join(format!("{:020}.index", 0))).unwrap();
    assert!(!idx.is_empty() && idx.len().is_multiple_of(8));
    let entries: Vec<(u32, u32)> = idx
        .chunks(8)
        .map(|c| {
            (
                u32::from_be_bytes(c[0..4].try_into().unwrap()),
                u32::from_be_bytes(c[4..8].try_into().unwrap()),
            )
        })
        .collect();
    // Every entry maps a batch's last offset to that batch's position, and
    // entries are sparse (an entry once more than 3 batches were written).
    assert_eq!(entries[0], (4, (4 * b.len()) as u32));
    for w in entries.windows(2) {
        assert_eq!(w[1].0 - w[0].0, 4);
    }
    for off in 0..20 {
        assert_eq!(
            batches_in(&log.read(off, b.len(), true).unwrap()),
            vec![(off, off)]
        );
    }
    let tidx = std::fs::read(dir.path().join(format!("{:020}.timeindex", 0))).unwrap();
    assert_eq!(tidx.len() / 12, entries.len());
    // Time index entries: (max timestamp so far, last offset of its batch).
    let t0 = (
        i64::from_be_bytes(tidx[0..8].try_into().unwrap()),
        u32::from_be_bytes(tidx[8..12].try_into().unwrap()),
    );
    assert_eq!(t0, (1004, 4));
    for ts in 1000..1020 {
        assert_eq!(log.offset_for_timestamp(ts).unwrap(), Some((ts - 1000, ts)));
    }
    assert_eq!(log.offset_for_timestamp(1020).unwrap(), None);
    assert_eq!(log.offset_for_timestamp(0).unwrap(), Some((0, 1000)));
}

#[test]
fn segment_rolls_when_index_full() {
    let dir = tempfile::tempdir().unwrap();
    let b = simple(1, 0, 10);
    let c = _rust_log::LogConfig {
        segment_index_bytes: 16,
        index_interval_bytes: 0,
        ..cfg()
    };
    let mut log = open(dir.path(), c, true);
    for _ in 0..10 {
        log.append(b.clone(), 0, None).unwrap();
    }
    assert!(log.segment_base_offsets().len() > 1);
    for off in 0..10 {
        assert_eq!(
            batches_in(&log.read(off, 1 << 20, false).unwrap())[0],
            (off, off)
        );
    }
}

#[test]
fn log_append_time_rewrites_header() {
    let dir = tempfile::tempdir().unwrap();
    let c = _rust_log::LogConfig {
        log_append_time: true,
        ..cfg()
    };
    let mut log = open(dir.path(), c, true);
    let r = log.append(simple(3, 1000, 5), 0, Some(999_999)).unwrap();
    assert_eq!(r.log_append_time, 999_999);
    let data = log.read(0, 1 << 20, true).unwrap();
    let attrs = i16::from_be_bytes(data[21..23].try_into().unwrap());
    assert_eq!(attrs & 0x08, 0x08);
    assert_eq!(
        i64::from_be_bytes(data[35..43].try_into().unwrap()),
        999_999
    );
    assert_eq!(i64::from_be_bytes(data[27..35].try_into().unwrap()), 1000);
    assert_eq!(
        crc32c::crc32c(&data[21..]),
        u32::from_be_bytes(data[17..21].try_into().unwrap())
    );
    assert_eq!(log.offset_for_timestamp(5000).unwrap(), Some((0, 999_999)));
    assert_eq!(log.max_timestamp().unwrap(), Some((0, 999_999)));
}

#[test]
fn create_time_max_timestamp_fixed_from_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    let mut b = simple(3, 1000, 5);
    b[35..43].copy_from_slice(&5i64.to_be_bytes()); // lie about max timestamp
    fix_crc(&mut b);
    log.append(b, 0, None).unwrap();
    let data = log.read(0, 1 << 20, true).unwrap();
    assert_eq!(i64::from_be_bytes(data[35..43].try_into().unwrap()), 1002);
    assert_eq!(
        crc32c::crc32c(&data[21..]),
        u32::from_be_bytes(data[17..21].try_into().unwrap())
    );
}

#[test]
fn leader_epochs_end_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    assert_eq!(log.end_offset_for_epoch(0).unwrap(), (-1, -1));
    log.append(simple(2, 0, 1), 1, None).unwrap(); // 0-1 epoch 1
    log.append(simple(2, 0, 1), 1, None).unwrap(); // 2-3 epoch 1
    log.append(simple(2, 0, 1), 3, None).unwrap(); // 4-5 epoch 3
    log.append(simple(2, 0, 1), 5, None).unwrap(); // 6-7 epoch 5
    assert_eq!(log.end_offset_for_epoch(5).unwrap(), (5, 8));
    assert_eq!(log.end_offset_for_epoch(3).unwrap(), (3, 6));
    assert_eq!(log.end_offset_for_epoch(4).unwrap(), (3, 6));
    assert_eq!(log.end_offset_for_epoch(1).unwrap(), (1, 4));
    assert_eq!(log.end_offset_for_epoch(0).unwrap(), (0, 0)); // Kafka: below first epoch
    assert_eq!(log.end_offset_for_epoch(6).unwrap(), (-1, -1));
    let cp = std::fs::read_to_string(dir.path().join("leader-epoch-checkpoint")).unwrap();
    assert_eq!(cp, "0\n3\n1 0\n3 4\n5 6\n");
    log.close().unwrap();
    drop(log);
    // Rebuilt from batch headers when the checkpoint is gone.
    std::fs::remove_file(dir.path().join("leader-epoch-checkpoint")).unwrap();
    let log = open(dir.path(), cfg(), false);
    assert_eq!(log.leader_epochs(), &[(1, 0), (3, 4), (5, 6)]);
    assert_eq!(log.end_offset_for_epoch(4).unwrap(), (3, 6));
}

#[test]
fn close_is_idempotent_and_blocks_further_use() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    log.append(simple(1, 0, 1), 0, None).unwrap();
    log.flush().unwrap();
    log.close().unwrap();
    log.close().unwrap();
    assert_eq!(log.append(simple(1, 0, 1), 0, None).unwrap_err().code, 56);
    assert!(dir.path().join(format!("{:020}.snapshot", 1)).exists());
}

fn read_below(
    log: &_rust_log::PartitionLog,
    offset: i64,
    max_bytes: usize,
    upper: i64,
) -> Vec<(i64, i64)> {
    let plan = log
        .read_plan_with(offset, max_bytes, true, true, Some(upper))
        .unwrap();
    let mut data = vec![0u8; plan.len];
    let n = plan.read_into(&mut data).unwrap();
    data.truncate(n);
    batches_in(&data)
}

#[test]
fn a_read_below_a_high_watermark_stops_at_it() {
    let dir = tempfile::tempdir().unwrap();
    // Small segments: batches of 3 records and 100-byte values spread over several.
    let mut log = open(dir.path(), small_cfg(1000, 100), true);
    for i in 0..10 {
        log.append(simple(3, 1000 + i, 100), 0, None).unwrap();
    }
    assert!(log.segment_base_offsets().len() > 2);
    assert_eq!(log.log_end_offset(), 30);
    // At the log end or beyond it: everything from the segment of `offset`.
    let all = read_below(&log, 0, 1 << 20, 30);
    assert_eq!(all, batches_in(&log.read(0, 1 << 20, true).unwrap()));
    assert_eq!(read_below(&log, 0, 1 << 20, 1000), all);
    // A high watermark inside the first segment cuts the read there.
    let (first_batch, second) = (all[0], all[1]);
    assert_eq!(read_below(&log, 0, 1 << 20, second.0), vec![first_batch]);
    assert_eq!(read_below(&log, 0, 1 << 20, 0), vec![]);
    // At the high watermark: nothing, though the log has more.
    let last_segment = *log.segment_base_offsets().last().unwrap();
    assert_eq!(read_below(&log, 27, 1 << 20, 27), vec![]);
    // One read never spans segments; a watermark in a later segment does not cut this one.
    let in_first = read_below(&log, 0, 1 << 20, last_segment + 3);
    assert_eq!(in_first, all);
    // A watermark in the middle of a batch leaves that batch out.
    assert_eq!(
        read_below(&log, 0, 1 << 20, second.0 + 1),
        vec![first_batch]
    );
    // The last segment, up to a watermark one batch before the end.
    assert_eq!(
        read_below(&log, last_segment, 1 << 20, 27),
        batches_in(&log.read(last_segment, 1 << 20, true).unwrap())
            .into_iter()
            .filter(|b| b.1 < 27)
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_whole_batch_read_ends_where_the_copying_read_trims_without_reading_the_range() {
    let dir = tempfile::tempdir().unwrap();
    // Batches of various sizes, index entries every 300 bytes: the end of a cut
    // range is found from an indexed position, not from the range's start.
    let mut log = open(dir.path(), small_cfg(1 << 20, 300), true);
    for i in 0..60 {
        log.append(
            simple(1 + i % 4, 1000 + i as i64, 40 + 17 * (i % 5)),
            0,
            None,
        )
        .unwrap();
    }
    let end = log.log_end_offset();
    for offset in [0, 7, 31, end - 2] {
        for max_bytes in [1usize, 60, 200, 777, 1500, 4000, 1 << 20] {
            for min_one in [true, false] {
                let copied = log.read_plan(offset, max_bytes, min_one).unwrap();
                let mut data = vec![0u8; copied.len];
                let n = copied.read_into(&mut data).unwrap();
                data.truncate(n);
                let whole = log
                    .read_plan_whole(offset, max_bytes, min_one, true, None)
                    .unwrap();
                assert!(whole.exact, "offset {offset} max {max_bytes}");
                assert_eq!(
                    whole.len, n,
                    "offset {offset} max {max_bytes} min_one {min_one}"
                );
                let mut sent = vec![0u8; whole.len];
                assert_eq!(whole.read_into(&mut sent).unwrap(), whole.len);
                assert_eq!(sent, data);
            }
        }
    }
    // Under a high watermark too.
    let upper = end / 2;
    let whole = log
        .read_plan_whole(0, 900, true, true, Some(upper))
        .unwrap();
    let mut sent = vec![0u8; whole.len];
    whole.read_into(&mut sent).unwrap();
    assert!(batches_in(&sent).iter().all(|b| b.1 < upper));
}
