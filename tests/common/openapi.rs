//! Validates recorded Magento 2 REST responses against Magento 2.4.5's own
//! generated REST schema (OpenAPI 3.0, "All inclusive" build).
//!
//! The schema is the committed copy in
//! `fixtures/magento2/schema/magento2-2.4.5-openapi.json`, so the tests do not
//! depend on where the repository is cloned. [`shared_reference_copy`] finds the
//! team's `shared/reference/` original (walking up from the manifest directory)
//! so a test can check that the two have not drifted apart.
//!
//! # How the generated schema is turned into JSON Schema
//!
//! The file is OpenAPI 3.0, whose schema objects are a dialect of JSON Schema
//! draft 4 (draft "Wright 00"). The component schemas are compiled with the
//! `jsonschema` crate in [`Draft::Draft4`] mode after these rewrites, all made
//! once when the document is loaded (see [`rewrite_schema`]):
//!
//! * **Nullability.** The file has no `nullable` anywhere (Magento's generator
//!   never writes it), so plain JSON Schema would reject every `null`. Magento
//!   serialises data objects with `Framework\Reflection\DataObjectProcessor`:
//!   a getter whose docblock allows null (`@return int|null`) is *left out* of
//!   the JSON when its value is null, while a getter whose docblock does not
//!   allow null is written even when the value is null (`"low_stock_date": null`
//!   on stock items, `"account_status": null` and `"cc_last4": null` on order
//!   payments, `"region_code": null` on an address region of a country without
//!   regions). The generator derives the same distinction into `required`: a
//!   property is `required` exactly when its getter is not documented as
//!   nullable. So a property listed in `required` accepts `null` besides its
//!   type, and a property not listed in `required` does not accept `null` (it
//!   must be absent instead). A `nullable: true`, should a later schema carry
//!   one, is honoured the same way. Error bodies (`error-*`) are rendered by
//!   the web API layer, not by that serialiser, and get no null.
//! * **Empty extension attributes.** The serialiser drops an empty
//!   `extension_attributes` whatever its docblock says, so `extension_attributes`
//!   is never required, and when present it must not be empty
//!   (`minProperties: 1`).
//! * **Closed objects.** The serialiser only writes the getters of the data
//!   interface, so every object schema gets `additionalProperties: false`; a
//!   misspelt or invented field is an error, not silently accepted.
//! * **Projections.** With `?fields=...` Magento returns only the requested
//!   fields. [`OpenApi::validate_in`] with [`Mode::Projection`] validates with every `required`
//!   dropped (types, nullability and closed objects still apply).
//!
//! Two places where the generated schema does not describe what Magento
//! actually sends are patched (see [`patch_generator_bugs`]); everything else is
//! taken from the file as it is.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::{Draft, Validator};
use serde_json::{Map, Value, json};

/// File name of Magento 2.4.5's generated REST schema.
pub const SCHEMA_FILE: &str = "magento2-2.4.5-openapi.json";

/// Where the committed copy lives, relative to the crate root.
pub const COMMITTED_COPY: &str = "fixtures/magento2/schema/magento2-2.4.5-openapi.json";

/// The committed copy of the schema.
pub fn committed_copy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(COMMITTED_COPY)
}

/// The team's original in a `shared/reference/` directory next to the
/// repository (or next to any of its parent directories), if there is one.
pub fn shared_reference_copy() -> Option<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("shared").join("reference").join(SCHEMA_FILE))
        .find(|candidate| candidate.is_file())
}

/// How strictly `required` is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// A full response: every `required` property must be present.
    Full,
    /// A `?fields=` projection: properties may be missing.
    Projection,
}

/// One path template of the document, split into segments.
struct Template {
    raw: String,
    segments: Vec<Segment>,
}

enum Segment {
    Literal(String),
    Param,
}

/// Magento 2.4.5's REST schema, loaded once and ready to validate bodies.
pub struct OpenApi {
    /// The document as committed (paths and responses are read from here).
    doc: Value,
    /// `components.schemas` after the rewrites, one copy per mode.
    components: HashMap<Mode, Value>,
    templates: Vec<Template>,
    validators: Mutex<HashMap<(Mode, String), Arc<Validator>>>,
}

