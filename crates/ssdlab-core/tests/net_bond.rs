//! Ports, framing and bonding: goodput figures from the framing arithmetic, the bonding
//! driver's hash placement on cases worked by hand, and what hashing does to a bond's aggregate.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use ssdlab_core::net::bond::{xmit_hash, IPPROTO_TCP};
use ssdlab_core::net::{BondConfig, BondMode, FlowKey, FlowNet, HashFormula, HashPolicy, LinkConfig, Placement};

const MB: f64 = 1e6;

fn key(src_ip: [u8; 4], dst_ip: [u8; 4], src_port: u16, dst_port: u16) -> FlowKey {
    FlowKey { src_mac: [0, 0x1b, 0x21, 0, 0, 0x01], dst_mac: [0, 0x1b, 0x21, 0, 0, 0x02], src_ip, dst_ip, protocol: IPPROTO_TCP, src_port, dst_port }
}

/// Goodput of a TCP stream of full segments with timestamps:
/// MTU 1500: payload 1500 − 20 (IPv4) − 20 (TCP) − 12 (timestamps) = 1448 B per
///   1500 + 14 (MAC header) + 4 (FCS) + 8 (preamble, SFD) + 12 (gap) = 1538 B of line time:
///   0.941482 of the line; 1 GbE → 117.685 MB/s (941.48 Mb/s), 10 GbE → 1176.85 MB/s.
/// MTU 9000: 8948 B per 9038 B: 0.990042; 1 GbE → 123.755 MB/s, 10 GbE → 1237.55 MB/s.
#[test]
fn goodput_at_1500_and_9000() {
    let cases = [(1, 1500, 1448, 1538, 117.685_305), (10, 1500, 1448, 1538, 1_176.853_056), (1, 9000, 8948, 9038, 123.755_255), (10, 9000, 8948, 9038, 1_237.552_556)];
    for (gbe, mtu, mss, wire, mb_per_s) in cases {
        let l = LinkConfig::gbe(gbe).with_mtu(mtu);
        l.validate().unwrap();
        assert_eq!((l.mss(), l.wire_bytes_per_full_segment()), (mss, wire), "{gbe} GbE MTU {mtu}");
        assert!((l.goodput_bytes_per_s() / MB - mb_per_s).abs() < 1e-5, "{gbe} GbE MTU {mtu}: {}", l.goodput_bytes_per_s() / MB);
    }
    assert!((LinkConfig::gbe(1).efficiency() - 0.9415).abs() < 5e-5);
    // Without timestamps the segment carries 1460 bytes: 0.949285.
    let plain = LinkConfig { tcp_timestamps: false, ..LinkConfig::gbe(1) };
    assert_eq!(plain.mss(), 1460);
    // Packets for a host's per-packet costs: a 1 MB file is 691 segments at MTU 1500
    // (690 × 1448 = 999 120, then 880 bytes), 112 at 9000 (111 × 8948 = 993 228, then 6772).
    assert_eq!(LinkConfig::gbe(1).packets(1_000_000), 691);
    assert_eq!(LinkConfig::gbe(1).with_mtu(9000).packets(1_000_000), 112);
    assert_eq!(LinkConfig::gbe(1).packets(0), 0);
    // And its line time: 690 × 1538 + (880 + 52 + 38) = 1 062 190 bytes, 8.497520 ms at 1 Gb/s.
    assert_eq!(LinkConfig::gbe(1).wire_bytes(1_000_000), 1_062_190);
    assert_eq!(LinkConfig::gbe(1).wire_ns(1_000_000), 8_497_520);
}

