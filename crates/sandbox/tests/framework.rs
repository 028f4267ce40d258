//! The Web API frame around the services: auth, routing, store codes, body decoding,
//! counters, options and shutdown.

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::json;
use storegate_sandbox::SandboxOptions;

#[tokio::test]
async fn missing_or_wrong_token_is_401_with_the_route_resource() {
    let h = Harness::start().await;
    let expected = json!({"message": "The consumer isn't authorized to access %resources.", "parameters": {"resources": "Magento_Catalog::products"}});
    let r = h.send("GET", "/rest/V1/products/24-MB01", None, None).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body, expected);
    let r = h
        .send(
            "GET",
            "/rest/V1/products/24-MB01",
            None,
            Some("not-the-token"),
        )
        .await;
    assert_eq!(r.body, expected);
    let r = h
        .send("GET", "/rest/V1/products/24-MB01/media/1", None, None)
        .await;
    assert_eq!(
        r.body["parameters"]["resources"],
        "Magento_Catalog::attributes_attributes"
    );
    let r = h
        .send("GET", "/rest/V1/stockItems/24-MB01", None, None)
        .await;
    assert_eq!(
        r.body["parameters"]["resources"],
        "Magento_CatalogInventory::cataloginventory"
    );
    // Anonymous routes answer with any token or none.
    for path in [
        "/rest/V1/store/storeViews",
        "/rest/V1/store/storeConfigs",
        "/rest/V1/directory/countries",
    ] {
        assert_eq!(h.send("GET", path, None, None).await.status, 200, "{path}");
        assert_eq!(
            h.send("GET", path, None, Some("garbage")).await.status,
            200,
            "{path}"
        );
    }
}

#[tokio::test]
async fn routing_errors() {
    let h = Harness::start().await;
    let r = h.get("/rest/V1/nothing/here").await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.body,
        json!({"message": "Request does not match any route."})
    );
    let r = h.admin("PATCH", "/rest/V1/products/24-MB01", None).await;
    assert_eq!(r.status, 404, "a method without a route is no route");
    // An unknown store code stays part of the path, so nothing matches.
    let r = h.get("/rest/nowhere/V1/products/24-MB01").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body["message"], "Request does not match any route.");
    assert_eq!(h.get("/rest/default/V1/products/24-MB01").await.status, 200);
    assert_eq!(
        h.get("/rest/admin/V1/products/24-MB01").await.status,
        404,
        "admin is not a store code in URLs"
    );
}

#[tokio::test]
async fn get_through_all_is_refused_after_auth() {
    let h = Harness::start().await;
    let r = h.get("/rest/all/V1/products/24-MB01").await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!({"message": "Cannot perform GET operation with store code 'all'"})
    );
    assert_eq!(
        h.send("GET", "/rest/all/V1/store/storeViews", None, None)
            .await
            .status,
        400
    );
    let r = h
        .send("GET", "/rest/all/V1/products/24-MB01", None, None)
        .await;
    assert_eq!(r.status, 401, "Magento checks the ACL first");
    let body = json!({"product": {"sku": "24-MB01", "price": 35}});
    assert_eq!(
        h.admin("PUT", "/rest/all/V1/products/24-MB01", Some(&body))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn bodies_that_are_not_json() {
    let h = Harness::start().await;
    let r = h
        .send_raw(
            "POST",
            "/rest/V1/products",
            b"{not json",
            Some("application/json"),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body, json!({"message": "Decoding error."}));
    let r = h.send_raw("POST", "/rest/V1/products", b"{}", None).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["message"], "Content-Type header is empty.");
    let r = h
        .send_raw(
            "POST",
            "/rest/V1/products",
            b"<product/>",
            Some("text/plain"),
        )
        .await;
    assert_eq!(r.status, 400);
    let r = h
        .send_raw("POST", "/rest/V1/products", b"", Some("application/json"))
        .await;
    assert_eq!(
        r.body["parameters"],
        json!({"fieldName": "product"}),
        "an empty body misses its parameters"
    );
    let r = h
        .send_raw(
            "POST",
            "/rest/V1/products",
            b"[1,2]",
            Some("application/json; charset=UTF-8"),
        )
        .await;
    assert_eq!(r.body["parameters"], json!({"fieldName": "product"}));
}

