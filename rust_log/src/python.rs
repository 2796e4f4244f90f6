//! PyO3 bindings (feature `python`): the `pykafkad._rust_log` module with
//! the `LogError` exception and the thread-safe `PartitionLog` class. All
//! file work runs with the GIL released; the log sits behind a mutex that
//! is only ever taken while detached from the interpreter.

use std::sync::{Mutex, MutexGuard};

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyType};

use crate::cleaner;
use crate::error::LogError;
use crate::file_cache;
use crate::partition_log::{LogConfig, PartitionLog as CoreLog, ReadPlan};
use crate::producer_state::ProducerSummary;
use crate::python_config;
use crate::python_delayed_fetch::{PyDelayedFetch, Waiting};
use crate::python_log_slice::PyLogSlice;
use crate::txn_marker::Marker;

const ERROR_CLASS_SRC: &std::ffi::CStr = c"
class LogError(Exception):
    \"\"\"A storage error carrying a Kafka protocol error code.

    ``code`` is the Kafka error code (e.g. 1 OFFSET_OUT_OF_RANGE, 2 CORRUPT_MESSAGE,
    10 MESSAGE_TOO_LARGE, 40 INVALID_CONFIG, 43 UNSUPPORTED_FOR_MESSAGE_FORMAT,
    45 OUT_OF_ORDER_SEQUENCE_NUMBER, 47 INVALID_PRODUCER_EPOCH, 56 KAFKA_STORAGE_ERROR,
    76 UNSUPPORTED_COMPRESSION_TYPE, 87 INVALID_RECORD);
    ``message`` is a readable description. ``args == (code, message)``.
    ``record_errors`` lists the records that failed a batch (KIP-467) as
    ``(index in the batch, message)``; empty when the batch as a whole failed.
    \"\"\"

    def __init__(self, code, message, record_errors=()):
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.record_errors = list(record_errors)

    def __str__(self):
        return f'{self.message} (Kafka error code {self.code})'
";

static LOG_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn log_error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    let ty = LOG_ERROR.get_or_try_init(py, || -> PyResult<Py<PyType>> {
        // Executed in a private namespace named like this module, so the class
        // reports `pykafkad._rust_log` as its module (and pickles by that name).
        let globals = PyDict::new(py);
        globals.set_item("__name__", "pykafkad._rust_log")?;
        py.run(ERROR_CLASS_SRC, Some(&globals), None)?;
        let cls = globals
            .get_item("LogError")?
            .ok_or_else(|| PyRuntimeError::new_err("LogError class was not defined"))?;
        Ok(cls.cast_into::<PyType>()?.unbind())
    })?;
    Ok(ty.bind(py))
}

pub(crate) fn to_py_err(py: Python<'_>, err: LogError) -> PyErr {
    match log_error_type(py).and_then(|t| t.call1((err.code, err.message, err.record_errors))) {
        Ok(inst) => PyErr::from_value(inst),
        Err(e) => e,
    }
}

/// A partition's Kafka-format log. Safe to share between threads.
#[pyclass(module = "pykafkad._rust_log", name = "PartitionLog")]
pub struct PyPartitionLog {
    inner: Mutex<CoreLog>,
    /// Serialises cleaning passes (held without `inner` during the heavy
    /// part of a pass).
    clean_lock: Mutex<()>,
    /// Followers' fetches waiting for this log's next records, answered by
    /// the append that brings them (`python_delayed_fetch`). Taken after
    /// `inner` when both are held.
    waiting: Mutex<Vec<Waiting>>,
    /// Consumers' fetches waiting for the high watermark to pass their
    /// offset, answered by the move that does. Taken after `inner` too.
    waiting_for_hw: Mutex<Vec<Waiting>>,
}

