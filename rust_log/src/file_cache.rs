//! Process-wide, bounded cache of open segment and index file handles.
//!
//! A broker may hold thousands of partitions, each with several segments of
//! three files; keeping all of them open would exhaust `ulimit -n`. Instead
//! segments only remember their paths and ask this cache for a handle when
//! they need one. The cache keeps at most `capacity` handles (least recently
//! used ones are closed first). Handles are `Arc<File>`: a reader that got a
//! handle keeps a working file even if the cache evicts it, or the file is
//! renamed or unlinked meanwhile (POSIX semantics), so retention and the
//! cleaner never break in-flight fetches.

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use crate::error::{LogError, Result};

/// Default number of handles kept open (fits well under a 1024 fd limit,
/// leaving room for sockets).
pub const DEFAULT_CAPACITY: usize = 256;

struct Entry {
    file: Arc<File>,
    tick: u64,
}

struct State {
    map: HashMap<PathBuf, Entry>,
    lru: BTreeMap<u64, PathBuf>,
    tick: u64,
    capacity: usize,
}

impl State {
    fn touch(&mut self, path: &Path) -> Option<Arc<File>> {
        self.tick += 1;
        let tick = self.tick;
        let entry = self.map.get_mut(path)?;
        self.lru.remove(&entry.tick);
        entry.tick = tick;
        self.lru.insert(tick, path.to_path_buf());
        Some(Arc::clone(&entry.file))
    }

    fn remove(&mut self, path: &Path) {
        if let Some(e) = self.map.remove(path) {
            self.lru.remove(&e.tick);
        }
    }

    fn shrink_to(&mut self, capacity: usize) {
        while self.map.len() > capacity {
            let Some((_, victim)) = self.lru.pop_first() else {
                break;
            };
            self.map.remove(&victim);
        }
    }
}

static CACHE: LazyLock<Mutex<State>> = LazyLock::new(|| {
    Mutex::new(State {
        map: HashMap::new(),
        lru: BTreeMap::new(),
        tick: 0,
        capacity: DEFAULT_CAPACITY,
    })
});

fn state() -> MutexGuard<'static, State> {
    // A panic while holding this lock cannot leave the maps inconsistent in
    // a way that matters (worst case a stale handle), so recover from poison.
    CACHE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Returns an open read/write handle for the existing file `path`.
pub fn get(path: &Path) -> Result<Arc<File>> {
    if let Some(f) = state().touch(path) {
        return Ok(f);
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| LogError::io(format!("opening {}", path.display()), e))?;
    Ok(insert(path, file))
}

/// Puts a freshly opened handle for `path` in the cache (replacing any
/// previous one) and returns it.
pub fn insert(path: &Path, file: File) -> Arc<File> {
    let file = Arc::new(file);
    let mut st = state();
    st.remove(path);
    st.tick += 1;
    let tick = st.tick;
    st.map.insert(
        path.to_path_buf(),
        Entry {
            file: Arc::clone(&file),
            tick,
        },
    );
    st.lru.insert(tick, path.to_path_buf());
    let cap = st.capacity;
    st.shrink_to(cap);
    file
}

/// Forgets (and, once no reader holds it, closes) the handle of `path`.
/// Must be called before a file is renamed, replaced or deleted.
pub fn evict(path: &Path) {
    state().remove(path);
}

/// Number of cached handles of files directly inside `dir`.
pub fn open_count_in(dir: &Path) -> usize {
    state()
        .map
        .keys()
        .filter(|p| p.parent() == Some(dir))
        .count()
}

/// Total number of cached handles.
pub fn open_count() -> usize {
    state().map.len()
}

/// Sets the maximum number of cached handles (at least 1), closing the
/// least recently used ones beyond it.
pub fn set_capacity(capacity: usize) {
    let mut st = state();
    st.capacity = capacity.max(1);
    let cap = st.capacity;
    st.shrink_to(cap);
}

/// Current capacity.
pub fn capacity() -> usize {
    state().capacity
}
