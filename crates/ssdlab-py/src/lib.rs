//! Python bindings: a thin JSON-in/JSON-out wrapper around `ssdlab_core::run_json`.
//! The GIL is released while simulating; core errors become `ValueError` with the message.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Run one simulation. `spec_json` is a serialised SimSpec; returns a serialised SimResult.
#[pyfunction]
fn run_json(py: Python<'_>, spec_json: String) -> PyResult<String> {
    py.allow_threads(|| ssdlab_core::run_json(&spec_json)).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Version of the compiled core.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    Ok(())
}
