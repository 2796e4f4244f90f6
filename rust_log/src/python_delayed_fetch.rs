//! A delayed fetch that the log answers itself (Kafka's DelayedFetch, completed
//! by the thread that makes the records readable): the fetch's answer, encoded
//! by the broker for one partition but for its record bytes, waits on that
//! partition's log. A follower's is answered by the append that brings the
//! records it asked for; a consumer's by the move of the high watermark over
//! them, with the new high watermark and last stable offset written into the
//! answer. The answer goes to the fetcher's socket at once, before the broker's
//! event loop has woken the fetch: on a leader with followers each record then
//! reaches the followers, and then the consumer, without a pass of the event
//! loop for each.
//!
//! The broker keeps everything else: it decides which fetch may wait here
//! (plain sockets only), encodes the answer around the records, and, once
//! woken, closes the fetch here and learns whether it was answered (and what
//! of the answer the socket did not take at once, for the broker to send).

use std::fs::File;
use std::io::{IoSlice, Write};
use std::mem::ManuallyDrop;
use std::os::fd::{FromRawFd, RawFd};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Where a delayed fetch stands.
enum State {
    /// Waiting: the socket is the broker's and open while this lasts.
    Waiting,
    /// Answered by an append: the waiting entry's tag, the records' length,
    /// and what of the frame the socket did not take.
    Answered {
        tag: usize,
        records: usize,
        unsent: Vec<u8>,
        /// The watermarks written into a consumer's answer; -1 for a
        /// follower's, whose answer says what the broker encoded.
        high_watermark: i64,
        last_stable_offset: i64,
    },
    /// Closed by the broker unanswered: it answers the fetch itself.
    Closed,
}

pub(crate) struct DelayedFetch {
    fd: RawFd,
    state: Mutex<State>,
}

impl DelayedFetch {
    fn waiting(&self) -> bool {
        matches!(self.state.lock().as_deref(), Ok(State::Waiting))
    }

    /// Writes the answer framed around `records`, once: what the socket takes
    /// without waiting. Nothing is written (and the fetch keeps waiting, for the
    /// broker to answer) when the socket takes nothing or fails.
    fn answer(
        &self,
        tag: usize,
        head: &[u8],
        tail: &[u8],
        records: &[u8],
        watermarks: Option<Watermarks>,
    ) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if !matches!(*state, State::Waiting) {
            return;
        }
        let patched;
        let head = match watermarks {
            Some(w) => match patch(head, &w) {
                Some(h) => {
                    patched = h;
                    &patched[..]
                }
                None => return,
            },
            None => head,
        };
        let mut length = [0u8; 5];
        let length_len = unsigned_varint(records.len() as u64 + 1, &mut length);
        let total = head.len() + length_len + records.len() + tail.len();
        let Ok(size) = i32::try_from(total) else {
            return;
        };
        let size = size.to_be_bytes();
        let pieces = [&size[..], head, &length[..length_len], records, tail];
        let slices = pieces.map(IoSlice::new);
        // The broker's socket, borrowed: it stays open while this fetch waits
        // (the broker closes the fetch, under this lock, before the socket).
        let mut socket = ManuallyDrop::new(unsafe { File::from_raw_fd(self.fd) });
        let sent = match socket.write_vectored(&slices) {
            Ok(n) if n > 0 => n,
            _ => return, // would block or failed: the broker answers, and sees any failure itself
        };
        let mut unsent = Vec::new();
        if sent < total + 4 {
            let mut skip = sent;
            for piece in pieces {
                if skip >= piece.len() {
                    skip -= piece.len();
                } else {
                    unsent.extend_from_slice(&piece[skip..]);
                    skip = 0;
                }
            }
        }
        let (high_watermark, last_stable_offset) =
            watermarks.map_or((-1, -1), |w| (w.high_watermark, w.last_stable_offset));
        *state = State::Answered {
            tag,
            records: records.len(),
            unsent,
            high_watermark,
            last_stable_offset,
        };
    }
}

/// A consumer's answer's watermarks, and where its head holds them (the high
/// watermark's 8 bytes, then the last stable offset's).
#[derive(Clone, Copy)]
pub(crate) struct Watermarks {
    pub(crate) at: usize,
    pub(crate) high_watermark: i64,
    pub(crate) last_stable_offset: i64,
}

fn patch(head: &[u8], w: &Watermarks) -> Option<Vec<u8>> {
    let mut out = head.to_vec();
    out.get_mut(w.at..w.at + 8)?
        .copy_from_slice(&w.high_watermark.to_be_bytes());
    out.get_mut(w.at + 8..w.at + 16)?
        .copy_from_slice(&w.last_stable_offset.to_be_bytes());
    Some(out)
}

