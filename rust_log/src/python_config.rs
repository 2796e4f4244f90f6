//! Python keyword arguments -> [`LogConfig`] (feature `python`): the
//! `PartitionLog(...)` constructor and `update_config(**kwargs)` accept
//! Kafka's topic settings under snake_case names; unknown names raise
//! `TypeError`, unparsable values `ValueError`, and out-of-range values
//! `LogError(40 INVALID_CONFIG)` from [`LogConfig::validate`].

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::log_config::{CleanupPolicy, LogConfig, TopicCompression};

fn parse_str(key: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    value
        .extract::<String>()
        .map_err(|_| PyValueError::new_err(format!("{key} must be a string")))
}

/// Applies one keyword argument to `cfg`.
pub(crate) fn apply(cfg: &mut LogConfig, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
    match key {
        "segment_bytes" => cfg.segment_bytes = value.extract()?,
        "index_interval_bytes" => cfg.index_interval_bytes = value.extract()?,
        "segment_index_bytes" => cfg.segment_index_bytes = value.extract()?,
        "max_message_bytes" => cfg.max_message_bytes = value.extract()?,
        "timestamp_type" => {
            cfg.log_append_time = match parse_str(key, value)?.as_str() {
                "CreateTime" => false,
                "LogAppendTime" => true,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "timestamp_type must be 'CreateTime' or 'LogAppendTime', not {other:?}"
                    )));
                }
            }
        }
        "cleanup_policy" => {
            let s = parse_str(key, value)?;
            cfg.cleanup_policy = CleanupPolicy::parse(&s).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "cleanup_policy must be 'delete', 'compact' or 'compact,delete', not {s:?}"
                ))
            })?;
        }
        "compression_type" => {
            let s = parse_str(key, value)?;
            cfg.compression = TopicCompression::parse(&s).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "compression_type must be one of producer, uncompressed, gzip, snappy, lz4, zstd, not {s:?}"
                ))
            })?;
        }
        "compression_level" => cfg.compression_level = value.extract()?,
        "message_timestamp_before_max_ms" => cfg.timestamp_before_max_ms = value.extract()?,
        "message_timestamp_after_max_ms" => cfg.timestamp_after_max_ms = value.extract()?,
        "retention_ms" => cfg.retention_ms = value.extract()?,
        "retention_bytes" => cfg.retention_bytes = value.extract()?,
        "segment_ms" => cfg.segment_ms = value.extract()?,
        "delete_retention_ms" => cfg.delete_retention_ms = value.extract()?,
        "min_cleanable_dirty_ratio" => cfg.min_cleanable_dirty_ratio = value.extract()?,
        "min_compaction_lag_ms" => cfg.min_compaction_lag_ms = value.extract()?,
        "max_compaction_lag_ms" => cfg.max_compaction_lag_ms = value.extract()?,
        "flush_messages" => cfg.flush_messages = value.extract()?,
        "flush_ms" => cfg.flush_ms = value.extract()?,
        other => {
            return Err(PyTypeError::new_err(format!(
                "unexpected log configuration keyword {other:?}"
            )));
        }
    }
    Ok(())
}

/// `base` with every entry of `kwargs` applied.
pub(crate) fn with_kwargs(
    base: LogConfig,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<LogConfig> {
    let mut cfg = base;
    if let Some(kw) = kwargs {
        for (k, v) in kw.iter() {
            let key: String = k.extract()?;
            apply(&mut cfg, &key, &v)?;
        }
    }
    Ok(cfg)
}

/// Parses `kwargs` onto the defaults; returns them with the keys given.
pub(crate) fn patch(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<(LogConfig, Vec<String>)> {
    let mut cfg = LogConfig::default();
    let mut keys = Vec::new();
    if let Some(kw) = kwargs {
        for (k, v) in kw.iter() {
            let key: String = k.extract()?;
            apply(&mut cfg, &key, &v)?;
            keys.push(key);
        }
    }
    Ok((cfg, keys))
}

/// `base` with the fields named by `keys` taken from `patch`.
pub(crate) fn merge(base: LogConfig, patch: &LogConfig, keys: &[String]) -> LogConfig {
    let mut c = base;
    for key in keys {
        match key.as_str() {
            "segment_bytes" => c.segment_bytes = patch.segment_bytes,
            "index_interval_bytes" => c.index_interval_bytes = patch.index_interval_bytes,
            "segment_index_bytes" => c.segment_index_bytes = patch.segment_index_bytes,
            "max_message_bytes" => c.max_message_bytes = patch.max_message_bytes,
            "timestamp_type" => c.log_append_time = patch.log_append_time,
            "cleanup_policy" => c.cleanup_policy = patch.cleanup_policy,
            "compression_type" => c.compression = patch.compression,
            "compression_level" => c.compression_level = patch.compression_level,
            "message_timestamp_before_max_ms" => {
                c.timestamp_before_max_ms = patch.timestamp_before_max_ms
            }
            "message_timestamp_after_max_ms" => {
                c.timestamp_after_max_ms = patch.timestamp_after_max_ms
            }
            "retention_ms" => c.retention_ms = patch.retention_ms,
            "retention_bytes" => c.retention_bytes = patch.retention_bytes,
            "segment_ms" => c.segment_ms = patch.segment_ms,
            "delete_retention_ms" => c.delete_retention_ms = patch.delete_retention_ms,
            "min_cleanable_dirty_ratio" => {
                c.min_cleanable_dirty_ratio = patch.min_cleanable_dirty_ratio
            }
            "min_compaction_lag_ms" => c.min_compaction_lag_ms = patch.min_compaction_lag_ms,
            "max_compaction_lag_ms" => c.max_compaction_lag_ms = patch.max_compaction_lag_ms,
            "flush_messages" => c.flush_messages = patch.flush_messages,
            "flush_ms" => c.flush_ms = patch.flush_ms,
            _ => {}
        }
    }
    c
}

/// The configuration as a dict of the same keyword names.
pub(crate) fn to_dict<'py>(py: Python<'py>, cfg: &LogConfig) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("segment_bytes", cfg.segment_bytes)?;
    d.set_item("index_interval_bytes", cfg.index_interval_bytes)?;
    d.set_item("segment_index_bytes", cfg.segment_index_bytes)?;
    d.set_item("max_message_bytes", cfg.max_message_bytes)?;
    d.set_item(
        "timestamp_type",
        if cfg.log_append_time {
            "LogAppendTime"
        } else {
            "CreateTime"
        },
    )?;
    d.set_item("cleanup_policy", cfg.cleanup_policy.name())?;
    d.set_item("compression_type", cfg.compression.name())?;
    d.set_item("compression_level", cfg.compression_level)?;
    d.set_item(
        "message_timestamp_before_max_ms",
        cfg.timestamp_before_max_ms,
    )?;
    d.set_item("message_timestamp_after_max_ms", cfg.timestamp_after_max_ms)?;
    d.set_item("retention_ms", cfg.retention_ms)?;
    d.set_item("retention_bytes", cfg.retention_bytes)?;
    d.set_item("segment_ms", cfg.segment_ms)?;
    d.set_item("delete_retention_ms", cfg.delete_retention_ms)?;
    d.set_item("min_cleanable_dirty_ratio", cfg.min_cleanable_dirty_ratio)?;
    d.set_item("min_compaction_lag_ms", cfg.min_compaction_lag_ms)?;
    d.set_item("max_compaction_lag_ms", cfg.max_compaction_lag_ms)?;
    d.set_item("flush_messages", cfg.flush_messages)?;
    d.set_item("flush_ms", cfg.flush_ms)?;
    Ok(d)
}