impl OpenApi {
    /// The process-wide instance, loaded from the committed copy on first use.
    pub fn get() -> &'static OpenApi {
        static INSTANCE: OnceLock<OpenApi> = OnceLock::new();
        INSTANCE.get_or_init(|| {
            let path = committed_copy();
            OpenApi::load(&path).unwrap_or_else(|e| panic!("{e}"))
        })
    }

    /// Load and prepare a schema document.
    pub fn load(path: &Path) -> Result<OpenApi, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
        OpenApi::from_document(doc)
    }

    /// Prepare an already parsed document.
    pub fn from_document(doc: Value) -> Result<OpenApi, String> {
        OpenApi::from_document_with(doc, true)
    }

    /// Prepare a document, with or without [`patch_generator_bugs`] (without
    /// is only useful to show that the patches are needed).
    pub fn from_document_with(doc: Value, patch: bool) -> Result<OpenApi, String> {
        let schemas = doc
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .ok_or("the document has no components.schemas")?;
        let mut patched = schemas.clone();
        if patch {
            patch_generator_bugs(&mut patched)?;
        }
        let mut components = HashMap::new();
        for mode in [Mode::Full, Mode::Projection] {
            let rewritten: Map<String, Value> = patched
                .iter()
                .map(|(name, schema)| {
                    let nullable_required = !name.starts_with("error-");
                    (
                        name.clone(),
                        rewrite_schema(schema, mode, nullable_required),
                    )
                })
                .collect();
            components.insert(mode, json!({ "schemas": rewritten }));
        }
        let templates = doc
            .get("paths")
            .and_then(Value::as_object)
            .ok_or("the document has no paths")?
            .keys()
            .map(|raw| Template {
                raw: raw.clone(),
                segments: split(raw)
                    .into_iter()
                    .map(|s| {
                        if s.starts_with('{') && s.ends_with('}') {
                            Segment::Param
                        } else {
                            Segment::Literal(s.to_string())
                        }
                    })
                    .collect(),
            })
            .collect();
        Ok(OpenApi {
            doc,
            components,
            templates,
            validators: Mutex::new(HashMap::new()),
        })
    }

    /// The raw (unrewritten) component schema of that name.
    pub fn component(&self, name: &str) -> Option<&Value> {
        self.doc.pointer(&format!("/components/schemas/{name}"))
    }

    /// The OpenAPI path template a request path is served by, e.g.
    /// `/rest/default/V1/products/24-MB01` → `/V1/products/{sku}`.
    ///
    /// The `/rest` prefix and an optional store code segment are stripped.
    /// Among the templates that have `method` and match segment by segment, the
    /// one with the most literal segments wins, and between equals the one
    /// whose first literal comes earliest (so `/V1/customers/me` beats
    /// `/V1/customers/{customerId}`, and `/V1/products/attributes/{code}`
    /// beats `/V1/products/{sku}/...` only where the literal really matches).
    pub fn template_for(&self, method: &str, path: &str) -> Result<&str, String> {
        let service_path = service_path(path)?;
        let method = method.to_ascii_lowercase();
        let wanted = split(&service_path);
        let mut best: Option<(&Template, Vec<bool>)> = None;
        for template in &self.templates {
            if template.segments.len() != wanted.len() {
                continue;
            }
            let has_method = self
                .doc
                .pointer(&format!(
                    "/paths/{}/{method}",
                    escape_pointer(&template.raw)
                ))
                .is_some();
            if !has_method {
                continue;
            }
            let mut literals = Vec::with_capacity(wanted.len());
            let matches = template
                .segments
                .iter()
                .zip(&wanted)
                .all(|(seg, got)| match seg {
                    Segment::Literal(lit) => {
                        literals.push(true);
                        lit == got
                    }
                    Segment::Param => {
                        literals.push(false);
                        !got.is_empty()
                    }
                });
            if !matches {
                continue;
            }
            let better = match &best {
                None => true,
                Some((_, best_literals)) => {
                    let count = |v: &Vec<bool>| v.iter().filter(|b| **b).count();
                    (count(&literals), &literals) > (count(best_literals), best_literals)
                }
            };
            if better {
                best = Some((template, literals));
            }
        }
        best.map(|(t, _)| t.raw.as_str()).ok_or_else(|| {
            format!(
                "no {} operation in the 2.4.5 schema matches {service_path} (from {path})",
                method.to_ascii_uppercase()
            )
        })
    }

    /// The response schema (as written in the document) for an operation and
    /// status, falling back to the operation's `default` response.
    pub fn response_schema(
        &self,
        method: &str,
        path: &str,
        status: u16,
    ) -> Result<(String, &Value), String> {
        let template = self.template_for(method, path)?;
        let operation = format!(
            "/paths/{}/{}",
            escape_pointer(template),
            method.to_ascii_lowercase()
        );
        let responses = self
            .doc
            .pointer(&format!("{operation}/responses"))
            .and_then(Value::as_object)
            .ok_or_else(|| format!("{operation} has no responses"))?;
        let (key, response) = match responses.get(&status.to_string()) {
            Some(r) => (status.to_string(), r),
            None => (
                "default".to_string(),
                responses.get("default").ok_or_else(|| {
                    format!("{operation} has neither a {status} nor a default response")
                })?,
            ),
        };
        let schema = response
            .pointer("/content/application~1json/schema")
            .ok_or_else(|| format!("{operation} response {key} has no application/json schema"))?;
        let label = format!(
            "{} {template} response {key} ({})",
            method.to_ascii_uppercase(),
            describe(schema)
        );
        Ok((label, schema))
    }

    /// Validate a full response body.
    pub fn validate(
        &self,
        method: &str,
        path: &str,
        status: u16,
        body: &Value,
    ) -> Result<(), String> {
        self.validate_in(Mode::Full, method, path, status, body)
    }

    /// Validate a body in the given mode (`Mode::Projection` for the body of a request that
    /// carried `?fields=...`). The error names the schema used and
    /// gives, for each violation, the JSON pointer into the body.
    pub fn validate_in(
        &self,
        mode: Mode,
        method: &str,
        path: &str,
        status: u16,
        body: &Value,
    ) -> Result<(), String> {
        let (label, schema) = self.response_schema(method, path, status)?;
        let validator = self.validator(mode, schema)?;
        let problems: Vec<String> = validator
            .iter_errors(body)
            .map(|error| {
                let pointer = error.instance_path.as_str();
                let pointer = if pointer.is_empty() { "/" } else { pointer };
                format!(
                    "  at {pointer}: {} (schema path {})",
                    shorten(&error.to_string(), 240),
                    error.schema_path.as_str()
                )
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "does not match schema {label}{}:\n{}",
                if mode == Mode::Projection {
                    " as a fields= projection"
                } else {
                    ""
                },
                problems.join("\n")
            ))
        }
    }

    /// A compiled validator for a response schema, cached per schema and mode.
    fn validator(&self, mode: Mode, schema: &Value) -> Result<Arc<Validator>, String> {
        let key = (mode, schema.to_string());
        let mut cache = self.validators.lock().map_err(|e| e.to_string())?;
        if let Some(v) = cache.get(&key) {
            return Ok(Arc::clone(v));
        }
        // The response schema becomes the root, with the rewritten components
        // beside it so that `#/components/schemas/...` resolves within the
        // same document. `allOf` keeps the root free of a `$ref` (whose
        // siblings draft 4 would ignore).
        let root = json!({
            "allOf": [rewrite_schema(schema, mode, false)],
            "components": self.components[&mode],
        });
        let validator = jsonschema::options()
            .with_draft(Draft::Draft4)
            .build(&root)
            .map_err(|e| format!("cannot compile {}: {e}", describe(schema)))?;
        let validator = Arc::new(validator);
        cache.insert(key, Arc::clone(&validator));
        Ok(validator)
    }
}

