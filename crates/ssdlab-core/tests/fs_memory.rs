//! Memory per live file: heap bytes the model holds per one-extent file with its directory
//! entry, measured by counting the allocator's bytes in this test binary (only here: the
//! model keeps no globals) around the creation of a million such files in 500 directories.

use ssdlab_core::fs::{Era, FileSystem, FsConfig, FsKind, MkfsOptions, Task, ROOT_INO};

mod counting;

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

#[test]
fn a_one_extent_file_and_its_entry_cost_under_100_bytes() {
    const FILES: u32 = 1_000_000;
    let mut o = MkfsOptions::new(FsKind::Ext4, Era::Today, 16 << 30);
    o.inode_count = Some(1_200_000);
    let (mut fs, _) = FileSystem::mkfs(FsConfig::new(&o).unwrap()).unwrap();
    let dirs: Vec<u32> = (0..500)
        .map(|d| {
            fs.mkdir(ROOT_INO, format!("dir{d:03}").as_bytes(), Task::default())
                .unwrap()
                .0
        })
        .collect();
    let before = counting::live();
    for i in 0..FILES {
        let dir = dirs[(i % 500) as usize];
        let (ino, _) = fs
            .create(dir, format!("file-{i:08}.dat").as_bytes(), Task::default())
            .unwrap();
        fs.set_size(ino, 8192).unwrap();
        fs.allocate(ino, 0, 2, Task::default()).unwrap();
        fs.release(ino);
    }
    fs.unmount();
    let after = counting::live();
    let per_file = (after - before) as f64 / FILES as f64;
    let one_extent = dirs
        .iter()
        .flat_map(|&d| fs.children(d))
        .filter(|&f| fs.extents_of(f).len() == 1)
        .count();
    eprintln!("heap per live file: {per_file:.1} bytes ({} of {FILES} files in one extent); model's own estimate {} bytes in all", one_extent, fs.heap_bytes());
    assert!(one_extent as u32 > FILES * 99 / 100);
    assert!(per_file <= 100.0, "{per_file:.1} bytes per live file");
}
