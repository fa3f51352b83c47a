//! A server's side of the network: its NIC (one port, or ports bonded), the clients that
//! download from it (classes of clients, each client on a line of its own behind a round
//! trip), and the host's CPU cost of sending. Each send is a flow over the bond's slave that
//! the client's connection hashes to and over the client's line, at most TCP's window per
//! round trip ([`super::window_cap`]); flows share what they cross max-min fairly.
//!
//! What is left out, and why it is small for a download server: TCP's slow start (each client
//! keeps one long transfer going, so it spends almost all of it in congestion avoidance),
//! losses (the window cap stands for the steady state they leave), and the clients' requests
//! and the ACKs on the receive side of the server's NIC (under 5 % of the bytes each way).

use rand::{Rng as _, SeedableRng};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::rng::{derive_seed, Rng};
use crate::engine::{Time, NS_PER_S};
use crate::error::ConfigError;

use super::bond::{AttachedBond, BondConfig, FlowKey, Placement};
use super::flow::{window_cap, FlowId, FlowNet, ResourceId};

/// The host's CPU time for sending, per call, per packet and per byte.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetCosts {
    /// A send call (sendfile or write on a socket) and its socket bookkeeping, ns (assumed:
    /// 2 µs, as a file system call's entry and exit plus the socket lock).
    pub per_call_ns: Time,
    /// Each packet sent: TCP/IP output, the driver's descriptor, its transmit-completion
    /// interrupt and the ACK received for it, ns. Default 2,500 ns: about 5,000 cycles of a
    /// 2 GHz core of 2008, within the 4,000–10,000 cycles per packet Foong et al. measured
    /// for the TCP path ("TCP performance re-visited", ISPASS 2003; their "1 GHz per 1 Gb/s"
    /// rule). A NIC that offloads TCP (a TOE) takes this off the host: give it 0 or what its
    /// driver still does.
    pub per_packet_ns: Time,
    /// Each byte sent when the server copies it into the socket (read + write): a memcpy,
    /// ns (default 0.25: 1 µs per 4 KiB page, the file layer's page copy). sendfile(2) sends
    /// from the page cache without it.
    pub copy_ns_per_byte: f64,
}

impl Default for NetCosts {
    fn default() -> Self {
        NetCosts { per_call_ns: 2_000, per_packet_ns: 2_500, copy_ns_per_byte: 0.25 }
    }
}

/// A class of clients: how many, on what line, how far away.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientClass {
    pub name: String,
    pub count: u32,
    /// Each client's line towards it (its downstream), bytes of TCP payload per second.
    pub line_bytes_per_s: f64,
    /// Round trip between the server and the client, ns.
    pub rtt_ns: Time,
    /// TCP's window for the connection (the smaller of the client's receive window and the
    /// sender's congestion window in steady state), bytes.
    pub window_bytes: u64,
}

/// The server's network: its NIC (a bond of one link for a single port), how it sends, and
/// its clients.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    pub nic: BondConfig,
    #[serde(default)]
    pub costs: NetCosts,
    /// sendfile(2): bytes go from the page cache to the socket with no copy (Apache's
    /// EnableSendfile, lighttpd's default); false: read into a buffer, then write.
    #[serde(default = "yes")]
    pub sendfile: bool,
    pub clients: Vec<ClientClass>,
    /// Each connection's socket send buffer, in windows of its class (0: none, a send call
    /// returns once its bytes are delivered). With a buffer, a blocking call returns once
    /// what is still to go fits in it, so the connection keeps sending while its thread
    /// reads the next part; a file's last call waits for its bytes to be delivered.
    #[serde(default)]
    pub send_buffer_windows: f64,
}

/// What a sender waits for after a send call ([`ServerNet::send`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendWait {
    /// Nothing: the socket's buffer took it all.
    Nothing,
    /// The flow's mark: its buffer has room again ([`FlowNet::take_marks`]).
    Room,
    /// The flow's end: every byte delivered.
    Delivered,
}

fn yes() -> bool {
    true
}

/// A client: its class and its number in it.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientRef {
    pub class: u32,
    pub index: u32,
}

