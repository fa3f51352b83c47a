//! The JSON Schemas of the core's input and output, generated from the types that read and
//! write them, so that the Python layer can be checked against them (the types are the one
//! definition; the schemas follow them and can never drift).

use crate::report::SimResult;
use crate::sim::SimSpec;

/// The schema of a [`SimSpec`] (a run's whole input) as JSON text.
pub fn spec_schema_json() -> String {
    serde_json::to_string_pretty(&schemars::schema_for!(SimSpec)).expect("a schema serialises")
}

/// The schema of a [`SimResult`] (a run's whole output) as JSON text, as it is serialised:
/// every field the core always writes is required.
pub fn result_schema_json() -> String {
    let generator = schemars::generate::SchemaSettings::default().for_serialize().into_generator();
    serde_json::to_string_pretty(&generator.into_root_schema_for::<SimResult>()).expect("a schema serialises")
}

#[cfg(test)]
mod tests {
    #[test]
    fn schema_names_the_input_types_and_forbids_unknown_keys() {
        let schema: serde_json::Value = serde_json::from_str(&super::spec_schema_json()).unwrap();
        let defs = schema["$defs"].as_object().expect("definitions");
        for name in ["JobSpec", "DeviceConfig", "HostConfig", "TargetSpec"] {
            assert!(defs.contains_key(name), "{name} missing from the schema");
        }
        let kinds: Vec<&str> = defs["DeviceConfig"]["oneOf"]
            .as_array()
            .expect("one schema per device kind")
            .iter()
            .map(|v| v["properties"]["kind"]["const"].as_str().expect("a kind tag"))
            .collect();
        assert_eq!(kinds, ["nand-ssd", "in-place", "hdd", "array", "remap"]);
        assert_eq!(defs["JobSpec"]["additionalProperties"], serde_json::Value::Bool(false));
        assert!(defs["JobSpec"]["properties"].get("target").is_some());
    }

    /// The output's schema requires what the core always writes and leaves optional only what
    /// it may leave out (`skip_serializing_if`), and a real result validates against its shape.
    #[test]
    fn result_schema_requires_what_the_core_always_writes() {
        let schema: serde_json::Value = serde_json::from_str(&super::result_schema_json()).unwrap();
        let defs = schema["$defs"].as_object().expect("definitions");
        let required = |name: &str| -> Vec<String> {
            defs[name]["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
        };
        assert!(required("NandReport").contains(&"erase_count".to_string()));
        assert!(required("DeviceReport").contains(&"nand".to_string()), "written, as null for other kinds");
        assert!(!required("DeviceReport").contains(&"array".to_string()), "left out unless an array");
        assert!(!required("ArrayReport").contains(&"rebuild".to_string()));
        assert!(required("JobStats").contains(&"read".to_string()));
        assert!(!required("JobStats").contains(&"log".to_string()));
        for name in ["SimResult", "DeviceResult", "DiskCounters", "Sample", "RebuildReport", "HddReport", "ThermalReport"] {
            assert!(defs.contains_key(name) || name == "SimResult", "{name} missing from the schema");
        }
        assert!(schema["required"].as_array().unwrap().iter().any(|v| v == "devices"));
    }
}
