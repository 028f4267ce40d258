//! Product create, read, update and delete against the stateful sandbox.

use serde_json::{Value, json};

use crate::common::http::sent;
use crate::harness::{ADMIN_KEY, Stack};
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
    let p = stack.admin_json(&format!("/products/{id}")).await;
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
    let r = stack.rename_product(&id, "Renamed Mug").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let p = stack.admin_json(&format!("/products/{id}")).await;
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
    let list = stack.admin_json("/products?limit=100").await;
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
            .admin_json(&format!("/products?limit=5&page={page}"))
            .await;
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

/// A wholesale-only tier (group 2) reaches the wholesale customer and nobody else; each
/// shopper's tiers come in the original's shopper shape.
#[tokio::test]
async fn tier_prices_reach_only_their_customer_group() {
    let stack = Stack::start().await;
    let mut product = new_product("E2E-TIERS");
    product["tier_price"] = json!([
        {"cust_group": 32000, "price": "11", "price_qty": 5},
        {"cust_group": 2, "price": "7.77", "price_qty": 2},
        {"cust_group": 1, "price": "10.5", "price_qty": 3}
    ]);
    let r = stack.admin("POST", "/products", Some(product)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let id = r.created_id();
    let path = format!("/products/{id}");

    let general = stack
        .customer_token("roni_cost@example.com", "Roni-Cost-2024")
        .await;
    let wholesale = stack
        .customer_token("alex.walker@example.com", "Alex-Walker-99")
        .await;
    let qtys = |body: &serde_json::Value| -> Vec<serde_json::Value> {
        body["tier_price"]
            .as_array()
            .unwrap_or_else(|| panic!("{body}"))
            .iter()
            .map(|t| t["qty"].clone())
            .collect()
    };
    // Twice each: the second answer comes from the cache.
    for _ in 0..2 {
        let w = stack.call("GET", &path, Some(&wholesale), None).await;
        assert_eq!(w.status, 200, "{}", w.body);
        assert_eq!(qtys(&w.json()), [json!(2), json!(5)], "{}", w.body);
        assert_eq!(w.json()["tier_price"][0]["price_without_tax"], json!(7.77));

        let g = stack.call("GET", &path, None, None).await;
        assert_eq!(qtys(&g.json()), [json!(5)], "{}", g.body);
        assert!(!g.body.contains("7.77"), "{}", g.body);

        let c = stack.call("GET", &path, Some(&general), None).await;
        assert_eq!(qtys(&c.json()), [json!(3), json!(5)], "{}", c.body);
        assert!(!c.body.contains("7.77"), "{}", c.body);
        let tier = &c.json()["tier_price"][0];
        assert_eq!(tier["price_without_tax"], json!(10.5));
        assert!(tier["price_with_tax"].as_f64().unwrap() >= 10.5, "{tier}");
    }
    assert_answers_match_schema(&stack.exchanges());
}

/// The original's store-view routes answer the store view's values, for shoppers and the
/// Admin, by store id or code; the lists of a store view too.
#[tokio::test]
async fn store_view_routes_answer_the_store_views_values() {
    let stack = Stack::start().await;
    let english = stack.call("GET", "/products/1", None, None).await.json();
    // The sandbox dates its products as Magento 2 does; the original showed the dates.
    for field in ["created_at", "updated_at"] {
        let date = english[field]
            .as_str()
            .unwrap_or_else(|| panic!("{english}"));
        assert_eq!(date.len(), 19, "{field}: {date}");
    }
    for path in ["/products/1/store/french", "/products/1/store/2/"] {
        let r = stack.call("GET", path, None, None).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert_ne!(r.json()["name"], english["name"], "{path}");
        let admin = stack.admin("GET", path, None).await;
        assert_eq!(admin.json()["name"], r.json()["name"], "{path}");
    }
    let list = stack
        .call("GET", "/products/store/french", None, None)
        .await;
    assert_eq!(list.status, 200, "{}", list.body);
    let french = stack
        .call("GET", "/products/1/store/french", None, None)
        .await
        .json();
    assert_eq!(list.json()["1"]["name"], french["name"]);
    let r = stack.call("GET", "/products/store/mars", None, None).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_answers_match_schema(&stack.exchanges());
}

/// `STOREGATE_PROFILE=original` against the sandbox: the original's XML root, `*/*` in
/// JSON, its JSON types and list shapes, on Magento 2's real answers.
#[tokio::test]
async fn the_original_profile_end_to_end() {
    let stack =
        Stack::start_with(|c| c.profile = storegate::context::profile::Profile::Original).await;
    let xml = crate::common::http::text_of(
        stack
            .http
            .get(stack.url("/products/1"))
            .header("Accept", "application/xml"),
    )
    .await;
    assert!(
        xml.contains("<magento_api><entity_id>1</entity_id>"),
        "{xml}"
    );
    let any = sent(
        stack
            .http
            .get(stack.url("/products/1"))
            .header("Accept", "*/*"),
    )
    .await;
    assert_eq!(
        any.headers()["content-type"],
        "application/json; charset=utf-8"
    );
    let list = stack.call("GET", "/products", None, None).await.json();
    let first = list.as_object().unwrap().values().next().unwrap().clone();
    assert!(first["is_saleable"].is_boolean(), "{first}");
    let admin = stack.admin_json("/products/5").await;
    // All groups the integer 32000, one group a string, as the original.
    let groups: Vec<&Value> = admin["tier_price"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["cust_group"])
        .collect();
    assert!(groups.contains(&&json!(32000)), "{admin}");
    assert!(groups.contains(&&json!("1")), "{admin}");
    assert!(
        admin["created_at"].as_str().unwrap().contains('T'),
        "{admin}"
    );
    // A shopper's tier quantity is the original's string with four places.
    let shopper = stack.call("GET", "/products/5", None, None).await.json();
    let qty = &shopper["tier_price"][0]["qty"];
    assert!(
        qty.as_str().is_some_and(|q| q.ends_with(".0000")),
        "{shopper}"
    );
    assert!(
        shopper["tier_price"][0]["price_without_tax"].is_number(),
        "{shopper}"
    );
    let category = stack.call("GET", "/products/category/3", None, None).await;
    assert_eq!(category.status, 200, "{}", category.body);
    assert!(category.json().is_object(), "{}", category.body);
    let demo = stack
        .customer_token("roni_cost@example.com", "Roni-Cost-2024")
        .await;
    let addresses = stack
        .call("GET", "/customers/1/addresses", Some(&demo), None)
        .await
        .json();
    assert!(addresses[0]["is_default_billing"].is_i64(), "{addresses}");
    let orders = crate::common::http::text_of(
        stack
            .http
            .get(stack.url("/orders"))
            .header("Accept", "application/xml")
            .bearer_auth(ADMIN_KEY),
    )
    .await;
    assert!(
        orders.starts_with("<?xml version=\"1.0\"?>\n<magento_api><data_item>"),
        "{orders}"
    );
    assert_answers_match_schema(&stack.exchanges());
}