impl PyPartitionLog {
    fn lock(&self) -> Result<MutexGuard<'_, CoreLog>, LogError> {
        self.inner
            .lock()
            .map_err(|_| LogError::storage("partition log lock poisoned by an earlier panic"))
    }

    /// The waiting fetches an append at `base_offset` answers, each with the
    /// records it gets (read back from the log, as written); the others stay.
    fn answers_due(
        &self,
        log: &CoreLog,
        base_offset: i64,
        leader_epoch: i32,
    ) -> Vec<(Waiting, Vec<u8>)> {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if waiting.is_empty() {
            return Vec::new();
        }
        let mut due = Vec::new();
        let mut kept = Vec::new();
        for entry in waiting.drain(..) {
            if !entry.still_waiting() {
                continue;
            }
            if entry.fetch_offset != base_offset || entry.leader_epoch != leader_epoch {
                kept.push(entry);
                continue;
            }
            match read_whole(log, base_offset, entry.max_bytes, None) {
                Ok(records) if !records.is_empty() => due.push((entry, records)),
                _ => {} // the broker's own pass answers it (and meets any error there)
            }
        }
        *waiting = kept;
        due
    }

    /// Runs `f` on the log with the GIL released.
    fn with_log<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut CoreLog) -> Result<T, LogError> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let mut guard = self.lock()?;
            f(&mut guard)
        })
        .map_err(|e| to_py_err(py, e))
    }
}

#[pymethods]
impl PyPartitionLog {
    #[new]
    #[pyo3(signature = (dir, *, clean_shutdown = false, recovery_point = None, **config))]
    fn new(
        py: Python<'_>,
        dir: std::path::PathBuf,
        clean_shutdown: bool,
        recovery_point: Option<i64>,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let config = python_config::with_kwargs(LogConfig::default(), config)?;
        let log = py
            .detach(|| CoreLog::open_at(&dir, config, clean_shutdown, recovery_point))
            .map_err(|e| to_py_err(py, e))?;
        Ok(PyPartitionLog {
            inner: Mutex::new(log),
            clean_lock: Mutex::new(()),
            waiting: Mutex::new(Vec::new()),
            waiting_for_hw: Mutex::new(Vec::new()),
        })
    }

    /// Creates the logs of a new topic's partitions at `dirs` in one call,
    /// without the GIL: each directory made, `partition_metadata` written
    /// into it, the parent directories fsynced once (see
    /// `PartitionLog::create_many`).
    #[staticmethod]
    #[pyo3(signature = (dirs, partition_metadata = None, **config))]
    fn create_many(
        py: Python<'_>,
        dirs: Vec<std::path::PathBuf>,
        partition_metadata: Option<Vec<u8>>,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Vec<PyPartitionLog>> {
        let config = python_config::with_kwargs(LogConfig::default(), config)?;
        let logs = py
            .detach(|| CoreLog::create_many(&dirs, config, partition_metadata.as_deref()))
            .map_err(|e| to_py_err(py, e))?;
        Ok(logs
            .into_iter()
            .map(|log| PyPartitionLog {
                inner: Mutex::new(log),
                clean_lock: Mutex::new(()),
                waiting: Mutex::new(Vec::new()),
                waiting_for_hw: Mutex::new(Vec::new()),
            })
            .collect())
    }

    /// Applies any subset of the constructor's configuration keywords live.
    #[pyo3(signature = (**config))]
    fn update_config(&self, py: Python<'_>, config: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        // Parse with the GIL, then merge only the given keys into the
        // latest configuration under the lock.
        let (patch, keys) = python_config::patch(config)?;
        self.with_log(py, move |l| {
            let merged = python_config::merge(*l.config(), &patch, &keys);
            l.update_config(merged)
        })
    }

    /// The configuration in force, as the constructor's keywords.
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let cfg = self.with_log(py, |l| Ok(*l.config()))?;
        python_config::to_dict(py, &cfg)
    }

    #[getter]
    fn log_start_offset(&self, py: Python<'_>) -> PyResult<i64> {
        self.with_log(py, |l| Ok(l.log_start_offset()))
    }

