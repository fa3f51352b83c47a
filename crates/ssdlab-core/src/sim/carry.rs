//! Drives that keep their state from one run to the next, as real drives do between the
//! points of a benchmark run one after another on them: each flash drive's FTL (its maps,
//! blocks, open blocks and wear) is written to a directory when the run has drained, and read
//! back into the drive of the same name when the next run with that directory is built.
//!
//! A drive with no file there starts as built (fresh, or preconditioned). Files are named by
//! target and member (`md0.sda.ftl`, or `sda.ftl` for a drive alone), so an array rebuilt
//! with another chunk or more members keeps the members it had. A state restores only into a
//! drive of the same geometry ([`Ftl::restore_state`] checks it, and its books). The run's
//! counters (host and GC programs, erases) start from zero, as after preconditioning; wear
//! stays. What lives outside the FTL (a write buffer, which the drain empties, temperature)
//! is not carried.

use std::fs::{self, File};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::device::ssd::ftl::Ftl;
use crate::device::Drive;
use crate::error::SimError;
use crate::target::{AnyTarget, TargetDevice};

/// The first bytes of a carried state; the number is the layout's version.
const MAGIC: &[u8; 14] = b"ssdlab-carry1\n";

/// A directory of drives' states carried between runs.
#[derive(Clone, Debug)]
pub struct Carry {
    dir: PathBuf,
}

impl Carry {
    pub fn new(dir: impl Into<PathBuf>) -> Carry {
        Carry { dir: dir.into() }
    }

    fn path(&self, target: &str, member: Option<&str>) -> PathBuf {
        let name = match member {
            Some(m) => format!("{target}.{m}.ftl"),
            None => format!("{target}.ftl"),
        };
        self.dir.join(name.replace('/', "_"))
    }

    /// Give the flash drives of `device` (target `target`) the states a run left here.
    pub fn restore(&self, target: &str, device: &mut AnyTarget) -> Result<(), SimError> {
        match device {
            AnyTarget::Drive(d) => self.restore_one(target, None, d.ftl_mut()),
            AnyTarget::Array(a) => {
                a.members_named_mut().try_for_each(|(name, m)| self.restore_one(target, Some(name), m.ftl_mut()))
            }
            AnyTarget::Remap(_) => Err(SimError::Input(format!(
                "carry_states: target {target} is a remapping layer, whose drive's state is not carried"
            ))),
        }
    }

    fn restore_one(&self, target: &str, member: Option<&str>, ftl: Option<&mut Ftl>) -> Result<(), SimError> {
        let Some(ftl) = ftl else { return Ok(()) };
        let path = self.path(target, member);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(SimError::Input(format!("carry_states: {}: {e}", path.display()))),
        };
        let mut input = BufReader::with_capacity(1 << 20, file);
        let mut magic = [0u8; MAGIC.len()];
        let restored = input
            .read_exact(&mut magic)
            .map_err(|e| e.to_string())
            .and_then(|()| if &magic == MAGIC { Ok(()) } else { Err("not a carried drive state".into()) })
            .and_then(|()| ftl.restore_state(&mut input).map_err(|e| e.0));
        if let Err(why) = restored {
            return Err(SimError::Input(format!(
                "carry_states: {}: {why} (expected the state of a drive like this run's {})",
                path.display(),
                member.unwrap_or(target)
            )));
        }
        // This run's counters are its own; the state (and its wear) is what carries.
        ftl.counters = Default::default();
        Ok(())
    }

    /// Keep the states of `device`'s flash drives (target `target`) for the next run: each
    /// written to a file of its own and renamed into place.
    pub fn save(&self, target: &str, device: &impl TargetDevice) -> Result<(), SimError> {
        let mut result = Ok(());
        device.visit_ftls(&mut |member, ftl| {
            if result.is_ok() {
                result = self.save_one(&self.path(target, member), ftl);
            }
        });
        result
    }

    fn save_one(&self, path: &Path, ftl: &Ftl) -> Result<(), SimError> {
        let tmp = path.with_extension(format!("ftl.{}.tmp", std::process::id()));
        let written = (|| {
            fs::create_dir_all(&self.dir)?;
            let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
            out.write_all(MAGIC)?;
            ftl.save_state(&mut out)?;
            out.into_inner().map_err(|e| e.into_error())?;
            fs::rename(&tmp, path)
        })();
        written.map_err(|e| {
            let _ = fs::remove_file(&tmp);
            SimError::Input(format!("carry_states: cannot write {}: {e}", path.display()))
        })
    }
}
