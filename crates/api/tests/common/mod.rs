//! Helpers shared by the integration tests: the generated schemas, the examples, and the two
//! validators (OpenAPI structure via `jsonschema`, CEL via kube-cel).

#![allow(dead_code, clippy::unwrap_used)]

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use kube::core::cel::Validator;
use serde_json::Value;

/// One refusal: the dotted path it points at and its message.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub path: String,
    pub message: String,
    /// The CEL rule text (empty for structural refusals).
    pub rule: String,
}

/// `docs/examples` of the workspace.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples")
}

/// Kind → `openAPIV3Schema` of the generated CRD.
pub fn schemas() -> BTreeMap<String, Value> {
    ptah_api::crds()
        .expect("CRDs generate")
        .into_iter()
        .map(|crd| {
            let schema = crd.spec.versions[0]
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref())
                .expect("every CRD has a schema");
            (crd.spec.names.kind.clone(), serde_json::to_value(schema).unwrap())
        })
        .collect()
}

/// The schema of one kind.
pub fn schema_of(kind: &str) -> Value {
    schemas()
        .remove(kind)
        .unwrap_or_else(|| panic!("no CRD for kind {kind}"))
}

/// Parses a YAML manifest into JSON.
pub fn parse_yaml(text: &str) -> Value {
    serde_saphyr::from_str::<Value>(text).expect("example parses as YAML")
}

/// Reads a manifest file.
pub fn read_manifest(path: &Path) -> (String, Value) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value = parse_yaml(&text);
    (text, value)
}

/// The valid example of a kind.
pub fn valid_example(kind: &str) -> Value {
    read_manifest(&examples_dir().join(format!("{}.yaml", kind.to_lowercase()))).1
}

/// Structural refusals (types, patterns, bounds, enums, required fields).
pub fn structural_refusals(schema: &Value, object: &Value) -> Vec<Refusal> {
    let validator = jsonschema::draft4::new(schema).expect("schema compiles as draft 4");
    validator
        .iter_errors(object)
        .map(|e| Refusal {
            path: pointer_to_dotted(e.instance_path().as_str()),
            message: e.to_string(),
            rule: String::new(),
        })
        .collect()
}

/// CEL refusals (`x-kubernetes-validations`), with `old` for transition rules.
pub fn cel_refusals(schema: &Value, object: &Value, old: Option<&Value>) -> Vec<Refusal> {
    match Validator::new().validate(schema, object, old) {
        Ok(()) => Vec::new(),
        Err(errors) => errors
            .iter()
            .map(|e| Refusal {
                path: e.field_path.clone(),
                message: e.message.clone(),
                rule: e.rule.clone(),
            })
            .collect(),
    }
}

/// `/spec/chunks/0/index` → `spec.chunks.0.index`.
pub fn pointer_to_dotted(pointer: &str) -> String {
    pointer.trim_start_matches('/').replace('/', ".")
}

/// kube-cel paths use `a.b[0].c`; normalise to `a.b.0.c`.
pub fn normalise(path: &str) -> String {
    path.replace('[', ".")
        .replace(']', "")
        .trim_start_matches('.')
        .to_owned()
}

/// Sets a value at a dotted path (numeric segments index arrays), creating objects on the way.
pub fn set(object: &mut Value, path: &str, value: Value) {
    let mut current = object;
    let parts: Vec<&str> = path.split('.').collect();
    for part in &parts[..parts.len() - 1] {
        current = match part.parse::<usize>() {
            Ok(i) => &mut current[i],
            Err(_) => {
                let map = current.as_object_mut().expect("object on the path");
                map.entry(part.to_string())
                    .or_insert_with(|| Value::Object(Default::default()))
            }
        };
    }
    let last = parts[parts.len() - 1];
    match last.parse::<usize>() {
        Ok(i) => current[i] = value,
        Err(_) => {
            current
                .as_object_mut()
                .expect("object at the end")
                .insert(last.to_owned(), value);
        }
    }
}

/// Removes the value at a dotted path.
pub fn remove(object: &mut Value, path: &str) {
    let (parent, last) = path.rsplit_once('.').expect("dotted path");
    let pointer = format!("/{}", parent.replace('.', "/"));
    object
        .pointer_mut(&pointer)
        .and_then(Value::as_object_mut)
        .expect("parent object")
        .remove(last);
}

/// Every `x-kubernetes-validations` rule of a schema with the dotted schema path it sits at.
pub fn rules(schema: &Value) -> Vec<(String, String)> {
    fn walk(node: &Value, path: &str, out: &mut Vec<(String, String)>) {
        let Some(object) = node.as_object() else { return };
        if let Some(list) = object.get("x-kubernetes-validations").and_then(Value::as_array) {
            for rule in list {
                out.push((path.to_owned(), rule["rule"].as_str().unwrap().to_owned()));
            }
        }
        if let Some(props) = object.get("properties").and_then(Value::as_object) {
            for (name, child) in props {
                let child_path = if path.is_empty() {
                    name.clone()
                } else {
                    format!("{path}.{name}")
                };
                walk(child, &child_path, out);
            }
        }
        if let Some(items) = object.get("items") {
            walk(items, &format!("{path}[]"), out);
        }
        if let Some(extra) = object.get("additionalProperties") {
            walk(extra, &format!("{path}{{}}"), out);
        }
    }
    let mut out = Vec::new();
    walk(schema, "", &mut out);
    out
}
