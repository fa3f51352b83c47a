//! The file sets' state: which entry is which inode, how big each file is to be, and the
//! lists a random pick draws from (the entries that exist, those that do not), each kept so
//! that a pick, a create and a delete take constant time. A create or a delete claims its
//! entry when it picks it: until it is done no other create or delete picks the same one
//! (filebench marks a picked file busy the same way).

use rustc_hash::FxHashSet;
use rand::{Rng as _, SeedableRng};

use crate::engine::rng::{derive_seed, Rng};
use crate::workload::files::FileSetSpec;

/// A list of entries with O(1) insert, remove and random pick (an index of positions).
#[derive(Clone, Debug, Default)]
struct Bag {
    items: Vec<u32>,
    pos: Vec<u32>,
}

const ABSENT: u32 = u32::MAX;

impl Bag {
    fn with_len(n: u64) -> Bag {
        Bag { items: Vec::new(), pos: vec![ABSENT; n as usize] }
    }
    fn insert(&mut self, e: u32) {
        debug_assert_eq!(self.pos[e as usize], ABSENT);
        self.pos[e as usize] = self.items.len() as u32;
        self.items.push(e);
    }
    fn remove(&mut self, e: u32) {
        let p = self.pos[e as usize];
        debug_assert_ne!(p, ABSENT);
        let last = self.items.pop().expect("a member");
        if last != e {
            self.items[p as usize] = last;
            self.pos[last as usize] = p;
        }
        self.pos[e as usize] = ABSENT;
    }
    fn pick(&self, rng: &mut Rng) -> Option<u32> {
        (!self.items.is_empty()).then(|| self.items[rng.gen_range(0..self.items.len())])
    }
    fn len(&self) -> usize {
        self.items.len()
    }
    fn contains(&self, e: u64) -> bool {
        self.pos[e as usize] != ABSENT
    }
}

/// One file set at run time.
#[derive(Clone, Debug)]
pub struct SetState {
    pub spec: FileSetSpec,
    /// The file system (mount) it lives on.
    pub mount: usize,
    /// Each entry's inode (0: it does not exist) and the size it is to be written to (drawn
    /// from the set's distribution when it is created, as filebench does).
    pub ino: Vec<u32>,
    pub size: Vec<u64>,
    /// The directory inode of each subdirectory (one, `dir`, when `dir_width` is 0).
    pub dirs: Vec<u32>,
    /// Entries free to pick, by state (claimed ones are in neither).
    existing: Bag,
    absent: Bag,
    rng: Rng,
    /// Where the next rotor pick of an absent (`[0]`) or an existing (`[1]`) entry starts
    /// looking: creates and deletes each go round in order, a queue's two ends.
    rotor: [u64; 2],
    /// Files that exist.
    live: u64,
    /// Whether each entry's dentry and inode are in memory (looked up or made in the run):
    /// its lookup then reads nothing. A run starts with none, as after a mount; the
    /// dentry and inode caches are not shrunk.
    pub in_memory: Vec<bool>,
    /// Of a set laid out unwritten (`FileSetSpec::unwritten`): the pages written since,
    /// (entry, page), which hold data.
    pub written_pages: FxHashSet<(u64, u64)>,
}

impl SetState {
    pub fn new(spec: FileSetSpec, mount: usize, seed: u64, index: u64) -> SetState {
        let n = spec.entries;
        let mut absent = Bag::with_len(n);
        for e in 0..n as u32 {
            absent.insert(e);
        }
        SetState {
            ino: vec![0; n as usize],
            size: vec![0; n as usize],
            dirs: Vec::new(),
            existing: Bag::with_len(n),
            absent,
            rng: Rng::seed_from_u64(derive_seed(seed, "file-set", index)),
            rotor: [0; 2],
            live: 0,
            in_memory: vec![false; n as usize],
            written_pages: FxHashSet::default(),
            spec,
            mount,
        }
    }

    /// The subdirectory entry `e` lives in (index into `dirs`).
    pub fn dir_of(&self, e: u64) -> usize {
        match self.spec.dir_width {
            0 => 0,
            w => (e / w) as usize,
        }
    }

    /// Subdirectories the set spreads its entries over.
    pub fn dir_count(&self) -> u64 {
        match self.spec.dir_width {
            0 => 1,
            w => self.spec.entries.div_ceil(w),
        }
    }

    /// Entry `e`'s name in its directory.
    pub fn name(e: u64) -> Vec<u8> {
        format!("f{e:08}").into_bytes()
    }

    pub fn exists(&self, e: u64) -> bool {
        self.ino[e as usize] != 0
    }

    /// A random existing entry, or a random absent one; `claim`: taken out of the pickable
    /// until it is created, deleted or given back.
    pub fn pick(&mut self, existing: bool, claim: bool) -> Option<u64> {
        let bag = if existing { &mut self.existing } else { &mut self.absent };
        let e = bag.pick(&mut self.rng)?;
        if claim {
            bag.remove(e);
        }
        Some(u64::from(e))
    }

