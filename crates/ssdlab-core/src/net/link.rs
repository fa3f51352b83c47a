//! A NIC port and its Ethernet link: the line rate, and the share of it a TCP stream's payload
//! gets once every segment is framed.
//!
//! A full-sized TCP segment on the wire is the IP packet (MTU bytes: IPv4 header, TCP header
//! with its options, payload) inside an Ethernet frame (header and FCS), preceded by the
//! preamble and start-of-frame delimiter and followed by the inter-frame gap. At MTU 1500 with
//! TCP timestamps that is 1448 payload bytes per 1538 bytes of line time: 94.15 % of the line
//! rate. Frames shorter than Ethernet's minimum are padded to it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::{Time, NS_PER_S};
use crate::error::ConfigError;

/// Preamble (7 bytes) and start-of-frame delimiter (1 byte) before every frame (IEEE 802.3,
/// clause 3.2.1–3.2.2).
pub const PREAMBLE_SFD_BYTES: u64 = 8;
/// MAC header: destination and source addresses and the EtherType (IEEE 802.3, clause 3.2.3–3.2.6).
pub const ETH_HEADER_BYTES: u64 = 14;
/// An IEEE 802.1Q VLAN tag, when the port tags its frames.
pub const VLAN_TAG_BYTES: u64 = 4;
/// Frame check sequence (IEEE 802.3, clause 3.2.9).
pub const FCS_BYTES: u64 = 4;
/// Inter-frame gap: 96 bit times (IEEE 802.3, clause 4.4.2).
pub const IFG_BYTES: u64 = 12;
/// Smallest frame, header to FCS: 512 bits (IEEE 802.3, clause 4.4.2, minFrameSize).
pub const MIN_FRAME_BYTES: u64 = 64;
/// IPv4 header without options (RFC 791).
pub const IPV4_HEADER_BYTES: u64 = 20;
/// TCP header without options (RFC 793).
pub const TCP_HEADER_BYTES: u64 = 20;
/// The timestamps option (RFC 7323, §3: 10 bytes), padded to a 4-byte boundary by two NOPs
/// as Linux sends it on every segment once negotiated.
pub const TCP_TIMESTAMPS_BYTES: u64 = 12;
/// Ethernet's standard MTU (IEEE 802.3's 1500-byte maximum payload).
pub const STANDARD_MTU: u32 = 1500;
/// Smallest MTU an IPv4 host must accept (RFC 791: 68 octets).
pub const MIN_MTU: u32 = 68;
/// Largest IPv4 packet (RFC 791's 16-bit total length).
pub const MAX_MTU: u32 = 65_535;

/// One port's link: its line rate and how TCP segments are framed on it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// Line rate, bits per second (1 GbE: 1000000000; 10 GbE: 10000000000).
    pub rate_bps: u64,
    /// IP MTU, bytes: 1500 standard, 9000 for jumbo frames.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// Whether segments carry the TCP timestamps option (Linux's default, net.ipv4.tcp_timestamps=1).
    #[serde(default = "default_true")]
    pub tcp_timestamps: bool,
    /// Whether frames carry an 802.1Q VLAN tag.
    #[serde(default)]
    pub vlan_tag: bool,
}

fn default_mtu() -> u32 {
    STANDARD_MTU
}

fn default_true() -> bool {
    true
}

impl LinkConfig {
    /// A port of `rate_bps` with the standard MTU and timestamps on.
    pub fn new(rate_bps: u64) -> Self {
        LinkConfig { rate_bps, mtu: STANDARD_MTU, tcp_timestamps: true, vlan_tag: false }
    }

    /// An `n` gigabit-per-second Ethernet port (1 GbE, 10 GbE, ...).
    pub fn gbe(n: u64) -> Self {
        Self::new(n * 1_000_000_000)
    }

    /// The same port with another MTU.
    pub fn with_mtu(mut self, mtu: u32) -> Self {
        self.mtu = mtu;
        self
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.rate_bps == 0 {
            return Err(ConfigError::new("rate_bps", "must be a positive line rate in bits per second, got 0".into()));
        }
        if !(MIN_MTU..=MAX_MTU).contains(&self.mtu) || (self.mtu as u64) <= self.ip_tcp_header_bytes() {
            return Err(ConfigError::new(
                "mtu",
                format!("must be between {MIN_MTU} and {MAX_MTU} bytes and leave room for the {} bytes of IP and TCP headers, got {}", self.ip_tcp_header_bytes(), self.mtu),
            ));
        }
        Ok(())
    }

