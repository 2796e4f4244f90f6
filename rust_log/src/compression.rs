//! The batch codecs: decompression of record payloads (gzip, snappy in raw
//! or xerial "snappy-java" framing, lz4 frame, zstd) and compression in the
//! formats Kafka's own broker writes (gzip, snappy-java framing with 32 KiB
//! blocks, lz4 frames of independent 64 KiB blocks, zstd), used when a topic's
//! `compression.type` makes the broker recompress.

use std::io::{self, Read, Write};

use crate::error::{LogError, Result};

/// Codec ids from the batch attributes.
pub const NONE: u8 = 0;
/// gzip
pub const GZIP: u8 = 1;
/// snappy
pub const SNAPPY: u8 = 2;
/// lz4
pub const LZ4: u8 = 3;
/// zstd
pub const ZSTD: u8 = 4;

/// True if `codec` is one Kafka defines.
pub fn is_known_codec(codec: u8) -> bool {
    codec <= ZSTD
}

/// Header snappy-java writes before its blocks.
const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const XERIAL_HEADER_LEN: usize = 16;

/// Snappy cannot expand more than ~21x (a 3-byte copy op emits at most 64
/// bytes); a block claiming more is corrupt and is refused before allocating.
fn snappy_decompress(block: &[u8], decoder: &mut snap::raw::Decoder) -> io::Result<Vec<u8>> {
    let claimed = snap::raw::decompress_len(block)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    if claimed > block.len().saturating_mul(32).saturating_add(64 * 1024) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "implausible snappy decompressed length",
        ));
    }
    decoder
        .decompress_vec(block)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Returns a reader yielding the decompressed record bytes of `payload`
/// (the batch bytes after the 61-byte header).
pub fn decompressing_reader<'a>(codec: u8, payload: &'a [u8]) -> Result<Box<dyn Read + 'a>> {
    match codec {
        NONE => Ok(Box::new(payload)),
        GZIP => Ok(Box::new(flate2::read::MultiGzDecoder::new(payload))),
        SNAPPY => {
            if payload.len() >= XERIAL_HEADER_LEN && payload[..8] == XERIAL_MAGIC {
                Ok(Box::new(XerialSnappyReader::new(
                    &payload[XERIAL_HEADER_LEN..],
                )))
            } else {
                let data = snappy_decompress(payload, &mut snap::raw::Decoder::new())
                    .map_err(|e| LogError::corrupt(format!("invalid snappy data: {e}")))?;
                Ok(Box::new(io::Cursor::new(data)))
            }
        }
        LZ4 => Ok(Box::new(lz4_flex::frame::FrameDecoder::new(payload))),
        ZSTD => {
            let dec = zstd::stream::read::Decoder::with_buffer(payload)
                .map_err(|e| LogError::corrupt(format!("invalid zstd data: {e}")))?;
            Ok(Box::new(dec))
        }
        other => Err(LogError::invalid_record(format!(
            "unknown compression codec {other}"
        ))),
    }
}

/// Default compression levels (Kafka's): gzip 6 (zlib default), zstd 3.
pub const GZIP_DEFAULT_LEVEL: i32 = 6;
/// Kafka's default zstd level.
pub const ZSTD_DEFAULT_LEVEL: i32 = 3;
/// Kafka's default lz4 level; at exactly this level Kafka keeps lz4's fast
/// compressor (KIP-390), any other level selects LZ4HC at that level.
pub const LZ4_DEFAULT_LEVEL: i32 = 9;
/// lz4-java clamps HC levels to this maximum.
const LZ4_MAX_LEVEL: i32 = 17;
/// Block size snappy-java uses for its framing.
const XERIAL_BLOCK: usize = 32 * 1024;

fn compress_err(e: impl std::fmt::Display) -> LogError {
    LogError::storage(format!("compression failed: {e}"))
}

