//! Where a block lives on a hard disk and how long the arm takes to get there.
//!
//! Zoned recording: the cylinders are split into zones of equal cylinder count, and the
//! sectors per track fall linearly from the outer zone (LBA 0) to the inner one, so the
//! media rate falls from the outer to the inner diameter. Blocks fill a track, then the next
//! surface of the same cylinder, then the next cylinder.
//!
//! Angles are kept as time within a revolution (ns): the platter turns at a constant rate
//! and was at angle 0 at time 0, so the sector under the head at time `t` is the one at
//! `t mod revolution`. Each track's first sector is skewed from the previous track's by
//! the time the switch to it takes (a head switch within a cylinder, a one-cylinder seek
//! between cylinders), as drives format them, so a transfer that crosses a track boundary
//! loses exactly the switch time and not a revolution.
//!
//! Seek time follows the three-point curve of Lee et al. / Ruemmler & Wilkes ("An
//! introduction to disk drive modeling", IEEE Computer 1994): for a distance of d ≥ 1
//! cylinders, `t(d) = t1 + α·√(d−1) + β·(d−1)`. The square-root part is the arm
//! accelerating and decelerating on short seeks, the linear part its coasting on long ones.
//! α and β are solved so that a one-cylinder seek takes the datasheet's track-to-track
//! time, a full stroke its full-stroke time, and the mean over seeks between uniformly
//! random cylinders its average seek time (how datasheets define the average).

use super::HddMechanics;
use crate::engine::Time;
use crate::error::ConfigError;

/// A zone: a run of cylinders with the same number of sectors per track.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zone {
    pub first_cylinder: u32,
    pub cylinders: u32,
    pub sectors_per_track: u32,
    /// The zone's first sector (LBA in sectors).
    pub first_sector: u64,
    /// One sector passing under the head, ns (a revolution over the sectors per track).
    pub sector_ns: f64,
}

/// A block's physical place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub cylinder: u32,
    pub surface: u32,
    /// The sector's index on its track.
    pub sector: u32,
    pub zone: u32,
}

/// A disk's layout and mechanics, resolved for fast lookups.
#[derive(Clone, Debug)]
pub struct Geometry {
    pub sector_bytes: u64,
    pub surfaces: u32,
    pub cylinders: u32,
    pub zones: Vec<Zone>,
    pub revolution_ns: Time,
    pub head_switch_ns: Time,
    /// A one-cylinder seek: the switch between the last surface of a cylinder and the first
    /// of the next.
    pub track_to_track_ns: Time,
    seek_alpha: f64,
    seek_beta: f64,
}

impl Geometry {
    /// Lay out `capacity_sectors` over the zones and fit the seek curve. Errors name the
    /// profile key that cannot hold.
    pub fn new(m: &HddMechanics, capacity_sectors: u64) -> Result<Geometry, ConfigError> {
        let err = |key: &str, msg: String| Err(ConfigError::new(key, msg));
        if m.inner_sectors_per_track > m.outer_sectors_per_track {
            return err(
                "mechanics.inner_sectors_per_track",
                format!(
                    "{} is more than the outer zone's {}: zoned recording puts more sectors on the longer outer tracks",
                    m.inner_sectors_per_track, m.outer_sectors_per_track
                ),
            );
        }
        let revolution_ns = (60_000_000_000u64).div_ceil(m.rpm as u64);
        let z = m.zones as u64;
        let spt = |i: u64| -> u32 {
            // Linear from outer (zone 0) to inner (last zone).
            if z == 1 {
                return m.outer_sectors_per_track;
            }
            let (o, n) = (m.outer_sectors_per_track as u64, m.inner_sectors_per_track as u64);
            (o - ((o - n) * i + (z - 1) / 2) / (z - 1)) as u32
        };
        let sectors_per_zone_cylinder: u64 = (0..z).map(|i| spt(i) as u64 * m.surfaces as u64).sum();
        let cylinders_per_zone = capacity_sectors.div_ceil(sectors_per_zone_cylinder).max(1);
        if cylinders_per_zone * z > u32::MAX as u64 / 2 {
            return err("mechanics.outer_sectors_per_track", "too few sectors per track for the capacity".into());
        }
        let mut zones = Vec::with_capacity(z as usize);
        let mut first_sector = 0;
        for i in 0..z {
            let sectors_per_track = spt(i);
            zones.push(Zone {
                first_cylinder: (i * cylinders_per_zone) as u32,
                cylinders: cylinders_per_zone as u32,
                sectors_per_track,
                first_sector,
                sector_ns: revolution_ns as f64 / sectors_per_track as f64,
            });
            first_sector += cylinders_per_zone * sectors_per_track as u64 * m.surfaces as u64;
        }
        let cylinders = (cylinders_per_zone * z) as u32;
        let (alpha, beta) = fit_seek(cylinders, m.track_to_track_ns, m.average_seek_ns, m.full_stroke_ns)?;
        Ok(Geometry {
            sector_bytes: m.sector_bytes,
            surfaces: m.surfaces,
            cylinders,
            zones,
            revolution_ns,
            head_switch_ns: m.head_switch_ns,
            track_to_track_ns: m.track_to_track_ns,
            seek_alpha: alpha,
            seek_beta: beta,
        })
    }

