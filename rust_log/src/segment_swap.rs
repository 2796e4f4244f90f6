//! Crash-safe replacement of segments by the cleaner's output, and the
//! open-time completion or rollback of an interrupted replacement.
//!
//! Installing a `.cleaned` segment (base B) that replaces old segments
//! covering `[B, E)`:
//! 1. write `B.swaprange` holding E (fsynced);
//! 2. rename the cleaned files to `.swap` (indexes first, the log last: the
//!    `B.log.swap` rename is the commit point), fsync the directory;
//! 3. delete the old segments;
//! 4. rename the `.swap` files to their live names, fsync the directory;
//! 5. remove `B.swaprange`.
//!
//! On open, [`recover`] deletes `*.cleaned` and `*.deleted` leftovers (a
//! pass that had not committed: the old segments are intact), and for each
//! `B.log.swap` deletes the live segments in `[B, E)` and finishes the
//! renames (a pass that had committed).

use std::fs;
use std::path::{Path, PathBuf};

use crate::cleaner::CleanedGroup;
use crate::error::{LogError, Result};
use crate::file_cache;
use crate::offset_checkpoint;
use crate::segment::{Segment, file_stem, suffixed_path};

/// Suffix of segments being written by the cleaner.
pub const CLEANED: &str = ".cleaned";
/// Suffix of segments committed but not yet renamed into place.
pub const SWAP: &str = ".swap";

fn range_file(base: i64) -> String {
    format!("{}.swaprange", file_stem(base))
}

/// fsyncs a directory (makes renames and unlinks durable).
pub fn sync_dir(dir: &Path) -> Result<()> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| LogError::io(format!("syncing {}", dir.display()), e))
}

/// Installs `group` in place of `old` (which must be exactly the segments
/// it replaces, oldest first). Returns the live segment.
pub fn install(dir: &Path, group: CleanedGroup, old: Vec<Segment>) -> Result<Segment> {
    let mut seg = group.segment;
    let base = seg.base_offset();
    offset_checkpoint::write(dir, &range_file(base), group.end_offset)?;
    seg.change_suffix(SWAP)?;
    sync_dir(dir)?;
    for o in old {
        o.delete_files()?;
    }
    seg.change_suffix("")?;
    sync_dir(dir)?;
    let _ = fs::remove_file(dir.join(range_file(base)));
    Ok(seg)
}

fn parse_base(stem: &str) -> Option<i64> {
    (stem.len() == 20 && stem.bytes().all(|b| b.is_ascii_digit()))
        .then(|| stem.parse().ok())
        .flatten()
}

fn remove(path: &Path, report: &mut Vec<String>, why: &str) {
    file_cache::evict(path);
    if fs::remove_file(path).is_ok() {
        report.push(format!("removed {} ({why})", path.display()));
    }
}

/// Completes or rolls back interrupted cleaner swaps in `dir` (see the
/// module docs). Appends one line per action to `report`. The directory is
/// fsynced only when something was removed or renamed: a directory this
/// left untouched has nothing new to make durable, and an unconditional
/// fsync here cost one journal commit per partition on every open
/// (thousands when a topic is created).
pub fn recover(dir: &Path, report: &mut Vec<String>) -> Result<()> {
    let reported_before = report.len();
    let listing =
        fs::read_dir(dir).map_err(|e| LogError::io(format!("listing {}", dir.display()), e))?;
    let mut names = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|e| LogError::io(format!("listing {}", dir.display()), e))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    let mut swaps = Vec::new();
    let mut ranges = Vec::new();
    for name in &names {
        let path = dir.join(name);
        if name.ends_with(CLEANED) {
            remove(&path, report, "unfinished cleaning");
        } else if name.ends_with(".deleted") {
            remove(&path, report, "leftover of a deletion");
        } else if let Some(b) = name.strip_suffix(".log.swap").and_then(parse_base) {
            swaps.push(b);
        } else if let Some(b) = name.strip_suffix(".swaprange").and_then(parse_base) {
            ranges.push(b);
        }
    }
    // Index swap files without their log swap: the rename was cut short
    // before the commit point.
    for name in &names {
        for ext in [".index.swap", ".timeindex.swap", ".txnindex.swap"] {
            if let Some(stem) = name.strip_suffix(ext)
                && let Some(b) = parse_base(stem)
                && !swaps.contains(&b)
            {
                remove(&dir.join(name), report, "uncommitted swap");
            }
        }
    }
    swaps.sort_unstable();
    for b in swaps {
        let end = offset_checkpoint::read(dir, &range_file(b)).unwrap_or(b + 1);
        let mut covered: Vec<i64> = names
            .iter()
            .filter_map(|n| n.strip_suffix(".log").and_then(parse_base))
            .filter(|o| *o >= b && *o < end)
            .collect();
        covered.sort_unstable();
        for o in covered {
            for ext in ["log", "index", "timeindex", "txnindex"] {
                remove(
                    &suffixed_path(dir, o, ext, ""),
                    report,
                    "replaced by a committed cleaning",
                );
            }
        }
        for ext in ["index", "timeindex", "txnindex", "log"] {
            let from = suffixed_path(dir, b, ext, SWAP);
            let to: PathBuf = suffixed_path(dir, b, ext, "");
            if from.exists() {
                file_cache::evict(&to);
                fs::rename(&from, &to)
                    .map_err(|e| LogError::io(format!("renaming {}", from.display()), e))?;
            }
        }
        report.push(format!(
            "completed interrupted cleaner swap of segment {} (replacing offsets {b}..{end})",
            suffixed_path(dir, b, "log", "").display()
        ));
        let _ = fs::remove_file(dir.join(range_file(b)));
    }
    for b in ranges {
        let _ = fs::remove_file(dir.join(range_file(b)));
    }
    // Every removal and rename above adds a report line; a leftover
    // `.swaprange` alone needs no fsync (it is removed again next time).
    if report.len() > reported_before {
        sync_dir(dir)?;
    }
    Ok(())
}
