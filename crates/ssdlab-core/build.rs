//! Identify the model by its source: a hash of every file under `src/`, so that results
//! cached by the Python layer are keyed by what the simulator *is*, which every machine
//! building the same source agrees on (a file's build time or path would not).

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("src/ is readable").flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    files(&root.join("src"), &mut all);
    // FNV-1a over relative paths and contents, in sorted order.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in &all {
        let rel = p.strip_prefix(root).expect("under the crate").to_string_lossy().replace('\\', "/");
        for b in rel.bytes().chain([0u8]).chain(std::fs::read(p).expect("source is readable")).chain([0u8]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
    }
    println!("cargo:rustc-env=SSDLAB_CORE_SOURCE_HASH={h:016x}");
    println!("cargo:rerun-if-changed=src");
}
