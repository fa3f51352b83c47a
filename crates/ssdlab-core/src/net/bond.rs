//! Bonded ports as Linux's bonding driver sends over them (drivers/net/bonding/bond_main.c;
//! Documentation/networking/bonding.rst).
//!
//! - **balance-rr** (`bond_xmit_roundrobin`): packet after packet goes to the next slave, so
//!   one TCP connection's segments are striped over every link and arrive out of order. The
//!   receiver's duplicate ACKs then look like losses to the sender, which retransmits and
//!   shrinks its window: one stream gets more than one link's worth but not all of them. The
//!   bonding documentation of the 2.6 kernels gave a figure: "for a four interface balance-rr
//!   bond, expect that a single TCP/IP stream can utilize no more than approximately 2.3
//!   interface's worth of throughput, even after adjusting tcp_reordering" (bonding.txt,
//!   "Maximum Throughput in a Single Switch Topology"). The model: the bond is one pooled
//!   resource (round robin gives every slave the same number of packets, so the pool is the
//!   slowest slave's goodput times the slaves), and each flow through it is capped at
//!   [`BondConfig::rr_stream_share`] of the pool, 2.3 / 4 by default (assumed to scale with the
//!   number of slaves: the documentation gives the one figure).
//! - **active-backup**: everything goes over the active slave (the first link here; failover
//!   is not modelled).
//! - **balance-xor** and **802.3ad** (`bond_3ad_xor_xmit`): each packet goes to slave
//!   `bond_xmit_hash(packet) mod slaves`; the hash depends only on a connection's addresses and
//!   ports, so a flow never spans two links and the aggregate depends on how the flows hash.
//!
//! The hash follows `xmit_hash_policy`, computed as the kernel computes it on a little-endian
//! (x86) host, where it loads header bytes into 32-bit words as they lie in memory; see
//! [`xmit_hash`]. Two generations of the formulas are modelled ([`HashFormula`]).

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

use super::flow::{FlowNet, ResourceId};
use super::link::LinkConfig;

/// Bonding modes modelled (the kernel's `mode=` names).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
pub enum BondMode {
    #[serde(rename = "balance-rr")]
    BalanceRr,
    #[serde(rename = "active-backup")]
    ActiveBackup,
    #[serde(rename = "balance-xor")]
    BalanceXor,
    #[serde(rename = "802.3ad")]
    Ieee8023ad,
}

/// Transmit hash policies modelled (`xmit_hash_policy=`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
pub enum HashPolicy {
    /// The kernel's default.
    #[default]
    #[serde(rename = "layer2")]
    Layer2,
    #[serde(rename = "layer2+3")]
    Layer23,
    #[serde(rename = "layer3+4")]
    Layer34,
}

/// Which kernels' hash formulas.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
pub enum HashFormula {
    /// `bond_xmit_hash` as in Linux 6 and bonding.rst: the fold `h ^= h >> 16; h ^= h >> 8`
    /// over the addresses (and ports), with the lowest bit dropped under layer3+4, and the
    /// EtherType in the layer-2 part. (Kernels 3.13–6 differ in details not modelled: the
    /// EtherType's byte order, and 4.2–5.x dropping the low bit under layer2+3 as well.)
    #[default]
    #[serde(rename = "linux-6")]
    Linux6,
    /// `bond_xmit_hash_policy_l2` / `_l23` / `_l34` of the 2.6 kernels (before 3.13): the low
    /// 16 bits of the addresses' XOR, XORed with the ports' XOR or the MACs' last bytes.
    #[serde(rename = "linux-2.6")]
    Linux26,
}

const MODES: &str = "balance-rr, active-backup, balance-xor or 802.3ad";
const POLICIES: &str = "layer2, layer2+3 or layer3+4";

impl FromStr for BondMode {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        match s {
            "balance-rr" => Ok(BondMode::BalanceRr),
            "active-backup" => Ok(BondMode::ActiveBackup),
            "balance-xor" => Ok(BondMode::BalanceXor),
            "802.3ad" => Ok(BondMode::Ieee8023ad),
            _ => Err(ConfigError::new("mode", format!("bonding mode '{s}' is not modelled; expected {MODES}"))),
        }
    }
}

impl FromStr for HashPolicy {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        match s {
            "layer2" => Ok(HashPolicy::Layer2),
            "layer2+3" => Ok(HashPolicy::Layer23),
            "layer3+4" => Ok(HashPolicy::Layer34),
            _ => Err(ConfigError::new("xmit_hash_policy", format!("transmit hash policy '{s}' is not modelled; expected {POLICIES}"))),
        }
    }
}

impl fmt::Display for BondMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BondMode::BalanceRr => "balance-rr",
            BondMode::ActiveBackup => "active-backup",
            BondMode::BalanceXor => "balance-xor",
            BondMode::Ieee8023ad => "802.3ad",
        })
    }
}