/// Compresses `raw` record bytes with `codec` at `level` (codec default when
/// `None`).
pub fn compress(codec: u8, level: Option<i32>, raw: &[u8]) -> Result<Vec<u8>> {
    match codec {
        NONE => Ok(raw.to_vec()),
        GZIP => {
            let lvl = level.unwrap_or(GZIP_DEFAULT_LEVEL).clamp(1, 9) as u32;
            let mut e = flate2::write::GzEncoder::new(
                Vec::with_capacity(raw.len() / 2 + 64),
                flate2::Compression::new(lvl),
            );
            e.write_all(raw).map_err(compress_err)?;
            e.finish().map_err(compress_err)
        }
        SNAPPY => {
            let mut out = Vec::with_capacity(raw.len() / 2 + 64);
            out.extend_from_slice(&XERIAL_MAGIC);
            out.extend_from_slice(&1u32.to_be_bytes()); // version
            out.extend_from_slice(&1u32.to_be_bytes()); // compatible version
            let mut enc = snap::raw::Encoder::new();
            for chunk in raw.chunks(XERIAL_BLOCK) {
                let block = enc.compress_vec(chunk).map_err(compress_err)?;
                let len = u32::try_from(block.len()).map_err(compress_err)?;
                out.extend_from_slice(&len.to_be_bytes());
                out.extend_from_slice(&block);
            }
            Ok(out)
        }
        LZ4 => lz4_frame(level.unwrap_or(LZ4_DEFAULT_LEVEL), raw),
        ZSTD => {
            zstd::bulk::compress(raw, level.unwrap_or(ZSTD_DEFAULT_LEVEL)).map_err(compress_err)
        }
        other => Err(LogError::invalid_record(format!(
            "unknown compression codec {other}"
        ))),
    }
}

/// lz4 frame header Kafka writes: magic, FLG 0x60 (version 01, independent
/// blocks, no block or content checksum, no content size), BD 0x40 (64 KiB
/// blocks) and the descriptor checksum (xxh32 of FLG and BD, byte 1).
const LZ4_FRAME_HEADER: [u8; 7] = [0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82];
const LZ4_BLOCK: usize = 64 * 1024;
/// Block size flag: the block is stored uncompressed.
const LZ4_UNCOMPRESSED: u32 = 0x8000_0000;

/// One lz4 frame of independent 64 KiB blocks, as Kafka's
/// `Lz4BlockOutputStream` writes it: the fast compressor at the default
/// level, LZ4HC at any other; a block that does not shrink is stored raw.
fn lz4_frame(level: i32, raw: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(raw.len() / 2 + 64);
    out.extend_from_slice(&LZ4_FRAME_HEADER);
    // SAFETY: a pure function of its argument.
    let bound = unsafe { lz4_sys::LZ4_compressBound(LZ4_BLOCK as i32) };
    let mut block = vec![0u8; usize::try_from(bound).map_err(compress_err)?];
    for chunk in raw.chunks(LZ4_BLOCK) {
        let hc_level = (level != LZ4_DEFAULT_LEVEL).then(|| level.clamp(1, LZ4_MAX_LEVEL));
        let n = lz4_block(chunk, &mut block, hc_level)?;
        if n < chunk.len() {
            out.extend_from_slice(&(n as u32).to_le_bytes());
            out.extend_from_slice(&block[..n]);
        } else {
            out.extend_from_slice(&(chunk.len() as u32 | LZ4_UNCOMPRESSED).to_le_bytes());
            out.extend_from_slice(chunk);
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes()); // end mark
    Ok(out)
}

/// Compresses one block (at most 64 KiB) into `dst` with lz4's fast
/// compressor, or LZ4HC at `hc_level`; returns the compressed size.
fn lz4_block(src: &[u8], dst: &mut [u8], hc_level: Option<i32>) -> Result<usize> {
    let src_len = i32::try_from(src.len()).map_err(compress_err)?;
    let dst_len = i32::try_from(dst.len()).map_err(compress_err)?;
    let (s, d) = (src.as_ptr().cast(), dst.as_mut_ptr().cast());
    // SAFETY: both pointers come from live slices whose exact lengths are
    // passed; lz4 writes at most `dst_len` bytes into `dst` and reads
    // exactly `src_len` bytes of `src`.
    let n = unsafe {
        match hc_level {
            None => lz4_sys::LZ4_compress_default(s, d, src_len, dst_len),
            Some(level) => lz4_sys::LZ4_compress_HC(s, d, src_len, dst_len, level),
        }
    };
    usize::try_from(n)
        .ok()
        .filter(|&n| n > 0 || src.is_empty())
        .ok_or_else(|| compress_err("lz4 block compression failed"))
}

/// Reader over snappy-java's framing: after the 16-byte header, a sequence
/// of (int32 big-endian length, raw snappy block).
struct XerialSnappyReader<'a> {
    rest: &'a [u8],
    block: Vec<u8>,
    pos: usize,
    decoder: snap::raw::Decoder,
}

