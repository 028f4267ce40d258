//! The OpenAPI document (`docs/openapi.json`) cannot drift from the gateway:
//! - the routes the router serves and the documented paths are the same set;
//! - every documented operation is served (no 405, no "no route") and every method a path
//!   does not document is refused with 405;
//! - every message the code can answer is in the document;
//! - the gateway serves the document and its page.
//!
//! That real answers match its schemas is `tests/e2e/openapi.rs`.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common::api_reference;
use crate::helpers::{Gateway, Who};

fn documented_routes(doc: &Value) -> BTreeSet<String> {
    doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(path, item)| {
            item["x-storegate-route"]
                .as_str()
                .unwrap_or(path)
                .to_owned()
        })
        .collect()
}

async fn gateway() -> Gateway {
    // With the sandbox's media configured, so that every route the binary can serve exists.
    Gateway::start_with(|c| c.sandbox_media = Some("http://127.0.0.1:9".into())).await
}

#[tokio::test]
async fn every_served_route_is_documented_and_every_documented_one_served() {
    let gw = gateway().await;
    let doc = api_reference::document();
    let served: BTreeSet<String> = storegate::front::served_routes(&gw.running.app)
        .into_iter()
        .collect();
    let documented = documented_routes(&doc);
    let undocumented: Vec<_> = served.difference(&documented).collect();
    let unserved: Vec<_> = documented.difference(&served).collect();
    assert!(
        undocumented.is_empty() && unserved.is_empty(),
        "served but not in docs/openapi.json: {undocumented:?}; documented but not served: {unserved:?}"
    );
}

/// A concrete path for a documented one: every parameter becomes a plausible id.
fn concrete(template: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}').unwrap() + start;
        out.push_str(if &rest[start + 1..end] == "path" {
            "catalog/product/x.jpg"
        } else {
            "1"
        });
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

