//! sendfile(2) to a client over the server's network: the call reads its range through the
//! page cache as a read does (read-ahead included), spends the network stack's CPU for its
//! packets on a core, then hands the bytes to the connection's flow
//! ([`crate::net::ServerNet`]) and returns as a blocking socket's call does: once its bytes
//! fit in the socket's send buffer (without one, once they are sent; a download's last call,
//! once everything is).
//! The thread's wait for the network is an interruptible sleep: not iowait, not in the load
//! average (a socket wait is TASK_INTERRUPTIBLE in sk_stream_wait_memory).

use super::*;
use crate::net::{ClientRef, FlowId, NetCounters, NetworkReport, NetworkSpec, SendWait, ServerNet};

/// The network a file layer sends over, with what is under way on it.
pub(super) struct Network {
    net: ServerNet,
    /// The client each job serves (by job index).
    clients: Vec<Option<ClientRef>>,
    /// The operation waiting on each flow, and whether for room in its buffer (else for its
    /// end).
    flows: FxHashMap<FlowId, (u32, SendWait)>,
    /// The time of the latest `FileEvent::Net` asked for, if it is still to come.
    armed: Option<Time>,
}

impl FileLayer {
    /// Give the layer the server's network; `clients` names the client each job serves.
    pub fn attach_network(&mut self, spec: &NetworkSpec, clients: Vec<Option<ClientRef>>, seed: u64, start: Time) -> Result<(), ConfigError> {
        let net = ServerNet::new(spec, seed, start)?;
        self.net = Some(Box::new(Network { net, clients, flows: FxHashMap::default(), armed: None }));
        Ok(())
    }

    /// What the network had sent by `t`, for a time-series sample (the run goes on as it
    /// would without it).
    pub fn network_counters(&self, t: Time) -> Option<NetCounters> {
        self.net.as_ref().map(|n| n.net.sent_by(t))
    }

    /// What the network did, at the run's end `end`.
    pub fn network_report(&mut self, end: Time) -> Option<NetworkReport> {
        self.net.as_mut().map(|n| n.net.report(end))
    }

    /// Operation `slot` (a send) has read its range: the network stack's CPU for it, then
    /// its flow. Nothing to send (past the end of the file): it is done.
    pub(super) fn transmit<E, U: FileUpper<E>>(&mut self, slot: u32, events: &mut EventQueue<E>, host: &mut U)
    where
        E: From<FileEvent> + Copy,
    {
        let now = events.now();
        self.io_waited(slot, now);
        let o = self.ops[slot as usize];
        let bytes = o.io.len.min(o.done.size.saturating_sub(o.io.offset));
        let net = self.net.as_ref().expect("validated: a send has a network");
        if bytes == 0 {
            return self.complete(slot, events, host);
        }
        let end = self.cpus.run(now, o.io.process, net.net.send_cpu_ns(bytes));
        self.ops[slot as usize].stage = Stage::NetCpu;
        events.schedule(end, E::from(FileEvent::Op(slot)));
    }

    /// Operation `slot`'s network CPU is done: its bytes go out.
    pub(super) fn start_flow<E, U: FileUpper<E>>(&mut self, slot: u32, events: &mut EventQueue<E>, host: &mut U)
    where
        E: From<FileEvent> + Copy,
    {
        let now = events.now();
        let o = self.ops[slot as usize];
        let bytes = o.io.len.min(o.done.size.saturating_sub(o.io.offset));
        let n = self.net.as_mut().expect("validated: a send has a network");
        let client = n.clients[o.io.process as usize].expect("validated: a sending job has a client");
        let last = o.io.offset + bytes >= o.done.size;
        let (flow, wait) = n.net.send(now, client, bytes, o.io.offset == 0, last).expect("a validated client and a positive window");
        self.ops[slot as usize].stage = Stage::Net;
        if wait == SendWait::Nothing {
            self.arm_network(events);
            return self.complete(slot, events, host);
        }
        n.flows.insert(flow, (slot, wait));
        self.arm_network(events);
    }

    /// The network's next completion is due: the sends done by now complete.
    pub(super) fn network_due<E, U: FileUpper<E>>(&mut self, events: &mut EventQueue<E>, host: &mut U)
    where
        E: From<FileEvent> + Copy,
    {
        let now = events.now();
        let Some(n) = self.net.as_mut() else { return };
        if n.armed.is_some_and(|t| t <= now) {
            n.armed = None;
        }
        let done = n.net.advance_to(now);
        // A flow ends with a sender waiting on it or none (its thread busy reading the next
        // part when its buffer ran dry); a mark is heard only by a sender waiting for room.
        let mut slots: Vec<u32> = done.iter().filter_map(|f| n.flows.remove(f).map(|(s, _)| s)).collect();
        for f in n.net.take_marks() {
            if n.flows.get(&f).is_some_and(|&(_, w)| w == SendWait::Room) {
                slots.push(n.flows.remove(&f).expect("just seen").0);
            }
        }
        for slot in slots {
            // The socket's wake comes from the ACKs' interrupt on the connection's port
            // (assumed: the port its packets leave by; balance-rr's: the thread stays).
            if self.cpus.pulls_wakes() {
                let process = self.ops[slot as usize].io.process;
                let n = self.net.as_ref().expect("a network");
                let port = n.clients[process as usize].and_then(|c| n.net.port_of(c));
                let waker = port.map(|p| self.nic_irq_core(p));
                self.cpus.woken(now, process, waker.map_or(Waker::Timer, Waker::Irq));
            }
            self.complete(slot, events, host);
        }
        self.arm_network(events);
    }

    /// Ask for a `FileEvent::Net` at the network's next completion, unless one comes by then.
    fn arm_network<E: From<FileEvent> + Copy>(&mut self, events: &mut EventQueue<E>) {
        let Some(n) = self.net.as_mut() else { return };
        let Some(due) = n.net.next_due() else { return };
        let due = due.max(events.now());
        if n.armed.is_none_or(|t| t > due) {
            n.armed = Some(due);
            events.schedule(due, E::from(FileEvent::Net));
        }
    }
}