/// The server 10.0.0.1:80 sends to 10.0.0.2 at ports 40000–40003 (MACs ending 01 and 02).
///
/// Linux 6, layer3+4. The ports word is the header's bytes 00 50 9c 40 (80, 40000) loaded
/// little-endian: 0x409c5000; the addresses 0a 00 00 01 and 0a 00 00 02 load as 0x0100000a
/// and 0x0200000a, XOR 0x03000000. h = 0x409c5000 ^ 0x03000000 = 0x439c5000;
/// h ^= h >> 16 → 0x439c139c; h ^= h >> 8 → 0x43df8f8f; h >> 1 = 0x21efc7c7;
/// mod 4 = 3 (0xc7 = …0111), mod 3 = 1 (569 362 375 = 3 × 189 787 458 + 1).
/// Port 40001 differs only in the bit the kernel drops: also slave 3 of 4.
/// Port 40002: 0x429c5000 ^ 0x03000000 = 0x419c5000 → 0x41dd8d8d → 0x20eec6c6: slave 2.
///
/// Linux 2.6, layer3+4: ntohs(80 ^ 40000) = 0x9c10, (ntohl(ip ^ ip) & 0xffff) = 3:
/// 0x9c13 mod 4 = 3; port 40001: 0x9c11 ^ 3 = 0x9c12 mod 4 = 2.
///
/// Linux 6, layer2: 0x01 ^ 0x02 ^ 0x0800 = 0x0803 = 2051: mod 4 = 3, mod 3 = 2. Linux 2.6
/// layer2: 0x03: mod 3 = 0.
/// Linux 6, layer2+3: 0x0803 ^ 0x03000000 = 0x03000803 → 0x03000b03 → 0x03030b08: mod 4 = 0,
/// mod 3 = 1 (50 531 080, digit sum 22).
#[test]
fn hash_placement_matches_the_kernels_formulas_worked_by_hand() {
    let (srv, cli) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let h6 = |p, port| xmit_hash(HashFormula::Linux6, p, &key(srv, cli, 80, port));
    let h26 = |p, port| xmit_hash(HashFormula::Linux26, p, &key(srv, cli, 80, port));
    assert_eq!(h6(HashPolicy::Layer34, 40000), 0x21ef_c7c7);
    assert_eq!(h6(HashPolicy::Layer34, 40000) % 3, 0x21ef_c7c7 % 3);
    assert_eq!(0x21ef_c7c7u32 % 3, 1);
    assert_eq!(h6(HashPolicy::Layer34, 40001), 0x216f_4747);
    assert_eq!(h6(HashPolicy::Layer34, 40002), 0x20ee_c6c6);
    assert_eq!(h26(HashPolicy::Layer34, 40000), 0x9c13);
    assert_eq!(h26(HashPolicy::Layer34, 40001), 0x9c12);
    assert_eq!(h6(HashPolicy::Layer2, 40000), 0x0803);
    assert_eq!(h26(HashPolicy::Layer2, 40000), 0x03);
    assert_eq!(h6(HashPolicy::Layer23, 40000), 0x0303_0b08);
    assert_eq!(h26(HashPolicy::Layer23, 40000), 0x03 ^ 0x03);

    let slave = |mode, policy, formula, n: usize, port| {
        let mut b = BondConfig::new(mode, policy, n, LinkConfig::gbe(1));
        b.hash_formula = formula;
        b.validate().unwrap();
        b.placement(&key(srv, cli, 80, port))
    };
    use HashFormula::*;
    use HashPolicy::*;
    let ad = BondMode::Ieee8023ad;
    assert_eq!(slave(ad, Layer34, Linux6, 4, 40000), Placement::Slave(3));
    assert_eq!(slave(ad, Layer34, Linux6, 4, 40001), Placement::Slave(3));
    assert_eq!(slave(ad, Layer34, Linux6, 4, 40002), Placement::Slave(2));
    assert_eq!(slave(ad, Layer34, Linux6, 3, 40000), Placement::Slave(1));
    assert_eq!(slave(ad, Layer34, Linux26, 4, 40001), Placement::Slave(2));
    assert_eq!(slave(BondMode::BalanceXor, Layer2, Linux6, 3, 40000), Placement::Slave(2));
    assert_eq!(slave(BondMode::BalanceXor, Layer2, Linux26, 3, 40000), Placement::Slave(0));
    assert_eq!(slave(ad, Layer23, Linux6, 4, 40000), Placement::Slave(0));
    assert_eq!(slave(ad, Layer23, Linux6, 3, 40000), Placement::Slave(1));
    assert_eq!(slave(BondMode::BalanceRr, Layer34, Linux6, 4, 40000), Placement::Striped);
    assert_eq!(slave(BondMode::ActiveBackup, Layer34, Linux6, 4, 40000), Placement::Slave(0));
}

/// Layer3+4 ignores MACs, layer2 ignores addresses and ports; non-port protocols hash on
/// addresses only.
#[test]
fn each_policy_reads_only_its_fields() {
    let a = key([10, 0, 0, 1], [10, 0, 0, 2], 80, 40000);
    let mut b = a;
    b.src_mac[5] = 0x77;
    b.dst_mac = [9; 6];
    assert_eq!(xmit_hash(HashFormula::Linux6, HashPolicy::Layer34, &a), xmit_hash(HashFormula::Linux6, HashPolicy::Layer34, &b));
    let mut c = a;
    c.dst_ip = [192, 168, 7, 9];
    c.dst_port = 1234;
    for f in [HashFormula::Linux6, HashFormula::Linux26] {
        assert_eq!(xmit_hash(f, HashPolicy::Layer2, &a), xmit_hash(f, HashPolicy::Layer2, &c));
    }
    let mut icmp = a;
    icmp.protocol = 1;
    let mut icmp2 = icmp;
    icmp2.dst_port = 5;
    assert_eq!(xmit_hash(HashFormula::Linux6, HashPolicy::Layer34, &icmp), xmit_hash(HashFormula::Linux6, HashPolicy::Layer34, &icmp2));
}