    /// The zone holding sector `lba`.
    #[inline]
    pub fn zone_of(&self, lba: u64) -> usize {
        // Zones are few (tens): a partition point over their first sectors.
        self.zones.partition_point(|z| z.first_sector <= lba) - 1
    }

    /// Where sector `lba` lives.
    #[inline]
    pub fn place(&self, lba: u64) -> Place {
        let zi = self.zone_of(lba);
        let z = &self.zones[zi];
        let rel = lba - z.first_sector;
        let per_cyl = z.sectors_per_track as u64 * self.surfaces as u64;
        let cyl = rel / per_cyl;
        let rem = rel % per_cyl;
        Place {
            cylinder: z.first_cylinder + cyl as u32,
            surface: (rem / z.sectors_per_track as u64) as u32,
            sector: (rem % z.sectors_per_track as u64) as u32,
            zone: zi as u32,
        }
    }

    /// The time within a revolution at which sector `p` starts to pass under its head.
    #[inline]
    pub fn angle_ns(&self, p: &Place) -> Time {
        let z = &self.zones[p.zone as usize];
        let rev = self.revolution_ns;
        // Every track's first sector lags its predecessor's by the switch to it.
        let per_cylinder = (self.surfaces as u64 - 1) * self.head_switch_ns + self.track_to_track_ns;
        let skew = (p.cylinder as u64 % rev) * (per_cylinder % rev) % rev
            + p.surface as u64 * self.head_switch_ns % rev;
        let within = (p.sector as f64 * z.sector_ns) as Time;
        (skew + within) % rev
    }

    /// Time for the arm to move `d` cylinders (0 for none).
    #[inline]
    pub fn seek_ns(&self, d: u32) -> Time {
        if d == 0 {
            return 0;
        }
        let x = (d - 1) as f64;
        self.track_to_track_ns + (self.seek_alpha * x.sqrt() + self.seek_beta * x) as Time
    }

    /// The mean seek time over seeks between uniformly random cylinders (what a datasheet's
    /// average seek means; the fit makes it the profile's figure).
    pub fn mean_seek_ns(&self) -> f64 {
        mean_over_random_seeks(self.cylinders, |x| self.seek_ns(x as u32 + 1) as f64)
    }

    /// Time to read or write `sectors` sectors starting at `lba` once the first is under
    /// the head: the sectors' own passage plus a switch at each track boundary crossed.
    /// Returns the transfer time and the place of the last sector.
    pub fn transfer_ns(&self, lba: u64, sectors: u64) -> (Time, Place) {
        // Each piece is timed between sector boundaries rounded as `angle_ns` rounds them,
        // so an access ends exactly when the next sector starts (not a ns after it, which
        // would cost the next access a revolution).
        let at = |sector: u64, sn: f64| (sector as f64 * sn) as Time;
        let mut p = self.place(lba);
        let mut left = sectors;
        let mut ns: Time = 0;
        loop {
            let z = &self.zones[p.zone as usize];
            let on_track = (z.sectors_per_track - p.sector) as u64;
            let start = p.sector as u64;
            if left <= on_track {
                ns += at(start + left, z.sector_ns) - at(start, z.sector_ns);
                p.sector += left as u32 - 1;
                return (ns, p);
            }
            ns += at(start + on_track, z.sector_ns) - at(start, z.sector_ns);
            left -= on_track;
            if p.surface + 1 < self.surfaces {
                p.surface += 1;
                ns += self.head_switch_ns;
            } else {
                p.surface = 0;
                p.cylinder += 1;
                ns += self.track_to_track_ns;
                if p.cylinder >= self.cylinders {
                    // The request ran off the end of the disk; the caller checked bounds.
                    p.cylinder = self.cylinders - 1;
                }
                let next = &self.zones[p.zone as usize];
                if p.cylinder >= next.first_cylinder + next.cylinders {
                    p.zone += 1;
                }
            }
            p.sector = 0;
        }
    }

