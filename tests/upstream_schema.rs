//! Every recorded Magento 2 exchange under `fixtures/magento2/` has the agreed
//! fixture format, and every recorded response body validates against Magento
//! 2.4.5's own generated REST schema (see `tests/common/openapi.rs` for how the
//! schema is applied).

#[allow(dead_code)]
mod common;

use std::path::{Path, PathBuf};

use common::openapi::{self, Mode, OpenApi};
use serde_json::{Value, json};

const FIXTURES: &str = "fixtures/magento2";

/// Directories under `fixtures/magento2/` that are not fixture areas.
const NOT_AREAS: &[&str] = &["schema"];

const METHODS: &[&str] = &["GET", "POST", "PUT", "DELETE"];

/// Store codes of the recorded store (plus `all`, the admin scope).
const STORE_CODES: &[&str] = &["default", "french", "all"];

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURES)
}

/// All fixture files, sorted, as (path relative to `fixtures/magento2/`, path).
fn fixture_files() -> Vec<(String, PathBuf)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "json") {
                out.push(path);
            }
        }
    }
    let root = fixtures_root();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&root).expect("fixtures/magento2 exists") {
        let path = entry.expect("directory entry").path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() && !NOT_AREAS.contains(&name.as_str()) {
            walk(&path, &mut files);
        }
    }
    let mut files: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, p)
        })
        .collect();
    files.sort();
    files
}

/// Problems with the fixture format itself (not with the recorded body).
fn format_problems(rel: &str, fixture: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut problem = |p: String| problems.push(p);

    let parts: Vec<&str> = rel.split('/').collect();
    let name_ok = |n: &str| {
        n.strip_suffix(".json").is_some_and(|stem| {
            !stem.is_empty()
                && stem
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
    };
    if parts.len() != 2 || !name_ok(parts[1]) {
        problem("files live at <area>/<lower-case-kebab-name>.json".into());
    }

    let Some(top) = fixture.as_object() else {
        return vec!["the fixture is not a JSON object".into()];
    };
    for key in top.keys() {
        if !["description", "request", "response"].contains(&key.as_str()) {
            problem(format!("unexpected top-level key {key:?}"));
        }
    }
    match top.get("description").and_then(Value::as_str) {
        Some(d) if !d.trim().is_empty() && !d.contains('\n') => {}
        _ => problem("description must be a non-empty one-line string".into()),
    }

    let request = top.get("request").and_then(Value::as_object);
    let response = top.get("response").and_then(Value::as_object);
    let (Some(request), Some(response)) = (request, response) else {
        problem("request and response must be objects".into());
        return problems;
    };

    for key in request.keys() {
        if !["method", "path", "query", "body"].contains(&key.as_str()) {
            problem(format!("unexpected request key {key:?}"));
        }
    }
    let method = request.get("method").and_then(Value::as_str).unwrap_or("");
    if !METHODS.contains(&method) {
        problem(format!(
            "request.method {method:?} is not one of {METHODS:?}"
        ));
    }
    let path = request.get("path").and_then(Value::as_str).unwrap_or("");
    if path.contains('?') || path.contains('#') {
        problem("request.path must not carry a query; use request.query".into());
    }
    match path.strip_prefix("/rest/") {
        Some(rest) if rest.starts_with("V1/") => {}
        Some(rest) => {
            let code = rest.split('/').next().unwrap_or("");
            if !STORE_CODES.contains(&code) {
                problem(format!("unknown store code {code:?} in {path}"));
            }
            if !rest[code.len()..].starts_with("/V1/") {
                problem(format!("{path} is not /rest/[<store code>/]V1/..."));
            }
        }
        None => problem(format!("request.path {path:?} does not start with /rest/")),
    }
    if let Some(query) = request.get("query") {
        match query.as_object() {
            Some(q) if !q.is_empty() && q.values().all(Value::is_string) => {}
            _ => problem("request.query must be a non-empty object of strings".into()),
        }
    }
    if request.contains_key("body") && !["POST", "PUT"].contains(&method) {
        problem("only POST and PUT requests carry a body".into());
    }

    for key in response.keys() {
        if !["status", "body"].contains(&key.as_str()) {
            problem(format!("unexpected response key {key:?}"));
        }
    }
    let status = response.get("status").and_then(Value::as_u64).unwrap_or(0);
    if !(100..=599).contains(&status) {
        problem("response.status must be an HTTP status code".into());
    }
    if !response.contains_key("body") {
        problem("response.body is missing".into());
    }
    // Magento refuses GETs in the admin scope; a recording of that refusal is
    // the only GET through /rest/all/ that makes sense.
    if method == "GET" && path.starts_with("/rest/all/") && status != 400 {
        problem("a GET through /rest/all/ can only be the 400 refusal".into());
    }
    if let Some(body) = response.get("body") {
        whole_floats(body, "", &mut problems);
    }
    problems
}

/// PHP's `json_encode` writes a float with no fractional part as an integer
/// (`34`, never `34.0`), so a recorded body never contains `34.0`.
fn whole_floats(value: &Value, at: &str, problems: &mut Vec<String>) {
    match value {
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|f| f.fract() == 0.0) => {
            problems.push(format!(
                "response.body{at}: {n} would be written as an integer by Magento"
            ));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                whole_floats(item, &format!("{at}/{i}"), problems);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                whole_floats(v, &format!("{at}/{k}"), problems);
            }
        }
        _ => {}
    }
}

