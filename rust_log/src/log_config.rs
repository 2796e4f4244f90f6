//! Per-log configuration (Kafka topic config names and defaults): segment
//! sizing, message limits, timestamp type, cleanup policy, retention,
//! compaction knobs, topic compression type and flush policy, with the
//! validation Kafka applies (INVALID_CONFIG on a bad value).

use crate::compression;
use crate::error::{LogError, Result, codes};
use crate::segment::SegmentConfig;

/// `compression.type` of a topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopicCompression {
    /// `producer`: keep whatever codec the producer used.
    Producer,
    /// A fixed codec id (0 = uncompressed, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
    Codec(u8),
}

impl TopicCompression {
    /// Parses Kafka's `compression.type` names.
    pub fn parse(name: &str) -> Option<TopicCompression> {
        Some(match name {
            "producer" => TopicCompression::Producer,
            "uncompressed" | "none" => TopicCompression::Codec(compression::NONE),
            "gzip" => TopicCompression::Codec(compression::GZIP),
            "snappy" => TopicCompression::Codec(compression::SNAPPY),
            "lz4" => TopicCompression::Codec(compression::LZ4),
            "zstd" => TopicCompression::Codec(compression::ZSTD),
            _ => return None,
        })
    }

    /// Kafka's name for the setting.
    pub fn name(&self) -> &'static str {
        match self {
            TopicCompression::Producer => "producer",
            TopicCompression::Codec(c) => match *c {
                compression::GZIP => "gzip",
                compression::SNAPPY => "snappy",
                compression::LZ4 => "lz4",
                compression::ZSTD => "zstd",
                _ => "uncompressed",
            },
        }
    }
}

/// `cleanup.policy` of a topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CleanupPolicy {
    /// Contains `delete`: time/size retention applies.
    pub delete: bool,
    /// Contains `compact`: the cleaner keeps the newest record per key.
    pub compact: bool,
}

impl CleanupPolicy {
    /// Parses `delete`, `compact`, `compact,delete` (any order, spaces ok).
    pub fn parse(value: &str) -> Option<CleanupPolicy> {
        let mut p = CleanupPolicy {
            delete: false,
            compact: false,
        };
        for part in value.split(',').map(str::trim) {
            match part {
                "delete" => p.delete = true,
                "compact" => p.compact = true,
                "" => {}
                _ => return None,
            }
        }
        Some(p)
    }

    /// Kafka's spelling.
    pub fn name(&self) -> &'static str {
        match (self.compact, self.delete) {
            (true, true) => "compact,delete",
            (true, false) => "compact",
            (false, true) => "delete",
            (false, false) => "",
        }
    }
}

/// Log configuration (Kafka topic config names in the docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogConfig {
    /// `segment.bytes`
    pub segment_bytes: u64,
    /// `index.interval.bytes`
    pub index_interval_bytes: u64,
    /// `segment.index.bytes`
    pub segment_index_bytes: usize,
    /// `max.message.bytes`
    pub max_message_bytes: usize,
    /// `message.timestamp.type` == LogAppendTime
    pub log_append_time: bool,
    /// `message.timestamp.before.max.ms`: how far in the past a CreateTime
    /// record's timestamp may be.
    pub timestamp_before_max_ms: i64,
    /// `message.timestamp.after.max.ms`: how far in the future a CreateTime
    /// record's timestamp may be.
    pub timestamp_after_max_ms: i64,
    /// `cleanup.policy`
    pub cleanup_policy: CleanupPolicy,
    /// `compression.type`
    pub compression: TopicCompression,
    /// `compression.<codec>.level`; `None` = codec default.
    pub compression_level: Option<i32>,
    /// `retention.ms` (-1 = unlimited)
    pub retention_ms: i64,
    /// `retention.bytes` (-1 = unlimited)
    pub retention_bytes: i64,
    /// `segment.ms`
    pub segment_ms: i64,
    /// `delete.retention.ms`
    pub delete_retention_ms: i64,
    /// `min.cleanable.dirty.ratio`
    pub min_cleanable_dirty_ratio: f64,
    /// `min.compaction.lag.ms`
    pub min_compaction_lag_ms: i64,
    /// `max.compaction.lag.ms`
    pub max_compaction_lag_ms: i64,
    /// `flush.messages`
    pub flush_messages: i64,
    /// `flush.ms`
    pub flush_ms: i64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            segment_bytes: 1 << 30,
            index_interval_bytes: 4096,
            segment_index_bytes: 10 * 1024 * 1024,
            max_message_bytes: 1_048_588,
            log_append_time: false,
            timestamp_before_max_ms: i64::MAX,
            timestamp_after_max_ms: 3_600_000,
            cleanup_policy: CleanupPolicy {
                delete: true,
                compact: false,
            },
            compression: TopicCompression::Producer,
            compression_level: None,
            retention_ms: 604_800_000,
            retention_bytes: -1,
            segment_ms: 604_800_000,
            delete_retention_ms: 86_400_000,
            min_cleanable_dirty_ratio: 0.5,
            min_compaction_lag_ms: 0,
            max_compaction_lag_ms: i64::MAX,
            flush_messages: i64::MAX,
            flush_ms: i64::MAX,
        }
    }
}

