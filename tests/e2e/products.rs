//! Product create, read, update and delete against the stateful sandbox.

use serde_json::json;

use crate::harness::Stack;
use crate::schema::assert_answers_match_schema;

fn new_product(sku: &str) -> serde_json::Value {
    json!({
        "type_id": "simple", "attribute_set_id": 4, "sku": sku, "name": "End-to-end Mug",
        "price": "12.50", "weight": "0.4", "status": 1, "visibility": 4, "tax_class_id": 2,
        "description": "A mug made by a test", "short_description": "Mug", "url_key": sku.to_lowercase(),
        "stock_data": {"qty": 25, "is_in_stock": 1},
        "tier_price": [{"cust_group": 32000, "price": "11", "price_qty": 5}]
    })
}

#[tokio::test]
async fn create_read_update_delete() {
    let stack = Stack::start().await;

    let r = stack
        .admin("POST", "/products", Some(new_product("E2E-MUG")))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let location = r.header("location").unwrap().to_owned();
    let id = location.rsplit('/').next().unwrap().to_owned();
    assert_eq!(location, format!("/api/rest/products/{id}"));

    // Admin view.
    let p = stack
        .admin("GET", &format!("/products/{id}"), None)
        .await
        .json();
    assert_eq!(p["sku"], "E2E-MUG");
    assert_eq!(p["price"], "12.5000");
    assert_eq!(p["stock_data"]["qty"], "25.0000");
    assert_eq!(p["tier_price"][0]["price_qty"], "5.0000");

    // Shoppers see it, with prices.
    let g = stack
        .call("GET", &format!("/products/{id}"), None, None)
        .await;
    assert_eq!(g.status, 200, "{}", g.body);
    let g = g.json();
    assert_eq!(g["name"], "End-to-end Mug");
    assert_eq!(g["final_price_without_tax"], json!(12.5));
    assert_eq!(g["is_in_stock"], "1");

    // The same SKU again is refused, not overwritten.
    let again = stack
        .admin("POST", "/products", Some(new_product("E2E-MUG")))
        .await;
    assert_eq!(again.status, 400, "{}", again.body);

    // Partial update: only the name changes.
    let r = stack
        .admin(
            "PUT",
            &format!("/products/{id}"),
            Some(json!({"name": "Renamed Mug"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let p = stack
        .admin("GET", &format!("/products/{id}"), None)
        .await
        .json();
    assert_eq!(p["name"], "Renamed Mug");
    assert_eq!(p["price"], "12.5000");
    assert_eq!(p["stock_data"]["qty"], "25.0000");
    assert_eq!(p["tier_price"][0]["price"], "11.0000");
    let g = stack
        .call("GET", &format!("/products/{id}"), None, None)
        .await
        .json();
    assert_eq!(g["name"], "Renamed Mug");

    // The product shows in lists after the write.
    let list = stack.admin("GET", "/products?limit=100", None).await.json();
    assert_eq!(list[id.as_str()]["name"], "Renamed Mug");

    // Delete: gone for everyone.
    assert_eq!(
        stack
            .admin("DELETE", &format!("/products/{id}"), None)
            .await
            .status,
        200
    );
    assert_eq!(
        stack
            .admin("GET", &format!("/products/{id}"), None)
            .await
            .status,
        404
    );
    assert_eq!(
        stack
            .call("GET", &format!("/products/{id}"), None, None)
            .await
            .status,
        404
    );
    assert_eq!(
        stack
            .admin("DELETE", &format!("/products/{id}"), None)
            .await
            .status,
        404
    );

    assert_answers_match_schema(&stack.exchanges());
}

#[tokio::test]
async fn paging_through_the_catalog_ends() {
    let stack = Stack::start().await;
    let mut seen = Vec::new();
    for page in 1..=50 {
        let list = stack
            .admin("GET", &format!("/products?limit=5&page={page}"), None)
            .await
            .json();
        let ids: Vec<String> = list.as_object().unwrap().keys().cloned().collect();
        if ids.is_empty() {
            break;
        }
        for id in ids {
            assert!(!seen.contains(&id), "{id} seen twice: pages repeat");
            seen.push(id);
        }
    }
    assert!(seen.len() >= 5, "{seen:?}");
    assert!(seen.len() < 250, "paging never ended");
}