    #[getter]
    fn log_end_offset(&self, py: Python<'_>) -> PyResult<i64> {
        self.with_log(py, |l| Ok(l.log_end_offset()))
    }

    #[pyo3(signature = (records, leader_epoch = 0, now_ms = None, from_coordinator = false))]
    fn append(
        &self,
        py: Python<'_>,
        records: &Bound<'_, PyAny>,
        leader_epoch: i32,
        now_ms: Option<i64>,
        from_coordinator: bool,
    ) -> PyResult<(i64, i64, i64, bool)> {
        let buf: PyBuffer<u8> = PyBuffer::get(records)?;
        let owned = buf.to_vec(py)?;
        drop(buf);
        let info = py
            .detach(|| {
                let mut log = self.lock()?;
                let info = if from_coordinator {
                    log.append_from_coordinator(owned, leader_epoch, now_ms)?
                } else {
                    log.append(owned, leader_epoch, now_ms)?
                };
                let due = if info.duplicate {
                    Vec::new()
                } else {
                    self.answers_due(&log, info.base_offset, leader_epoch)
                };
                drop(log);
                for (waiting, records) in &due {
                    waiting.answer(records);
                }
                Ok(info)
            })
            .map_err(|e| to_py_err(py, e))?;
        Ok((
            info.base_offset,
            info.last_offset,
            info.log_append_time,
            info.duplicate,
        ))
    }

    /// Lets the next append answer a follower's fetch waiting on this log:
    /// an append at `fetch_offset` in `leader_epoch` writes `head`, the
    /// records' length, up to `max_bytes` of whole batches from there, and
    /// `tail` to the fetch's socket (see `python_delayed_fetch`).
    #[allow(clippy::too_many_arguments)]
    fn answer_on_append(
        &self,
        py: Python<'_>,
        fetch: &PyDelayedFetch,
        tag: usize,
        head: &[u8],
        tail: &[u8],
        fetch_offset: i64,
        leader_epoch: i32,
        max_bytes: usize,
    ) -> PyResult<()> {
        let entry = fetch.waiting_entry(
            tag,
            head.to_vec(),
            tail.to_vec(),
            fetch_offset,
            leader_epoch,
            max_bytes,
            None,
            false,
        );
        py.detach(|| push_waiting(&self.waiting, entry));
        Ok(())
    }

    /// Lets the next move of the high watermark above `fetch_offset` answer
    /// a consumer's fetch waiting on this log: it writes `head` (with the new
    /// high watermark and last stable offset at `watermarks_at`), the records'
    /// length, up to `max_bytes` of whole batches below the high watermark
    /// (`read_committed`: below the last stable offset, and only when no
    /// aborted transaction lies there) from `fetch_offset`, and `tail` to the
    /// fetch's socket.
    #[allow(clippy::too_many_arguments)]
    fn answer_on_high_watermark(
        &self,
        py: Python<'_>,
        fetch: &PyDelayedFetch,
        tag: usize,
        head: &[u8],
        tail: &[u8],
        fetch_offset: i64,
        max_bytes: usize,
        watermarks_at: usize,
        read_committed: bool,
    ) -> PyResult<()> {
        if watermarks_at + 16 > head.len() {
            return Err(PyValueError::new_err(
                "the watermarks lie outside the answer's head",
            ));
        }
        let entry = fetch.waiting_entry(
            tag,
            head.to_vec(),
            tail.to_vec(),
            fetch_offset,
            -1,
            max_bytes,
            Some(watermarks_at),
            read_committed,
        );
        py.detach(|| push_waiting(&self.waiting_for_hw, entry));
        Ok(())
    }

