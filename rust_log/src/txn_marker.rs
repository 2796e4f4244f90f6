//! Transaction markers: the control batches that end a transaction in a
//! partition (Kafka's EndTransactionMarker). One record; its key is
//! version (i16, 0) and type (i16: 0 ABORT, 1 COMMIT), its value version
//! (i16, 0) and the coordinator epoch (i32). The batch is transactional and
//! control, carries the producer id and epoch, and has no sequence (-1).

use crate::batch_codec::{self, EncodeOptions, RecordData};
use crate::error::{LogError, Result};
use crate::record_batch::BatchHeader;

/// ABORT in the marker key.
pub const ABORT: i16 = 0;
/// COMMIT in the marker key.
pub const COMMIT: i16 = 1;

/// What a marker says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// True for COMMIT, false for ABORT.
    pub commit: bool,
    /// Epoch of the transaction coordinator that wrote it.
    pub coordinator_epoch: i32,
}

/// Builds the marker batch (base offset 0; the log assigns it).
pub fn build(
    producer_id: i64,
    producer_epoch: i16,
    marker: Marker,
    timestamp_ms: i64,
) -> Result<Vec<u8>> {
    let mut key = Vec::with_capacity(4);
    key.extend_from_slice(&0i16.to_be_bytes());
    key.extend_from_slice(&(if marker.commit { COMMIT } else { ABORT }).to_be_bytes());
    let mut value = Vec::with_capacity(6);
    value.extend_from_slice(&0i16.to_be_bytes());
    value.extend_from_slice(&marker.coordinator_epoch.to_be_bytes());
    let record = RecordData {
        key: Some(&key),
        value: Some(&value),
        headers: Vec::new(),
    };
    batch_codec::encode_batch(
        &[record],
        timestamp_ms,
        &EncodeOptions {
            producer_id,
            producer_epoch,
            transactional: true,
            control: true,
            ..EncodeOptions::default()
        },
    )
}

/// Reads the marker of a control batch (`batch` is the whole batch).
/// Control batches other than transaction markers (a key type above 1,
/// as KRaft's) yield `None`.
pub fn parse(header: &BatchHeader, batch: &[u8]) -> Result<Option<Marker>> {
    let decoded = batch_codec::decode_batch(*header, batch)?;
    let Some(record) = decoded.records().next() else {
        return Err(LogError::corrupt(format!(
            "control batch at offset {} has no record",
            header.base_offset
        )));
    };
    let key = record.key.unwrap_or_default();
    if key.len() < 4 {
        return Err(LogError::corrupt(format!(
            "control record at offset {} has a {}-byte key",
            header.base_offset,
            key.len()
        )));
    }
    let kind = i16::from_be_bytes([key[2], key[3]]);
    if kind != ABORT && kind != COMMIT {
        return Ok(None);
    }
    let value = record.value.unwrap_or_default();
    let coordinator_epoch = match value.get(2..6) {
        Some(b) => i32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        None => -1,
    };
    Ok(Some(Marker {
        commit: kind == COMMIT,
        coordinator_epoch,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_round_trips_with_kafkas_layout() {
        let batch = build(
            42,
            3,
            Marker {
                commit: true,
                coordinator_epoch: 7,
            },
            1_000,
        )
        .expect("build");
        let header = BatchHeader::parse(&batch).expect("header");
        assert!(header.is_control() && header.is_transactional());
        assert_eq!(
            (
                header.producer_id,
                header.producer_epoch,
                header.base_sequence
            ),
            (42, 3, -1)
        );
        let decoded = batch_codec::decode_batch(header, &batch).expect("decode");
        let record = decoded.records().next().expect("record");
        assert_eq!(record.key, Some(&[0u8, 0, 0, 1][..]));
        assert_eq!(record.value, Some(&[0u8, 0, 0, 0, 0, 7][..]));
        assert_eq!(
            parse(&header, &batch).expect("parse"),
            Some(Marker {
                commit: true,
                coordinator_epoch: 7
            })
        );
        let abort = build(
            42,
            3,
            Marker {
                commit: false,
                coordinator_epoch: 0,
            },
            1_000,
        )
        .expect("build");
        let h = BatchHeader::parse(&abort).expect("header");
        assert_eq!(
            parse(&h, &abort).expect("parse").map(|m| m.commit),
            Some(false)
        );
    }
}
