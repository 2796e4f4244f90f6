//! The schema-id check of broker-side schema validation: every record key
//! or value of a produced batch must be framed as Confluent's serializers
//! frame it (magic byte 0, then a big-endian 4-byte schema id) with an id
//! the topic's subject holds. One pass over the decoded records, one binary
//! search per field; null keys and values (tombstones) pass, as in
//! Confluent Server.

use crate::batch_codec::decode_batches;
use crate::error::Result;

/// The first byte of a record in the schema registry's wire format.
pub const MAGIC_BYTE: u8 = 0;

/// Why one key or value of a batch was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaIdProblem {
    /// The record's index in the batches, counted from 0 (KIP-467's batch_index).
    pub index: usize,
    /// True for the key, false for the value.
    pub is_key: bool,
    /// The schema id the field carries; `None` when it is not framed at all
    /// (shorter than five bytes, or a first byte other than the magic byte).
    pub schema_id: Option<i32>,
}

/// The schema id a field is framed with, if it is framed.
pub fn framed_id(field: &[u8]) -> Option<i32> {
    match field {
        [MAGIC_BYTE, a, b, c, d, ..] => Some(i32::from_be_bytes([*a, *b, *c, *d])),
        _ => None,
    }
}

fn check(
    field: Option<&[u8]>,
    allowed: Option<&[i32]>,
    index: usize,
    is_key: bool,
    out: &mut Vec<SchemaIdProblem>,
) {
    let (Some(field), Some(allowed)) = (field, allowed) else {
        return;
    };
    let schema_id = framed_id(field);
    if schema_id.is_none_or(|id| allowed.binary_search(&id).is_err()) {
        out.push(SchemaIdProblem {
            index,
            is_key,
            schema_id,
        });
    }
}

/// Every key (with `key_ids`) and value (with `value_ids`) in `data` that is
/// not framed with one of the ids, which must be sorted ascending. Malformed
/// batches are CORRUPT_MESSAGE, as the log would answer them.
pub fn schema_id_problems(
    data: &[u8],
    key_ids: Option<&[i32]>,
    value_ids: Option<&[i32]>,
) -> Result<Vec<SchemaIdProblem>> {
    let mut out = Vec::new();
    let mut index = 0;
    for batch in decode_batches(data)? {
        if batch.header.is_control() {
            continue;
        }
        for record in batch.records() {
            check(record.key, key_ids, index, true, &mut out);
            check(record.value, value_ids, index, false, &mut out);
            index += 1;
        }
    }
    Ok(out)
}

#[cfg(feature = "python")]
pub(crate) mod py {
    use pyo3::prelude::*;

    use crate::batch_codec::py::hold;
    use crate::python::to_py_err;

    fn sorted(ids: Option<Vec<i32>>) -> Option<Vec<i32>> {
        ids.map(|mut ids| {
            ids.sort_unstable();
            ids
        })
    }

    /// `(record index, is_key, schema id or None)` for each refused field.
    #[pyfunction]
    #[pyo3(signature = (data, key_ids = None, value_ids = None))]
    pub(crate) fn schema_id_problems(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        key_ids: Option<Vec<i32>>,
        value_ids: Option<Vec<i32>>,
    ) -> PyResult<Vec<(usize, bool, Option<i32>)>> {
        let held = hold(data, "data")?;
        let bytes = held.as_slice();
        let (key_ids, value_ids) = (sorted(key_ids), sorted(value_ids));
        let problems = py
            .detach(|| super::schema_id_problems(bytes, key_ids.as_deref(), value_ids.as_deref()))
            .map_err(|e| to_py_err(py, e))?;
        Ok(problems
            .into_iter()
            .map(|p| (p.index, p.is_key, p.schema_id))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch_codec::{EncodeOptions, RecordData, encode_batch};

    fn framed(id: i32, body: &[u8]) -> Vec<u8> {
        let mut v = vec![MAGIC_BYTE];
        v.extend_from_slice(&id.to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    fn batch(records: &[(Option<Vec<u8>>, Option<Vec<u8>>)], compression: u8) -> Vec<u8> {
        let data: Vec<RecordData<'_>> = records
            .iter()
            .map(|(k, v)| RecordData {
                key: k.as_deref(),
                value: v.as_deref(),
                headers: Vec::new(),
            })
            .collect();
        let options = EncodeOptions {
            compression,
            ..EncodeOptions::default()
        };
        encode_batch(&data, 1_000, &options).expect("encodes")
    }

    #[test]
    fn framed_ids_pass_and_others_are_named() {
        let b = batch(
            &[
                (None, Some(framed(7, b"x"))),
                (None, Some(b"plain".to_vec())),
                (None, Some(framed(9, b""))),
                (None, None),
                (None, Some(vec![0, 0])),
            ],
            crate::compression::NONE,
        );
        let found = schema_id_problems(&b, None, Some(&[3, 7])).expect("decodes");
        assert_eq!(
            found,
            vec![
                SchemaIdProblem {
                    index: 1,
                    is_key: false,
                    schema_id: None
                },
                SchemaIdProblem {
                    index: 2,
                    is_key: false,
                    schema_id: Some(9)
                },
                SchemaIdProblem {
                    index: 4,
                    is_key: false,
                    schema_id: None
                },
            ]
        );
    }

    #[test]
    fn keys_are_checked_only_when_asked_and_compressed_batches_are_read() {
        let b = batch(
            &[
                (Some(b"k".to_vec()), Some(framed(1, b"v"))),
                (None, Some(framed(1, b"v"))),
            ],
            crate::compression::ZSTD,
        );
        assert!(
            schema_id_problems(&b, None, Some(&[1]))
                .expect("decodes")
                .is_empty()
        );
        let keys = schema_id_problems(&b, Some(&[1]), Some(&[1])).expect("decodes");
        assert_eq!(
            keys,
            vec![SchemaIdProblem {
                index: 0,
                is_key: true,
                schema_id: None
            }]
        );
    }

    #[test]
    fn a_corrupt_batch_is_an_error() {
        let mut b = batch(&[(None, Some(framed(1, b"v")))], crate::compression::NONE);
        let last = b.len() - 1;
        b[last] ^= 0xff;
        assert!(schema_id_problems(&b, None, Some(&[1])).is_err());
    }
}