impl NetworkSpec {
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.nic.validate().map_err(|e| ConfigError::new(&format!("network.nic.{}", e.key), e.message))?;
        if self.clients.is_empty() {
            return Err(ConfigError::new("network.clients", "a server's network needs at least one class of clients".into()));
        }
        if !(self.send_buffer_windows >= 0.0 && self.send_buffer_windows <= 1e6) {
            return Err(ConfigError::new("network.send_buffer_windows", format!("must be from 0 to a million windows, got {}", self.send_buffer_windows)));
        }
        let c = &self.costs;
        if !(c.copy_ns_per_byte >= 0.0 && c.copy_ns_per_byte.is_finite()) {
            return Err(ConfigError::new("network.costs.copy_ns_per_byte", format!("must be >= 0, got {}", c.copy_ns_per_byte)));
        }
        for (i, k) in self.clients.iter().enumerate() {
            let key = |f: &str| format!("network.clients.{i}.{f}");
            if k.name.is_empty() {
                return Err(ConfigError::new(&key("name"), "a class of clients needs a name".into()));
            }
            if self.clients[..i].iter().any(|o| o.name == k.name) {
                return Err(ConfigError::new(&key("name"), format!("class '{}' is named twice", k.name)));
            }
            if k.count == 0 {
                return Err(ConfigError::new(&key("count"), format!("class '{}' needs at least one client", k.name)));
            }
            if !(k.line_bytes_per_s > 0.0 && k.line_bytes_per_s.is_finite()) {
                return Err(ConfigError::new(&key("line_bytes_per_s"), format!("class '{}': a line needs a positive rate, got {}", k.name, k.line_bytes_per_s)));
            }
            if k.window_bytes == 0 {
                return Err(ConfigError::new(&key("window_bytes"), format!("class '{}': TCP's window must be positive", k.name)));
            }
        }
        Ok(())
    }

    /// Whether `client` names a client of these classes.
    pub fn check_client(&self, client: ClientRef) -> Result<(), String> {
        match self.clients.get(client.class as usize) {
            None => Err(format!("class {} does not exist ({} classes)", client.class, self.clients.len())),
            Some(k) if client.index >= k.count => Err(format!("client {} of class '{}', which has {}", client.index, k.name, k.count)),
            Some(_) => Ok(()),
        }
    }
}

/// The first port of Linux's ephemeral range (net.ipv4.ip_local_port_range, 32768–60999).
const EPHEMERAL_FIRST: u16 = 32_768;
const EPHEMERAL_LAST: u16 = 60_999;
/// The server's listening port (HTTP).
const SERVER_PORT: u16 = 80;

/// The network at run time: the flows, the server's slaves and the clients' lines.
pub struct ServerNet {
    spec: NetworkSpec,
    flows: FlowNet,
    bond: AttachedBond,
    /// Per class, per client: its line, the source port of its current connection, and the
    /// flow under way on it (with a send buffer, one flow carries call after call).
    lines: Vec<Vec<ResourceId>>,
    ports: Vec<Vec<u16>>,
    sending: Vec<Vec<Option<FlowId>>>,
    rng: Rng,
    /// Flows done but not yet handed to the caller (found while it started a flow).
    finished: Vec<FlowId>,
    /// Send calls, the flows they started, packets sent and the CPU they cost.
    calls: u64,
    flows_started: u64,
    packets: u64,
    cpu_ns: u128,
    start: Time,
}

impl ServerNet {
    /// The network of `spec` from `start`; `seed` draws the clients' ports.
    pub fn new(spec: &NetworkSpec, seed: u64, start: Time) -> Result<ServerNet, ConfigError> {
        spec.validate()?;
        let mut flows = FlowNet::new();
        let bond = spec.nic.attach(&mut flows, "nic")?;
        let mut rng = Rng::seed_from_u64(derive_seed(seed, "net-ports", 0));
        let mut lines = Vec::with_capacity(spec.clients.len());
        let mut ports = Vec::with_capacity(spec.clients.len());
        for k in &spec.clients {
            let mut l = Vec::with_capacity(k.count as usize);
            for i in 0..k.count {
                l.push(flows.add_resource(&format!("{} line {i}", k.name), k.line_bytes_per_s)?);
            }
            lines.push(l);
            ports.push((0..k.count).map(|_| rng.gen_range(EPHEMERAL_FIRST..=EPHEMERAL_LAST)).collect());
        }
        flows.advance_to(start);
        let sending = spec.clients.iter().map(|k| vec![None; k.count as usize]).collect();
        Ok(ServerNet { spec: spec.clone(), flows, bond, lines, ports, sending, rng, finished: Vec::new(), calls: 0, flows_started: 0, packets: 0, cpu_ns: 0, start })
    }

