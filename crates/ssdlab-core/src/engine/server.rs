//! FIFO servers by reservation. In an event-driven run requests reach a resource in time
//! order, so a single FIFO server needs no queue: a request arriving at `now` starts at
//! `max(now, busy_until)`. The reserved future is always one contiguous stretch, which lets
//! busy time be read exactly at any instant.

use super::Time;

/// One server (a die, a channel, a link direction) served first come, first served.
#[derive(Clone, Debug, Default)]
pub struct FifoServer {
    busy_until: Time,
    busy_total: Time,
    served: u64,
}

impl FifoServer {
    /// Reserve `service` ns for a request arriving at `now`; returns its finish time.
    #[inline]
    pub fn reserve(&mut self, now: Time, service: Time) -> Time {
        let start = self.busy_until.max(now);
        self.busy_until = start + service;
        self.busy_total += service;
        self.served += 1;
        self.busy_until
    }

    /// Time at which the server next becomes free.
    #[inline]
    pub fn busy_until(&self) -> Time {
        self.busy_until
    }

    /// Busy time within `[0, at]`. Only the reserved future is known exactly, so `at` must
    /// not lie before the start of the current busy stretch's last reservation (the time of
    /// the last event that used the server, in an event-driven run); asking about an earlier
    /// time is a caller's bug, reported as such in every build.
    pub fn busy_by(&self, at: Time) -> Time {
        let ahead = self.busy_until.saturating_sub(at);
        assert!(
            ahead <= self.busy_total,
            "busy time asked for at {at} ns, before reservations that run to {} ns",
            self.busy_until
        );
        self.busy_total - ahead
    }

    pub fn served(&self) -> u64 {
        self.served
    }
}

/// `k` identical servers sharing one FIFO queue (e.g. controller cores).
#[derive(Clone, Debug)]
pub struct MultiServer {
    servers: Vec<FifoServer>,
}

impl MultiServer {
    pub fn new(k: usize) -> Self {
        MultiServer { servers: vec![FifoServer::default(); k.max(1)] }
    }

    /// FIFO across `k` servers: the request takes the server that frees first.
    #[inline]
    pub fn reserve(&mut self, now: Time, service: Time) -> Time {
        let idx = (0..self.servers.len())
            .min_by_key(|&i| self.servers[i].busy_until())
            .unwrap_or(0);
        self.servers[idx].reserve(now, service)
    }

    pub fn busy_by(&self, at: Time) -> Time {
        self.servers.iter().map(|s| s.busy_by(at)).sum()
    }

    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// When the last of the servers is free.
    pub fn busy_until(&self) -> Time {
        self.servers.iter().map(|s| s.busy_until()).max().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_queues_back_to_back_and_tracks_busy_time() {
        let mut s = FifoServer::default();
        assert_eq!(s.reserve(0, 10), 10);
        assert_eq!(s.reserve(5, 10), 20); // waits for the first
        assert_eq!(s.reserve(30, 10), 40); // idle gap 20..30
        assert_eq!(s.busy_by(35), 25);
        assert_eq!(s.busy_by(40), 30);
    }

    #[test]
    fn multiserver_uses_the_first_free_server() {
        let mut m = MultiServer::new(2);
        assert_eq!(m.reserve(0, 10), 10);
        assert_eq!(m.reserve(0, 10), 10);
        assert_eq!(m.reserve(0, 10), 20);
    }
}