fn unsigned_varint(mut value: u64, out: &mut [u8; 5]) -> usize {
    let mut i = 0;
    while value >= 0x80 && i < 4 {
        out[i] = (value as u8) | 0x80;
        value >>= 7;
        i += 1;
    }
    out[i] = value as u8;
    i + 1
}

/// One partition a delayed fetch waits on, as its log keeps it.
pub(crate) struct Waiting {
    pub(crate) fetch: Arc<DelayedFetch>,
    tag: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    /// The fetch offset: a follower's is answered only by an append that
    /// starts there; a consumer's by a high watermark above it.
    pub(crate) fetch_offset: i64,
    /// A follower's: the leader epoch the fetch was checked against.
    pub(crate) leader_epoch: i32,
    pub(crate) max_bytes: usize,
    /// A consumer's: where its head holds the high watermark.
    pub(crate) watermarks_at: Option<usize>,
    /// A read_committed consumer's: it reads below the last stable offset.
    pub(crate) read_committed: bool,
}

impl Waiting {
    pub(crate) fn still_waiting(&self) -> bool {
        self.fetch.waiting()
    }

    /// A follower's answer, with the records the append wrote.
    pub(crate) fn answer(&self, records: &[u8]) {
        self.fetch
            .answer(self.tag, &self.head, &self.tail, records, None);
    }

    /// A consumer's answer, with the records below `high_watermark`.
    pub(crate) fn answer_below(
        &self,
        records: &[u8],
        high_watermark: i64,
        last_stable_offset: i64,
    ) {
        let Some(at) = self.watermarks_at else { return };
        let w = Watermarks {
            at,
            high_watermark,
            last_stable_offset,
        };
        self.fetch
            .answer(self.tag, &self.head, &self.tail, records, Some(w));
    }
}

/// A delayed fetch on a plain socket (`fd`), for
/// `PartitionLog.answer_on_append` (a follower's) or
/// `PartitionLog.answer_on_high_watermark` (a consumer's).
#[pyclass(module = "pykafkad._rust_log", name = "DelayedFetch", frozen)]
pub struct PyDelayedFetch {
    pub(crate) inner: Arc<DelayedFetch>,
}

#[pymethods]
impl PyDelayedFetch {
    #[new]
    fn new(fd: RawFd) -> Self {
        PyDelayedFetch {
            inner: Arc::new(DelayedFetch {
                fd,
                state: Mutex::new(State::Waiting),
            }),
        }
    }

    /// Ends the wait: None when the log did not answer (the broker answers),
    /// else (tag, records' length, the frame's bytes the socket did not take,
    /// the high watermark and last stable offset written into a consumer's
    /// answer or -1). After it returns, nothing more is written from here.
    #[allow(clippy::type_complexity)]
    fn close<'py>(&self, py: Python<'py>) -> Option<(usize, usize, Bound<'py, PyBytes>, i64, i64)> {
        let answered = py.detach(|| {
            let mut state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
            match std::mem::replace(&mut *state, State::Closed) {
                State::Answered {
                    tag,
                    records,
                    unsent,
                    high_watermark,
                    last_stable_offset,
                } => Some((tag, records, unsent, high_watermark, last_stable_offset)),
                State::Waiting | State::Closed => None,
            }
        });
        answered.map(|(tag, records, unsent, hw, lso)| {
            (tag, records, PyBytes::new(py, &unsent), hw, lso)
        })
    }
}

impl PyDelayedFetch {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn waiting_entry(
        &self,
        tag: usize,
        head: Vec<u8>,
        tail: Vec<u8>,
        fetch_offset: i64,
        leader_epoch: i32,
        max_bytes: usize,
        watermarks_at: Option<usize>,
        read_committed: bool,
    ) -> Waiting {
        Waiting {
            fetch: Arc::clone(&self.inner),
            tag,
            head,
            tail,
            fetch_offset,
            leader_epoch,
            max_bytes,
            watermarks_at,
            read_committed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::unsigned_varint;

    #[test]
    fn varint_as_kafka_writes_it() {
        let mut out = [0u8; 5];
        assert_eq!(unsigned_varint(1, &mut out), 1);
        assert_eq!(out[0], 1);
        assert_eq!(unsigned_varint(300, &mut out), 2);
        assert_eq!(&out[..2], &[0xac, 0x02]);
    }
}