    /// Sectors a streaming read covers per ns in the zone of `lba`, track switches included.
    pub fn streaming_sectors_per_ns(&self, lba: u64) -> f64 {
        let z = &self.zones[self.zone_of(lba)];
        let s = self.surfaces as f64;
        let per_cylinder_switches = (s - 1.0) * self.head_switch_ns as f64 + self.track_to_track_ns as f64;
        z.sectors_per_track as f64 * s / (s * self.revolution_ns as f64 + per_cylinder_switches)
    }

    /// The sustained media rate of zone `zi`, bytes per second, track switches included.
    pub fn zone_rate(&self, zi: usize) -> f64 {
        let lba = self.zones[zi].first_sector;
        self.streaming_sectors_per_ns(lba) * 1e9 * self.sector_bytes as f64
    }

    pub fn capacity_sectors(&self) -> u64 {
        let z = self.zones.last().expect("a geometry has zones");
        z.first_sector + z.cylinders as u64 * z.sectors_per_track as u64 * self.surfaces as u64
    }
}

/// The mean of `f(d − 1)` over seeks between two uniformly random distinct cylinders of
/// `cylinders`: distance d has weight (cylinders − d).
fn mean_over_random_seeks(cylinders: u32, f: impl Fn(f64) -> f64) -> f64 {
    let c = cylinders as u64;
    let (mut num, mut den) = (0f64, 0f64);
    for d in 1..c {
        let w = (c - d) as f64;
        num += w * f((d - 1) as f64);
        den += w;
    }
    if den == 0.0 {
        0.0
    } else {
        num / den
    }
}

