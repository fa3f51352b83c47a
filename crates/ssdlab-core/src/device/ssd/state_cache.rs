//! Preconditioned drive states kept on disk, so that the second run of a drive preconditioned
//! with random overwrites starts at once: a `random:2` pass over a 1 TB drive costs about a
//! minute of CPU, reading its state back about a second.
//!
//! An entry is keyed by everything the state depends on: the drive's whole description, the
//! preconditioning, its seed, and the core's build (any change to the model's source makes a
//! new key). The key is stored in the entry and compared in full on reading; the entry's
//! own checksum and the FTL's books are checked too ([`Ftl::restore_state`]). An entry that
//! fails any check is preconditioned again and overwritten, as if it were missing.
//!
//! Sequential fills are not kept: they cost about as much CPU as reading their state back.

use std::fs::{self, File};
use std::hash::Hasher;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rustc_hash::FxHasher;

use super::config::SsdConfig;
use super::ftl::Ftl;
use super::precondition::Precondition;

/// The first bytes of an entry; the number is the layout's version.
const MAGIC: &[u8; 12] = b"ssdlab-ftl2\n";

/// Entries kept together, at most (assumed: a handful of preconditioned drives at their
/// default scales, 0.2–1 GB each; a cache directory must not grow without bound). The
/// least recently used go first.
const LIMIT_BYTES: u64 = 8 << 30;

/// A temporary file older than this is left over from a process that was killed while it
/// wrote, and is removed.
const STALE_TMP: Duration = Duration::from_secs(3600);

/// A directory of preconditioned states.
#[derive(Clone, Debug)]
pub struct StateCache {
    dir: PathBuf,
    limit_bytes: u64,
}

/// What a look in the cache found.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The state was read into the FTL.
    Restored,
    /// No entry: precondition, then store.
    Missing,
    /// An entry that is not whole or not this drive's (said why); the FTL was rebuilt fresh.
    Damaged(String),
}

impl StateCache {
    pub fn new(dir: impl Into<PathBuf>) -> StateCache {
        StateCache { dir: dir.into(), limit_bytes: LIMIT_BYTES }
    }

    /// The same, keeping at most `limit_bytes` of entries.
    pub fn with_limit(dir: impl Into<PathBuf>, limit_bytes: u64) -> StateCache {
        StateCache { dir: dir.into(), limit_bytes }
    }

    /// Whether a preconditioning is worth keeping (see the module's note).
    pub fn keeps(pre: Precondition) -> bool {
        matches!(pre, Precondition::Random { passes } if passes > 0.0)
    }

    /// Read the state of a drive described by `cfg`, preconditioned with `pre` from `seed`,
    /// into `ftl` (a fresh FTL of that drive). Unless it is [`Lookup::Restored`], `ftl` is
    /// fresh afterwards.
    pub fn restore(&self, cfg: &SsdConfig, pre: Precondition, seed: u64, ftl: &mut Ftl) -> Lookup {
        let key = key(cfg, pre, seed);
        let path = self.path(&key);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Lookup::Missing,
            Err(e) => return Lookup::Damaged(format!("{}: {e}", path.display())),
        };
        let mut input = BufReader::with_capacity(1 << 20, file);
        let found = read_key(&mut input).and_then(|stored| {
            if stored != key {
                return Err("another drive's state (the names' hashes collide)".into());
            }
            ftl.restore_state(&mut input).map_err(|e| e.0)
        });
        match found {
            Ok(()) => {
                // Used now: the last to be evicted.
                let _ = File::options().write(true).open(&path).and_then(|f| f.set_modified(SystemTime::now()));
                Lookup::Restored
            }
            Err(why) => {
                *ftl = Ftl::new(cfg);
                Lookup::Damaged(format!("{}: {why}", path.display()))
            }
        }
    }

    /// Keep `ftl`, the state `pre` left from `seed` on a drive described by `cfg`: written
    /// to a file of its own and renamed into place, so processes storing at once never see
    /// each other's halves. Then the entries of other builds of the core, temporary files
    /// left by killed processes, and the least recently used entries beyond the limit go.
    pub fn store(&self, cfg: &SsdConfig, pre: Precondition, seed: u64, ftl: &Ftl) -> io::Result<()> {
        let key = key(cfg, pre, seed);
        let path = self.path(&key);
        fs::create_dir_all(&self.dir)?;
        let name = path.file_name().expect("a file name").to_string_lossy().into_owned();
        let tmp = self.dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let written = (|| {
            let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
            out.write_all(MAGIC)?;
            out.write_all(&(key.len() as u64).to_le_bytes())?;
            out.write_all(key.as_bytes())?;
            ftl.save_state(&mut out)?;
            out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            fs::rename(&tmp, &path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written?;
        self.tidy(&path);
        Ok(())
    }

    /// Files of the entry `key` would be in: named by the core's build and the key's hashes.
    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{}-{:016x}.ftl", build_prefix(), fx(key)))
    }

    /// Remove what the cache no longer needs (see [`StateCache::store`]); `kept` stays.
    fn tidy(&self, kept: &Path) {
        let Ok(dir) = fs::read_dir(&self.dir) else { return };
        let now = SystemTime::now();
        let prefix = build_prefix();
        let mut entries = Vec::new();
        for e in dir.flatten() {
            let path = e.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else { continue };
            let Ok(meta) = e.metadata() else { continue };
            let modified = meta.modified().unwrap_or(now);
            if name.starts_with('.') && name.ends_with(".tmp") {
                if now.duration_since(modified).unwrap_or_default() > STALE_TMP {
                    let _ = fs::remove_file(&path);
                }
            } else if name.ends_with(".ftl") && path != kept {
                if name.starts_with(&prefix) {
                    entries.push((modified, meta.len(), path));
                } else {
                    let _ = fs::remove_file(&path);
                }
            }
        }
        let mut total = fs::metadata(kept).map(|m| m.len()).unwrap_or(0) + entries.iter().map(|e| e.1).sum::<u64>();
        entries.sort();
        for (_, len, path) in entries {
            if total <= self.limit_bytes {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// Everything a preconditioned state depends on, as text.
fn key(cfg: &SsdConfig, pre: Precondition, seed: u64) -> String {
    let drive = serde_json::to_string(cfg).expect("a drive description serialises");
    let pre = serde_json::to_string(&pre).expect("a precondition serialises");
    format!("{{\"core\":\"{}\",\"drive\":{drive},\"precondition\":{pre},\"seed\":{seed}}}", crate::build_id())
}

fn build_prefix() -> String {
    format!("{:08x}", fx(&crate::build_id()) as u32)
}

fn fx(text: &str) -> u64 {
    let mut h = FxHasher::default();
    h.write(text.as_bytes());
    h.finish()
}

/// The key an entry starts with.
fn read_key(input: &mut impl Read) -> Result<String, String> {
    let mut magic = [0u8; MAGIC.len()];
    input.read_exact(&mut magic).map_err(|_| "not a state: cut short".to_string())?;
    if &magic != MAGIC {
        return Err("not a state of this layout".into());
    }
    let mut len = [0u8; 8];
    input.read_exact(&mut len).map_err(|_| "cut short".to_string())?;
    let len = u64::from_le_bytes(len);
    if len > 1 << 24 {
        return Err(format!("a key of {len} bytes"));
    }
    let mut key = vec![0u8; len as usize];
    input.read_exact(&mut key).map_err(|_| "cut short".to_string())?;
    String::from_utf8(key).map_err(|_| "a key that is not text".into())
}
