//! What can go wrong with the store.

use thiserror::Error;

/// A store failure.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The database could not be opened or prepared.
    #[error("cannot open the store at {what}: {why}")]
    Open {
        /// The path or URL.
        what: String,
        /// The driver's message.
        why: String,
    },
    /// A commit or a read failed; nothing of the commit was applied.
    #[error("store operation failed: {0}")]
    Database(String),
    /// The store was closed before the write could be queued or committed.
    #[error("the store is closed")]
    Closed,
}
