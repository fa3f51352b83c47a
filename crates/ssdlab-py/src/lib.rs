//! Python bindings: a thin JSON-in/JSON-out wrapper around `ssdlab_core::run_json`.
//! The GIL is released while simulating; core errors become `ValueError` with the message.

use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use ssdlab_core::progress::{Flow, Progress};
use ssdlab_core::workload::trace::{summarize, TimeUnit, TraceFormat, TraceOptions, UnknownTraceFormat};
use ssdlab_core::device::ssd::StateCache;
use ssdlab_core::sim::Carry;
use ssdlab_core::SimError;

/// Run one simulation. `spec_json` is a serialised SimSpec; returns a serialised SimResult.
///
/// The GIL is released while the core runs; about every 100 ms the core stops to take it
/// back, run Python's signal handlers (Ctrl-C raises KeyboardInterrupt here, and the run
/// ends) and call `progress` with a dict of the run's progress (see
/// `ssdlab_core::progress::Progress`). An exception raised by either ends the run and is
/// raised from this call.
///
/// `state_cache`: a directory where drives' preconditioned states are read from, and kept
/// (see `ssdlab_core::device::ssd::StateCache`); the result is the same with or without it.
///
/// `carry_states`: a directory the drives start from (the states an earlier run left there)
/// and leave their states in when the run has drained (see `ssdlab_core::sim::Carry`).
#[pyfunction]
#[pyo3(signature = (spec_json, progress=None, state_cache=None, carry_states=None))]
fn run_json(
    py: Python<'_>,
    spec_json: String,
    progress: Option<PyObject>,
    state_cache: Option<String>,
    carry_states: Option<String>,
) -> PyResult<String> {
    let states = state_cache.map(StateCache::new);
    let carry = carry_states.map(Carry::new);
    let mut raised: Option<PyErr> = None;
    let result = py.allow_threads(|| {
        let mut observer = |p: &Progress| {
            Python::with_gil(|py| {
                let told = py.check_signals().and_then(|()| match &progress {
                    Some(callback) => callback.call1(py, (progress_dict(py, p)?,)).map(drop),
                    None => Ok(()),
                });
                match told {
                    Ok(()) => Flow::Continue,
                    Err(e) => {
                        raised = Some(e);
                        Flow::Stop
                    }
                }
            })
        };
        ssdlab_core::sim::run_json_carried(&spec_json, &mut observer, states.as_ref(), carry.as_ref())
    });
    match result {
        Ok(text) => Ok(text),
        Err(SimError::Interrupted) => Err(raised.unwrap_or_else(|| PyKeyboardInterrupt::new_err("interrupted"))),
        Err(e) => Err(PyValueError::new_err(e.to_string())),
    }
}

/// `p` as a dict of plain values (the names of `Progress`'s fields).
fn progress_dict<'py>(py: Python<'py>, p: &Progress) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("phase", p.phase.as_str())?;
    d.set_item("start_ns", p.start_ns)?;
    d.set_item("now_ns", p.now_ns)?;
    d.set_item("end_ns", p.end_ns)?;
    d.set_item("planned_bytes", p.planned_bytes)?;
    d.set_item("requests", p.requests)?;
    d.set_item("bytes", p.bytes)?;
    d.set_item("events", p.events)?;
    d.set_item("fraction", p.fraction)?;
    d.set_item("rebuild_bytes", p.rebuild_bytes.map(|r| r.0))?;
    d.set_item("rebuild_target_bytes", p.rebuild_bytes.map(|r| r.1))?;
    let pre = p.precondition.as_ref();
    d.set_item("device", pre.map(|c| c.device.as_str()))?;
    d.set_item("fill", pre.map(|c| c.fill))?;
    d.set_item("passes_done", pre.map(|c| c.passes_done))?;
    d.set_item("passes", pre.map(|c| c.passes))?;
    d.set_item("restored", pre.map(|c| c.restored))?;
    Ok(d)
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

/// The most memory the file layer of a run (its spec as JSON) will hold, as JSON: the page
/// cache's pages and bytes and each target's file system's bytes; `null` without file jobs.
#[pyfunction]
fn file_memory(spec_json: String) -> PyResult<String> {
    ssdlab_core::sim::file_memory_json(&spec_json).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// What the trace at `path` holds, read to its end before it is replayed: a dict of
/// `lines`, `records`, `devices` ({device id: records}), `last_time_ns` and `last_time_line`
/// (its latest record time, ns after the first record), `last_record_line`, `skipped` (a list
/// of (kind, description, lines, first line) for the lines that held no record) and `error`
/// (None, or the message of the first error, which ends the reading) with `error_line`.
#[pyfunction]
#[pyo3(signature = (path, format, disksim_time_unit="ns"))]
fn trace_summary<'py>(py: Python<'py>, path: String, format: &str, disksim_time_unit: &str) -> PyResult<Bound<'py, PyDict>> {
    let format: TraceFormat = format.parse().map_err(|e: UnknownTraceFormat| PyValueError::new_err(e.to_string()))?;
    let unit = match disksim_time_unit {
        "ns" => TimeUnit::Ns,
        "ms" => TimeUnit::Ms,
        other => return Err(PyValueError::new_err(format!("disksim_time_unit {other:?}: expected ns or ms"))),
    };
    let opts = TraceOptions { disksim_time_unit: unit, ..TraceOptions::default() };
    let s = py.allow_threads(|| summarize(std::path::Path::new(&path), format, opts));
    let d = PyDict::new(py);
    d.set_item("lines", s.lines)?;
    d.set_item("records", s.records)?;
    let devices = PyDict::new(py);
    for (id, n) in &s.devices {
        devices.set_item(id, n)?;
    }
    d.set_item("devices", devices)?;
    // per device: [(records, min bytes, max bytes)] for reads, writes and trims
    let ops = PyDict::new(py);
    for (id, per) in &s.ops {
        let v: Vec<(u64, u64, u64)> = per.iter().map(|o| (o.records, o.min_bytes, o.max_bytes)).collect();
        ops.set_item(id, v)?;
    }
    d.set_item("ops", ops)?;
    d.set_item("last_time_ns", s.last_time_ns)?;
    d.set_item("last_time_line", s.last_time_line)?;
    d.set_item("last_record_line", s.last_record_line)?;
    let skipped: Vec<(&str, &str, u64, u64)> =
        s.skipped.iter().map(|&(k, n, first)| (k.name(), k.describe(), n, first)).collect();
    d.set_item("skipped", skipped)?;
    d.set_item("error", s.error.as_ref().map(|e| e.to_string()))?;
    d.set_item("error_line", s.error.as_ref().map(|e| e.line))?;
    Ok(d)
}

/// The JSON Schema of the core's input (a run spec), for checking what Python sends.
#[pyfunction]
fn spec_schema() -> String {
    ssdlab_core::schema::spec_schema_json()
}

/// The JSON Schema of the core's output (a run's result), for checking what Python reads.
#[pyfunction]
fn result_schema() -> String {
    ssdlab_core::schema::result_schema_json()
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
    m.add_function(wrap_pyfunction!(file_memory, m)?)?;
    m.add_function(wrap_pyfunction!(spec_schema, m)?)?;
    m.add_function(wrap_pyfunction!(result_schema, m)?)?;
    m.add_function(wrap_pyfunction!(core_build_id, m)?)?;
    m.add_function(wrap_pyfunction!(trace_summary, m)?)?;
    Ok(())
}