/// What identifies a connection's packets to the hash: the frame's MAC addresses, the IPv4
/// addresses (as on the wire), the IP protocol and the ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowKey {
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub src_ip: [u8; 4],
    pub dst_ip: [u8; 4],
    pub protocol: u8,
    pub src_port: u16,
    pub dst_port: u16,
}

pub const IPPROTO_TCP: u8 = 6;
pub const IPPROTO_UDP: u8 = 17;
/// IPv4's EtherType, the "packet type ID" of the layer-2 hash.
pub const ETH_P_IP: u32 = 0x0800;

/// Protocols whose first four header bytes are the two ports, which the current kernel's flow
/// dissector reads (TCP, UDP, DCCP, SCTP, UDP-Lite: `proto_ports_offset`).
fn has_ports(protocol: u8) -> bool {
    matches!(protocol, 6 | 17 | 33 | 132 | 136)
}

/// The bonding driver's transmit hash of a flow's packets.
///
/// Linux 6 (`bond_xmit_hash` → `bond_eth_hash`, `bond_ip_hash`):
/// - layer2: `src_mac[5] ^ dst_mac[5] ^ ethertype`;
/// - layer2+3: that, `^ src_ip ^ dst_ip`, then `h ^= h >> 16; h ^= h >> 8`;
/// - layer3+4: the ports word `^ src_ip ^ dst_ip`, the same fold, then `h >> 1` ("discard
///   lowest hash bit to deal with the common even ports pattern").
///
/// The addresses and the ports word are the header's bytes loaded as a 32-bit word on a
/// little-endian host (the source port's two bytes, then the destination's). For 2^k slaves
/// the byte order does not matter: the fold leaves in the low byte the XOR of all four bytes.
///
/// Linux 2.6 (`bond_xmit_hash_policy_l2/_l23/_l34`): layer2 `src_mac[5] ^ dst_mac[5]`;
/// layer2+3 `(ntohl(src_ip ^ dst_ip) & 0xffff) ^ src_mac[5] ^ dst_mac[5]`; layer3+4
/// `ntohs(src_port ^ dst_port) ^ (ntohl(src_ip ^ dst_ip) & 0xffff)` (ports only for TCP and UDP).
pub fn xmit_hash(formula: HashFormula, policy: HashPolicy, k: &FlowKey) -> u32 {
    let mac = k.src_mac[5] as u32 ^ k.dst_mac[5] as u32;
    match formula {
        HashFormula::Linux6 => {
            let ips = u32::from_le_bytes(k.src_ip) ^ u32::from_le_bytes(k.dst_ip);
            let fold = |mut h: u32| {
                h ^= h >> 16;
                h ^= h >> 8;
                h
            };
            match policy {
                HashPolicy::Layer2 => mac ^ ETH_P_IP,
                HashPolicy::Layer23 => fold(mac ^ ETH_P_IP ^ ips),
                HashPolicy::Layer34 => {
                    let ports = if has_ports(k.protocol) {
                        let (s, d) = (k.src_port.to_be_bytes(), k.dst_port.to_be_bytes());
                        u32::from_le_bytes([s[0], s[1], d[0], d[1]])
                    } else {
                        0
                    };
                    fold(ports ^ ips) >> 1
                }
            }
        }
        HashFormula::Linux26 => {
            let ips = (u32::from_be_bytes(k.src_ip) ^ u32::from_be_bytes(k.dst_ip)) & 0xffff;
            match policy {
                HashPolicy::Layer2 => mac,
                HashPolicy::Layer23 => ips ^ mac,
                HashPolicy::Layer34 => {
                    let l4 = if matches!(k.protocol, IPPROTO_TCP | IPPROTO_UDP) { (k.src_port ^ k.dst_port) as u32 } else { 0 };
                    l4 ^ ips
                }
            }
        }
    }
}

/// Where a flow's packets go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// All on this slave (its index in the bond's links).
    Slave(usize),
    /// Striped over every slave, packet by packet (balance-rr).
    Striped,
}

/// Ports bonded into one interface.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BondConfig {
    pub mode: BondMode,
    /// The transmit hash (balance-xor and 802.3ad); the kernel's default is layer2.
    #[serde(default)]
    pub xmit_hash_policy: HashPolicy,
    /// Which kernels' hash formulas (default: Linux 6's).
    #[serde(default)]
    pub hash_formula: HashFormula,
    /// The slaves, in the order they were enslaved (the hash's slave numbers; the first is
    /// active-backup's active slave).
    pub links: Vec<LinkConfig>,
    /// balance-rr only: the share of the bond's goodput one TCP stream can use, its packets
    /// arriving out of order. Default 0.575: 2.3 of 4 links (the 2.6 kernels' bonding.txt).
    #[serde(default = "default_rr_share")]
    pub rr_stream_share: f64,
}

fn default_rr_share() -> f64 {
    2.3 / 4.0
}

