//! Real answers of the gateway, in front of the sandbox, validate against the gateway's own
//! OpenAPI document (`docs/openapi.json`): every resource, every user type's view, the
//! writes' empty answers, the batch, the token, the purge and a sample of errors.

use serde_json::json;

use crate::common::api_reference;
use crate::harness::{ADMIN_KEY, Stack};
use storegate_sandbox::{DEMO_CUSTOMER_EMAIL, DEMO_CUSTOMER_PASSWORD};

#[tokio::test]
async fn a_sample_of_real_answers_matches_the_document() {
    let stack = Stack::start().await;
    let doc = api_reference::document();
    let demo = stack
        .customer_token(DEMO_CUSTOMER_EMAIL, DEMO_CUSTOMER_PASSWORD)
        .await;
    // The customer's id, from the token answer (a customer's own list view may not show it).
    let login = stack
        .call(
            "POST",
            "/auth/token",
            None,
            Some(json!({"username": DEMO_CUSTOMER_EMAIL, "password": DEMO_CUSTOMER_PASSWORD})),
        )
        .await
        .json();
    let demo_id = id_of(&login["customer_id"]);
    assert!(!demo_id.is_empty(), "{login}");
    let admin = Some(ADMIN_KEY);
    let guest = None;
    let customer = Some(demo.as_str());

    let mut calls: Vec<(&str, String, Option<&str>, Option<serde_json::Value>)> = vec![
        ("GET", "/products".into(), guest, None),
        ("GET", "/products?limit=3&order=name".into(), admin, None),
        ("GET", "/products".into(), customer, None),
        ("GET", "/products/1".into(), guest, None),
        ("GET", "/products/1".into(), admin, None),
        ("GET", "/products/1".into(), customer, None),
        ("GET", "/products/category_id=3".into(), guest, None),
        ("GET", "/products/category/3".into(), admin, None),
        ("GET", "/products/1/images".into(), guest, None),
        ("GET", "/products/1/images".into(), admin, None),
        ("GET", "/products/1/images/store/2".into(), guest, None),
        ("GET", "/stockitems".into(), admin, None),
        ("GET", "/stockitems/1001".into(), admin, None),
        ("GET", "/customers".into(), admin, None),
        ("GET", "/customers".into(), customer, None),
        ("GET", format!("/customers/{demo_id}"), customer, None),
        ("GET", format!("/customers/{demo_id}"), admin, None),
        (
            "GET",
            format!("/customers/{demo_id}/addresses"),
            customer,
            None,
        ),
        ("GET", "/orders".into(), admin, None),
        ("GET", "/orders".into(), customer, None),
        ("GET", "/orders".into(), guest, None),
        (
            "PUT",
            "/stockitems".into(),
            admin,
            Some(json!([{"item_id": 1001, "qty": 40}, {"item_id": 999999, "qty": 1}])),
        ),
        (
            "PUT",
            "/stockitems/1001".into(),
            admin,
            Some(json!({"qty": 41})),
        ),
        (
            "POST",
            "/auth/token".into(),
            guest,
            Some(json!({"username": DEMO_CUSTOMER_EMAIL, "password": DEMO_CUSTOMER_PASSWORD})),
        ),
        (
            "POST",
            "/cache/purge".into(),
            admin,
            Some(json!({"tags": ["cat_p_1"]})),
        ),
        // Errors.
        ("GET", "/products/999999".into(), guest, None),
        ("GET", "/stockitems".into(), guest, None),
        ("DELETE", "/stockitems/1001".into(), admin, None),
        ("GET", "/products?limit=1000".into(), guest, None),
        ("GET", "/products?order=nonsense".into(), guest, None),
        ("GET", "/customers/999999".into(), customer, None),
        (
            "POST",
            "/customers".into(),
            admin,
            Some(json!({"firstname": "No"})),
        ),
        (
            "POST",
            "/auth/token".into(),
            guest,
            Some(json!({"username": DEMO_CUSTOMER_EMAIL, "password": "wrong-password"})),
        ),
        ("GET", "/products/1".into(), Some("not-a-token"), None),
    ];
    // An address of the demo customer, read and updated.
    let addresses = stack
        .call(
            "GET",
            &format!("/customers/{demo_id}/addresses"),
            customer,
            None,
        )
        .await
        .json();
    let address = id_of(&addresses[0]["entity_id"]);
    if !address.is_empty() {
        calls.push((
            "GET",
            format!("/customers/addresses/{address}"),
            customer,
            None,
        ));
    }
    // An order, read by Admin.
    let orders = stack.admin_json("/orders").await;
    if let Some(order) = orders.as_object().and_then(|o| o.keys().next()) {
        calls.push(("GET", format!("/orders/{order}"), admin, None));
    }

    let mut failures = Vec::new();
    for (verb, path, who, body) in &calls {
        let reply = stack.call(verb, path, *who, body.clone()).await;
        let full = format!("/api/rest{path}");
        let path_only = full.split('?').next().unwrap_or_default();
        if let Err(why) =
            api_reference::check_answer(&doc, verb, path_only, reply.status, &reply.body)
        {
            failures.push(why);
        }
    }
    // Operational answers too.
    let base = format!("http://{}", stack.gateway.addr);
    let ready = reqwest::get(format!("{base}/readyz")).await.unwrap();
    let status = ready.status().as_u16();
    let body = ready.text().await.unwrap();
    if let Err(why) = api_reference::check_answer(&doc, "GET", "/readyz", status, &body) {
        failures.push(why);
    }
    assert!(
        failures.is_empty(),
        "{} answers do not match docs/openapi.json:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// An id as the API writes it: a number or a string of digits.
fn id_of(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}
