//! Shoppers see only their own customer group's tier prices, in the original's shopper
//! shape, however the answer is cached (issue 11: a Guest used to see every group's,
//! wholesale included).

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::*;

/// The wholesale group's price: must never reach anyone outside group 2.
const WHOLESALE_PRICE: f64 = 19.25;

/// A product whose tiers are: all groups qty 1 (a group price), General (1) qty 5,
/// Wholesale (2) qty 2 at the wholesale price, NOT LOGGED IN (0) qty 3, all groups qty 10,
/// and a NOT LOGGED IN tier on another website.
fn product_with_wholesale_tier() -> Value {
    let mut product = fixture("products/get-simple-24-mb01")["response"]["body"].clone();
    product["tier_prices"] = json!([
        {"customer_group_id": 32000, "qty": 1, "value": 32, "extension_attributes": {"website_id": 0}},
        {"customer_group_id": 1, "qty": 5, "value": 29.5, "extension_attributes": {"website_id": 0}},
        {"customer_group_id": 2, "qty": 2, "value": WHOLESALE_PRICE, "extension_attributes": {"website_id": 0}},
        {"customer_group_id": 0, "qty": 3, "value": 31, "extension_attributes": {"website_id": 0}},
        {"customer_group_id": 0, "qty": 4, "value": 1.5, "extension_attributes": {"website_id": 7}},
        {"customer_group_id": 32000, "qty": 10, "value": 30, "extension_attributes": {"website_id": 0}}
    ]);
    product
}

fn customer(id: u64, group: u64) -> Value {
    let mut customer = fixture("customers/get-5")["response"]["body"].clone();
    customer["id"] = json!(id);
    customer["group_id"] = json!(group);
    customer
}

/// Answers `verb at` with 200 and `body`.
async fn answer(gw: &Gateway, verb: &str, at: &str, body: Value) {
    Mock::given(method(verb))
        .and(path(at))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&gw.upstream)
        .await;
}

/// The store views, the id-to-SKU lookups, the shoppers' rendering and 24-MB01 with its
/// wholesale tier.
async fn mount_product(gw: &Gateway) {
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_render(&gw.upstream).await;
    let product = "/rest/default/V1/products/24-MB01";
    answer(gw, "GET", product, product_with_wholesale_tier()).await;
}

/// Customer 5 is General (1), 6 Wholesale (2).
async fn shop() -> Gateway {
    let gw = Gateway::start().await;
    mount_product(&gw).await;
    for (id, group) in [(5, 1), (6, 2)] {
        answer(
            &gw,
            "GET",
            &format!("/rest/default/V1/customers/{id}"),
            customer(id, group),
        )
        .await;
    }
    gw
}

fn quantities(body: &Value) -> Vec<i64> {
    body["tier_price"]
        .as_array()
        .unwrap_or_else(|| panic!("no tier_price: {body}"))
        .iter()
        .map(|t| t["qty"].as_i64().unwrap())
        .collect()
}

fn groups(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|t| t["cust_group"].as_str().unwrap().to_owned())
        .collect()
}

fn leaks_wholesale(text: &str) -> bool {
    text.contains("19.25") || text.contains("20.86")
}