    /// The host's CPU time to send `bytes` in one call: per call, per packet (segments of the
    /// NIC's MSS) and, without sendfile, per byte copied.
    pub fn send_cpu_ns(&self, bytes: u64) -> Time {
        let c = &self.spec.costs;
        let packets = self.spec.nic.links[0].packets(bytes);
        let copy = if self.spec.sendfile { 0.0 } else { c.copy_ns_per_byte * bytes as f64 };
        c.per_call_ns + packets * c.per_packet_ns + copy.round() as Time
    }

    /// What the packets of `client`'s connection carry to the bond's hash: the server's and
    /// the gateway's MACs (every client is behind a router), the server's address and port,
    /// the client's address (10.class.index) and the connection's source port.
    fn key(&self, client: ClientRef) -> FlowKey {
        let i = client.index;
        FlowKey {
            src_mac: [0x00, 0x1b, 0x21, 0x00, 0x00, 0x01],
            dst_mac: [0x00, 0x1b, 0x21, 0x00, 0x00, 0xfe],
            src_ip: [192, 168, 0, 1],
            dst_ip: [10, client.class as u8, (i >> 8) as u8, i as u8],
            protocol: 6,
            src_port: SERVER_PORT,
            dst_port: self.ports[client.class as usize][client.index as usize],
        }
    }

    /// The bond's port `client`'s connection leaves by (None: balance-rr stripes it over all).
    pub fn port_of(&self, client: ClientRef) -> Option<usize> {
        match self.spec.nic.placement(&self.key(client)) {
            Placement::Slave(i) => Some(i),
            Placement::Striped => None,
        }
    }

    /// `client` sends `bytes` from `now` (`new_connection`: a new download, on a new
    /// connection with a port of its own, as each HTTP download of a file is; `last`: the
    /// download's last call). Returns the flow carrying them and what the call waits for:
    /// without a send buffer, their delivery; with one, room in the buffer (nothing if it
    /// has room now), or for a last call the delivery of all its connection has sent.
    pub fn send(&mut self, now: Time, client: ClientRef, bytes: u64, new_connection: bool, last: bool) -> Result<(FlowId, SendWait), ConfigError> {
        self.advance(now);
        let (c, i) = (client.class as usize, client.index as usize);
        if new_connection {
            self.ports[c][i] = self.rng.gen_range(EPHEMERAL_FIRST..=EPHEMERAL_LAST);
        }
        self.calls += 1;
        self.packets += self.spec.nic.links[0].packets(bytes);
        self.cpu_ns += self.send_cpu_ns(bytes) as u128;
        let k = &self.spec.clients[c];
        let buffer = self.spec.send_buffer_windows * k.window_bytes as f64;
        // A connection still sending what earlier calls queued takes these bytes behind it.
        let flow = match self.sending[c][i] {
            Some(f) if !new_connection && buffer > 0.0 && self.flows.extend(f, bytes) => f,
            _ => {
                let (slave, bond_cap) = self.bond.route(&self.key(client));
                let cap = window_cap(k.window_bytes, k.rtt_ns).min(bond_cap);
                let line = self.lines[c][i];
                let f = self.flows.add_flow(&[slave, line], bytes, cap)?;
                self.flows_started += 1;
                self.sending[c][i] = Some(f);
                f
            }
        };
        let wait = if buffer <= 0.0 || last {
            SendWait::Delivered
        } else if self.flows.set_mark(flow, buffer) {
            SendWait::Room
        } else {
            SendWait::Nothing
        };
        Ok((flow, wait))
    }

    /// The flows whose marks were reached since last asked ([`SendWait::Room`]).
    pub fn take_marks(&mut self) -> Vec<FlowId> {
        self.flows.take_marks()
    }

    fn advance(&mut self, t: Time) {
        let done = self.flows.advance_to(t);
        self.finished.extend(done);
    }

    /// When the next flow is done (now, if one already is and was not handed over).
    pub fn next_due(&mut self) -> Option<Time> {
        if !self.finished.is_empty() || self.flows.marks_pending() {
            return Some(self.flows.now());
        }
        self.flows.next_completion()
    }

    /// Move to `t`: the flows done by then, in the order they finished.
    pub fn advance_to(&mut self, t: Time) -> Vec<FlowId> {
        self.advance(t);
        std::mem::take(&mut self.finished)
    }

