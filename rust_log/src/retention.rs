//! Which old segments retention may delete, following Kafka's order of
//! rules, each taking segments from the oldest while it holds:
//! 1. log start breach: everything in the segment is below the log start
//!    offset (after DeleteRecords);
//! 2. size (`retention.bytes`, delete policy): deleting the segment leaves
//!    the log at least `retention.bytes` big;
//! 3. time (`retention.ms`, delete policy): the segment's largest timestamp
//!    is more than `retention.ms` old.
//!
//! The last (active) segment counts too when it is not empty: the log then
//! rolls a fresh empty segment before deleting it, as Kafka does. This
//! module only decides; `PartitionLog` deletes.

/// What retention needs to know about one segment.
#[derive(Debug, Clone, Copy)]
pub struct SegmentFacts {
    /// First offset of the segment.
    pub base_offset: i64,
    /// Offset after its last batch.
    pub next_offset: i64,
    /// Bytes of its `.log` file.
    pub size: u64,
    /// Largest timestamp in it, or its file's modification time when it has
    /// no timestamps.
    pub largest_timestamp: i64,
}

/// Inputs of a retention decision.
#[derive(Debug, Clone, Copy)]
pub struct RetentionRules {
    /// Policy contains `delete` (size and time rules apply).
    pub delete_policy: bool,
    /// `retention.ms` (-1 unlimited).
    pub retention_ms: i64,
    /// `retention.bytes` (-1 unlimited).
    pub retention_bytes: i64,
    /// Current log start offset.
    pub log_start_offset: i64,
    /// Current log end offset.
    pub log_end_offset: i64,
    /// Current time.
    pub now_ms: i64,
}

/// Number of leading segments to delete (may include the last one; the
/// caller must roll before deleting every segment).
pub fn deletable_prefix(segments: &[SegmentFacts], rules: &RetentionRules) -> usize {
    let n = segments.len();
    // Upper bound of what a segment holds: the next segment's base, or the
    // log end for the last one. An empty last segment is never deletable.
    let upper = |i: usize| -> i64 {
        segments
            .get(i + 1)
            .map_or(rules.log_end_offset, |s| s.base_offset)
    };
    let usable = |i: usize| -> bool {
        let s = &segments[i];
        !(i + 1 == n && s.size == 0)
    };
    let mut k = 0usize;
    while k < n && usable(k) && upper(k) <= rules.log_start_offset {
        k += 1;
    }
    if !rules.delete_policy {
        return k;
    }
    if rules.retention_bytes >= 0 {
        let total: u64 = segments[k..].iter().map(|s| s.size).sum();
        let mut diff = total as i128 - i128::from(rules.retention_bytes);
        while k < n && usable(k) && diff - i128::from(segments[k].size) >= 0 {
            diff -= i128::from(segments[k].size);
            k += 1;
        }
    }
    if rules.retention_ms >= 0 {
        while k < n
            && usable(k)
            && rules.now_ms.saturating_sub(segments[k].largest_timestamp) > rules.retention_ms
        {
            k += 1;
        }
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(base: i64, next: i64, size: u64, ts: i64) -> SegmentFacts {
        SegmentFacts {
            base_offset: base,
            next_offset: next,
            size,
            largest_timestamp: ts,
        }
    }

    fn rules() -> RetentionRules {
        RetentionRules {
            delete_policy: true,
            retention_ms: -1,
            retention_bytes: -1,
            log_start_offset: 0,
            log_end_offset: 30,
            now_ms: 1_000_000,
        }
    }

    #[test]
    fn size_rule_keeps_at_least_retention_bytes() {
        let segs = [seg(0, 10, 100, 0), seg(10, 20, 100, 0), seg(20, 30, 100, 0)];
        let r = RetentionRules {
            retention_bytes: 150,
            ..rules()
        };
        assert_eq!(deletable_prefix(&segs, &r), 1);
        let r = RetentionRules {
            retention_bytes: 100,
            ..rules()
        };
        assert_eq!(deletable_prefix(&segs, &r), 2);
        let r = RetentionRules {
            retention_bytes: 0,
            ..rules()
        };
        assert_eq!(deletable_prefix(&segs, &r), 3);
    }

    #[test]
    fn time_rule_stops_at_first_young_segment() {
        let segs = [
            seg(0, 10, 1, 10),
            seg(10, 20, 1, 999_999),
            seg(20, 30, 1, 10),
        ];
        let r = RetentionRules {
            retention_ms: 1000,
            ..rules()
        };
        assert_eq!(deletable_prefix(&segs, &r), 1);
    }

    #[test]
    fn empty_last_segment_is_never_deleted() {
        let segs = [seg(0, 10, 1, 10), seg(10, 10, 0, -1)];
        let r = RetentionRules {
            retention_ms: 0,
            log_end_offset: 10,
            ..rules()
        };
        assert_eq!(deletable_prefix(&segs, &r), 1);
    }

    #[test]
    fn log_start_breach_applies_without_delete_policy() {
        let segs = [seg(0, 10, 1, 10), seg(10, 20, 1, 10), seg(20, 30, 1, 10)];
        let r = RetentionRules {
            delete_policy: false,
            retention_ms: 0,
            log_start_offset: 15,
            ..rules()
        };
        assert_eq!(deletable_prefix(&segs, &r), 1);
    }
}