    /// The next pickable entry in the state needed (`existing`) after that state's rotor,
    /// wrapping round; the rotor moves past it (filebench's fileset_pick). None: no entry is
    /// in that state.
    pub fn rotor_pick(&mut self, existing: bool, claim: bool) -> Option<u64> {
        let r = existing as usize;
        let bag = if existing { &mut self.existing } else { &mut self.absent };
        if bag.len() == 0 {
            return None;
        }
        let n = self.spec.entries;
        for k in 0..n {
            let e = (self.rotor[r] + k) % n;
            if bag.contains(e) {
                self.rotor[r] = (e + 1) % n;
                if claim {
                    bag.remove(e as u32);
                }
                return Some(e);
            }
        }
        None
    }

    /// Entry `e`'s creator closed it: picks of existing files may take it.
    pub fn publish(&mut self, e: u64) {
        if self.exists(e) && !self.existing.contains(e) {
            self.existing.insert(e as u32);
        }
    }

    /// A claimed entry's create or delete failed: it is pickable again, in its state.
    pub fn unclaim(&mut self, e: u64) {
        let bag = if self.exists(e) { &mut self.existing } else { &mut self.absent };
        if !bag.contains(e) {
            bag.insert(e as u32);
        }
    }

    /// Entry `e` now exists as inode `ino`; its size to be is drawn. Other threads' picks
    /// see it once its creator closes it ([`SetState::publish`]), as a file is busy while the
    /// thread that made it writes it.
    pub fn created(&mut self, e: u64, ino: u32) -> u64 {
        self.ino[e as usize] = ino;
        if self.absent.contains(e) {
            self.absent.remove(e as u32);
        }
        self.live += 1;
        let size = self.spec.size.draw(&mut self.rng);
        self.size[e as usize] = size;
        size
    }

    /// Entry `e` was deleted.
    pub fn deleted(&mut self, e: u64) {
        self.ino[e as usize] = 0;
        self.in_memory[e as usize] = false;
        if self.existing.contains(e) {
            self.existing.remove(e as u32);
        }
        self.absent.insert(e as u32);
        self.live -= 1;
    }

    /// Files that exist (claimed ones included).
    pub fn existing(&self) -> u64 {
        self.live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bag_keeps_its_members_through_inserts_and_removes() {
        let mut b = Bag::with_len(10);
        for e in [3, 7, 1, 9] {
            b.insert(e);
        }
        b.remove(7);
        b.remove(3);
        b.insert(7);
        let mut m = b.items.clone();
        m.sort();
        assert_eq!(m, vec![1, 7, 9]);
        for (i, &e) in b.items.iter().enumerate() {
            assert_eq!(b.pos[e as usize], i as u32);
        }
    }

    fn set(entries: u64) -> SetState {
        let spec = FileSetSpec {
            name: "q".into(),
            target: 0,
            dir: "/q".into(),
            entries,
            size: crate::workload::files::SizeSpec::Fixed { bytes: 4096 },
            dir_width: 0,
            prealloc: 0.0,
            dirs: false,
            block_device: false,
            unwritten: false,
            names_cached: false,
            maps_cached: false,
        };
        SetState::new(spec, 0, 1, 0)
    }

    #[test]
    fn a_claimed_entry_is_picked_by_no_one_else_until_given_back() {
        let mut s = set(3);
        let a = s.rotor_pick(false, true).unwrap();
        let b = s.rotor_pick(false, true).unwrap();
        let c = s.pick(false, true).unwrap();
        let mut all = vec![a, b, c];
        all.sort();
        assert_eq!(all, vec![0, 1, 2], "three claims, three different entries");
        assert_eq!(s.pick(false, true), None);
        assert_eq!(s.rotor_pick(false, true), None);
        s.unclaim(b);
        assert_eq!(s.pick(false, false), Some(b), "given back, pickable again");
        s.created(a, 10);
        assert_eq!(s.existing(), 1);
        assert_eq!(s.rotor_pick(true, false), None, "busy while its creator has it open");
        s.publish(a);
        assert_eq!(s.rotor_pick(true, true), Some(a));
        assert_eq!(s.rotor_pick(true, true), None, "claimed for deletion");
        s.deleted(a);
        assert_eq!(s.existing(), 0);
    }

    #[test]
    fn creates_and_deletes_go_round_on_rotors_of_their_own() {
        let mut s = set(4);
        for ino in 1..=3 {
            let e = s.rotor_pick(false, true).unwrap();
            s.created(e, ino);
            s.publish(e);
        }
        // The queue's head: deletes start at the oldest, whatever the creates did.
        assert_eq!(s.rotor_pick(true, true), Some(0));
        assert_eq!(s.rotor_pick(false, true), Some(3));
    }
}
