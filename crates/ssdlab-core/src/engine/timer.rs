//! Cancellable wake-ups. The event queue cannot take an event back, so an event that may
//! become pointless (an idle check once a request arrives, a scheduler's idling window once
//! the awaited request comes) carries the version of its timer from when it was armed.
//! Cancelling bumps the version: events already queued then fire as stale and are ignored.
//! This is the one mechanism for every such wake-up in the simulator.

/// A versioned timer; cheap to copy into events as a `u32` token.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timer {
    version: u32,
}

impl Timer {
    /// The token to carry in an event armed now.
    #[inline]
    pub fn token(&self) -> u32 {
        self.version
    }

    /// Void every event armed so far.
    #[inline]
    pub fn cancel(&mut self) {
        self.version = self.version.wrapping_add(1);
    }

    /// Whether an event carrying `token` is still wanted.
    #[inline]
    pub fn is_current(&self, token: u32) -> bool {
        token == self.version
    }
}

#[cfg(test)]
mod tests {
    use super::Timer;

    #[test]
    fn cancel_voids_earlier_tokens_only() {
        let mut t = Timer::default();
        let a = t.token();
        let b = t.token();
        assert!(t.is_current(a) && t.is_current(b), "tokens armed in one window are all live");
        t.cancel();
        let c = t.token();
        assert!(!t.is_current(a) && !t.is_current(b));
        assert!(t.is_current(c));
    }
}