#[test]
fn bad_bonds_are_one_line_each() {
    let one = BondConfig::new(BondMode::Ieee8023ad, HashPolicy::Layer34, 1, LinkConfig::gbe(1));
    assert_eq!(one.validate().unwrap_err().to_string(), "links: 802.3ad aggregates two or more links; a bond of one link has nothing to aggregate");
    let none = BondConfig::new(BondMode::BalanceXor, HashPolicy::Layer2, 0, LinkConfig::gbe(1));
    assert_eq!(none.validate().unwrap_err().to_string(), "links: a bond needs at least one link, got none");
    let mut mixed = BondConfig::new(BondMode::Ieee8023ad, HashPolicy::Layer2, 2, LinkConfig::gbe(1));
    mixed.links[1] = LinkConfig::gbe(10);
    assert_eq!(mixed.validate().unwrap_err().key, "links[1].rate_bps");
    mixed.mode = BondMode::BalanceXor;
    assert!(mixed.validate().is_ok());
    mixed.links[1].mtu = 9000;
    assert_eq!(mixed.validate().unwrap_err().key, "links[1].mtu");
    let mut rr = BondConfig::new(BondMode::BalanceRr, HashPolicy::Layer2, 2, LinkConfig::gbe(1));
    rr.rr_stream_share = 0.0;
    assert_eq!(rr.validate().unwrap_err().key, "rr_stream_share");
    let bad_link = BondConfig::new(BondMode::BalanceRr, HashPolicy::Layer2, 2, LinkConfig::new(0));
    assert_eq!(bad_link.validate().unwrap_err().key, "links[0].rate_bps");
    let json = r#"{"mode": "balance-alb", "links": [{"rate_bps": 1000000000}]}"#;
    let err = serde_json::from_str::<BondConfig>(json).unwrap_err().to_string();
    assert!(err.starts_with("unknown variant `balance-alb`, expected one of `balance-rr`, `active-backup`, `balance-xor`, `802.3ad`"), "{err}");
    let json = r#"{"mode": "802.3ad", "links": [], "lacp_rate": "fast"}"#;
    assert!(serde_json::from_str::<BondConfig>(json).unwrap_err().to_string().contains("unknown field `lacp_rate`"));
}

/// Steady-state aggregate of `clients` flows from the server through the bond, each also
/// crossing its own access line, in bytes per second: the sum of their max-min rates.
fn aggregate(bond: &BondConfig, clients: &[(FlowKey, f64)]) -> f64 {
    let mut net = FlowNet::new();
    let attached = bond.attach(&mut net, "bond0").unwrap();
    for (i, (k, line)) in clients.iter().enumerate() {
        let access = net.add_resource(&format!("client {i}"), *line).unwrap();
        let (slave, cap) = attached.route(k);
        net.add_flow(&[slave, access], 1 << 40, cap).unwrap();
    }
    net.snapshot().iter().map(|f| f.3).sum()
}

/// Four clients on 1 GbE lines fetch from a 4 × 1 GbE 802.3ad bond under layer3+4 from
/// consecutive ports 40000–40003: the kernel drops the hash's lowest bit, so 40000/40001 share
/// slave 3 and 40002/40003 slave 2 — two links' worth, not four. Under balance-rr the same
/// four flows fill the pool.
#[test]
fn few_flows_collide_on_slaves() {
    let l = LinkConfig::gbe(1);
    let g = l.goodput_bytes_per_s();
    let clients: Vec<(FlowKey, f64)> = (0..4).map(|i| (key([10, 0, 0, 1], [10, 0, 0, 2], 80, 40000 + i), g)).collect();
    let ad = BondConfig::new(BondMode::Ieee8023ad, HashPolicy::Layer34, 4, l.clone());
    let agg = aggregate(&ad, &clients);
    assert!((agg - 2.0 * g).abs() < 1e-6 * g, "{} links' worth", agg / g);
    let rr = BondConfig::new(BondMode::BalanceRr, HashPolicy::Layer34, 4, l.clone());
    assert!((aggregate(&rr, &clients) - 4.0 * g).abs() < 1e-6 * g);
    // One stream alone over balance-rr, to a client on a 10 GbE line: 2.3 links' worth (the
    // documented figure).
    let fast = [(clients[0].0, 10.0 * g)];
    assert!((aggregate(&rr, &fast) - 2.3 * g).abs() < 1e-6 * g);
    let ab = BondConfig::new(BondMode::ActiveBackup, HashPolicy::Layer34, 4, l);
    assert!((aggregate(&ab, &clients) - g).abs() < 1e-6 * g);
}

