//! The original's store-view product routes (`/products/store/:store`,
//! `/products/:id/store/:store`, `/products/category/:id/store/:store`) and the trailing
//! slash (issue 11).

use serde_json::json;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::*;

async fn shop() -> Gateway {
    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_render(&gw.upstream).await;
    for (scope, name) in [
        ("default", "products/get-simple-24-mb01"),
        ("french", "products/get-simple-24-mb01-french"),
    ] {
        Mock::given(method("GET"))
            .and(path(format!("/rest/{scope}/V1/products/24-MB01")))
            .respond_with(recorded(name))
            .mount(&gw.upstream)
            .await;
    }
    gw
}

#[tokio::test]
async fn a_product_in_a_store_view_by_id_or_code_has_that_stores_values() {
    let gw = shop().await;
    for store in ["2", "french"] {
        for who in [Who::Guest, Who::Admin, Who::Customer(5)] {
            let r = gw
                .get_json(&format!("/products/1/store/{store}"), &who)
                .await;
            assert_eq!(r.status, 200, "{who:?} {store}: {}", r.body);
            assert_eq!(r.json()["name"], "Sac de sport Harbor", "{who:?}");
        }
    }
    // The default store (by id, by code) and store 0 are the route without a store.
    for store in ["1", "default", "0"] {
        let r = gw
            .get_json(&format!("/products/1/store/{store}"), &Who::Guest)
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.json()["name"], "Harbor Duffle Bag");
    }
    // Each store view is its own cache entry.
    let english = gw.get_json("/products/1", &Who::Guest).await;
    assert_eq!(english.json()["name"], "Harbor Duffle Bag");
    let french = gw.get_json("/products/1/store/french", &Who::Guest).await;
    assert_eq!(french.json()["name"], "Sac de sport Harbor");
    assert_eq!(french.header("x-cache"), Some("HIT"));
    assert_eq!(
        gw.upstream_count("GET", "^/rest/french/V1/products/24-MB01$")
            .await,
        1
    );
}

#[tokio::test]
async fn an_unknown_store_is_a_400_in_every_store_route() {
    let gw = shop().await;
    for route in [
        "/products/1/store/9",
        "/products/1/store/nowhere",
        "/products/store/9",
        "/products/store/nowhere",
        "/products/category/4/store/9",
        "/products/store/nowhere/category/4",
    ] {
        let r = gw.get_json(route, &Who::Guest).await;
        assert_eq!(r.status, 400, "{route}: {}", r.body);
        assert_eq!(r.messages(), ["Requested store is invalid"], "{route}");
    }
}

#[tokio::test]
async fn store_routes_are_in_the_policy_table() {
    let gw = shop().await;
    // Read by everyone; the Admin updates a product in a store view (the original's PUT);
    // other writes there are not served, and the policy answers first.
    let cases = [
        ("PUT", "/products/1/store/2", Who::Guest, 403),
        ("PUT", "/products/1/store/2", Who::Customer(5), 403),
        ("DELETE", "/products/1/store/2", Who::Admin, 405),
        ("POST", "/products/store/2", Who::Guest, 403),
        ("POST", "/products/store/2", Who::Admin, 405),
        ("PUT", "/products/category/4/store/2", Who::Admin, 405),
        ("PATCH", "/products/store/2", Who::Admin, 400),
    ];
    for (verb, route, who, status) in cases {
        let r = gw
            .send_body(verb, route, &who, "application/json", "{}")
            .await;
        assert_eq!(r.status, status, "{verb} {route} {who:?}: {}", r.body);
    }
    let r = gw
        .send(gw.request("DELETE", "/products/1/store/2", &Who::Admin))
        .await;
    assert_eq!(r.messages(), ["Resource method not implemented yet."]);
    let r = gw
        .send(gw.request("POST", "/products/store/2", &Who::Admin))
        .await;
    assert_eq!(r.messages(), ["Resource does not support method."]);
}

#[tokio::test]
async fn lists_in_a_store_view_search_that_store_and_its_website() {
    let gw = shop().await;
    Mock::given(method("GET"))
        .and(path("/rest/french/V1/products"))
        .and(query_param(
            "searchCriteria[filter_groups][2][filters][0][field]",
            "website_id",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "items": [fixture("products/get-simple-24-mb01-french")["response"]["body"]],
            "total_count": 1
        })))
        .mount(&gw.upstream)
        .await;
    for route in ["/products/store/french", "/products/store/2/"] {
        let r = gw.get_json(route, &Who::Guest).await;
        assert_eq!(r.status, 200, "{route}: {}", r.body);
        assert_eq!(r.json()["1"]["name"], "Sac de sport Harbor", "{route}");
    }
}

#[tokio::test]
async fn a_trailing_slash_is_the_same_route() {
    let gw = shop().await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .respond_with(recorded("products/list-page-1"))
        .mount(&gw.upstream)
        .await;
    let plain = gw.get_json("/products", &Who::Admin).await;
    assert_eq!(plain.status, 200, "{}", plain.body);
    let slashed = gw.get_json("/products/", &Who::Admin).await;
    assert_eq!(slashed.status, 200, "{}", slashed.body);
    assert_eq!(slashed.body, plain.body);
    // One route, one cache entry.
    assert_eq!(slashed.header("x-cache"), Some("HIT"));
    let one = gw.get_json("/products/1/", &Who::Guest).await;
    assert_eq!(one.status, 200, "{}", one.body);
    assert_eq!(one.json()["sku"], "24-MB01");
    let query = gw
        .get_json("/products/1/store/french/?x=1", &Who::Guest)
        .await;
    assert_eq!(query.status, 200, "{}", query.body);
    // Other resources too; the policy still answers.
    let r = gw.get_json("/stockitems/", &Who::Guest).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = gw.get_json("/nothing/", &Who::Guest).await;
    assert_eq!(r.messages(), ["Request does not match any route."]);
}