#[tokio::test]
async fn each_shopper_sees_only_their_groups_tiers_in_the_shopper_shape() {
    let gw = shop().await;
    // The wholesale customer reads first, so their answer is in the cache before anyone else
    // asks; then everyone reads twice (the second read is a cache hit).
    for _ in 0..2 {
        let wholesale = gw.get_json("/products/1", &Who::Customer(6)).await;
        assert_eq!(wholesale.status, 200, "{}", wholesale.body);
        let body = wholesale.json();
        assert_eq!(quantities(&body), [2, 10]);
        assert_eq!(
            body["tier_price"][0],
            // 36.85 / 34 is the product's tax ratio in the recorded rendering.
            json!({"qty": 2, "price_with_tax": 20.86, "price_without_tax": WHOLESALE_PRICE})
        );
    }
    for _ in 0..2 {
        let guest = gw.get_json("/products/1", &Who::Guest).await;
        assert_eq!(guest.status, 200, "{}", guest.body);
        assert_eq!(quantities(&guest.json()), [3, 10], "{}", guest.body);
        assert!(!leaks_wholesale(&guest.body), "{}", guest.body);

        let general = gw.get_json("/products/1", &Who::Customer(5)).await;
        assert_eq!(general.status, 200, "{}", general.body);
        assert_eq!(quantities(&general.json()), [5, 10], "{}", general.body);
        assert!(!leaks_wholesale(&general.body), "{}", general.body);

        let xml = gw.get_xml("/products/1", &Who::Customer(5)).await;
        assert!(
            xml.body.contains(
                "<tier_price><data_item><qty>5</qty><price_with_tax>31.97</price_with_tax>\
                 <price_without_tax>29.5</price_without_tax></data_item>"
            ),
            "{}",
            xml.body
        );
        assert!(!leaks_wholesale(&xml.body), "{}", xml.body);
    }
    // One lookup per customer; the rest came from the cache.
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/customers/5$")
            .await,
        1
    );
    // The Admin still sees every group's tiers, in the Admin's shape.
    let admin = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!(
        groups(&admin.json()["tier_price"]),
        ["1", "2", "0", "0", "32000"]
    );
}

#[tokio::test]
async fn a_customer_moved_to_another_group_through_the_gateway_gets_that_groups_prices() {
    let gw = shop().await;
    let first = gw.get_json("/products/1", &Who::Customer(5)).await;
    assert_eq!(quantities(&first.json()), [5, 10]);
    // The Admin moves customer 5 to Wholesale; Magento now says so.
    gw.upstream.reset().await;
    let gw = remount_as_wholesale(gw).await;
    let sent = r#"{"group_id": 2}"#;
    let r = gw
        .send_body("PUT", "/customers/5", &Who::Admin, "application/json", sent)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let after = gw.get_json("/products/1", &Who::Customer(5)).await;
    assert_eq!(quantities(&after.json()), [2, 10], "{}", after.body);
}

async fn remount_as_wholesale(gw: Gateway) -> Gateway {
    mount_product(&gw).await;
    answer(&gw, "GET", "/rest/default/V1/customers/5", customer(5, 2)).await;
    answer(&gw, "PUT", "/rest/default/V1/customers/5", customer(5, 2)).await;
    gw
}

#[tokio::test]
async fn lists_of_shoppers_carry_no_other_groups_tier_even_when_an_operator_adds_tiers() {
    // An operator puts the Admin-shaped tier_price into the guests' list view: the records
    // still hold only the anonymous tiers.
    let dir = edited_mappings("tier-list", "product.toml", |text| {
        text.replacen(
            "\"is_saleable\", \"image_url\", \"created_at\",",
            "\"is_saleable\", \"image_url\", \"tier_price\", \"created_at\",",
            2,
        )
    });
    let gw = Gateway::start_with(|c| c.mappings = Some(dir.clone())).await;
    mount_stores(&gw.upstream).await;
    mount_render(&gw.upstream).await;
    answer(
        &gw,
        "GET",
        "/rest/default/V1/products",
        json!({
            "items": [product_with_wholesale_tier()], "total_count": 1
        }),
    )
    .await;
    answer(&gw, "GET", "/rest/default/V1/customers/5", customer(5, 1)).await;
    let guest = gw.get_json("/products", &Who::Guest).await;
    assert_eq!(guest.status, 200, "{}", guest.body);
    assert_eq!(groups(&guest.json()["1"]["tier_price"]), ["0", "32000"]);
    let general = gw.get_json("/products", &Who::Customer(5)).await;
    assert_eq!(groups(&general.json()["1"]["tier_price"]), ["1", "32000"]);
    assert!(!leaks_wholesale(&general.body));
}
