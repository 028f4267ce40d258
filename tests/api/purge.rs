//! `POST /api/rest/cache/purge`: Admin only; by the gateway's tags, by Magento's tags, or
//! everything; it empties exactly the entries it names.

use serde_json::json;

use crate::helpers::*;

/// A gateway whose Magento knows products 1 and 2 and category 4.
async fn catalog() -> Gateway {
    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    for (sku, name) in [
        ("24-MB01", "products/get-simple-24-mb01"),
        ("24-MB02", "products/get-special-price-24-mb02"),
    ] {
        mount_product_as(&gw.upstream, sku, name).await;
    }
    mount_category_4(&gw.upstream).await;
    gw
}

async fn cache_state(gw: &Gateway, path: &str) -> String {
    let r = gw.get_json(path, &Who::Admin).await;
    assert_eq!(r.status, 200, "{path}: {}", r.body);
    r.header("x-cache").unwrap_or_default().to_owned()
}

async fn purge(gw: &Gateway, body: serde_json::Value) -> Reply {
    gw.send(gw.request("POST", "/cache/purge", &Who::Admin).json(&body))
        .await
}

#[tokio::test]
async fn a_purge_by_tag_empties_exactly_the_tagged_entries() {
    let gw = catalog().await;
    for path in ["/products/1", "/products/2", "/products/category/4"] {
        assert_eq!(cache_state(&gw, path).await, "MISS");
        assert_eq!(cache_state(&gw, path).await, "HIT");
    }
    let xml = gw.get_xml("/products/1", &Who::Admin).await;
    assert_eq!(xml.header("x-cache"), Some("MISS"));

    let r = purge(&gw, json!({"tags": ["s:24-MB01"]})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json(), json!({"all": false, "tags": ["s:24-MB01"]}));
    // Product 1 in both formats, and the category list that shows it.
    assert_eq!(cache_state(&gw, "/products/1").await, "MISS");
    assert_eq!(
        gw.get_xml("/products/1", &Who::Admin)
            .await
            .header("x-cache"),
        Some("MISS")
    );
    // Untouched: product 2. The category list was not tagged with the SKU.
    assert_eq!(cache_state(&gw, "/products/2").await, "HIT");
    assert_eq!(cache_state(&gw, "/products/category/4").await, "HIT");

    // By product id: its entries and the lists that show it.
    let before = gw
        .upstream_count("GET", "^/rest/default/V1/products/24-MB02$")
        .await;
    assert_eq!(purge(&gw, json!({"tags": ["p:2"]})).await.status, 200);
    assert_eq!(cache_state(&gw, "/products/2").await, "MISS");
    assert_eq!(cache_state(&gw, "/products/category/4").await, "MISS");
    assert_eq!(cache_state(&gw, "/products/1").await, "HIT");
    // The product record was fetched again, not only re-rendered.
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/products/24-MB02$")
            .await,
        before + 1
    );
}

#[tokio::test]
async fn magento_cache_tags_are_understood() {
    let gw = catalog().await;
    for path in ["/products/1", "/products/2", "/products/category/4"] {
        cache_state(&gw, path).await;
    }
    // A category: its product list only.
    let r = purge(&gw, json!({"tags": "cat_c_p_4"})).await;
    assert_eq!(r.json(), json!({"all": false, "tags": ["c:4"]}));
    assert_eq!(cache_state(&gw, "/products/category/4").await, "MISS");
    assert_eq!(cache_state(&gw, "/products/1").await, "HIT");
    assert_eq!(cache_state(&gw, "/products/2").await, "HIT");
    // A product, as Magento's X-Magento-Tags header lists it.
    let r = purge(&gw, json!({"tags": "cat_p_1,cat_c_9"})).await;
    assert_eq!(
        r.json(),
        json!({"all": false, "tags": ["p:1", "pl", "c:9"]})
    );
    assert_eq!(cache_state(&gw, "/products/1").await, "MISS");
    assert_eq!(cache_state(&gw, "/products/category/4").await, "MISS");
    assert_eq!(cache_state(&gw, "/products/2").await, "HIT");
}

#[tokio::test]
async fn everything_can_be_purged_in_xml_too() {
    let gw = catalog().await;
    for path in ["/products/1", "/products/2"] {
        cache_state(&gw, path).await;
    }
    let r = gw
        .send_raw(
            gw.request("POST", "/cache/purge", &Who::Admin)
                .header("Content-Type", "application/xml")
                .header("Accept", "application/xml")
                .body("<?xml version=\"1.0\"?><service_api><all>1</all></service_api>"),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.assert_contains("<all>1</all>");
    assert_eq!(cache_state(&gw, "/products/1").await, "MISS");
    assert_eq!(cache_state(&gw, "/products/2").await, "MISS");

    // A list of tags in XML.
    let r = gw
        .send_raw(
            gw.request("POST", "/cache/purge", &Who::Admin)
                .header("Content-Type", "application/xml")
                .body("<service_api><tags><data_item>p:1</data_item><data_item>cat_p_2</data_item></tags></service_api>"),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.assert_contains("<tags><data_item>p:1</data_item><data_item>p:2</data_item><data_item>pl</data_item></tags>");
    assert_eq!(cache_state(&gw, "/products/1").await, "MISS");
}

#[tokio::test]
async fn only_admin_may_purge_and_only_with_post() {
    let gw = catalog().await;
    cache_state(&gw, "/products/1").await;
    for who in [Who::Guest, Who::Customer(5)] {
        for verb in ["POST", "GET", "PUT", "DELETE"] {
            let r = gw
                .send_json(verb, "/cache/purge", &who, &json!({"all": true}))
                .await;
            assert_eq!(
                (r.status, r.messages()),
                (403, vec!["Access denied".to_owned()]),
                "{verb} {who:?}"
            );
        }
    }
    for verb in ["GET", "PUT", "DELETE"] {
        let r = gw.send(gw.request(verb, "/cache/purge", &Who::Admin)).await;
        assert_eq!(
            (r.status, r.messages()),
            (405, vec!["Resource does not support method.".to_owned()]),
            "{verb}"
        );
    }
    let r = gw
        .send(
            gw.request("POST", "/cache/purge", &Who::Bearer("Bearer forged".into()))
                .json(&json!({"all": true})),
        )
        .await;
    assert_eq!(r.status, 401);
    // None of that purged anything.
    assert_eq!(cache_state(&gw, "/products/1").await, "HIT");
}

#[tokio::test]
async fn bad_purge_bodies_are_400s() {
    let gw = catalog().await;
    cache_state(&gw, "/products/1").await;
    for (body, message) in [
        (json!({}), "The request data is invalid."),
        (json!({"all": false}), "Missing \"tags\" in request."),
        (json!({"tags": []}), "Missing \"tags\" in request."),
        (
            json!({"tags": [{"p": 1}]}),
            "Invalid \"tags\": use a list of cache tags or one comma-separated string.",
        ),
        (json!({"all": "yes"}), "Invalid \"all\": use true or false."),
    ] {
        let r = purge(&gw, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert_eq!(r.messages()[0], message, "{body}");
    }
    let r = gw
        .send(
            gw.request("POST", "/cache/purge", &Who::Admin)
                .header("Content-Type", "application/json")
                .body("{not json"),
        )
        .await;
    assert_eq!(
        (r.status, r.messages()),
        (
            400,
            vec![
                "Decoding error.".to_owned(),
                "Expected a JSON body: key must be a string at line 1 column 2".to_owned()
            ]
        )
    );
    assert_eq!(cache_state(&gw, "/products/1").await, "HIT");
}