fn load(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))
}

#[test]
fn every_fixture_has_the_format_and_matches_the_2_4_5_schema() {
    let api = OpenApi::get();
    let files = fixture_files();
    assert!(
        files.len() >= 60,
        "expected the recorded store's fixtures, found only {}",
        files.len()
    );
    let mut failures = Vec::new();
    for (rel, path) in &files {
        let fixture = match load(path) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{FIXTURES}/{rel}: {e}"));
                continue;
            }
        };
        let problems = format_problems(rel, &fixture);
        if !problems.is_empty() {
            failures.push(format!("{FIXTURES}/{rel}: {}", problems.join("; ")));
            continue;
        }
        let method = fixture["request"]["method"].as_str().unwrap();
        let path_str = fixture["request"]["path"].as_str().unwrap();
        let status = fixture["response"]["status"].as_u64().unwrap() as u16;
        let body = &fixture["response"]["body"];
        let projection = fixture["request"]
            .get("query")
            .and_then(|q| q.get("fields"))
            .is_some();
        let mode = if projection {
            Mode::Projection
        } else {
            Mode::Full
        };
        if let Err(e) = api.validate_in(mode, method, path_str, status, body) {
            failures.push(format!(
                "{FIXTURES}/{rel} ({method} {path_str} -> {status}) {e}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// The fixture of a single product, as a starting point for bodies that must
/// be rejected.
fn recorded_product() -> Value {
    let path = fixtures_root().join("products/get-simple-24-mb01.json");
    load(&path).unwrap()["response"]["body"].clone()
}

fn rejects(method: &str, path: &str, status: u16, body: &Value, expect_in_error: &str) {
    match OpenApi::get().validate(method, path, status, body) {
        Ok(()) => panic!("{method} {path} -> {status}: a wrong body was accepted: {body}"),
        Err(e) => assert!(
            e.contains(expect_in_error),
            "the error should mention {expect_in_error:?}:\n{e}"
        ),
    }
}

#[test]
fn the_validator_can_fail() {
    let path = "/rest/default/V1/products/24-MB01";
    let good = recorded_product();
    OpenApi::get()
        .validate("GET", path, 200, &good)
        .expect("the recorded product is valid");

    // A product whose id is a string.
    let mut wrong = good.clone();
    wrong["id"] = json!("1");
    rejects("GET", path, 200, &wrong, "at /id");

    // A nested type error: stock qty as a string, deep in extension_attributes.
    let mut wrong = good.clone();
    wrong["extension_attributes"]["stock_item"]["qty"] = json!("100");
    rejects(
        "GET",
        path,
        200,
        &wrong,
        "at /extension_attributes/stock_item/qty",
    );

    // A field the interface does not have.
    let mut wrong = good.clone();
    wrong["final_price"] = json!(34);
    rejects("GET", path, 200, &wrong, "final_price");

    // null for a property Magento omits when null (not required).
    let mut wrong = good.clone();
    wrong["weight"] = Value::Null;
    rejects("GET", path, 200, &wrong, "at /weight");

    // A missing required property (sku).
    let mut wrong = good.clone();
    wrong.as_object_mut().unwrap().remove("sku");
    rejects("GET", path, 200, &wrong, "sku");

    // An empty extension_attributes (Magento leaves it out instead).
    let mut wrong = good.clone();
    wrong["extension_attributes"] = json!({});
    rejects("GET", path, 200, &wrong, "at /extension_attributes");

    // An error body must have a string message.
    rejects("GET", path, 404, &json!({ "message": 404 }), "at /message");
    // A DELETE answers a boolean, not an object.
    rejects("DELETE", path, 200, &json!({ "deleted": true }), "at /");
    // An order item with a string qty_ordered, found through the list schema.
    let orders = load(&fixtures_root().join("orders/list-by-customer-5.json")).unwrap();
    let mut wrong = orders["response"]["body"].clone();
    wrong["items"][0]["items"][0]["qty_ordered"] = json!("2");
    rejects(
        "GET",
        "/rest/default/V1/orders",
        200,
        &wrong,
        "at /items/0/items/0/qty_ordered",
    );
}

#[test]
fn a_projection_may_leave_fields_out_but_not_change_types() {
    let api = OpenApi::get();
    let path = "/rest/default/V1/products";
    let body = json!({ "items": [{ "id": 1, "sku": "24-MB01" }], "total_count": 1 });
    api.validate_in(Mode::Projection, "GET", path, 200, &body)
        .expect("a fields= projection may omit search_criteria");
    assert!(
        api.validate("GET", path, 200, &body).is_err(),
        "without fields= the search_criteria is required"
    );
    let wrong = json!({ "items": [{ "id": "1", "sku": "24-MB01" }], "total_count": 1 });
    assert!(
        api.validate_in(Mode::Projection, "GET", path, 200, &wrong)
            .is_err()
    );
}

/// The generated schema is strict enough to matter: the component schemas
/// behind the recorded responses declare a type (or a reference) for every
/// property, down to the leaves.
#[test]
fn the_component_schemas_constrain_types() {
    let api = OpenApi::get();
    let roots = [
        "catalog-data-product-interface",
        "catalog-data-product-search-results-interface",
        "catalog-data-product-render-search-results-interface",
        "catalog-inventory-data-stock-item-interface",
        "catalog-inventory-data-stock-item-collection-interface",
        "catalog-data-product-attribute-media-gallery-entry-interface",
        "catalog-data-category-product-link-interface",
        "customer-data-customer-interface",
        "customer-data-customer-search-results-interface",
        "customer-data-address-interface",
        "directory-data-country-information-interface",
        "store-data-store-interface",
        "store-data-store-config-interface",
        "sales-data-order-interface",
        "sales-data-order-search-result-interface",
        "error-response",
    ];
    let mut seen = std::collections::BTreeSet::new();
    let mut untyped = Vec::new();
    let mut stack: Vec<String> = roots.iter().map(|s| s.to_string()).collect();
    let mut typed_leaves = 0;
    while let Some(name) = stack.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let schema = api
            .component(&name)
            .unwrap_or_else(|| panic!("{name} is not in the schema"));
        assert!(schema.get("type").is_some(), "{name} has no type");
        let mut check = |at: String, s: &Value| {
            if let Some(r) = s.get("$ref").and_then(Value::as_str) {
                stack.push(r.trim_start_matches("#/components/schemas/").to_string());
            } else if s.get("type").and_then(Value::as_str).is_some() {
                typed_leaves += 1;
            } else {
                untyped.push(at);
            }
        };
        for (prop, s) in schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            check(format!("{name}.{prop}"), s);
            if let Some(items) = s.get("items") {
                check(format!("{name}.{prop}[]"), items);
            }
        }
        if let Some(items) = schema.get("items") {
            check(format!("{name}[]"), items);
        }
    }
    assert!(untyped.is_empty(), "untyped properties: {untyped:?}");
    assert!(
        seen.len() > 50 && typed_leaves > 500,
        "{} schemas, {typed_leaves} typed",
        seen.len()
    );
}

/// Each patch in `patch_generator_bugs` is needed: the unpatched schema
/// rejects what Magento really sends.
#[test]
fn the_generator_patches_are_needed() {
    let doc: Value = load(&openapi::committed_copy()).unwrap();
    let unpatched = OpenApi::from_document_with(doc, false).unwrap();
    let patched = OpenApi::get();
    let cases = [
        (
            "GET",
            "/rest/default/V1/customers/99",
            404,
            json!({
                "message": "No such entity with %fieldName = %fieldValue",
                "parameters": { "fieldName": "customerId", "fieldValue": 99 }
            }),
        ),
        (
            "POST",
            "/rest/default/V1/customers",
            400,
            json!({
                "message": "The password needs at least %1 characters. Create a new password and try again.",
                "parameters": ["8"]
            }),
        ),
        (
            "GET",
            "/rest/default/V1/products/24-MB01",
            200,
            recorded_product(),
        ),
    ];
    for (method, path, status, body) in cases {
        patched
            .validate(method, path, status, &body)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        assert!(
            unpatched.validate(method, path, status, &body).is_err(),
            "{method} {path} -> {status} validates even without the patch; is it still needed?"
        );
    }
}

#[test]
fn request_paths_find_the_right_template() {
    let api = OpenApi::get();
    let cases = [
        (
            "GET",
            "/rest/default/V1/products/24-MB01",
            "/V1/products/{sku}",
        ),
        (
            "GET",
            "/rest/V1/products/24-MB01/media",
            "/V1/products/{sku}/media",
        ),
        (
            "GET",
            "/rest/french/V1/products/24-MB01/media/11",
            "/V1/products/{sku}/media/{entryId}",
        ),
        (
            "GET",
            "/rest/default/V1/products/attributes/color/options",
            "/V1/products/attributes/{attributeCode}/options",
        ),
        (
            "GET",
            "/rest/default/V1/products/attributes/color",
            "/V1/products/attributes/{attributeCode}",
        ),
        ("GET", "/rest/default/V1/customers/me", "/V1/customers/me"),
        (
            "GET",
            "/rest/default/V1/customers/search",
            "/V1/customers/search",
        ),
        (
            "GET",
            "/rest/default/V1/customers/5",
            "/V1/customers/{customerId}",
        ),
        (
            "GET",
            "/rest/default/V1/stockItems/lowStock/",
            "/V1/stockItems/lowStock/",
        ),
        (
            "GET",
            "/rest/default/V1/stockItems/lowStock",
            "/V1/stockItems/lowStock/",
        ),
        (
            "GET",
            "/rest/default/V1/stockItems/24-MB01",
            "/V1/stockItems/{productSku}",
        ),
        ("GET", "/rest/default/V1/orders", "/V1/orders"),
        ("POST", "/rest/default/V1/orders/", "/V1/orders/"),
        ("GET", "/rest/default/V1/orders/31", "/V1/orders/{id}"),
        ("PUT", "/rest/all/V1/categories/4", "/V1/categories/{id}"),
        (
            "GET",
            "/rest/default/V1/categories/4",
            "/V1/categories/{categoryId}",
        ),
        (
            "PUT",
            "/rest/all/V1/products/24-MB01/stockItems/15",
            "/V1/products/{productSku}/stockItems/{itemId}",
        ),
    ];
    for (method, path, template) in cases {
        assert_eq!(
            api.template_for(method, path).unwrap(),
            template,
            "{method} {path}"
        );
    }
    assert!(
        api.template_for("GET", "/rest/default/V1/no/such/route")
            .is_err()
    );
    assert!(
        api.template_for("PATCH", "/rest/default/V1/products/24-MB01")
            .is_err()
    );
    assert!(api.template_for("GET", "/V1/products/24-MB01").is_err());
}

/// The committed copy is the team's reference file, unchanged.
#[test]
fn the_committed_schema_is_the_shared_reference() {
    let committed = std::fs::read(openapi::committed_copy()).expect("committed schema copy");
    match openapi::shared_reference_copy() {
        Some(shared) => {
            let shared_bytes = std::fs::read(&shared).unwrap();
            assert!(
                committed == shared_bytes,
                "{} differs from {}; copy the reference again",
                openapi::COMMITTED_COPY,
                shared.display()
            );
        }
        None => eprintln!("no shared/reference/ next to this checkout; using the committed copy"),
    }
    let doc: Value = serde_json::from_slice(&committed).unwrap();
    assert_eq!(doc["info"]["version"], "2.4.5");
}

/// The README of the fixtures lists every fixture file, and no file that is gone.
#[test]
fn the_readme_lists_every_fixture() {
    let readme = std::fs::read_to_string(fixtures_root().join("README.md")).expect("README.md");
    let files: Vec<String> = fixture_files().into_iter().map(|(rel, _)| rel).collect();
    let missing: Vec<&String> = files
        .iter()
        .filter(|rel| !readme.contains(&format!("`{rel}`")))
        .collect();
    assert!(missing.is_empty(), "README.md does not list: {missing:?}");
    let listed: Vec<&str> = readme
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.ends_with(".json") && s.contains('/') && !s.contains(' '))
        .filter(|s| !s.starts_with("schema/") && !s.contains("<"))
        .collect();
    let stale: Vec<&&str> = listed
        .iter()
        .filter(|s| !files.iter().any(|f| f == *s))
        .collect();
    assert!(
        stale.is_empty(),
        "README.md lists files that do not exist: {stale:?}"
    );
}