    /// The leader's high watermark moved to `high_watermark`: the consumers'
    /// fetches waiting below it are answered now (with the GIL released).
    fn high_watermark_moved(&self, py: Python<'_>, high_watermark: i64) -> PyResult<()> {
        py.detach(|| {
            if self.waiting_for_hw.lock().map_or(true, |w| w.is_empty()) {
                return Ok(());
            }
            let due = {
                let mut log = self.lock()?;
                let mut waiting = self
                    .waiting_for_hw
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                let lso = log.last_stable_offset(high_watermark);
                let mut due = Vec::new();
                let mut kept = Vec::new();
                for entry in waiting.drain(..) {
                    if !entry.still_waiting() {
                        continue;
                    }
                    // A read_committed consumer reads below the last stable offset.
                    let bound = if entry.read_committed {
                        lso
                    } else {
                        high_watermark
                    };
                    if entry.fetch_offset >= bound {
                        kept.push(entry);
                        continue;
                    }
                    // Its answer would list the aborted transactions of the range: the
                    // broker's own pass answers that.
                    if entry.read_committed
                        && !log
                            .aborted_transactions(entry.fetch_offset, bound)
                            .is_empty()
                    {
                        continue;
                    }
                    if let Ok(records) =
                        read_whole(&log, entry.fetch_offset, entry.max_bytes, Some(bound))
                        && !records.is_empty()
                    {
                        due.push((entry, records));
                    }
                }
                *waiting = kept;
                (due, lso)
            };
            let (due, lso) = due;
            for (entry, records) in &due {
                entry.answer_below(records, high_watermark, lso);
            }
            Ok(())
        })
        .map_err(|e: LogError| to_py_err(py, e))
    }