#[tokio::test]
async fn store_views_websites_and_configs() {
    let h = Harness::start().await;
    let views = h
        .send("GET", "/rest/V1/store/storeViews", None, None)
        .await
        .body;
    let codes: Vec<(u64, String)> = views
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            (
                v["id"].as_u64().unwrap_or(99),
                v["code"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        codes,
        vec![
            (0, "admin".into()),
            (1, "default".into()),
            (2, "french".into())
        ]
    );
    let configs = h
        .send(
            "GET",
            "/rest/V1/store/storeConfigs?storeCodes[]=french",
            None,
            None,
        )
        .await
        .body;
    assert_eq!(configs.as_array().map(Vec::len), Some(1));
    assert_eq!(configs[0]["locale"], "fr_FR");
    let all = h
        .send("GET", "/rest/V1/store/storeConfigs", None, None)
        .await
        .body;
    let base = format!("{}/", h.sandbox.base_url());
    assert_eq!(all[0]["base_url"], base);
    assert_eq!(all[0]["base_media_url"], format!("{base}media/"));
    assert_eq!(all[0]["base_currency_code"], "USD");
    let websites = h
        .send("GET", "/rest/V1/store/websites", None, None)
        .await
        .body;
    assert_eq!(websites[1]["code"], "base");
}

#[tokio::test]
async fn counters_and_stats_endpoints() {
    let h = Harness::start().await;
    h.get("/rest/V1/products/24-MB01").await;
    h.get("/rest/default/V1/products/24-MB01").await;
    h.send("GET", "/rest/V1/products/24-MB01", None, None).await;
    h.get("/rest/french/V1/products/24-MB04").await;
    assert_eq!(
        h.sandbox.count("GET", "/V1/products/24-MB01"),
        3,
        "errors and store codes count too"
    );
    assert_eq!(h.sandbox.count("GET", "/V1/products/24-MB04"), 1);
    assert_eq!(h.sandbox.count("PUT", "/V1/products/24-MB01"), 0);
    let (status, bytes, _) = h.raw_get("/__sandbox/stats").await;
    assert_eq!(status, 200);
    let stats: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    assert_eq!(stats["GET /V1/products/24-MB01"], 3);
    let reset = h.send("POST", "/__sandbox/stats/reset", None, None).await;
    assert_eq!(reset.status, 200);
    assert_eq!(h.sandbox.count("GET", "/V1/products/24-MB01"), 0);
    assert_eq!(
        h.sandbox.count("GET", "/__sandbox/stats"),
        0,
        "stats calls are not counted"
    );
}

#[tokio::test]
async fn fields_projection_on_single_objects() {
    let h = Harness::start().await;
    let r = h.get("/rest/V1/products/24-MB01?fields=sku,extension_attributes[stock_item[qty,is_in_stock]]").await;
    assert_eq!(
        r.body,
        json!({"sku": "24-MB01", "extension_attributes": {"stock_item": {"qty": 100, "is_in_stock": true}}})
    );
    let r = h.get("/rest/V1/products/24-MB01?fields=items[id").await;
    assert_eq!(
        r.body,
        json!([]),
        "an unparsable filter answers an empty array, like Magento"
    );
}

#[tokio::test]
async fn options_token_latency_and_generated_products() {
    let h = Harness::with_options(SandboxOptions {
        token: Some("fixed-token".into()),
        latency: Duration::from_millis(120),
        generated_products: 1_000,
        seed: None,
    })
    .await;
    assert_eq!(h.sandbox.token(), "fixed-token");
    let started = Instant::now();
    let r = h.get("/rest/V1/products/GEN-000001").await;
    assert!(started.elapsed() >= Duration::from_millis(120));
    assert_eq!(r.status, 200);
    assert_eq!(r.body["id"], 14, "generated products continue the ids");
    assert_eq!(
        r.body["extension_attributes"]["stock_item"]["item_id"],
        1014
    );
    assert_eq!(custom(&r.body, "url_key"), Some(&json!("gen-000001")));
    let list = h
        .get("/rest/V1/products?searchCriteria[pageSize]=300&searchCriteria[currentPage]=4")
        .await;
    assert_eq!(list.body["total_count"], 1_013);
    assert_eq!(list.body["items"][0]["sku"], "GEN-000888");
    let render = h
        .get(&format!(
            "/rest/V1/products-render-info?{}&storeId=1&currencyCode=USD",
            filter(0, 0, "sku", "GEN-000010", "eq")
        ))
        .await;
    assert_eq!(render.body["items"][0]["price_info"]["final_price"], 20.99);
    let twin = json!({"product": {"sku": "NOT-GEN", "name": "GEN 000001", "attribute_set_id": 4, "price": 1}});
    let r = h.admin("POST", "/rest/all/V1/products", Some(&twin)).await;
    assert_eq!(
        r.body["message"], "URL key for specified store already exists.",
        "generated url keys count"
    );
    h.sandbox.shutdown().await;
}

#[tokio::test]
async fn shutdown_stops_serving() {
    let h = Harness::start().await;
    let url = h.url("/rest/V1/store/storeViews");
    assert_eq!(
        h.send("GET", "/rest/V1/store/storeViews", None, None)
            .await
            .status,
        200
    );
    h.sandbox.shutdown().await;
    let after = reqwest::Client::new().get(url).send().await;
    assert!(after.is_err(), "no longer accepting connections");
}
