//! The monotonic clock foreign-Lease expiry is measured on, injectable so tests need not sleep.

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, Instant},
};

/// A monotonic clock; foreign expiry is measured only on this, never on another node's timestamps.
pub trait Clock: Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The process's real monotonic clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that runs with real time plus an offset a test advances by hand.
///
/// It keeps running so timeouts inside the code under test still behave; [`ManualClock::advance`]
/// jumps it forward to simulate a Lease duration elapsing without sleeping through it.
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    offset: Arc<Mutex<Duration>>,
}

impl ManualClock {
    /// A clock that starts at real time.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock forward by `by` (for every clone).
    pub fn advance(&self, by: Duration) {
        let mut offset = self.offset.lock().unwrap_or_else(PoisonError::into_inner);
        *offset += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        let offset = *self.offset.lock().unwrap_or_else(PoisonError::into_inner);
        Instant::now() + offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_advances_every_clone() {
        let clock = ManualClock::new();
        let other = clock.clone();
        let before = clock.now();
        other.advance(Duration::from_secs(3600));
        assert!(clock.now().duration_since(before) >= Duration::from_secs(3600));
    }
}