    /// Whole batches from the one containing `offset`; with `max_offset`
    /// (a high watermark) only batches below it.
    #[pyo3(signature = (offset, max_bytes, min_one = true, allow_zstd = true, max_offset = None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        offset: i64,
        max_bytes: i64,
        min_one: bool,
        allow_zstd: bool,
        max_offset: Option<i64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let max_bytes = usize::try_from(max_bytes.max(0)).unwrap_or(usize::MAX);
        let plan = self.with_log(py, |l| {
            l.read_plan_with(offset, max_bytes, min_one, allow_zstd, max_offset)
        })?;
        if plan.exact {
            exact_bytes(py, &plan)
        } else {
            let data = py
                .detach(|| -> Result<Vec<u8>, LogError> {
                    let mut v = vec![0u8; plan.len];
                    let n = plan.read_into(&mut v)?;
                    v.truncate(n);
                    Ok(v)
                })
                .map_err(|e| to_py_err(py, e))?;
            Ok(PyBytes::new(py, &data))
        }
    }

    /// [`read`](Self::read) for a zero-copy send: the range as a `LogSlice`
    /// of the segment file when it is at least `min_slice` bytes (it then
    /// always ends on a batch boundary), else as bytes. `cold` marks a range
    /// read below the active segment.
    #[pyo3(signature = (offset, max_bytes, min_one = true, allow_zstd = true, max_offset = None, min_slice = 0, cold = false))]
    #[allow(clippy::too_many_arguments)]
    fn read_slice<'py>(
        &self,
        py: Python<'py>,
        offset: i64,
        max_bytes: i64,
        min_one: bool,
        allow_zstd: bool,
        max_offset: Option<i64>,
        min_slice: usize,
        cold: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let max_bytes = usize::try_from(max_bytes.max(0)).unwrap_or(usize::MAX);
        let plan = self.with_log(py, |l| {
            l.read_plan_whole(offset, max_bytes, min_one, allow_zstd, max_offset)
        })?;
        match plan.file_range() {
            Some((file, pos, len)) if len >= min_slice.max(1) => {
                Ok(Bound::new(py, PyLogSlice::new(file, pos, len, cold))?.into_any())
            }
            _ => exact_bytes(py, &plan).map(Bound::into_any),
        }
    }

    fn enforce_retention(&self, py: Python<'_>, now_ms: i64) -> PyResult<(usize, u64)> {
        self.with_log(py, |l| l.enforce_retention(now_ms))
    }

    fn maybe_roll(&self, py: Python<'_>, now_ms: i64) -> PyResult<bool> {
        self.with_log(py, |l| l.maybe_roll(now_ms))
    }

    /// A follower's append: the leader's batches as they are (offsets, epochs,
    /// producer state kept). Returns (first offset, last offset).
    fn append_as_follower(
        &self,
        py: Python<'_>,
        records: &Bound<'_, PyAny>,
    ) -> PyResult<(i64, i64)> {
        let buf: PyBuffer<u8> = PyBuffer::get(records)?;
        let owned = buf.to_vec(py)?;
        drop(buf);
        let info = self.with_log(py, move |l| l.append_as_follower(owned))?;
        Ok((info.base_offset, info.last_offset))
    }

    /// Writes a COMMIT (`commit`) or ABORT marker for the producer (the
    /// leader's part of WriteTxnMarkers). Returns (marker offset, first
    /// offset of the transaction it ended or -1).
    fn append_marker(
        &self,
        py: Python<'_>,
        producer_id: i64,
        producer_epoch: i16,
        commit: bool,
        coordinator_epoch: i32,
        leader_epoch: i32,
    ) -> PyResult<(i64, i64)> {
        let marker = Marker {
            commit,
            coordinator_epoch,
        };
        let (info, done) = self.with_log(py, move |l| {
            l.append_marker(producer_id, producer_epoch, marker, leader_epoch, None)
        })?;
        Ok((info.base_offset, done.map_or(-1, |d| d.first_offset)))
    }

    /// The last stable offset for high watermark `hw`.
    fn last_stable_offset(&self, py: Python<'_>, hw: i64) -> PyResult<i64> {
        self.with_log(py, |l| Ok(l.last_stable_offset(hw)))
    }

    /// Aborted transactions overlapping `[start, upper)` as (producer id,
    /// first offset), for a read_committed fetch.
    fn aborted_transactions(
        &self,
        py: Python<'_>,
        start: i64,
        upper: i64,
    ) -> PyResult<Vec<(i64, i64)>> {
        self.with_log(py, |l| Ok(l.aborted_transactions(start, upper)))
    }

    /// Every producer as (id, epoch, last sequence, last timestamp,
    /// coordinator epoch, open transaction's first offset or -1).
    fn producer_states(&self, py: Python<'_>) -> PyResult<Vec<ProducerSummary>> {
        self.with_log(py, |l| Ok(l.producer_state().describe()))
    }

    /// One producer as (epoch, first offset of its open transaction or -1),
    /// or None when the log knows no such producer.
    fn producer_state_of(&self, py: Python<'_>, producer_id: i64) -> PyResult<Option<(i16, i64)>> {
        self.with_log(py, |l| {
            Ok(l.producer_state()
                .get(producer_id)
                .map(|e| (e.epoch, e.current_txn_first_offset.unwrap_or(-1))))
        })
    }

    /// Open transactions as (producer id, first offset), oldest first.
    fn open_transactions(&self, py: Python<'_>) -> PyResult<Vec<(i64, i64)>> {
        self.with_log(py, |l| Ok(l.open_transactions()))
    }

    /// Removes the batches at and after `offset`; returns the new log end offset.
    fn truncate_to(&self, py: Python<'_>, offset: i64) -> PyResult<i64> {
        self.with_log(py, |l| l.truncate_to(offset))
    }

    /// Empties the log and starts it at `offset`.
    fn truncate_fully_and_start_at(&self, py: Python<'_>, offset: i64) -> PyResult<()> {
        self.with_log(py, |l| l.truncate_fully_and_start_at(offset))
    }

    fn delete_records(&self, py: Python<'_>, offset: i64) -> PyResult<i64> {
        self.with_log(py, |l| l.delete_records(offset))
    }

    /// Forgets producers idle `expiration_ms` before `now_ms` (wall-clock ms) without an open
    /// transaction; returns how many (Kafka's `producer.id.expiration.ms`).
    fn remove_expired_producers(
        &self,
        py: Python<'_>,
        now_ms: i64,
        expiration_ms: i64,
    ) -> PyResult<usize> {
        self.with_log(
            py,
            |l| Ok(l.remove_expired_producers(now_ms, expiration_ms)),
        )
    }

    fn flush_if_due(&self, py: Python<'_>, now_ms: i64) -> PyResult<bool> {
        self.with_log(py, |l| l.flush_if_due(now_ms))
    }

    fn open_file_count(&self, py: Python<'_>) -> PyResult<usize> {
        self.with_log(py, |l| Ok(l.open_file_count()))
    }

    /// One compaction pass. The log lock is held only to plan the pass and
    /// to swap the result in; reading and rewriting segments runs without
    /// it (closed segments are immutable) and without the GIL.
    /// `dedupe_buffer_bytes` bounds the key -> offset map (`log.cleaner.dedupe.buffer.size`); a
    /// dirty range with more keys than fit is cleaned over several passes.
    #[pyo3(signature = (now_ms, dedupe_buffer_bytes=None))]
    fn clean<'py>(
        &self,
        py: Python<'py>,
        now_ms: i64,
        dedupe_buffer_bytes: Option<usize>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let stats = py
            .detach(|| -> Result<_, LogError> {
                let _serial = self
                    .clean_lock
                    .lock()
                    .map_err(|_| LogError::storage("cleaner lock poisoned"))?;
                let plan = self.lock()?.prepare_clean(now_ms)?;
                let Some(plan) = plan else { return Ok(None) };
                let output = cleaner::run(&plan, dedupe_buffer_bytes.unwrap_or(usize::MAX))?;
                self.lock()?.finish_clean(output)
            })
            .map_err(|e| to_py_err(py, e))?;
        let Some(s) = stats else { return Ok(None) };
        let d = PyDict::new(py);
        d.set_item("segments", s.segments)?;
        d.set_item("bytes_before", s.bytes_before)?;
        d.set_item("bytes_after", s.bytes_after)?;
        d.set_item("records_removed", s.records_removed)?;
        Ok(Some(d))
    }

    fn offset_for_timestamp(&self, py: Python<'_>, timestamp: i64) -> PyResult<Option<(i64, i64)>> {
        self.with_log(py, |l| l.offset_for_timestamp(timestamp))
    }

    fn max_timestamp(&self, py: Python<'_>) -> PyResult<Option<(i64, i64)>> {
        self.with_log(py, |l| l.max_timestamp())
    }

    fn assign_leader_epoch(&self, py: Python<'_>, leader_epoch: i32) -> PyResult<bool> {
        self.with_log(py, |l| l.assign_leader_epoch(leader_epoch))
    }

    fn end_offset_for_epoch(&self, py: Python<'_>, leader_epoch: i32) -> PyResult<(i32, i64)> {
        self.with_log(py, |l| l.end_offset_for_epoch(leader_epoch))
    }

    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.with_log(py, |l| l.flush())
    }

    /// The rolled segments' data is fsynced without the log lock, so appends
    /// go on meanwhile; the lock is taken again for their indexes, the
    /// directory and the recovery point.
    fn flush_rolled(&self, py: Python<'_>) -> PyResult<bool> {
        py.detach(|| -> Result<bool, LogError> {
            let files = self.lock()?.rolled_unflushed_files()?;
            for f in files {
                f.sync_data()
                    .map_err(|e| LogError::io("syncing a rolled segment", e))?;
            }
            self.lock()?.flush_rolled()
        })
        .map_err(|e| to_py_err(py, e))
    }

    #[getter]
    fn recovery_point(&self, py: Python<'_>) -> PyResult<i64> {
        self.with_log(py, |l| Ok(l.recovery_point()))
    }

    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.with_log(py, |l| l.close())
    }

    #[getter]
    fn active_segment_base_offset(&self, py: Python<'_>) -> PyResult<i64> {
        self.with_log(py, |l| Ok(l.active_segment_base_offset()))
    }

    fn segment_base_offsets(&self, py: Python<'_>) -> PyResult<Vec<i64>> {
        self.with_log(py, |l| Ok(l.segment_base_offsets()))
    }

    fn size_bytes(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_log(py, |l| Ok(l.size_bytes()))
    }

    fn recovery_report(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with_log(py, |l| Ok(l.recovery_report().to_vec()))
    }

    fn leader_epochs(&self, py: Python<'_>) -> PyResult<Vec<(i32, i64)>> {
        self.with_log(py, |l| Ok(l.leader_epochs().to_vec()))
    }

    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        self.with_log(py, |l| Ok(l.is_closed()))
    }

    #[getter]
    fn dir(&self, py: Python<'_>) -> PyResult<String> {
        self.with_log(py, |l| Ok(l.dir().to_string_lossy().into_owned()))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.with_log(py, |l| {
            Ok(format!(
                "PartitionLog(dir={:?}, log_start_offset={}, log_end_offset={})",
                l.dir().display().to_string(),
                l.log_start_offset(),
                l.log_end_offset()
            ))
        })
    }
}

