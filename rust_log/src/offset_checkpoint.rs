//! Single-offset checkpoint files in a partition directory (the log start
//! offset and the cleaner's first dirty offset), in Kafka's checkpoint text
//! layout: a version line `0`, an entry count `1`, then the offset. Written
//! atomically (temp file, fsync, rename); a missing or unparsable file reads
//! as `None`.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use crate::error::{LogError, Result};

/// File holding the log start offset (DeleteRecords low watermark).
pub const LOG_START_OFFSET: &str = "log-start-offset-checkpoint";
/// File holding the cleaner's first dirty offset.
pub const CLEANER_OFFSET: &str = "cleaner-offset-checkpoint";

/// Reads checkpoint `name` of partition directory `dir`.
pub fn read(dir: &Path, name: &str) -> Option<i64> {
    let text = fs::read_to_string(dir.join(name)).ok()?;
    let mut lines = text.lines();
    if lines.next()?.trim() != "0" || lines.next()?.trim() != "1" {
        return None;
    }
    let offset: i64 = lines.next()?.trim().parse().ok()?;
    (offset >= 0).then_some(offset)
}

/// Writes checkpoint `name` of partition directory `dir`.
pub fn write(dir: &Path, name: &str, offset: i64) -> Result<()> {
    let target = dir.join(name);
    let tmp = dir.join(format!("{name}.tmp"));
    let text = format!("0\n1\n{offset}\n");
    let write = || -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        fs::rename(&tmp, &target)
    };
    write().map_err(|e| LogError::io(format!("writing {}", target.display()), e))
}
