//! Reports: what devices, arrays and runs tell of themselves. They sit below everything that
//! fills them (devices, arrays, the host, the run), so that each layer can hand its report up
//! without knowing who reads it, and so that the core's output is defined in one place.

pub mod array;
pub mod device;
pub mod file;
pub mod remap;
pub mod run;

pub use array::{ArrayReport, RebuildReport};
pub use device::{DeviceKind, DeviceReport, HddReport, NandReport, ThermalReport};
pub use file::{CoreShare, CpuInterval, FileCounters, FileReport, FsPowerCut};
pub use remap::RemapReport;
pub use run::{DeviceResult, DeviceSample, PowerCutDevice, PowerCutReport, Sample, SimResult};