/// Sets how many segment/index file handles all logs of the process keep
/// open together (least recently used ones are closed beyond it).
#[pyfunction]
fn set_max_open_files(n: usize) {
    file_cache::set_capacity(n);
}

/// The `pykafkad._rust_log` extension module.
/// The whole batches of an exact plan, copied once, straight from the file
/// into the bytes object.
/// Adds a waiting fetch to `list`, dropping the ones closed since (answered,
/// woken, timed out).
fn push_waiting(list: &Mutex<Vec<Waiting>>, entry: Waiting) {
    let mut waiting = list.lock().unwrap_or_else(|e| e.into_inner());
    waiting.retain(Waiting::still_waiting);
    waiting.push(entry);
}

/// The most a waiting fetch is answered with from the log itself: a larger range
/// (a consumer's after a stalled high watermark, say) may have left the page
/// cache, and is read by the broker's own pass, off the event loop.
const MAX_ANSWER_BYTES: usize = 256 << 10;

/// Whole batches from `offset`, up to `max_bytes` (the first whole whatever its
/// size), below `max_offset` when given; nothing for a range over
/// `MAX_ANSWER_BYTES`.
fn read_whole(
    log: &CoreLog,
    offset: i64,
    max_bytes: usize,
    max_offset: Option<i64>,
) -> Result<Vec<u8>, LogError> {
    let plan = log.read_plan_whole(offset, max_bytes, true, true, max_offset)?;
    if plan.len > MAX_ANSWER_BYTES {
        return Ok(Vec::new());
    }
    let mut bytes = vec![0u8; plan.len];
    let n = plan.read_into(&mut bytes)?;
    bytes.truncate(n);
    Ok(bytes)
}

fn exact_bytes<'py>(py: Python<'py>, plan: &ReadPlan) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, plan.len, |dst| {
        py.detach(|| plan.read_into(dst))
            .map(|_| ())
            .map_err(|e| to_py_err(py, e))
    })
}

#[pymodule]
fn _rust_log(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("LogError", log_error_type(py)?)?;
    m.add_class::<PyPartitionLog>()?;
    m.add_class::<PyLogSlice>()?;
    m.add_class::<PyDelayedFetch>()?;
    m.add_function(wrap_pyfunction!(set_max_open_files, m)?)?;
    m.add_function(wrap_pyfunction!(crate::batch_codec::py::encode_batch, m)?)?;
    m.add_function(wrap_pyfunction!(crate::batch_codec::py::decode_batches, m)?)?;
    m.add_function(wrap_pyfunction!(
        crate::batch_codec::py::decode_batch_headers,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(
        crate::partitioner::py::partition_of_key,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(
        crate::schema_id::py::schema_id_problems,
        m
    )?)?;
    Ok(())
}
