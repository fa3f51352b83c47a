//! Python bindings: a thin JSON-in/JSON-out wrapper around `ssdlab_core::run_json`.
//! The GIL is released while simulating; core errors become `ValueError` with the message.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Run one simulation. `spec_json` is a serialised SimSpec; returns a serialised SimResult.
#[pyfunction]
fn run_json(py: Python<'_>, spec_json: String) -> PyResult<String> {
    py.allow_threads(|| ssdlab_core::run_json(&spec_json)).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Check a device description (JSON): None if the core accepts it, else (key, message) with
/// the key in the core's terms.
#[pyfunction]
fn check_device(device_json: String) -> Option<(String, String)> {
    ssdlab_core::sim::check_device_json(&device_json).err().map(|e| (e.key, e.message))
}

/// The bytes a device description (JSON) offers the host (an array: what its level leaves).
#[pyfunction]
fn device_capacity(device_json: String) -> PyResult<u64> {
    ssdlab_core::sim::device_capacity_json(&device_json).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The JSON Schema of the core's input (a run spec), for checking what Python sends.
#[pyfunction]
fn spec_schema() -> String {
    ssdlab_core::schema::spec_schema_json()
}

/// The core's identity: version and a hash of its source (see `ssdlab_core::build_id`).
#[pyfunction]
fn core_build_id() -> String {
    ssdlab_core::build_id()
}

/// Version of the compiled core.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A broken model invariant (a panic) reaches Python as an error carrying its message; the
    // default hook would also print a backtrace over the user's terminal. It stays quiet
    // unless SSDLAB_BACKTRACE is set. The hook belongs to this module's copy of std only.
    if std::env::var_os("SSDLAB_BACKTRACE").is_none() {
        std::panic::set_hook(Box::new(|_| {}));
    }
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    m.add_function(wrap_pyfunction!(check_device, m)?)?;
    m.add_function(wrap_pyfunction!(device_capacity, m)?)?;
    m.add_function(wrap_pyfunction!(spec_schema, m)?)?;
    m.add_function(wrap_pyfunction!(core_build_id, m)?)?;
    Ok(())
}