/// Solve α, β of the seek curve from the track-to-track, average and full-stroke times.
fn fit_seek(cylinders: u32, t1: Time, avg: Time, full: Time) -> Result<(f64, f64), ConfigError> {
    let err = |key: &str, msg: String| Err(ConfigError::new(key, msg));
    if !(t1 < avg && avg < full) {
        return err(
            "mechanics.average_seek_ns",
            format!(
                "seek times must grow with distance: track-to-track {t1} ns < average {avg} ns < full stroke {full} ns"
            ),
        );
    }
    if cylinders < 3 {
        return err("capacity_bytes", "a disk of fewer than 3 cylinders has no seek curve".into());
    }
    // t(d) − t1 = α·√x + β·x with x = d − 1. Full stroke: x = C − 2. Mean over random seeks.
    let xf = (cylinders - 2) as f64;
    let (sa, sb) = (mean_over_random_seeks(cylinders, f64::sqrt), mean_over_random_seeks(cylinders, |x| x));
    let (yf, ya) = ((full - t1) as f64, (avg - t1) as f64);
    // α·√xf + β·xf = yf ; α·sa + β·sb = ya
    let det = xf.sqrt() * sb - xf * sa;
    let alpha = (yf * sb - xf * ya) / det;
    let beta = (xf.sqrt() * ya - sa * yf) / det;
    if alpha < 0.0 || beta < 0.0 {
        let span = if alpha < 0.0 { "far below" } else { "far above" };
        return err(
            "mechanics.average_seek_ns",
            format!(
                "no seek curve t1 + α·√(d−1) + β·(d−1) with α, β ≥ 0 gives an average of {avg} ns between {t1} ns and {full} ns: the average is {span} what the end points allow"
            ),
        );
    }
    Ok((alpha, beta))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECTORS: u64 = 1_953_525_168;

    fn barracuda() -> HddMechanics {
        crate::device::hdd::HddConfig::generic().mechanics
    }

    #[test]
    fn layout_covers_the_capacity_and_every_lba_maps_into_it() {
        let g = Geometry::new(&barracuda(), SECTORS).unwrap();
        assert!(g.capacity_sectors() >= SECTORS);
        assert_eq!(g.revolution_ns, 8_333_334);
        let last = g.place(1_953_525_167);
        assert!(last.cylinder < g.cylinders);
        assert_eq!(g.place(0), Place { cylinder: 0, surface: 0, sector: 0, zone: 0 });
        let spt = g.zones[0].sectors_per_track as u64;
        assert_eq!(g.place(spt), Place { cylinder: 0, surface: 1, sector: 0, zone: 0 }, "next surface first");
        assert_eq!(g.place(spt * 8).cylinder, 1, "then the next cylinder");
        // Zone boundaries: the last sector of a zone and the first of the next.
        for w in g.zones.windows(2) {
            let before = g.place(w[1].first_sector - 1);
            let after = g.place(w[1].first_sector);
            assert_eq!((before.zone + 1, before.cylinder + 1), (after.zone, after.cylinder));
            assert_eq!((after.surface, after.sector), (0, 0));
        }
        assert_eq!(g.zones.last().unwrap().sectors_per_track, 1_050, "the inner zone has the inner count");
    }

    #[test]
    fn seek_curve_meets_its_three_points() {
        let g = Geometry::new(&barracuda(), SECTORS).unwrap();
        assert_eq!(g.seek_ns(0), 0);
        assert_eq!(g.seek_ns(1), 800_000);
        let full = g.seek_ns(g.cylinders - 1) as f64;
        assert!((full - 17e6).abs() < 1e3, "full stroke {full}");
        assert!((g.mean_seek_ns() - 8.5e6).abs() < 1e4, "mean {}", g.mean_seek_ns());
        // Monotonic.
        let mut last = 0;
        for d in (0..g.cylinders).step_by(997) {
            let t = g.seek_ns(d);
            assert!(t >= last);
            last = t;
        }
    }

    #[test]
    fn impossible_seek_figures_are_refused_by_key() {
        let mut m = barracuda();
        m.average_seek_ns = 16_900_000; // almost the full stroke: no concave curve gets there
        assert_eq!(Geometry::new(&m, SECTORS).unwrap_err().key, "mechanics.average_seek_ns");
        let mut m = barracuda();
        m.average_seek_ns = 500_000;
        assert_eq!(Geometry::new(&m, SECTORS).unwrap_err().key, "mechanics.average_seek_ns");
        let mut m = barracuda();
        m.inner_sectors_per_track = 3_000;
        assert_eq!(Geometry::new(&m, SECTORS).unwrap_err().key, "mechanics.inner_sectors_per_track");
    }

    #[test]
    fn a_track_crossing_costs_its_switch_and_lands_on_the_skewed_first_sector() {
        let g = Geometry::new(&barracuda(), SECTORS).unwrap();
        let spt = g.zones[0].sectors_per_track as u64;
        let (ns, end) = g.transfer_ns(spt - 8, 16);
        let sector = g.zones[0].sector_ns;
        let at = |k: u64| (k as f64 * sector) as Time;
        assert_eq!(ns, at(spt) - at(spt - 8) + at(8) + 800_000);
        assert_eq!((end.surface, end.sector), (1, 7));
        // The skew: the next track's first sector comes round right after the switch.
        let p0 = g.place(spt - 1);
        let p1 = g.place(spt);
        let end_of_track = (g.angle_ns(&p0) as f64 + sector) as Time;
        let expect = (end_of_track + g.head_switch_ns) % g.revolution_ns;
        assert!((g.angle_ns(&p1) as i64 - expect as i64).abs() <= 1);
    }

    #[test]
    fn an_access_ends_exactly_where_the_next_sector_starts() {
        let g = Geometry::new(&barracuda(), SECTORS).unwrap();
        let rev = g.revolution_ns;
        for start in (0..200_000u64).step_by(977) {
            let p = g.place(start);
            let (ns, _) = g.transfer_ns(start, 128);
            let next = g.place(start + 128);
            if next.surface != p.surface || next.cylinder != p.cylinder {
                continue; // a switch lies between them, timed by its own skew
            }
            assert_eq!((g.angle_ns(&p) + ns) % rev, g.angle_ns(&next), "from sector {start}");
        }
    }

    #[test]
    fn outer_zones_stream_faster_than_inner_ones() {
        let g = Geometry::new(&barracuda(), SECTORS).unwrap();
        let outer = g.zone_rate(0);
        let inner = g.zone_rate(g.zones.len() - 1);
        // 2,100 sectors × 512 B per 8.33 ms revolution, less one switch in 8.33 ms + 0.8 ms.
        let expect = 2_100.0 * 512.0 * 8.0 / (8.0 * 8_333_334.0 + 8.0 * 800_000.0) * 1e9;
        assert!((outer - expect).abs() / expect < 1e-9, "{outer} vs {expect}");
        assert!((outer / inner - 2.0).abs() < 0.01);
    }
}