#[tokio::test]
async fn documented_methods_are_served_and_the_others_refused() {
    let gw = gateway().await;
    let doc = api_reference::document();
    let origin = format!("http://{}", gw.running.addr);
    let mut wrong = Vec::new();
    for (template, item) in doc["paths"].as_object().unwrap() {
        let path = concrete(template);
        let api = path.starts_with("/api/rest/")
            && !path.ends_with("openapi.json")
            && !path.ends_with("/docs");
        for method in ["get", "post", "put", "delete"] {
            let documented = item.get(method).is_some();
            let request = gw
                .http
                .request(
                    method.to_uppercase().parse().unwrap(),
                    format!("{origin}{path}"),
                )
                .bearer_auth(crate::helpers::ADMIN_KEY)
                .header("Accept", "application/json");
            let reply = gw.send(request).await;
            let no_route =
                reply.status == 404 && reply.body.contains("Request does not match any route.");
            let refused = reply.status == 405;
            if documented && (refused || no_route) {
                wrong.push(format!(
                    "{method} {template} is documented but answers {} {}",
                    reply.status, reply.body
                ));
            }
            if !documented && api && !refused {
                wrong.push(format!(
                    "{method} {template} is not documented but answers {}",
                    reply.status
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The client-facing messages written in the source: string literals in the code (not the
/// tests) of the modules that answer clients, that read like a message.
fn messages_in_source() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let literal = regex::Regex::new(r#""((?:[^"\\]|\\.)*)""#).unwrap();
    let message = regex::Regex::new(r"^[A-Z][A-Za-z0-9'/-]*[ /]").unwrap();
    // Every source file but those that cannot answer a client: the Magento client (it knows
    // no client messages), the command line and configuration (they talk to the operator),
    // and the operational endpoints and their metrics.
    let skipped = [
        "src/backend/magento2/",
        "src/backend/recording/",
        "src/backend/transport/",
        "src/backend/shell/",
        // A store's own failure pages, which only replay answers (as the store).
        "src/backend/openmage/failures.rs",
        "src/backend/port/wire.rs",
        "src/main.rs",
        "src/cli/",
        "src/config/",
        "src/observe/build_info.rs",
        "src/observe/process.rs",
        "src/resources/media_proxy.rs",
        "src/resources/api_docs.rs",
        "src/resources/ops.rs",
        "src/observe/metrics.rs",
        // The rate limits' series in /metrics: help texts for the operator.
        "src/limits/series.rs",
        "src/shadow/series.rs",
        // The OAuth sign-in pages' HTML template (their messages are in authorize.rs).
        "src/resources/oauth/pages.rs",
    ];
    let mut files = Vec::new();
    let mut folders = vec![root.join("src")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            // Tests kept in a file of their own (`#[path = "x_tests.rs"] mod tests;`).
            if skipped.iter().any(|s| relative.starts_with(s)) || relative.ends_with("_tests.rs") {
                continue;
            }
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        let mut in_log = false;
        for line in code.lines() {
            let trimmed = line.trim();
            // A log macro spread over lines: its strings are for the operator.
            if in_log {
                in_log = !trimmed.ends_with(");");
                continue;
            }
            if trimmed.contains("tracing::") && !trimmed.ends_with(");") {
                in_log = true;
                continue;
            }
            // Comments, logs, error types' own texts and invariants are not answers.
            if trimmed.starts_with("//")
                || trimmed.starts_with("#[error(")
                || trimmed.contains("tracing::")
                || trimmed.contains(".expect(")
                || trimmed.contains("panic!")
                // The XML reader's syntax errors are causes for the log; the client gets
                // `Decoding error.`.
                || trimmed.contains("ReadError::")
            {
                continue;
            }
            for capture in literal.captures_iter(line) {
                let text = capture[1].replace("\\\"", "\"");
                // Header values and SQL are not messages either.
                let not_a_message = text.starts_with("Bearer ")
                    || text.contains("realm=")
                    || [
                        "SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "ALTER ", "BEGIN ",
                    ]
                    .iter()
                    .any(|sql| text.starts_with(sql));
                if message.is_match(&text) && text.contains(' ') && !not_a_message {
                    out.push((file.display().to_string(), text));
                }
            }
        }
    }
    out
}

/// Every string in a JSON document, joined.
fn all_text(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| all_text(v, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push_str(k);
            out.push('\n');
            all_text(v, out);
        }),
        _ => {}
    }
}

#[test]
fn every_message_the_code_answers_is_documented() {
    let mut text = String::new();
    all_text(&api_reference::document(), &mut text);
    let found = messages_in_source();
    assert!(
        found.len() > 60,
        "the message scan found too little: {found:?}"
    );
    let mut missing = Vec::new();
    for (file, message) in found {
        // `{...}` placeholders stand for any value (`<field>` in the document).
        let mut pattern = String::new();
        for (i, part) in message.split('{').enumerate() {
            let literal = if i == 0 {
                part
            } else {
                part.split_once('}').map_or(part, |(_, rest)| rest)
            };
            if i > 0 {
                pattern.push_str(".+");
            }
            pattern.push_str(&regex::escape(literal));
        }
        if !regex::Regex::new(&pattern).unwrap().is_match(&text) {
            missing.push(format!("{file}: {message}"));
        }
    }
    assert!(
        missing.is_empty(),
        "messages missing from docs/openapi.json:\n{}",
        missing.join("\n")
    );
}

#[tokio::test]
async fn the_gateway_serves_the_document_and_its_page() {
    let gw = gateway().await;
    let origin = format!("http://{}", gw.running.addr);
    let reply = gw
        .send(gw.http.get(format!("{origin}/api/rest/openapi.json")))
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.json(), api_reference::document());
    assert_eq!(reply.json()["openapi"], "3.1.0");
    // No credentials needed, whoever asks.
    let reply = gw
        .send(gw.request("GET", "/openapi.json", &Who::Customer(5)))
        .await;
    assert_eq!(reply.status, 200);

    let page = gw
        .send_raw(gw.http.get(format!("{origin}/api/rest/docs")))
        .await;
    assert_eq!(page.status, 200);
    // With a trailing slash too: the same page, which loads the document by its absolute
    // path (a relative one would resolve to /api/rest/docs/openapi.json, a 404).
    let slashed = gw
        .send_raw(gw.http.get(format!("{origin}/api/rest/docs/")))
        .await;
    assert_eq!(slashed.status, 200);
    assert_eq!(slashed.body, page.body);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    assert!(page.body.contains("fetch(\"/api/rest/openapi.json\")"));
    let fetched = gw
        .send_raw(gw.http.get(format!("{origin}/api/rest/openapi.json")))
        .await;
    assert_eq!(fetched.status, 200);
    // Self-contained: nothing is loaded from another origin.
    assert!(
        !page.body.contains("http://") && !page.body.contains("https://"),
        "{}",
        page.body
    );
    assert!(
        page.header("content-security-policy")
            .unwrap()
            .contains("default-src 'none'")
    );
}

#[test]
fn matching_prefers_literal_segments() {
    let doc = api_reference::document();
    assert_eq!(
        api_reference::template_for(&doc, "/api/rest/products/category_id=4"),
        Some("/api/rest/products/category_id={category_id}")
    );
    assert_eq!(
        api_reference::template_for(&doc, "/api/rest/products/12"),
        Some("/api/rest/products/{id}")
    );
    assert_eq!(api_reference::template_for(&doc, "/api/rest/nothing"), None);
}

/// What an external tool's run gave; without the tool, a failure in CI and None (the test is
/// skipped, loudly) elsewhere.
fn ran_or_skipped(
    output: std::io::Result<std::process::Output>,
    test: &str,
    tool: &str,
) -> Option<std::process::Output> {
    match output {
        Ok(output) => Some(output),
        Err(error) if std::env::var_os("CI").is_none() => {
            eprintln!("SKIPPED {test}: no {tool} ({error})");
            None
        }
        Err(error) => panic!("{tool} is needed (.ci/run installs it): {error}"),
    }
}

/// The page really renders the document: every operation shows. Needs `node` (installed by
/// `.ci/run`); without it the test fails in CI and is skipped, loudly, elsewhere.
#[test]
fn the_page_renders_every_operation() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = std::process::Command::new("node")
        .arg(root.join("tests/api/render_page.js"))
        .arg(root.join("docs/api.html"))
        .arg(root.join("docs/openapi.json"))
        .output();
    let Some(output) = ran_or_skipped(output, "the_page_renders_every_operation", "node") else {
        return;
    };
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rendered: Value = serde_json::from_slice(&output.stdout).unwrap();
    let doc = api_reference::document();
    let mut expected = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in ["get", "post", "put", "delete"] {
            if item.get(method).is_some() {
                expected.push(path.clone());
            }
        }
    }
    assert_eq!(rendered["failed"], false);
    assert_eq!(rendered["operations"], expected.len());
    // Every example the document holds, under each operation that refers to it.
    let held = examples_held(&doc);
    assert!(held > 100, "the document holds {held} examples");
    assert_eq!(rendered["examples"], held);
    let mut shown: Vec<String> = rendered["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().replace("&amp;", "&"))
        .collect();
    shown.sort();
    expected.sort();
    assert_eq!(shown, expected);
}

/// How many examples the page must show: each operation's request body and responses
/// (shared responses resolved), `example` and every entry of `examples`, per content type.
fn examples_held(doc: &Value) -> usize {
    let resolve = |value: &Value| -> Value {
        match value.get("$ref").and_then(Value::as_str) {
            Some(reference) => doc
                .pointer(reference.trim_start_matches('#'))
                .cloned()
                .unwrap_or(Value::Null),
            None => value.clone(),
        }
    };
    let in_content = |content: Option<&Value>| -> usize {
        content
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(_, media)| {
                usize::from(media.get("example").is_some())
                    + media
                        .get("examples")
                        .and_then(Value::as_object)
                        .map_or(0, |e| e.len())
            })
            .sum()
    };
    let mut count = 0;
    for item in doc["paths"].as_object().unwrap().values() {
        for method in ["get", "post", "put", "delete"] {
            let Some(op) = item.get(method) else { continue };
            count += in_content(op.pointer("/requestBody/content"));
            for response in op["responses"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(_, r)| r)
            {
                count += in_content(resolve(response).get("content"));
            }
        }
    }
    count
}

/// The document's own JSON examples match its schemas.
#[test]
fn examples_match_their_schemas() {
    let doc = api_reference::document();
    let mut checked = 0;
    for (template, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let Some(responses) = operation["responses"].as_object() else {
                continue;
            };
            for (status, response) in responses {
                let content = &response["content"]["application/json"];
                let mut values: Vec<&Value> = content["examples"]
                    .as_object()
                    .map(|e| e.values().map(|x| &x["value"]).collect())
                    .unwrap_or_default();
                if !content["example"].is_null() {
                    values.push(&content["example"]);
                }
                for value in values {
                    api_reference::check_answer(
                        &doc,
                        method,
                        template,
                        status.parse().unwrap(),
                        &value.to_string(),
                    )
                    .unwrap();
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 4, "{checked} examples");
}

/// `docs/openapi.json` is what `tools/openapi/generate.py` writes: nobody edited the output
/// by hand, and the field schemas follow the mappings. Needs `python3` (installed by
/// `.ci/run`); without it the test fails in CI and is skipped, loudly, elsewhere.
#[test]
fn the_document_is_the_generators_output() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = std::process::Command::new("python3")
        .arg(root.join("tools/openapi/generate.py"))
        .arg("--check")
        .output();
    let Some(output) = ran_or_skipped(output, "the_document_is_the_generators_output", "python3")
    else {
        return;
    };
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