    /// What the network had sent by `t` (not before its present), as a time series' sample
    /// takes it: worked out on a copy moved to `t`, so that taking samples leaves the run's
    /// own arithmetic (each flow's bytes left, moved at the times the run moves them)
    /// exactly as it is without them.
    pub fn sent_by(&self, t: Time) -> NetCounters {
        let mut flows = self.flows.clone();
        flows.advance_to(t.max(flows.now()));
        let usage = flows.usage();
        NetCounters {
            nic_bytes: self.bond.resources().iter().map(|r| usage[r.0].bytes).collect(),
            class_bytes: self.lines.iter().map(|lines| lines.iter().map(|r| usage[r.0].bytes).sum()).collect(),
        }
    }

    /// What the network did from the start to `end`.
    pub fn report(&mut self, end: Time) -> NetworkReport {
        self.advance(end.max(self.flows.now()));
        let elapsed = end.saturating_sub(self.start).max(1) as f64 / NS_PER_S as f64;
        let usage = self.flows.usage();
        let share = |r: ResourceId| {
            let u = &usage[r.0];
            NetResource {
                name: u.name.clone(),
                capacity_bytes_per_s: u.capacity_bytes_per_s,
                bytes: u.bytes,
                utilisation: u.bytes / (u.capacity_bytes_per_s * elapsed),
                saturated_share: u.saturated_ns as f64 / (elapsed * NS_PER_S as f64),
            }
        };
        let nic: Vec<NetResource> = self.bond.resources().iter().map(|&r| share(r)).collect();
        let classes = self
            .spec
            .clients
            .iter()
            .zip(&self.lines)
            .map(|(k, lines)| {
                let per: Vec<NetResource> = lines.iter().map(|&r| share(r)).collect();
                let bytes: f64 = per.iter().map(|r| r.bytes).sum();
                let rates: Vec<f64> = per.iter().map(|r| r.bytes / elapsed).collect();
                ClientClassReport {
                    name: k.name.clone(),
                    count: k.count,
                    line_bytes_per_s: k.line_bytes_per_s,
                    window_cap_bytes_per_s: window_cap(k.window_bytes, k.rtt_ns).min(f64::MAX),
                    bytes,
                    mean_bytes_per_s: bytes / elapsed / k.count as f64,
                    min_bytes_per_s: rates.iter().copied().fold(f64::INFINITY, f64::min),
                    max_bytes_per_s: rates.iter().copied().fold(0.0, f64::max),
                    lines_saturated_share: per.iter().map(|r| r.saturated_share).sum::<f64>() / per.len() as f64,
                }
            })
            .collect();
        let sent: f64 = nic.iter().map(|r| r.bytes).sum();
        NetworkReport {
            elapsed_ns: end.saturating_sub(self.start),
            bytes_sent: sent,
            bytes_per_s: sent / elapsed,
            calls: self.calls,
            flows: self.flows_started,
            packets: self.packets,
            cpu_ns: self.cpu_ns as u64,
            nic,
            classes,
        }
    }
}

/// One resource's use over the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NetResource {
    pub name: String,
    pub capacity_bytes_per_s: f64,
    pub bytes: f64,
    /// Bytes carried over what its capacity could have carried.
    pub utilisation: f64,
    /// Share of the run it was saturated (its flows' rates summed to its capacity).
    pub saturated_share: f64,
}

/// One class of clients over the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClientClassReport {
    pub name: String,
    pub count: u32,
    pub line_bytes_per_s: f64,
    /// What TCP's window allows one connection over its round trip.
    pub window_cap_bytes_per_s: f64,
    /// Bytes its clients received.
    pub bytes: f64,
    /// Per client: the mean, and the slowest's and the fastest's rate, over the whole run.
    pub mean_bytes_per_s: f64,
    pub min_bytes_per_s: f64,
    pub max_bytes_per_s: f64,
    /// Mean share of the run a client's line was full.
    pub lines_saturated_share: f64,
}

/// A server's network at a time-series sample: the TCP payload it had sent so far, per port
/// of its NIC (as [`NetworkReport::nic`]) and per class of clients (as
/// [`NetworkReport::classes`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NetCounters {
    pub nic_bytes: Vec<f64>,
    pub class_bytes: Vec<f64>,
}

