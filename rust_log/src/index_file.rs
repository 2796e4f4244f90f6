//! File plumbing shared by the offset and time indexes: loading fixed-size
//! entries, recognising Kafka-style zero-filled preallocation, writing one
//! entry at a time with positional writes and trimming to the real size.
//! Handles come from [`crate::file_cache`], so an idle index holds no file
//! descriptor. A missing index file is created only when first needed (an
//! entry, a trim, a rename; a flush skips it): a new partition's empty
//! segment then costs one file creation instead of three, which was most of
//! what creating a topic of thousands of partitions spent.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{LogError, Result};
use crate::file_cache;

/// How an index file looked when it was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexLoad {
    /// File did not exist (created empty).
    Missing,
    /// Entries loaded as stored.
    Clean,
    /// Valid entries followed by zero-filled preallocated space (trimmed).
    Preallocated,
    /// Content could not be trusted (reason); the index must be rebuilt.
    Corrupt(String),
}

/// An index file with fixed-size entries (opened lazily, created lazily).
#[derive(Debug)]
pub struct IndexFile {
    path: PathBuf,
    entry_size: usize,
    /// False until the file exists on disk (see the module docs).
    on_disk: AtomicBool,
}

impl IndexFile {
    /// Reads the file's raw content; `None` if it does not exist, in which
    /// case it is created on first use.
    pub fn open(path: &Path, entry_size: usize) -> Result<(IndexFile, Option<Vec<u8>>)> {
        let content = match File::open(path) {
            Ok(mut file) => {
                let mut buf = Vec::new();
                file.read_to_end(&mut buf)
                    .map_err(|e| LogError::io(format!("reading index {}", path.display()), e))?;
                Some(buf)
            }
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => {
                return Err(LogError::io(format!("opening index {}", path.display()), e));
            }
        };
        Ok((
            IndexFile {
                path: path.to_path_buf(),
                entry_size,
                on_disk: AtomicBool::new(content.is_some()),
            },
            content,
        ))
    }

    /// An index known not to exist yet (a segment in a directory just
    /// created): no system call until the first entry.
    pub fn absent(path: &Path, entry_size: usize) -> IndexFile {
        IndexFile {
            path: path.to_path_buf(),
            entry_size,
            on_disk: AtomicBool::new(false),
        }
    }

    /// A read/write handle, creating the file if it is not on disk yet.
    fn handle(&self) -> Result<Arc<File>> {
        if self.on_disk.load(Ordering::Acquire) {
            return file_cache::get(&self.path);
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.path)
            .map_err(|e| LogError::io(format!("creating index {}", self.path.display()), e))?;
        self.on_disk.store(true, Ordering::Release);
        Ok(file_cache::insert(&self.path, file))
    }

    /// Path of the file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the file (closing any cached handle first); a file not
    /// created yet is created first, so the renamed segment is complete.
    pub fn rename(&mut self, to: &Path) -> Result<()> {
        self.handle()?;
        file_cache::evict(&self.path);
        file_cache::evict(to);
        fs::rename(&self.path, to).map_err(|e| {
            LogError::io(
                format!("renaming {} to {}", self.path.display(), to.display()),
                e,
            )
        })?;
        self.path = to.to_path_buf();
        Ok(())
    }

    /// Writes entry number `n` (positional write: lands in the page cache).
    pub fn write_entry(&self, n: usize, entry: &[u8]) -> Result<()> {
        debug_assert_eq!(entry.len(), self.entry_size);
        self.handle()?
            .write_all_at(entry, (n * self.entry_size) as u64)
            .map_err(|e| LogError::io(format!("writing index {}", self.path.display()), e))
    }

    /// Truncates the file to exactly `entries` entries (creating it: a
    /// trimmed index is on disk, as Kafka's layout has it).
    pub fn set_entries(&self, entries: usize) -> Result<()> {
        self.handle()?
            .set_len((entries * self.entry_size) as u64)
            .map_err(|e| LogError::io(format!("truncating index {}", self.path.display()), e))
    }

    /// Drops every entry. A file not created yet stays uncreated: recovery
    /// resets the indexes of every active segment after a crash, and would
    /// otherwise create two files for each never-written partition.
    pub fn clear(&self) -> Result<()> {
        if !self.on_disk.load(Ordering::Acquire) {
            return Ok(());
        }
        self.set_entries(0)
    }

    /// fsyncs the file, if it exists. One not created yet has no entries
    /// to lose: indexes are derived data, and a segment with data but no
    /// index file is rebuilt by the open-time check; a trimmed (sealed or
    /// closed) segment with data always has both files.
    pub fn flush(&self) -> Result<()> {
        if !self.on_disk.load(Ordering::Acquire) {
            return Ok(());
        }
        match self.handle()?.sync_data() {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(LogError::io(
                format!("syncing index {}", self.path.display()),
                e,
            )),
        }
    }
}

/// Splits raw index content into the valid entry prefix (as decided by
/// `accept(prev, entry)`) and classifies the rest: all zeros means
/// preallocation, anything else means corruption.
pub fn classify<'a>(
    content: &'a [u8],
    entry_size: usize,
    mut accept: impl FnMut(Option<&'a [u8]>, &'a [u8]) -> bool,
) -> (Vec<&'a [u8]>, IndexLoad) {
    let mut entries = Vec::with_capacity(content.len() / entry_size);
    let mut prev: Option<&[u8]> = None;
    let mut consumed = 0usize;
    for chunk in content.chunks_exact(entry_size) {
        if chunk.iter().all(|b| *b == 0) || !accept(prev, chunk) {
            break;
        }
        entries.push(chunk);
        prev = Some(chunk);
        consumed += entry_size;
    }
    let rest = &content[consumed..];
    let load = if rest.is_empty() {
        IndexLoad::Clean
    } else if rest.iter().all(|b| *b == 0) {
        IndexLoad::Preallocated
    } else if rest.len() < entry_size {
        IndexLoad::Corrupt(format!(
            "{} trailing bytes after the last entry",
            rest.len()
        ))
    } else {
        IndexLoad::Corrupt(format!("entry {} is out of order", entries.len()))
    };
    (entries, load)
}
