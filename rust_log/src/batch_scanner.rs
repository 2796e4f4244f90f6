//! Sequential, chunk-buffered iteration over the record batches stored in a
//! segment file, yielding headers only (cheap) or whole batches (for CRC
//! checks and record-level lookups).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use crate::error::{LogError, Result};
use crate::record_batch::{self, BatchHeader, HEADER_SIZE, MIN_BATCH_LENGTH};

const CHUNK: usize = 64 * 1024;

/// Iterator-like reader over batches between two file positions.
pub struct BatchScanner {
    file: Arc<File>,
    pos: u64,
    end: u64,
    buf: Vec<u8>,
    buf_start: u64,
}

impl BatchScanner {
    /// Scans `file` from `start` up to (not including) `end`.
    pub fn new(file: Arc<File>, start: u64, end: u64) -> Self {
        BatchScanner {
            file,
            pos: start,
            end,
            buf: Vec::new(),
            buf_start: 0,
        }
    }

    /// Position of the next batch to be returned (or where scanning stopped
    /// after an error).
    pub fn position(&self) -> u64 {
        self.pos
    }

    fn window(&mut self, at: u64, need: usize) -> Result<&[u8]> {
        let have_from = self.buf_start;
        let have_to = self.buf_start + self.buf.len() as u64;
        if at < have_from || at + need as u64 > have_to {
            let avail = self.end.saturating_sub(at);
            if (need as u64) > avail {
                return Err(LogError::corrupt(format!(
                    "need {need} bytes at position {at} but only {avail} remain"
                )));
            }
            let want = (need.max(CHUNK) as u64).min(avail) as usize;
            self.buf.resize(want, 0);
            self.file
                .read_exact_at(&mut self.buf, at)
                .map_err(|e| LogError::io(format!("reading segment at {at}"), e))?;
            self.buf_start = at;
        }
        let off = (at - self.buf_start) as usize;
        Ok(&self.buf[off..off + need])
    }

    fn header_at(&mut self, at: u64) -> Result<BatchHeader> {
        let h = BatchHeader::parse(self.window(at, HEADER_SIZE)?)?;
        if h.batch_length < MIN_BATCH_LENGTH {
            return Err(LogError::corrupt(format!(
                "batch length {} at position {at} too small",
                h.batch_length
            )));
        }
        if h.magic != 2 {
            return Err(LogError::corrupt(format!(
                "batch at position {at} has magic {}",
                h.magic
            )));
        }
        if h.last_offset_delta < 0 {
            return Err(LogError::corrupt(format!(
                "batch at position {at} has negative lastOffsetDelta"
            )));
        }
        if at + h.total_size() as u64 > self.end {
            return Err(LogError::corrupt(format!(
                "batch at position {at} of {} bytes extends past end of segment ({})",
                h.total_size(),
                self.end
            )));
        }
        Ok(h)
    }

    /// Next batch header with its file position; `Ok(None)` at the end.
    /// On error the position stays at the offending batch.
    pub fn next_header(&mut self) -> Result<Option<(u64, BatchHeader)>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let at = self.pos;
        let h = self.header_at(at)?;
        self.pos = at + h.total_size() as u64;
        Ok(Some((at, h)))
    }

    /// Next whole batch (CRC-checked when `check_crc`) with its position.
    pub fn next_batch(&mut self, check_crc: bool) -> Result<Option<(u64, BatchHeader, &[u8])>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let at = self.pos;
        let h = self.header_at(at)?;
        let size = h.total_size();
        let bytes = self.window(at, size)?;
        record_batch::check_stored_batch(bytes, &h, check_crc)
            .map_err(|e| LogError::corrupt(format!("at position {at}: {}", e.message)))?;
        self.pos = at + size as u64;
        let off = (at - self.buf_start) as usize;
        Ok(Some((at, h, &self.buf[off..off + size])))
    }
}
