//! `rust_log`: the storage core of pykafkad. Kafka-format partition logs
//! (segments of verbatim magic-2 record batches with sparse offset and time
//! indexes), append validation, idempotent producer state, leader epoch
//! cache and crash recovery. The PyO3 bindings live in `python.rs` behind
//! the `python` feature so the core builds and tests without libpython.

pub mod batch_codec;
pub mod batch_scanner;
pub mod cleaner;
pub mod compression;
pub mod error;
pub mod file_cache;
pub mod flush_policy;
pub mod index_file;
pub mod leader_epoch;
pub mod log_config;
pub mod offset_checkpoint;
pub mod offset_index;
pub mod partition_log;
pub mod partitioner;
pub mod producer_state;
pub mod recompress;
pub mod record_batch;
pub mod record_view;
pub mod records;
pub mod recovery;
pub mod retention;
pub mod schema_id;
pub mod segment;
pub mod segment_swap;
pub mod time_index;
pub mod timestamp_search;
pub mod transaction_index;
pub mod txn_marker;
pub mod validator;

#[cfg(feature = "python")]
mod python;
#[cfg(feature = "python")]
mod python_config;
#[cfg(feature = "python")]
mod python_delayed_fetch;
#[cfg(feature = "python")]
mod python_log_slice;

pub use error::{LogError, Result};
pub use partition_log::{AppendInfo, LogConfig, PartitionLog, ReadPlan};