    /// IPv4 and TCP headers (with the timestamps option if on) in every segment, bytes.
    pub fn ip_tcp_header_bytes(&self) -> u64 {
        IPV4_HEADER_BYTES + TCP_HEADER_BYTES + if self.tcp_timestamps { TCP_TIMESTAMPS_BYTES } else { 0 }
    }

    /// Line bytes around every IP packet: preamble and SFD, MAC header (and tag), FCS, gap.
    pub fn framing_bytes(&self) -> u64 {
        PREAMBLE_SFD_BYTES + ETH_HEADER_BYTES + if self.vlan_tag { VLAN_TAG_BYTES } else { 0 } + FCS_BYTES + IFG_BYTES
    }

    /// TCP payload per full segment (the MSS the connection uses), bytes.
    pub fn mss(&self) -> u64 {
        self.mtu as u64 - self.ip_tcp_header_bytes()
    }

    /// Line bytes one IP packet of `ip_bytes` occupies, padded to the minimum frame.
    pub fn wire_bytes_of_packet(&self, ip_bytes: u64) -> u64 {
        let mac = ETH_HEADER_BYTES + if self.vlan_tag { VLAN_TAG_BYTES } else { 0 };
        let frame = (mac + ip_bytes + FCS_BYTES).max(MIN_FRAME_BYTES);
        PREAMBLE_SFD_BYTES + frame + IFG_BYTES
    }

    /// Line bytes of a full-sized segment: MTU plus framing (1538 at MTU 1500).
    pub fn wire_bytes_per_full_segment(&self) -> u64 {
        self.wire_bytes_of_packet(self.mtu as u64)
    }

    /// Share of the line rate that is TCP payload when every segment is full.
    pub fn efficiency(&self) -> f64 {
        self.mss() as f64 / self.wire_bytes_per_full_segment() as f64
    }

    /// Line rate, bytes per second.
    pub fn line_bytes_per_s(&self) -> f64 {
        self.rate_bps as f64 / 8.0
    }

    /// TCP payload a stream of full segments moves per second, bytes: the capacity this port
    /// offers the flow model.
    pub fn goodput_bytes_per_s(&self) -> f64 {
        self.line_bytes_per_s() * self.efficiency()
    }

    /// Segments (packets) that carry `payload` bytes of a TCP stream: full segments and one
    /// partly filled one. A host charges its per-packet CPU costs on this count.
    pub fn packets(&self, payload: u64) -> u64 {
        payload.div_ceil(self.mss())
    }

    /// Line bytes of `payload` bytes of a TCP stream, segmented as [`packets`](Self::packets) does.
    pub fn wire_bytes(&self, payload: u64) -> u64 {
        let mss = self.mss();
        let full = payload / mss;
        let rest = payload % mss;
        let mut wire = full * self.wire_bytes_per_full_segment();
        if rest > 0 {
            wire += self.wire_bytes_of_packet(rest + self.ip_tcp_header_bytes());
        }
        wire
    }

    /// Time on the line for `payload` bytes of a TCP stream alone on the port, ns (rounded up).
    pub fn wire_ns(&self, payload: u64) -> Time {
        let bits = self.wire_bytes(payload) as u128 * 8;
        (bits * NS_PER_S as u128).div_ceil(self.rate_bps as u128) as Time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_segment_at_mtu_1500_with_timestamps_is_1448_of_1538() {
        let l = LinkConfig::gbe(1);
        assert_eq!(l.mss(), 1448);
        assert_eq!(l.wire_bytes_per_full_segment(), 1538);
        // A pure ACK with timestamps (52 bytes of IP) is a 70-byte frame, 90 line bytes; without
        // them (40 bytes) it pads to the 64-byte minimum frame, 84 line bytes.
        assert_eq!(l.wire_bytes_of_packet(52), 90);
        assert_eq!(l.wire_bytes_of_packet(40), 84);
        assert_eq!(l.wire_bytes(0), 0);
        assert_eq!(l.wire_bytes(1448 * 2 + 1), 2 * 1538 + 91);
        assert_eq!(l.wire_ns(1448), 1538 * 8);
    }

    #[test]
    fn bad_ports_are_refused_with_the_option_named() {
        assert_eq!(LinkConfig::new(0).validate().unwrap_err().key, "rate_bps");
        assert_eq!(LinkConfig::gbe(1).with_mtu(52).validate().unwrap_err().key, "mtu");
        assert!(LinkConfig::gbe(1).with_mtu(9000).validate().is_ok());
    }
}