/// Strip `/rest` and an optional store code: `/rest/french/V1/x` → `/V1/x`.
/// A query string, if any, is dropped.
pub fn service_path(path: &str) -> Result<String, String> {
    let path = path.split('?').next().unwrap_or(path);
    let rest = path
        .strip_prefix("/rest/")
        .ok_or_else(|| format!("{path} does not start with /rest/"))?;
    let rest = match rest.split_once('/') {
        Some((first, tail)) if first != "V1" && !first.is_empty() => tail,
        _ => rest,
    };
    if !rest.starts_with("V1/") {
        return Err(format!("{path} is not a /rest/[<store code>/]V1/... path"));
    }
    Ok(format!("/{rest}"))
}

/// Path segments without the empty ones a leading or trailing `/` makes
/// (`/V1/stockItems/lowStock/` and `/V1/stockItems/lowStock` are one path).
fn split(path: &str) -> Vec<&str> {
    path.trim_matches('/').split('/').collect()
}

fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn describe(schema: &Value) -> String {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        return r.to_string();
    }
    if let Some(r) = schema.pointer("/items/$ref").and_then(Value::as_str) {
        return format!("array of {r}");
    }
    match schema.get("type").and_then(Value::as_str) {
        Some(t) => format!("inline {t}"),
        None => "inline schema".to_string(),
    }
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// Patch the two places where Magento 2.4.5's generator describes something
/// other than what the web API sends. Each was checked against the code that
/// renders the response; fixtures that need the real shape would be rejected
/// by the unpatched schema (a test in `upstream_schema.rs` proves it).
///
/// 1. `error-parameters`: the generator hard-codes "an array of objects with
///    `resources`, `fieldName`, `fieldValue` strings". The REST renderer
///    (`Framework\Webapi\Rest\Response::_renderMessages`) writes the
///    exception's parameters as they are: a JSON *object* for named
///    placeholders (`%fieldName`, `%resources`, `%max`) and an *array of
///    scalars* for positional ones (`%1`). `fieldValue` keeps the type the
///    service received (the integer id for `customerId`, `addressId`, `id`),
///    `max` is an integer, and an `errors[]` entry without placeholders has
///    `"parameters": []`.
/// 2. `framework-attribute-interface.value` (`custom_attributes[].value`): the
///    generator turns PHP `mixed` into `string`, but multi-valued attributes
///    are written as arrays (`category_ids` is `["3","4"]` on every product).
pub fn patch_generator_bugs(schemas: &mut Map<String, Value>) -> Result<(), String> {
    let scalar = json!({ "type": ["string", "integer", "number", "boolean"] });
    let named_value = json!({ "anyOf": [scalar, { "type": "array", "items": scalar }] });
    let error_parameters = schemas
        .get_mut("error-parameters")
        .ok_or("no error-parameters schema to patch")?;
    *error_parameters = json!({
        "description": "Error parameters: an object for named placeholders, an array for positional ones",
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "resources": { "type": "string" },
                    "fieldName": { "type": "string" }
                },
                "additionalProperties": named_value
            },
            { "type": "array", "items": scalar }
        ]
    });
    let value = schemas
        .get_mut("framework-attribute-interface")
        .and_then(|s| s.pointer_mut("/properties/value"))
        .ok_or("no framework-attribute-interface.value to patch")?;
    *value = json!({
        "description": "Attribute value: a string, or an array of strings for multi-valued attributes",
        "anyOf": [
            { "type": "string" },
            { "type": "array", "items": { "type": "string" } }
        ]
    });
    Ok(())
}