impl BondConfig {
    /// A bond of `count` copies of `link`.
    pub fn new(mode: BondMode, xmit_hash_policy: HashPolicy, count: usize, link: LinkConfig) -> Self {
        BondConfig { mode, xmit_hash_policy, hash_formula: HashFormula::default(), links: vec![link; count], rr_stream_share: default_rr_share() }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.links.is_empty() {
            return Err(ConfigError::new("links", "a bond needs at least one link, got none".into()));
        }
        for (i, l) in self.links.iter().enumerate() {
            l.validate().map_err(|e| ConfigError::new(&format!("links[{i}].{}", e.key), e.message))?;
        }
        // The bond has one MTU: changing it changes every slave's (bond_change_mtu).
        if let Some(i) = self.links.iter().position(|l| l.mtu != self.links[0].mtu) {
            return Err(ConfigError::new(&format!("links[{i}].mtu"), format!("a bond's links share one MTU: {} here, {} on links[0]", self.links[i].mtu, self.links[0].mtu)));
        }
        if self.mode == BondMode::Ieee8023ad {
            if self.links.len() < 2 {
                return Err(ConfigError::new("links", "802.3ad aggregates two or more links; a bond of one link has nothing to aggregate".into()));
            }
            // IEEE 802.3ad: every link of an aggregate runs at the same speed (and duplex).
            if let Some(i) = self.links.iter().position(|l| l.rate_bps != self.links[0].rate_bps) {
                return Err(ConfigError::new(
                    &format!("links[{i}].rate_bps"),
                    format!("802.3ad aggregates links of one speed: {} b/s here, {} b/s on links[0]", self.links[i].rate_bps, self.links[0].rate_bps),
                ));
            }
        }
        if !(self.rr_stream_share > 0.0 && self.rr_stream_share <= 1.0) {
            return Err(ConfigError::new("rr_stream_share", format!("must be above 0 and at most 1, got {}", self.rr_stream_share)));
        }
        Ok(())
    }

    /// Where the packets of the flow `key` go.
    pub fn placement(&self, key: &FlowKey) -> Placement {
        match self.mode {
            BondMode::BalanceRr => Placement::Striped,
            BondMode::ActiveBackup => Placement::Slave(0),
            BondMode::BalanceXor | BondMode::Ieee8023ad => {
                Placement::Slave((xmit_hash(self.hash_formula, self.xmit_hash_policy, key) % self.links.len() as u32) as usize)
            }
        }
    }

    /// balance-rr's pooled goodput: every slave sends the same number of packets, so the
    /// slowest sets the pace, bytes per second.
    pub fn striped_goodput_bytes_per_s(&self) -> f64 {
        let slowest = self.links.iter().map(|l| l.goodput_bytes_per_s()).fold(f64::INFINITY, f64::min);
        slowest * self.links.len() as f64
    }

    /// The bond's resources in `net`: one per slave (a pooled one under balance-rr), named
    /// `name` and the slave's index.
    pub fn attach(&self, net: &mut FlowNet, name: &str) -> Result<AttachedBond, ConfigError> {
        self.validate()?;
        let resources = if self.mode == BondMode::BalanceRr {
            vec![net.add_resource(&format!("{name} (balance-rr over {} links)", self.links.len()), self.striped_goodput_bytes_per_s())?]
        } else {
            let mut v = Vec::with_capacity(self.links.len());
            for (i, l) in self.links.iter().enumerate() {
                v.push(net.add_resource(&format!("{name} slave {i}"), l.goodput_bytes_per_s())?);
            }
            v
        };
        Ok(AttachedBond { config: self.clone(), resources })
    }
}

/// A bond's resources in a [`FlowNet`], and the route of each flow over them.
#[derive(Clone, Debug)]
pub struct AttachedBond {
    config: BondConfig,
    resources: Vec<ResourceId>,
}

impl AttachedBond {
    /// The resources: one per slave, or balance-rr's one pool.
    pub fn resources(&self) -> &[ResourceId] {
        &self.resources
    }

    /// The resource the flow `key` crosses, and the cap the bond puts on it (infinite but
    /// under balance-rr), bytes per second.
    pub fn route(&self, key: &FlowKey) -> (ResourceId, f64) {
        match self.config.placement(key) {
            Placement::Slave(i) => (self.resources[i], f64::INFINITY),
            Placement::Striped => (self.resources[0], self.config.rr_stream_share * self.config.striped_goodput_bytes_per_s()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_are_one_clear_line() {
        let e = "balance-alb".parse::<BondMode>().unwrap_err();
        assert_eq!(e.to_string(), "mode: bonding mode 'balance-alb' is not modelled; expected balance-rr, active-backup, balance-xor or 802.3ad");
        assert_eq!("encap3+4".parse::<HashPolicy>().unwrap_err().key, "xmit_hash_policy");
        assert_eq!("802.3ad".parse::<BondMode>().unwrap(), BondMode::Ieee8023ad);
        let json = r#"{"mode": "802.3ad", "xmit_hash_policy": "layer4", "links": []}"#;
        let err = serde_json::from_str::<BondConfig>(json).unwrap_err().to_string();
        assert!(err.contains("unknown variant `layer4`, expected one of `layer2`, `layer2+3`, `layer3+4`"), "{err}");
    }
}
