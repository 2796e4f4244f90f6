//! Kafka's default partitioner for keyed records: the 32-bit murmur2 hash of the key, made
//! positive, modulo the partition count (`org.apache.kafka.common.utils.Utils.murmur2` and
//! `toPositive`).  A record produced with a key through the REST proxy lands on the partition a Java
//! or librdkafka (`murmur2_random`) producer would choose for it.

/// Kafka's murmur2 of `data` (seed 0x9747b28c), as a signed 32-bit value like Java's.
pub fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let mut h: u32 = SEED ^ (data.len() as u32);
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        let mut k = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = chunks.remainder();
    if tail.len() >= 3 {
        h ^= u32::from(tail[2]) << 16;
    }
    if tail.len() >= 2 {
        h ^= u32::from(tail[1]) << 8;
    }
    if !tail.is_empty() {
        h ^= u32::from(tail[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// The partition of a keyed record among `partitions` (at least 1).
pub fn partition_of_key(key: &[u8], partitions: u32) -> u32 {
    (murmur2(key) as u32 & 0x7fff_ffff) % partitions
}

#[cfg(feature = "python")]
pub(crate) mod py {
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;

    /// The partition Kafka's default partitioner gives a record with this key, among `partitions`.
    #[pyfunction]
    pub(crate) fn partition_of_key(key: &[u8], partitions: i64) -> PyResult<u32> {
        match u32::try_from(partitions) {
            Ok(n) if n > 0 => Ok(super::partition_of_key(key, n)),
            _ => Err(PyValueError::new_err(format!(
                "partitions must be at least 1, not {partitions}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur2_matches_kafka_utils() {
        // The cases of Kafka's UtilsTest.testMurmur2.
        let cases: [(&[u8], i32); 6] = [
            (b"21", -973_932_308),
            (b"foobar", -790_332_482),
            (b"a-little-bit-long-string", -985_981_536),
            (b"a-little-bit-longer-string", -1_486_304_829),
            (
                b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58_897_971,
            ),
            (b"abc", 479_470_107),
        ];
        for (data, expected) in cases {
            assert_eq!(
                murmur2(data),
                expected,
                "{:?}",
                String::from_utf8_lossy(data)
            );
        }
    }

    #[test]
    fn partitions_are_in_range_and_positive() {
        for n in 1..50u32 {
            assert!(partition_of_key(b"some key", n) < n);
        }
        assert_eq!(partition_of_key(b"", 1), 0);
    }
}
