//! The gateway's own OpenAPI document (`docs/openapi.json`), as tests read it: which
//! documented operation a concrete request is, and whether an answer matches the schema the
//! document gives for its status.
//!
//! The document is OpenAPI 3.1, whose schemas are JSON Schema 2020-12, so the response
//! schemas compile as they are; `$ref`s into `#/components/...` resolve against the whole
//! document, used as the root resource.

#![allow(dead_code)]

use std::path::Path;

use jsonschema::Draft;
use serde_json::Value;

pub fn document() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/openapi.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("docs/openapi.json is not JSON: {e}"))
}

/// Does the concrete `path` match the documented `template` (`/products/{id}`,
/// `/products/category_id={category_id}`)?
pub fn matches(template: &str, path: &str) -> bool {
    let (t, p): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    t.len() == p.len()
        && t.iter().zip(&p).all(|(t, p)| match t.find('{') {
            None => t == p,
            Some(start) => {
                let prefix = &t[..start];
                p.starts_with(prefix) && p.len() > prefix.len() && t.ends_with('}')
            }
        })
}

/// The documented path that a concrete path is; a literal segment beats a parameter, so
/// `/products/category_id=4` is the category path, not `/products/{id}`.
pub fn template_for<'d>(doc: &'d Value, path: &str) -> Option<&'d str> {
    doc["paths"]
        .as_object()?
        .keys()
        .filter(|t| matches(t, path))
        .max_by_key(|t| t.chars().filter(|c| *c != '{').count() - 2 * t.matches('{').count())
        .map(String::as_str)
}

fn pointer_escape(text: &str) -> String {
    text.replace('~', "~0").replace('/', "~1")
}

/// Checks one answer against the document: the operation exists, the status is documented,
/// and a JSON body matches the status's schema. Returns what went wrong.
pub fn check_answer(
    doc: &Value,
    method: &str,
    path: &str,
    status: u16,
    body: &str,
) -> Result<(), String> {
    let template = template_for(doc, path).ok_or_else(|| format!("{path} is not documented"))?;
    let method = method.to_ascii_lowercase();
    let operation = &doc["paths"][template][&method];
    // A method a path does not have is a 405 with the API's error body.
    let mut pointer = if operation.is_null() && status == 405 {
        "/components/responses/Error405".to_owned()
    } else if operation.is_null() {
        return Err(format!("{method} {template} is not documented"));
    } else {
        format!(
            "/paths/{}/{method}/responses/{status}",
            pointer_escape(template)
        )
    };
    let mut response = doc
        .pointer(&pointer)
        .ok_or_else(|| format!("{method} {template}: status {status} is not documented"))?;
    if let Some(reference) = response["$ref"].as_str() {
        pointer = reference.trim_start_matches('#').to_owned();
        response = doc
            .pointer(&pointer)
            .ok_or_else(|| format!("dangling {reference}"))?;
    }
    let Some(content) = response["content"].get("application/json") else {
        return if body.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{method} {template} {status}: a body where none is documented: {body}"
            ))
        };
    };
    if content.get("schema").is_none() {
        return Ok(());
    }
    let value: Value = serde_json::from_str(body)
        .map_err(|e| format!("{method} {template} {status}: not JSON ({e}): {body}"))?;
    let mut root = doc.clone();
    // `{` and `}` of path templates are not allowed in a URI fragment as they are.
    let fragment = pointer.replace('{', "%7B").replace('}', "%7D");
    root["$ref"] = Value::String(format!("#{fragment}/content/application~1json/schema"));
    let validator = jsonschema::options()
        .with_draft(Draft::Draft202012)
        .build(&root)
        .map_err(|e| format!("the document's schema does not compile: {e}"))?;
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| {
            let text = e.to_string();
            let short: String = text.chars().take(300).collect();
            format!("{short} at {}", e.instance_path)
        })
        .take(5)
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        let shown: String = body.chars().take(400).collect();
        Err(format!(
            "{method} {path} {status}: {}\n{shown}",
            errors.join("; ")
        ))
    }
}