/// Random ephemeral ports (Linux's default range 32768–60999): with k flows on n slaves, a
/// slave is left idle with probability (1 − 1/n)^k if the hash spreads evenly, so 4 line-rate
/// flows on 4 slaves fill 4 (1 − (3/4)^4) = 2.734 links on average.
#[test]
fn random_ports_spread_as_a_uniform_hash_would() {
    let l = LinkConfig::gbe(1);
    let g = l.goodput_bytes_per_s();
    let bond = BondConfig::new(BondMode::Ieee8023ad, HashPolicy::Layer34, 4, l);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(30);
    let draws = 2000;
    let mut sum = 0.0;
    for _ in 0..draws {
        let clients: Vec<(FlowKey, f64)> = (0..4).map(|i| (key([10, 0, 0, 1], [10, 0, 1, 10 + i], 80, rng.gen_range(32768..61000)), g)).collect();
        sum += aggregate(&bond, &clients) / g;
    }
    let mean = sum / draws as f64;
    let expected = 4.0 * (1.0 - 0.75f64.powi(4));
    assert!((mean - expected).abs() < 0.05, "mean {mean:.3} links, uniform {expected:.3}");
}

/// Seed 000's web server clients (70 on ~600 KB/s lines, 30 on ~6 MB/s, 27 on ~60 MB/s: 1842
/// MB/s of demand) on 4 × 1 GbE in 802.3ad under layer3+4, each client its own address and a
/// random ephemeral port. Prints the aggregate over many port draws (the report quotes it).
#[test]
fn seed000s_127_clients_on_four_bonded_gigabit_links() {
    let l = LinkConfig::gbe(1);
    let g = l.goodput_bytes_per_s();
    let lines: Vec<f64> = [(70, 0.6 * MB), (30, 6.0 * MB), (27, 60.0 * MB)].iter().flat_map(|&(n, r)| std::iter::repeat_n(r, n)).collect();
    assert_eq!(lines.len(), 127);
    for formula in [HashFormula::Linux6, HashFormula::Linux26] {
        let mut bond = BondConfig::new(BondMode::Ieee8023ad, HashPolicy::Layer34, 4, l.clone());
        bond.hash_formula = formula;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(127);
        let draws = 300;
        let mut aggs: Vec<f64> = (0..draws)
            .map(|_| {
                let clients: Vec<(FlowKey, f64)> =
                    lines.iter().enumerate().map(|(i, &r)| (key([192, 168, 1, 1], [192, 168, 2 + (i / 200) as u8, (i % 200 + 2) as u8], 80, rng.gen_range(32768..61000)), r)).collect();
                aggregate(&bond, &clients)
            })
            .collect();
        aggs.sort_by(f64::total_cmp);
        let mean = aggs.iter().sum::<f64>() / draws as f64;
        let below = aggs.iter().filter(|&&a| a < 4.0 * g * (1.0 - 1e-9)).count();
        let mbps = |b: f64| b * 8.0 / 1e6;
        println!(
            "{formula:?}: 127 flows on 4 x 1 GbE layer3+4 over {draws} port draws: mean {:.1} Mb/s, min {:.1}, 5th percentile {:.1}, max {:.1}; {below} draws below 4 links' goodput ({:.1} Mb/s; line rate 4000)",
            mbps(mean),
            mbps(aggs[0]),
            mbps(aggs[draws / 20]),
            mbps(aggs[draws - 1]),
            mbps(4.0 * g)
        );
        // The bond is the bottleneck; with this many flows collisions cost under 1 % on average.
        assert!(aggs[draws - 1] <= 4.0 * g * (1.0 + 1e-9));
        assert!(mean > 0.99 * 4.0 * g, "mean {} links", mean / g);
    }
    // All clients behind one router (one destination MAC) under layer2: every flow on one slave.
    let bond = BondConfig::new(BondMode::Ieee8023ad, HashPolicy::Layer2, 4, l.clone());
    let clients: Vec<(FlowKey, f64)> = lines.iter().enumerate().map(|(i, &r)| (key([192, 168, 1, 1], [10, 9, 0, (i + 2) as u8], 80, 40000 + i as u16), r)).collect();
    assert!((aggregate(&bond, &clients) - g).abs() < 1e-6 * g);
}
