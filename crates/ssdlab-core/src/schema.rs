//! The JSON Schema of the core's input, generated from the types that read it, so that the
//! Python layer can be checked against it (the types are the one definition; the schema
//! follows them and can never drift).

use crate::sim::SimSpec;

/// The schema of a [`SimSpec`] (a run's whole input) as JSON text.
pub fn spec_schema_json() -> String {
    serde_json::to_string_pretty(&schemars::schema_for!(SimSpec)).expect("a schema serialises")
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
        assert_eq!(kinds, ["nand-ssd", "in-place", "hdd", "array"]);
        assert_eq!(defs["JobSpec"]["additionalProperties"], serde_json::Value::Bool(false));
        assert!(defs["JobSpec"]["properties"].get("target").is_some());
    }
}
