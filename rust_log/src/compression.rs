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
/// Block size snappy-java uses for its framing.
const XERIAL_BLOCK: usize = 32 * 1024;

fn compress_err(e: impl std::fmt::Display) -> LogError {
    LogError::storage(format!("compression failed: {e}"))
}

/// Compresses `raw` record bytes with `codec` at `level` (codec default when
/// `None`; lz4 ignores the level: only the fast compressor is available).
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
        LZ4 => {
            let info = lz4_flex::frame::FrameInfo::new()
                .block_size(lz4_flex::frame::BlockSize::Max64KB)
                .block_mode(lz4_flex::frame::BlockMode::Independent);
            let mut e = lz4_flex::frame::FrameEncoder::with_frame_info(
                info,
                Vec::with_capacity(raw.len() / 2 + 64),
            );
            e.write_all(raw).map_err(compress_err)?;
            e.finish().map_err(compress_err)
        }
        ZSTD => {
            zstd::bulk::compress(raw, level.unwrap_or(ZSTD_DEFAULT_LEVEL)).map_err(compress_err)
        }
        other => Err(LogError::invalid_record(format!(
            "unknown compression codec {other}"
        ))),
    }
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
