//! The `flush.messages` / `flush.ms` policy: counts messages appended since
//! the last fsync and remembers when that fsync happened, so the log can
//! fsync after every N messages and the broker can ask periodically whether
//! a time-based flush is due.

/// Unflushed-work bookkeeping of one log.
#[derive(Debug, Clone, Copy)]
pub struct FlushPolicy {
    unflushed_messages: i64,
    last_flush_ms: i64,
}

impl FlushPolicy {
    /// Starts with nothing unflushed, as of `now_ms`.
    pub fn new(now_ms: i64) -> Self {
        FlushPolicy {
            unflushed_messages: 0,
            last_flush_ms: now_ms,
        }
    }

    /// Records `messages` appended; true when `flush_messages` is reached.
    pub fn on_append(&mut self, messages: i64, flush_messages: i64) -> bool {
        self.unflushed_messages = self.unflushed_messages.saturating_add(messages);
        self.unflushed_messages >= flush_messages
    }

    /// True when there is unflushed data and `flush_ms` has passed since
    /// the last flush.
    pub fn time_due(&self, now_ms: i64, flush_ms: i64) -> bool {
        self.unflushed_messages > 0 && now_ms.saturating_sub(self.last_flush_ms) >= flush_ms
    }

    /// Records a completed flush.
    pub fn flushed(&mut self, now_ms: i64) {
        self.unflushed_messages = 0;
        self.last_flush_ms = now_ms;
    }

    /// Messages appended since the last flush.
    pub fn unflushed_messages(&self) -> i64 {
        self.unflushed_messages
    }
}