/// Rewrite one OpenAPI 3.0 schema object into draft-4 JSON Schema as described
/// in the module documentation. Recurses through `properties`, `items` and the
/// combinators only (property *names* such as `type` or `format` are never
/// mistaken for keywords). `nullable_required` says whether required
/// properties of this schema's objects may be `null`.
pub fn rewrite_schema(schema: &Value, mode: Mode, nullable_required: bool) -> Value {
    let Some(obj) = schema.as_object() else {
        return schema.clone();
    };
    if obj.contains_key("$ref") {
        return schema.clone();
    }
    let mut out = Map::new();
    for (key, value) in obj {
        match key.as_str() {
            "properties" | "required" | "nullable" | "additionalProperties" => {}
            "items" => {
                out.insert(key.clone(), rewrite_schema(value, mode, nullable_required));
            }
            "allOf" | "anyOf" | "oneOf" => {
                let parts = value
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|s| rewrite_schema(s, mode, nullable_required))
                            .collect()
                    })
                    .unwrap_or_default();
                out.insert(key.clone(), Value::Array(parts));
            }
            "not" => {
                out.insert(key.clone(), rewrite_schema(value, mode, nullable_required));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if obj.get("nullable") == Some(&Value::Bool(true)) {
        return allow_null(Value::Object(out));
    }
    let is_object =
        obj.get("type").and_then(Value::as_str) == Some("object") || obj.contains_key("properties");
    if !is_object {
        if let Some(extra) = obj.get("additionalProperties") {
            out.insert(
                "additionalProperties".into(),
                rewrite_schema(extra, mode, nullable_required),
            );
        }
        return Value::Object(out);
    }
    let required: Vec<&str> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut properties = Map::new();
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let mut rewritten = rewrite_schema(prop, mode, nullable_required);
            if name == "extension_attributes" {
                rewritten = json!({ "allOf": [rewritten, { "minProperties": 1 }] });
            } else if nullable_required && required.contains(&name.as_str()) {
                rewritten = allow_null(rewritten);
            }
            properties.insert(name.clone(), rewritten);
        }
    }
    out.insert("properties".into(), Value::Object(properties));
    let kept: Vec<Value> = required
        .iter()
        .filter(|name| **name != "extension_attributes" && **name != "custom_attributes")
        .map(|name| Value::String(name.to_string()))
        .collect();
    if mode == Mode::Full && !kept.is_empty() {
        out.insert("required".into(), Value::Array(kept));
    }
    let additional = match obj.get("additionalProperties") {
        Some(Value::Object(_)) => {
            rewrite_schema(&obj["additionalProperties"], mode, nullable_required)
        }
        _ => Value::Bool(false),
    };
    out.insert("additionalProperties".into(), additional);
    Value::Object(out)
}

/// The same schema, also accepting `null`.
fn allow_null(schema: Value) -> Value {
    let simple_type = schema
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_string);
    match (simple_type, schema) {
        (Some(t), Value::Object(mut obj)) if !obj.contains_key("$ref") => {
            obj.insert("type".into(), json!([t, "null"]));
            Value::Object(obj)
        }
        (_, other) => json!({ "anyOf": [other, { "type": "null" }] }),
    }
}