/// Every answer in the committed cassettes (`fixtures/cassettes/`, recorded from the
/// sandbox by `STOREGATE_RERECORD=1 cargo test --test e2e committed_cassettes`) validates
/// against the same schema: a re-recording cannot bring an off-schema answer in unseen.
#[test]
fn every_cassette_answer_matches_the_2_4_5_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cassettes");
    let api = OpenApi::get();
    let mut checked = 0;
    let mut failures = Vec::new();
    for scenario in std::fs::read_dir(&root).expect("fixtures/cassettes exists") {
        let dir = scenario.expect("directory entry").path();
        let files = storegate::backend::recording::cassette::load_dir(&dir)
            .unwrap_or_else(|e| panic!("{e}"));
        for (file, cassette) in files {
            for (i, interaction) in cassette.interactions.iter().enumerate() {
                let (request, response) = (&interaction.request, &interaction.response);
                let at = format!("{}/{} #{i}", dir.display(), file.display());
                let Some(body) = &response.body.body else {
                    failures.push(format!("{at}: the answer is not JSON"));
                    continue;
                };
                let projection = request.query.contains_key("fields");
                let result = if projection {
                    api.validate_in(
                        Mode::Projection,
                        &request.method,
                        &request.path,
                        response.status,
                        body,
                    )
                } else {
                    api.validate(&request.method, &request.path, response.status, body)
                };
                if let Err(problem) = result {
                    failures.push(format!(
                        "{at}: {} {}: {problem}",
                        request.method, request.path
                    ));
                }
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 30,
        "expected the committed cassettes, found {checked} answers"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
