//! Runs the seed's aging procedure through the file-system model and prints the result as
//! JSON: the free-extent histogram (as `e2freefrag` prints it) and the extents of every file
//! left (as `filefrag` counts them).
//!
//! `cargo run --release --example fs_age -- ext4 268435456 1024 4096 7168`
//! (`FS_AGE_WRITEBACK=whole` allocates each file in one request, as delayed allocation
//! does at `sync`; by default block by block, as at write time)
//! (kind: ext4, ext3 [today's kernel: mballoc on a block-mapped file system] or ext3-2008
//! [2008's ext3 allocator]; size in bytes; block size; file sizes, one round each).

use ssdlab_core::fs::aging::{age, Writeback};
use ssdlab_core::fs::{AllocPolicy, Era, FileSystem, FsConfig, FsKind, MkfsOptions, Task};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: fs_age KIND SIZE_BYTES BLOCK_SIZE FILE_BYTES...");
        std::process::exit(2);
    }
    let (kind, era, alloc) = match args[0].as_str() {
        "ext4" => (FsKind::Ext4, Era::Today, AllocPolicy::Mballoc),
        "ext3" => (FsKind::Ext3, Era::Today, AllocPolicy::Mballoc),
        "ext3-2008" => (FsKind::Ext3, Era::Y2008, AllocPolicy::Ext3Reservation),
        k => panic!("unknown kind {k}"),
    };
    let size: u64 = args[1].parse().expect("a size in bytes");
    let mut o = MkfsOptions::new(kind, era, size);
    o.block_size = Some(args[2].parse().expect("a block size"));
    o.alloc = Some(alloc);
    let sizes: Vec<u64> = args[3..]
        .iter()
        .map(|s| s.parse().expect("a file size"))
        .collect();
    let (mut fs, _) = FileSystem::mkfs(FsConfig::new(&o).expect("a geometry")).expect("mkfs");
    let wb = match std::env::var("FS_AGE_WRITEBACK").as_deref() {
        Ok("whole") => Writeback::WholeFile,
        _ => Writeback::PerBlock,
    };
    let phases = age(&mut fs, &sizes, Task { cpu: 0, pid: 1000 }, wb).expect("aging");
    let files: Vec<serde_json::Value> = phases
        .iter()
        .flat_map(|p| p.kept.iter())
        .map(|(name, ino)| serde_json::json!({"name": name, "extents": fs.extents_of(*ino).iter().map(|e| [e.logical as u64, e.phys, e.len as u64]).collect::<Vec<_>>()}))
        .collect();
    let out = serde_json::json!({
        "kind": args[0],
        "block_size": fs.config().block_size,
        "blocks": fs.config().blocks,
        "phases": phases.iter().map(|p| serde_json::json!({"file_bytes": p.file_bytes, "written": p.written, "kept": p.kept.len()})).collect::<Vec<_>>(),
        "freefrag": fs.free_extent_histogram(),
        "files": files,
    });
    println!("{}", serde_json::to_string(&out).unwrap());
}
