//! Error type of the storage core: every failure carries the Kafka protocol
//! error code the broker should put in its response, plus a readable message.

use std::fmt;
use std::io;

/// Kafka protocol error codes produced by the log.
pub mod codes {
    /// OFFSET_OUT_OF_RANGE
    pub const OFFSET_OUT_OF_RANGE: i16 = 1;
    /// CORRUPT_MESSAGE
    pub const CORRUPT_MESSAGE: i16 = 2;
    /// MESSAGE_TOO_LARGE
    pub const MESSAGE_TOO_LARGE: i16 = 10;
    /// INVALID_TIMESTAMP (a CreateTime record outside message.timestamp.*.max.ms)
    pub const INVALID_TIMESTAMP: i16 = 32;
    /// RECORD_LIST_TOO_LARGE (an append larger than a whole segment)
    pub const RECORD_LIST_TOO_LARGE: i16 = 18;
    /// INVALID_CONFIG (bad log configuration at open)
    pub const INVALID_CONFIG: i16 = 40;
    /// UNSUPPORTED_FOR_MESSAGE_FORMAT
    pub const UNSUPPORTED_FOR_MESSAGE_FORMAT: i16 = 43;
    /// OUT_OF_ORDER_SEQUENCE_NUMBER
    pub const OUT_OF_ORDER_SEQUENCE_NUMBER: i16 = 45;
    /// INVALID_PRODUCER_EPOCH
    pub const INVALID_PRODUCER_EPOCH: i16 = 47;
    /// INVALID_TXN_STATE: a non-transactional write inside a transaction.
    pub const INVALID_TXN_STATE: i16 = 48;
    /// TRANSACTION_COORDINATOR_FENCED: a marker from an older coordinator.
    pub const TRANSACTION_COORDINATOR_FENCED: i16 = 52;
    /// KAFKA_STORAGE_ERROR
    pub const KAFKA_STORAGE_ERROR: i16 = 56;
    /// UNSUPPORTED_COMPRESSION_TYPE (zstd for a fetch version below 10)
    pub const UNSUPPORTED_COMPRESSION_TYPE: i16 = 76;
    /// INVALID_RECORD
    pub const INVALID_RECORD: i16 = 87;
}

/// A log failure: a Kafka error code and a human readable message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogError {
    /// Kafka protocol error code (see [`codes`]).
    pub code: i16,
    /// Readable description.
    pub message: String,
    /// The records that made a batch fail (KIP-467): (index in its batch, why).
    /// Empty when the batch as a whole is at fault.
    pub record_errors: Vec<(i32, String)>,
}

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, LogError>;

impl LogError {
    /// Builds an error from a code and message.
    pub fn new(code: i16, message: impl Into<String>) -> Self {
        LogError {
            code,
            message: message.into(),
            record_errors: Vec::new(),
        }
    }
    /// INVALID_TIMESTAMP (32) for the given records of a batch (Kafka reports
    /// a batch with any bad timestamp this way, key errors included).
    pub fn invalid_timestamps(record_errors: Vec<(i32, String)>) -> Self {
        LogError {
            code: codes::INVALID_TIMESTAMP,
            message: "One or more records have been rejected due to invalid timestamp".to_string(),
            record_errors,
        }
    }
    /// INVALID_RECORD (87) for the given records of a batch, with Kafka's
    /// summary message (it names at most the first three, as Kafka's does).
    pub fn invalid_records(record_errors: Vec<(i32, String)>) -> Self {
        let shown: Vec<String> = record_errors
            .iter()
            .take(3)
            .map(|(index, message)| format!("RecordError(batchIndex={index}, message='{message}')"))
            .collect();
        LogError {
            code: codes::INVALID_RECORD,
            message: format!(
                "One or more records have been rejected due to {} record errors in total, and only \
                 showing the first three errors at most: [{}]",
                record_errors.len(),
                shown.join(", ")
            ),
            record_errors,
        }
    }
    /// OFFSET_OUT_OF_RANGE (1).
    pub fn offset_out_of_range(message: impl Into<String>) -> Self {
        Self::new(codes::OFFSET_OUT_OF_RANGE, message)
    }
    /// CORRUPT_MESSAGE (2).
    pub fn corrupt(message: impl Into<String>) -> Self {
        Self::new(codes::CORRUPT_MESSAGE, message)
    }
    /// INVALID_RECORD (87).
    pub fn invalid_record(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_RECORD, message)
    }
    /// KAFKA_STORAGE_ERROR (56).
    pub fn storage(message: impl Into<String>) -> Self {
        Self::new(codes::KAFKA_STORAGE_ERROR, message)
    }
    /// Wraps an I/O error with context as KAFKA_STORAGE_ERROR.
    pub fn io(context: impl fmt::Display, err: io::Error) -> Self {
        Self::storage(format!("{context}: {err}"))
    }
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[error {}] {}", self.code, self.message)
    }
}

impl std::error::Error for LogError {}

impl From<io::Error> for LogError {
    fn from(err: io::Error) -> Self {
        LogError::storage(format!("I/O error: {err}"))
    }
}
