//! Crash recovery of a segment: re-validate every stored batch (framing,
//! magic, CRC, offset order), cut the `.log` at the end of the last valid
//! batch, and rebuild `.index` / `.timeindex` from what remains.

use crate::batch_scanner::BatchScanner;
use crate::error::Result;
use crate::record_batch::BatchHeader;
use crate::segment::Segment;

/// What recovering one segment found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentRecovery {
    /// Base offset of the segment.
    pub base_offset: i64,
    /// Bytes of valid batches kept.
    pub valid_bytes: u64,
    /// Bytes cut from the end of the file.
    pub truncated_bytes: u64,
    /// Why scanning stopped early, if it did.
    pub reason: Option<String>,
    /// Batches kept.
    pub batches: u64,
}

impl SegmentRecovery {
    /// True when part of the segment was discarded.
    pub fn truncated(&self) -> bool {
        self.truncated_bytes > 0
    }
}

/// Rebuilds `seg` from its `.log` file, calling `on_batch` for every valid
/// batch header (to feed producer state and the leader epoch cache).
pub fn recover_segment(
    seg: &mut Segment,
    mut on_batch: impl FnMut(&BatchHeader),
) -> Result<SegmentRecovery> {
    seg.reset_indexes()?;
    let base = seg.base_offset();
    let original = seg.size();
    let mut scan = BatchScanner::new(seg.file()?, 0, original);
    let mut valid = 0u64;
    let mut batches = 0u64;
    let mut reason = None;
    let mut expected = base;
    loop {
        match scan.next_batch(true) {
            Ok(Some((pos, h, _))) => {
                if h.base_offset < expected {
                    reason = Some(format!(
                        "batch at position {pos} has base offset {} below expected {expected}",
                        h.base_offset
                    ));
                    break;
                }
                expected = h.next_offset();
                valid = pos + h.total_size() as u64;
                batches += 1;
                seg.index_batch(pos, &h)?;
                on_batch(&h);
            }
            Ok(None) => break,
            Err(e) => {
                reason = Some(e.message);
                break;
            }
        }
    }
    if valid < original {
        seg.truncate_log(valid)?;
    }
    Ok(SegmentRecovery {
        base_offset: base,
        valid_bytes: valid,
        truncated_bytes: original - valid,
        reason: if valid < original { reason } else { None },
        batches,
    })
}
