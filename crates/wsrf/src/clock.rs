//! Time, injected: the runtime reads the clock through [`Clock`] so that tests move time
//! by hand and never sleep.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use osprey_binding::DateTime;

/// A source of the current time, in milliseconds since the Unix epoch.
pub trait Clock: Send + Sync + 'static {
    /// Now, in milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> i64;

    /// Now, as an `xsd:dateTime` in UTC.
    fn now(&self) -> DateTime {
        to_datetime(self.now_ms())
    }
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        let d = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO);
        i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
    }
}

/// A clock that moves only when told to (tests, simulations).
#[derive(Debug, Default)]
pub struct ManualClock {
    ms: AtomicI64,
}

impl ManualClock {
    /// A clock reading `ms` milliseconds after the epoch.
    pub fn at(ms: i64) -> Self {
        ManualClock {
            ms: AtomicI64::new(ms),
        }
    }

    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        let step = i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        self.ms.fetch_add(step, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.ms.load(Ordering::SeqCst)
    }
}

/// Milliseconds since the epoch as a UTC `xsd:dateTime`.
pub fn to_datetime(ms: i64) -> DateTime {
    let nanos = u32::try_from(ms.rem_euclid(1000) * 1_000_000).unwrap_or(0);
    DateTime::from_unix(ms.div_euclid(1000), nanos)
}

/// An `xsd:dateTime` as milliseconds since the epoch.
pub fn from_datetime(t: &DateTime) -> i64 {
    t.unix_seconds() * 1000 + i64::from(t.nanos / 1_000_000)
}