impl<'a> XerialSnappyReader<'a> {
    fn new(rest: &'a [u8]) -> Self {
        XerialSnappyReader {
            rest,
            block: Vec::new(),
            pos: 0,
            decoder: snap::raw::Decoder::new(),
        }
    }

    fn next_block(&mut self) -> io::Result<bool> {
        if self.rest.is_empty() {
            return Ok(false);
        }
        if self.rest.len() < 4 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "truncated snappy block length",
            ));
        }
        let len =
            u32::from_be_bytes([self.rest[0], self.rest[1], self.rest[2], self.rest[3]]) as usize;
        let body = self
            .rest
            .get(4..4 + len)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "truncated snappy block"))?;
        self.block = snappy_decompress(body, &mut self.decoder)?;
        self.pos = 0;
        self.rest = &self.rest[4 + len..];
        Ok(true)
    }
}

impl Read for XerialSnappyReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos >= self.block.len() {
            if !self.next_block()? {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.block.len() - self.pos);
        buf[..n].copy_from_slice(&self.block[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text with repeats at many distances: LZ4HC finds longer matches
    /// than the fast compressor does.
    fn compressible(n: usize) -> Vec<u8> {
        let words = [
            "kafka",
            "broker",
            "segment",
            "offset",
            "partition",
            "log",
            "record",
        ];
        let mut out = Vec::with_capacity(n);
        let mut x: u32 = 12345;
        while out.len() < n {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            out.extend_from_slice(words[(x >> 16) as usize % words.len()].as_bytes());
            out.extend_from_slice(format!("-{} ", (x >> 20) % 97).as_bytes());
        }
        out.truncate(n);
        out
    }

    fn decode(frame: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        decompressing_reader(LZ4, frame)
            .expect("reader")
            .read_to_end(&mut out)
            .expect("decode");
        out
    }

    #[test]
    fn lz4_header_is_the_one_standard_encoders_write() {
        let info = lz4_flex::frame::FrameInfo::new()
            .block_size(lz4_flex::frame::BlockSize::Max64KB)
            .block_mode(lz4_flex::frame::BlockMode::Independent);
        let mut e = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
        e.write_all(b"x").expect("write");
        let theirs = e.finish().expect("finish");
        assert_eq!(theirs[..7], LZ4_FRAME_HEADER);
    }

    #[test]
    fn lz4_levels_round_trip_and_higher_levels_compress_better() {
        let raw = compressible(300 * 1024);
        let fast = compress(LZ4, None, &raw).expect("default");
        let low = compress(LZ4, Some(1), &raw).expect("level 1");
        let high = compress(LZ4, Some(17), &raw).expect("level 17");
        for frame in [&fast, &low, &high] {
            assert_eq!(decode(frame), raw);
        }
        assert_eq!(compress(LZ4, Some(9), &raw).expect("level 9"), fast);
        assert!(high.len() < fast.len(), "{} !< {}", high.len(), fast.len());
        assert!(high.len() < low.len(), "{} !< {}", high.len(), low.len());
    }

    #[test]
    fn lz4_incompressible_blocks_are_stored_raw_and_empty_input_is_a_valid_frame() {
        let mut x: u64 = 7;
        let noise: Vec<u8> = (0..70_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        for level in [None, Some(3)] {
            let frame = compress(LZ4, level, &noise).expect("compress");
            let first = u32::from_le_bytes([frame[7], frame[8], frame[9], frame[10]]);
            assert_eq!(first, LZ4_UNCOMPRESSED | LZ4_BLOCK as u32);
            assert_eq!(decode(&frame), noise);
            assert!(decode(&compress(LZ4, level, &[]).expect("empty")).is_empty());
        }
    }
}
