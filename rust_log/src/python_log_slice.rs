//! `LogSlice`: a range of a segment file handed to Python for a zero-copy
//! fetch. It holds the file open, so the range stays readable even if the
//! segment is deleted (retention, compaction) before the response is sent;
//! the network layer passes `fileno()`, `position` and `len()` to
//! `os.sendfile`, and uses `read()` where it must copy (TLS).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::LogError;
use crate::python::to_py_err;

#[pyclass(module = "pykafkad._rust_log", name = "LogSlice", frozen)]
pub struct PyLogSlice {
    file: Arc<File>,
    pos: u64,
    len: usize,
    cold: bool,
}

impl PyLogSlice {
    pub(crate) fn new(file: Arc<File>, pos: u64, len: usize, cold: bool) -> Self {
        PyLogSlice {
            file,
            pos,
            len,
            cold,
        }
    }
}

#[pymethods]
impl PyLogSlice {
    /// The segment file's descriptor, open as long as this slice lives.
    fn fileno(&self) -> i32 {
        self.file.as_raw_fd()
    }

    /// Where the range starts in the file.
    #[getter]
    fn position(&self) -> u64 {
        self.pos
    }

    /// Whether the range may lie outside the page cache (it was read below
    /// the active segment): sending it may wait for the disk.
    #[getter]
    fn cold(&self) -> bool {
        self.cold
    }

    fn __len__(&self) -> usize {
        self.len
    }

    /// The range's bytes, copied (for a transport that cannot send a file).
    fn read<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        PyBytes::new_with(py, self.len, |dst| {
            py.detach(|| {
                self.file
                    .read_exact_at(dst, self.pos)
                    .map_err(|e| LogError::io(format!("reading log at position {}", self.pos), e))
            })
            .map_err(|e| to_py_err(py, e))
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "LogSlice(fd={}, position={}, len={})",
            self.file.as_raw_fd(),
            self.pos,
            self.len
        )
    }
}
