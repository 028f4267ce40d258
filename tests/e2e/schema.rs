//! Every answer the gateway received from the sandbox validates against Magento 2.4.5's
//! generated REST schema, the same check the recorded fixtures pass.

use serde_json::Value;

use crate::common::openapi::{Mode, OpenApi};
use crate::harness::{Exchange, Stack};

/// Validates what the sandbox answered; panics with every problem found.
pub fn assert_answers_match_schema(exchanges: &[Exchange]) {
    let openapi = OpenApi::get();
    let mut problems = Vec::new();
    for exchange in exchanges {
        let Ok(body) = serde_json::from_slice::<Value>(&exchange.body) else {
            problems.push(format!(
                "{} {}: answer is not JSON",
                exchange.method, exchange.path
            ));
            continue;
        };
        let projection = exchange
            .query
            .as_deref()
            .is_some_and(|q| q.contains("fields="));
        let result = if projection {
            openapi.validate_in(
                Mode::Projection,
                &exchange.method,
                &exchange.path,
                exchange.status,
                &body,
            )
        } else {
            openapi.validate(&exchange.method, &exchange.path, exchange.status, &body)
        };
        if let Err(problem) = result {
            problems.push(format!(
                "{} {} -> {}: {problem}",
                exchange.method, exchange.path, exchange.status
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "sandbox answers off the schema:\n{}",
        problems.join("\n")
    );
}

/// A tour of the catalog through the gateway; then every upstream answer is checked.
#[tokio::test]
async fn sandbox_answers_the_gateway_relies_on_match_the_schema() {
    let stack = Stack::start().await;
    for path in [
        "/products",
        "/products?page=2&limit=3",
        "/products/1",
        "/products/999999",
        "/products/category/3",
    ] {
        stack.call("GET", path, None, None).await;
        stack.admin("GET", path, None).await;
    }
    let token = stack
        .customer_token(
            storegate_sandbox::DEMO_CUSTOMER_EMAIL,
            storegate_sandbox::DEMO_CUSTOMER_PASSWORD,
        )
        .await;
    stack.call("GET", "/products", Some(&token), None).await;
    let exchanges = stack.exchanges();
    assert!(
        exchanges.len() > 8,
        "the tour reached the sandbox: {exchanges:?}"
    );
    assert_answers_match_schema(&exchanges);
}

/// The original's extra routes, reads and writes: the Magento 2 calls behind them (category
/// and website links, an order's comments) answer in Magento 2.4.5's shapes too.
#[tokio::test]
async fn the_extra_routes_upstream_answers_match_the_schema() {
    let stack = Stack::start().await;
    let token = stack
        .customer_token(
            storegate_sandbox::DEMO_CUSTOMER_EMAIL,
            storegate_sandbox::DEMO_CUSTOMER_PASSWORD,
        )
        .await;
    for path in [
        "/products/1/categories",
        "/products/1/websites",
        "/orders/1/items",
        "/orders/1/addresses",
        "/orders/1/comments",
    ] {
        let r = stack.admin("GET", path, None).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
    }
    let r = stack
        .call("GET", "/products/1/categories", Some(&token), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    for (verb, path, body) in [
        (
            "POST",
            "/products/2/categories",
            Some(serde_json::json!({"category_id": 5})),
        ),
        ("DELETE", "/products/2/categories/5", None),
        ("DELETE", "/products/2/websites/1", None),
        (
            "POST",
            "/products/2/websites",
            Some(serde_json::json!({"website_id": 1})),
        ),
        (
            "POST",
            "/orders/1/comments",
            Some(serde_json::json!({"comment": "Checked.", "is_visible_on_front": 1})),
        ),
    ] {
        let r = stack.admin(verb, path, body).await;
        assert_eq!(r.status, 200, "{verb} {path}: {}", r.body);
    }
    let r = stack.admin("GET", "/orders/comments/5", None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_answers_match_schema(&stack.exchanges());
}