fn bad(what: &str, value: impl std::fmt::Display) -> LogError {
    LogError::new(codes::INVALID_CONFIG, format!("invalid {what} {value}"))
}

impl LogConfig {
    /// Sizing knobs for segments.
    pub fn segment_config(&self) -> SegmentConfig {
        SegmentConfig {
            segment_bytes: self.segment_bytes,
            index_interval_bytes: self.index_interval_bytes,
            segment_index_bytes: self.segment_index_bytes,
        }
    }

    /// Checks every value against Kafka's accepted ranges.
    pub fn validate(&self) -> Result<()> {
        if self.segment_bytes < 14 || self.segment_bytes > i32::MAX as u64 {
            return Err(bad("segment_bytes", self.segment_bytes));
        }
        if self.segment_index_bytes < 8 {
            return Err(bad("segment_index_bytes", self.segment_index_bytes));
        }
        if self.timestamp_before_max_ms < 0 {
            return Err(bad(
                "message_timestamp_before_max_ms",
                self.timestamp_before_max_ms,
            ));
        }
        if self.timestamp_after_max_ms < 0 {
            return Err(bad(
                "message_timestamp_after_max_ms",
                self.timestamp_after_max_ms,
            ));
        }
        if self.retention_ms < -1 {
            return Err(bad("retention_ms", self.retention_ms));
        }
        if self.segment_ms < 1 {
            return Err(bad("segment_ms", self.segment_ms));
        }
        if self.delete_retention_ms < 0 {
            return Err(bad("delete_retention_ms", self.delete_retention_ms));
        }
        if !(0.0..=1.0).contains(&self.min_cleanable_dirty_ratio) {
            return Err(bad(
                "min_cleanable_dirty_ratio",
                self.min_cleanable_dirty_ratio,
            ));
        }
        if self.min_compaction_lag_ms < 0 {
            return Err(bad("min_compaction_lag_ms", self.min_compaction_lag_ms));
        }
        if self.max_compaction_lag_ms < 1 || self.max_compaction_lag_ms < self.min_compaction_lag_ms
        {
            return Err(bad("max_compaction_lag_ms", self.max_compaction_lag_ms));
        }
        if self.flush_messages < 1 {
            return Err(bad("flush_messages", self.flush_messages));
        }
        if self.flush_ms < 0 {
            return Err(bad("flush_ms", self.flush_ms));
        }
        if let Some(level) = self.compression_level {
            let ok = match self.compression {
                TopicCompression::Codec(compression::GZIP) => (1..=9).contains(&level),
                TopicCompression::Codec(compression::LZ4) => (1..=17).contains(&level),
                TopicCompression::Codec(compression::ZSTD) => (-131_072..=22).contains(&level),
                // Kafka ignores the level of codecs that have none.
                _ => true,
            };
            if !ok {
                return Err(bad(
                    &format!("compression level for {}", self.compression.name()),
                    level,
                ));
            }
        }
        Ok(())
    }
}