/// What a server's network did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NetworkReport {
    pub elapsed_ns: Time,
    /// TCP payload sent, and its rate over the run.
    pub bytes_sent: f64,
    pub bytes_per_s: f64,
    pub calls: u64,
    /// Flows started: one a call, or with a send buffer one a stretch of calls that kept a
    /// connection sending (the flow model's cost goes with these).
    pub flows: u64,
    pub packets: u64,
    /// The host's CPU time for sending.
    pub cpu_ns: u64,
    /// The NIC's ports (a bond's slaves; balance-rr's pool).
    pub nic: Vec<NetResource>,
    pub classes: Vec<ClientClassReport>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{BondMode, HashPolicy, LinkConfig};

    fn spec(links: usize, mode: BondMode) -> NetworkSpec {
        NetworkSpec {
            nic: BondConfig::new(mode, HashPolicy::Layer34, links, LinkConfig::gbe(1)),
            costs: NetCosts::default(),
            sendfile: true,
            clients: vec![ClientClass { name: "fibre".into(), count: 4, line_bytes_per_s: 60e6, rtt_ns: 10_000_000, window_bytes: 4 << 20 }],
            send_buffer_windows: 0.0,
        }
    }

    /// A sample between events sees what the flows moved by then, per port and per class,
    /// and leaves the network as it was: its flows finish when they would have.
    #[test]
    fn what_was_sent_by_a_time_is_read_without_moving_the_network() {
        let mut s = spec(2, BondMode::ActiveBackup);
        s.clients[0].line_bytes_per_s = 1e6;
        let mut net = ServerNet::new(&s, 1, 0).unwrap();
        net.send(0, ClientRef { class: 0, index: 0 }, 10_000_000, true, false).unwrap();
        net.send(0, ClientRef { class: 0, index: 1 }, 5_000_000, true, false).unwrap();
        let due = net.next_due().unwrap();
        let mut twin = ServerNet::new(&s, 1, 0).unwrap();
        twin.send(0, ClientRef { class: 0, index: 0 }, 10_000_000, true, false).unwrap();
        twin.send(0, ClientRef { class: 0, index: 1 }, 5_000_000, true, false).unwrap();
        assert_eq!(twin.next_due(), Some(due));
        // Two lines of 1 MB/s through the active port: 2 MB a second, all of it one class's.
        let at = net.sent_by(2 * NS_PER_S);
        assert!((at.nic_bytes[0] - 4e6).abs() < 1.0 && at.nic_bytes[1] == 0.0, "{at:?}");
        assert_eq!(at.class_bytes.len(), 1);
        assert!((at.class_bytes[0] - 4e6).abs() < 1.0, "{at:?}");
        // Past the smaller flow's end it counts that flow whole.
        let later = net.sent_by(7 * NS_PER_S);
        assert!((later.class_bytes[0] - 12e6).abs() < 1.0, "{later:?}");
        // The network itself did not move: its flows end exactly as its twin's, unsampled.
        assert_eq!(net.next_due(), Some(due));
        let (a, b) = (net.advance_to(due), twin.advance_to(due));
        assert_eq!(a, b);
        assert_eq!(net.report(due + NS_PER_S), twin.report(due + NS_PER_S));
    }

    /// A client's flow is capped by its line, and clients share a slave max-min fairly: four
    /// 60 MB/s clients on one 1 GbE port get a quarter of its goodput each.
    #[test]
    fn clients_share_the_port_and_lines_cap_them() {
        let mut net = ServerNet::new(&spec(2, BondMode::ActiveBackup), 1, 0).unwrap();
        let goodput = LinkConfig::gbe(1).goodput_bytes_per_s();
        let mut ids = Vec::new();
        for i in 0..4 {
            ids.push(net.send(0, ClientRef { class: 0, index: i }, 10_000_000, true, false).unwrap().0);
        }
        let due = net.next_due().unwrap();
        let expect = 10e6 / (goodput / 4.0) * 1e9;
        assert!((due as f64 - expect).abs() < 2.0, "{due} vs {expect}");
        let done = net.advance_to(due);
        assert_eq!(done.len(), 4);
        let r = net.report(due);
        // Bytes conserved: what the NIC sent is what the clients received.
        assert!((r.bytes_sent - 40e6).abs() < 1e-3);
        assert!((r.classes[0].bytes - 40e6).abs() < 1e-3);
        assert_eq!(r.nic.len(), 2);
        assert!(r.nic[0].saturated_share > 0.999 && r.nic[1].bytes == 0.0, "{:?}", r.nic);
    }

    /// One client alone: its line (60 MB/s) bounds it, not the port; the window cap bounds a
    /// far one (64 KiB over 100 ms: 655 kB/s).
    #[test]
    fn a_flow_runs_at_its_narrowest_limit() {
        let mut s = spec(2, BondMode::Ieee8023ad);
        s.clients.push(ClientClass { name: "far".into(), count: 1, line_bytes_per_s: 60e6, rtt_ns: 100_000_000, window_bytes: 65_536 });
        let mut net = ServerNet::new(&s, 1, 0).unwrap();
        net.send(0, ClientRef { class: 0, index: 0 }, 60_000_000, true, false).unwrap();
        assert_eq!(net.next_due(), Some(NS_PER_S));
        let mut net = ServerNet::new(&s, 1, 0).unwrap();
        net.send(0, ClientRef { class: 1, index: 0 }, 655_360, true, false).unwrap();
        assert_eq!(net.next_due(), Some(NS_PER_S));
    }

    /// With a send buffer of two windows (two 64 KiB calls), a connection's calls share one
    /// flow: the first two fit and return at once, the third waits for room, a last call
    /// for delivery; a new connection is a new flow.
    #[test]
    fn calls_fill_a_send_buffer_and_share_one_flow() {
        let mut s = spec(2, BondMode::Ieee8023ad);
        s.clients[0].window_bytes = 65_536;
        s.send_buffer_windows = 2.0;
        let mut net = ServerNet::new(&s, 1, 0).unwrap();
        let c = ClientRef { class: 0, index: 0 };
        let (f, w) = net.send(0, c, 65_536, true, false).unwrap();
        assert_eq!(w, SendWait::Nothing);
        assert_eq!(net.send(0, c, 65_536, false, false).unwrap(), (f, SendWait::Nothing));
        assert_eq!(net.send(0, c, 65_536, false, false).unwrap(), (f, SendWait::Room));
        // The room comes when 128 KiB are left: 64 KiB at the window's 6.55 MB/s.
        let due = net.next_due().unwrap();
        let expect = 65_536.0 / window_cap(65_536, 10_000_000) * 1e9;
        assert!((due as f64 - expect).abs() < 2.0, "{due} vs {expect}");
        assert!(net.advance_to(due).is_empty());
        assert_eq!(net.take_marks(), vec![f]);
        assert_eq!(net.send(due, c, 65_536, false, true).unwrap(), (f, SendWait::Delivered));
        let end = net.next_due().unwrap();
        assert_eq!(net.advance_to(end), vec![f]);
        let (g, _) = net.send(end, c, 65_536, true, false).unwrap();
        assert_ne!(g, f, "a new download is a new connection");
        let r = net.report(end);
        assert!((r.bytes_sent - 4.0 * 65_536.0).abs() < 1e-6, "{}", r.bytes_sent);
        // Without a buffer every call waits for its bytes.
        s.send_buffer_windows = 0.0;
        let mut net = ServerNet::new(&s, 1, 0).unwrap();
        assert_eq!(net.send(0, c, 65_536, true, false).unwrap().1, SendWait::Delivered);
    }

    #[test]
    fn cpu_per_send_counts_packets_and_copies() {
        let mut s = spec(2, BondMode::Ieee8023ad);
        let net = ServerNet::new(&s, 1, 0).unwrap();
        // 64 KiB at an MSS of 1448: 46 packets.
        assert_eq!(net.send_cpu_ns(65_536), 2_000 + 46 * 2_500);
        s.sendfile = false;
        let net = ServerNet::new(&s, 1, 0).unwrap();
        assert_eq!(net.send_cpu_ns(65_536), 2_000 + 46 * 2_500 + 16_384);
    }

    #[test]
    fn bad_networks_are_one_line_naming_the_key() {
        let mut s = spec(2, BondMode::Ieee8023ad);
        s.clients[0].line_bytes_per_s = 0.0;
        assert_eq!(s.validate().unwrap_err().key, "network.clients.0.line_bytes_per_s");
        let mut s = spec(1, BondMode::Ieee8023ad);
        assert_eq!(s.validate().unwrap_err().key, "network.nic.links");
        s = spec(2, BondMode::Ieee8023ad);
        s.clients[0].count = 0;
        assert_eq!(s.validate().unwrap_err().key, "network.clients.0.count");
        let mut s = spec(2, BondMode::Ieee8023ad);
        s.send_buffer_windows = -1.0;
        assert_eq!(s.validate().unwrap_err().key, "network.send_buffer_windows");
        s.send_buffer_windows = f64::NAN;
        assert_eq!(s.validate().unwrap_err().key, "network.send_buffer_windows");
        let s = spec(2, BondMode::Ieee8023ad);
        assert!(s.check_client(ClientRef { class: 0, index: 4 }).unwrap_err().contains("has 4"));
        assert!(s.check_client(ClientRef { class: 1, index: 0 }).is_err());
    }
}
