//! Stock items (SPEC 2.1, 4.1, 7): the list, one item by its own id (not the product's),
//! the partial update, the batch update with its multi-status answer, and what a stock
//! change does to the cached product views.

use std::time::Duration;

use serde_json::{Value, json};
use wiremock::matchers::{body_json, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::*;

/// A gateway whose Magento knows the recorded stock: every item on one index page, the
/// stock items of 24-MB01 (item 15) and 24-UG05 (item 17).
async fn stock() -> Gateway {
    mount_stock(Gateway::start().await).await
}

/// What [`stock`] mounts, on any gateway (the profile tests reuse it).
pub(crate) async fn mount_stock(gw: Gateway) -> Gateway {
    mount_skus(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/stockItems/lowStock/"))
        .and(query_param("pageSize", "300"))
        .and(query_param("qty", "99999999.9999"))
        .respond_with(recorded("stock/low-stock-every-item"))
        .mount(&gw.upstream)
        .await;
    for (sku, name) in [
        ("24-MB01", "stock/get-24-mb01"),
        ("24-UG05", "stock/get-24-ug05-out-of-stock"),
    ] {
        Mock::given(method("GET"))
            .and(path(format!("/rest/default/V1/stockItems/{sku}")))
            .respond_with(recorded(name))
            .mount(&gw.upstream)
            .await;
    }
    gw
}

const FULL: &[&str] = &[
    "item_id",
    "product_id",
    "stock_id",
    "qty",
    "min_qty",
    "use_config_min_qty",
    "is_qty_decimal",
    "backorders",
    "use_config_backorders",
    "min_sale_qty",
    "use_config_min_sale_qty",
    "max_sale_qty",
    "use_config_max_sale_qty",
    "is_in_stock",
    "low_stock_date",
    "notify_stock_qty",
    "use_config_notify_stock_qty",
    "manage_stock",
    "use_config_manage_stock",
    "stock_status_changed_auto",
    "use_config_qty_increments",
    "qty_increments",
    "use_config_enable_qty_inc",
    "enable_qty_increments",
    "is_decimal_divided",
];

#[tokio::test]
async fn one_item_by_its_own_id_with_numbers_as_strings() {
    let gw = stock().await;
    let r = gw.get_json("/stockitems/15", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let item = r.json();
    assert_eq!(keys(&item), FULL);
    assert_eq!(item["item_id"], "15");
    assert_eq!(item["product_id"], "1");
    assert_eq!(item["stock_id"], "1");
    assert_eq!(item["qty"], "100.0000");
    assert_eq!(item["min_qty"], "0.0000");
    assert_eq!(item["max_sale_qty"], "10000.0000");
    assert_eq!(item["is_in_stock"], "1");
    assert_eq!(item["use_config_min_sale_qty"], "1");
    assert_eq!(item["backorders"], "0");
    assert_eq!(item["is_qty_decimal"], "0");
    assert_eq!(item["low_stock_date"], Value::Null);

    let r = gw.get_xml("/stockitems/17", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body.starts_with(
            "<?xml version=\"1.0\"?>\n<service_api><item_id>17</item_id><product_id>3</product_id>"
        ),
        "{}",
        r.body
    );
    assert!(r.body.contains("<qty>0.0000</qty>"));
    assert!(r.body.contains("<is_in_stock>0</is_in_stock>"));
    assert!(
        r.body
            .contains("<low_stock_date>2024-05-10 16:02:11</low_stock_date>")
    );
    assert!(
        r.body
            .contains("<stock_status_changed_auto>1</stock_status_changed_auto>")
    );

    // Item 15 belongs to product 1 (24-MB01): the gateway asked Magento by that SKU, and
    // found the item through the index in one call.
    let index = gw
        .upstream_calls("GET", "^/rest/default/V1/stockItems/lowStock/$")
        .await;
    assert_eq!(index.len(), 1);
    let query = index[0].url.query().unwrap();
    assert!(
        query.contains("scopeId=0") && query.contains("currentPage=1"),
        "{query}"
    );
}

#[tokio::test]
async fn an_unset_low_stock_date_is_an_empty_element_in_xml() {
    let gw = stock().await;
    let r = gw.get_xml("/stockitems/15", &Who::Admin).await;
    r.assert_contains("<low_stock_date/>");
}

#[tokio::test]
async fn product_ids_are_not_stock_item_ids() {
    let gw = stock().await;
    // Product 1's item is 15; there is no item 1, nor 99, nor "abc".
    for id in ["1", "99", "abc", "0"] {
        let r = gw.get_json(&format!("/stockitems/{id}"), &Who::Admin).await;
        assert_eq!(r.status, 404, "{id}: {}", r.body);
        assert_eq!(r.messages(), ["Resource not found."]);
    }
    // Nothing was asked by a wrong SKU.
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/stockItems/[^l]")
            .await,
        0
    );
}

#[tokio::test]
async fn the_item_index_is_kept_in_the_cache_but_stock_is_read_live() {
    let gw = stock().await;
    for id in [15, 15, 17, 15] {
        let r = gw.get_json(&format!("/stockitems/{id}"), &Who::Admin).await;
        assert_eq!(r.status, 200, "{}", r.body);
        // Administrators correct stock from what they read: never a cached number.
        assert!(r.header("x-cache").is_none());
    }
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/stockItems/lowStock/$")
            .await,
        1
    );
    // One id-to-SKU lookup per product, then the index answers.
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/products$")
            .await,
        2
    );
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/stockItems/24-MB01$")
            .await,
        3
    );
}

#[tokio::test]
async fn stock_items_are_for_admin_only_and_never_deleted() {
    let gw = stock().await;
    for who in [Who::Guest, Who::Customer(5)] {
        for (verb, route) in [
            ("GET", "/stockitems"),
            ("GET", "/stockitems/15"),
            ("PUT", "/stockitems/15"),
            ("DELETE", "/stockitems/15"),
        ] {
            let r = gw.send(gw.request(verb, route, &who)).await;
            assert_eq!(r.status, 403, "{verb} {route} {who:?}");
            assert_eq!(r.messages(), ["Access denied"]);
        }
    }
    let r = gw
        .send(gw.request("DELETE", "/stockitems/15", &Who::Admin))
        .await;
    r.assert_error(405, "Resource method not implemented yet.");
}

const LIST_FIELDS: &[&str] = &[
    "item_id",
    "qty",
    "backorders",
    "min_sale_qty",
    "max_sale_qty",
    "low_stock_date",
    "manage_stock",
    "stock_status_changed_auto",
    "enable_qty_increments",
];

#[tokio::test]
async fn the_list_is_one_upstream_call_per_page_with_the_reduced_fields() {
    let gw = stock().await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/stockItems/lowStock/"))
        .and(query_param("pageSize", "3"))
        .and(query_param("currentPage", "2"))
        .and(query_param("scopeId", "0"))
        .and(query_param("qty", "99999999.9999"))
        .respond_with(recorded("stock/low-stock-every-item-page-2-of-3"))
        .mount(&gw.upstream)
        .await;
    let r = gw.get_json("/stockitems?page=2&limit=3", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let list = r.json();
    let items = list.as_array().expect("a JSON array");
    assert_eq!(items.len(), 3);
    assert_eq!(keys(&items[0]), LIST_FIELDS);
    assert_eq!(items[0]["item_id"], "18");
    assert_eq!(items[0]["qty"], "25.0000");
    assert_eq!(items[2]["item_id"], "20");
    assert_eq!(items[2]["manage_stock"], "1");

    let r = gw.get_xml("/stockitems?page=2&limit=3", &Who::Admin).await;
    assert!(
        r.body.starts_with(
            "<?xml version=\"1.0\"?>\n<service_api><data_item><item_id>18</item_id><qty>25.0000</qty>"
        ),
        "{}",
        r.body
    );
    assert!(r.body.contains("<low_stock_date/>"));
    // No stock item by SKU: the page has everything the list shows.
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/stockItems/[^l]")
            .await,
        0
    );
}

#[tokio::test]
async fn the_list_past_the_end_is_empty() {
    let gw = stock().await;
    // Magento repeats the last page; the gateway counts.
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/stockItems/lowStock/"))
        .and(query_param("pageSize", "3"))
        .respond_with(recorded("stock/low-stock-every-item-page-2-of-3"))
        .mount(&gw.upstream)
        .await;
    let r = gw.get_json("/stockitems?page=4&limit=3", &Who::Admin).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), json!([]));
    let r = gw.get_xml("/stockitems?page=4&limit=3", &Who::Admin).await;
    assert!(r.body.ends_with("<service_api/>"), "{}", r.body);
}

#[tokio::test]
async fn the_list_filters_on_quantity_and_refuses_what_magento_cannot_do() {
    let gw = stock().await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/stockItems/lowStock/"))
        .and(query_param("qty", "10"))
        .respond_with(recorded("stock/low-stock-qty-10"))
        .mount(&gw.upstream)
        .await;
    let r = gw
        .get_json(
            "/stockitems?filter[0][attribute]=qty&filter[0][lteq]=10",
            &Who::Admin,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let ids: Vec<String> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["item_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["16", "17", "19", "20"]);
    // Magento's own order is by item id: asking for it is fine.
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/stockItems/lowStock/"))
        .and(query_param("pageSize", "10"))
        .and(query_param("qty", "99999999.9999"))
        .respond_with(recorded("stock/low-stock-every-item"))
        .mount(&gw.upstream)
        .await;
    let r = gw
        .get_json("/stockitems?order=item_id&dir=asc", &Who::Admin)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()[6]["item_id"], "21");

    for (query, message) in [
        ("order=qty", "Resource collection ordering error."),
        ("order=item_id", "Resource collection ordering error."),
        (
            "filter[0][attribute]=sku&filter[0][eq]=x",
            "Resource collection filtering error.",
        ),
        (
            "filter[0][attribute]=qty&filter[0][lteq]=lots",
            "Resource collection filtering error.",
        ),
        ("limit=101", "The paging limit exceeds the allowed number."),
    ] {
        let r = gw
            .get_json(&format!("/stockitems?{query}"), &Who::Admin)
            .await;
        assert_eq!(r.status, 400, "{query}");
        assert_eq!(r.messages(), [message], "{query}");
    }
}

pub(crate) async fn mount_put(gw: &Gateway, name: &str) {
    let exchange = fixture(name);
    Mock::given(method("PUT"))
        .and(path(exchange["request"]["path"].as_str().unwrap()))
        .respond_with(recorded(name))
        .mount(&gw.upstream)
        .await;
}

#[tokio::test]
async fn an_update_sends_only_the_fields_given_in_xml_or_json() {
    let gw = stock().await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB01/stockItems/15"))
        .and(body_json(
            json!({"stockItem": {"qty": 80.0, "is_in_stock": true}}),
        ))
        .respond_with(recorded("stock/update-24-mb01"))
        .expect(3)
        .mount(&gw.upstream)
        .await;
    let xml = "<?xml version=\"1.0\"?><service_api><qty>80</qty><is_in_stock>1</is_in_stock>\
               <low_stock_date/><unknown>x</unknown></service_api>";
    let r = gw
        .send_body("PUT", "/stockitems/15", &Who::Admin, "text/xml", xml)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, "");
    // No Content-Type: the operation's default, XML.
    let r = gw
        .send(gw.request("PUT", "/stockitems/15", &Who::Admin).body(xml))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = gw
        .send(
            gw.request("PUT", "/stockitems/15", &Who::Admin)
                .header("Content-Type", "application/json")
                .body(
                    r#"{"qty": "80.0000", "is_in_stock": true, "item_id": "15", "product_id": 1}"#,
                ),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn update_refusals_have_the_spec_messages_and_call_nothing() {
    let gw = stock().await;
    for (body, messages) in [
        (
            json!({"qty": ""}),
            vec!["Empty value for \"qty\" in request."],
        ),
        (
            json!({"product_id": "", "qty": 1}),
            vec!["Empty value for \"product_id\" in request."],
        ),
        (
            json!({"item_id": 16, "qty": 1}),
            vec!["Invalid value for \"item_id\" in request."],
        ),
        (
            json!({"is_in_stock": 3, "backorders": 5, "min_sale_qty": "x"}),
            vec![
                "backorders: The \"backorders\" field must be set to 0, 1, or 2.",
                "min_sale_qty: Please enter a valid number in \"min_sale_qty\" field",
                "is_in_stock: The \"is_in_stock\" field must be set to 0 or 1.",
            ],
        ),
    ] {
        let r = gw
            .send(
                gw.request("PUT", "/stockitems/15", &Who::Admin)
                    .header("Content-Type", "application/json")
                    .body(body.to_string()),
            )
            .await;
        assert_eq!(r.status, 400, "{body}");
        let mut expected: Vec<&str> = messages;
        expected.push("Resource data pre-validation error.");
        assert_eq!(r.messages(), expected, "{body}");
    }
    // Nothing the gateway can write.
    let r = gw
        .send(
            gw.request("PUT", "/stockitems/15", &Who::Admin)
                .header("Content-Type", "application/json")
                .body(r#"{"sku": "24-MB01"}"#),
        )
        .await;
    r.assert_error(400, "The request data is invalid.");
    // An item that does not exist.
    let r = gw
        .send(
            gw.request("PUT", "/stockitems/99", &Who::Admin)
                .header("Content-Type", "application/json")
                .body(r#"{"qty": 1}"#),
        )
        .await;
    r.assert_error(404, "Resource not found.");
    assert_eq!(gw.upstream_count("PUT", ".").await, 0);
}

#[tokio::test]
async fn magento_refusing_a_stock_update_is_a_400_with_its_message() {
    let gw = stock().await;
    mount_put(&gw, "stock/update-error-could-not-save").await;
    let r = gw
        .send(
            gw.request("PUT", "/stockitems/17", &Who::Admin)
                .header("Content-Type", "application/json")
                .body(r#"{"qty": 5}"#),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.messages(),
        ["The stock item was unable to be saved. Please try again."]
    );
}

#[tokio::test]
async fn a_batch_with_good_missing_and_empty_items_in_xml() {
    let gw = stock().await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB01/stockItems/15"))
        .and(body_json(
            json!({"stockItem": {"qty": 80.0, "is_in_stock": true}}),
        ))
        .respond_with(recorded("stock/update-24-mb01"))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB02/stockItems/16"))
        .and(body_json(
            json!({"stockItem": {"qty": 12.0, "min_sale_qty": 2.0}}),
        ))
        .respond_with(recorded("stock/update-24-mb02"))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    let body = "<?xml version=\"1.0\"?><service_api>\
        <data_item item_id=\"15\"><qty>80</qty><is_in_stock>1</is_in_stock></data_item>\
        <data_item item_id=\"99\"><qty>1</qty></data_item>\
        <data_item item_id=\"16\"><product_id></product_id><qty>3</qty></data_item>\
        <data_item item_id=\"16\"><qty>12</qty><min_sale_qty>2</min_sale_qty></data_item>\
        <data_item><qty>1</qty></data_item>\
        <data_item item_id=\"x\"><qty>1</qty></data_item>\
        </service_api>";
    let r = gw
        .send_body("PUT", "/stockitems", &Who::Admin, "text/xml", body)
        .await;
    assert_eq!(r.status, 207, "{}", r.body);
    assert_eq!(
        r.json(),
        json!({
            "success": [
                {"item_id": 15, "message": "Resource updated successful.", "code": 200},
                {"item_id": 16, "message": "Resource updated successful.", "code": 200}
            ],
            "error": [
                {"item_id": 99, "message": "Resource not found.", "code": 404},
                {"item_id": 16, "message": "Empty value for \"product_id\" in request.", "code": 400},
                {"item_id": null, "message": "Missing \"item_id\" in request.", "code": 400},
                {"item_id": "x", "message": "Invalid value for \"item_id\" in request.", "code": 400}
            ]
        })
    );
    // The original's key order: item_id, message, code.
    assert!(
        r.body
            .starts_with(r#"{"success":[{"item_id":15,"message":"#),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn a_batch_answers_in_xml_and_in_json() {
    let gw = stock().await;
    mount_put(&gw, "stock/update-24-mb01").await;
    let r = gw
        .send_raw(
            gw.request("PUT", "/stockitems", &Who::Admin)
                .header("Content-Type", "application/json")
                .body(r#"[{"item_id": 15, "qty": 80}, {"item_id": 98, "qty": 1}]"#),
        )
        .await;
    assert_eq!(r.status, 207);
    assert_eq!(
        r.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    assert_eq!(
        r.body,
        "<?xml version=\"1.0\"?>\n<service_api><success><data_item><item_id>15</item_id>\
         <message>Resource updated successful.</message><code>200</code></data_item></success>\
         <error><data_item><item_id>98</item_id><message>Resource not found.</message>\
         <code>404</code></data_item></error></service_api>"
    );
    // Everything fine: the error group is there, empty.
    let sent = r#"[{"item_id": 15, "qty": 80}]"#;
    let r = gw
        .send_body("PUT", "/stockitems", &Who::Admin, "application/json", sent)
        .await;
    assert_eq!(r.status, 207);
    assert_eq!(r.json()["error"], json!([]));
}

#[tokio::test]
async fn one_failing_item_never_stops_the_others() {
    let gw = stock().await;
    mount_put(&gw, "stock/update-error-could-not-save").await;
    mount_put(&gw, "stock/update-24-mb01").await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/MT07/stockItems/20"))
        .respond_with(recorded("products/get-error-internal"))
        .mount(&gw.upstream)
        .await;
    let r = gw
        .send(
            gw.request("PUT", "/stockitems", &Who::Admin)
                .header("Content-Type", "application/json")
                .body(
                    r#"[{"item_id": 17, "qty": 5}, {"item_id": 20, "qty": 1},
                        {"item_id": 15, "qty": 80, "is_in_stock": 1}, "junk"]"#,
                ),
        )
        .await;
    assert_eq!(r.status, 207, "{}", r.body);
    let body = r.json();
    assert_eq!(
        body["success"],
        json!([{"item_id": 15, "message": "Resource updated successful.", "code": 200}])
    );
    assert_eq!(
        body["error"],
        json!([
            {"item_id": 17, "message": "The stock item was unable to be saved. Please try again.", "code": 400},
            {"item_id": 20, "message": "Resource internal error.", "code": 500},
            {"item_id": null, "message": "Resource data invalid.", "code": 400}
        ])
    );
    // The SKUs of the three products came in one search.
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/products$")
            .await,
        1
    );
}

#[tokio::test]
async fn batch_items_are_written_concurrently_within_the_deadline() {
    // Seven writes of 400 ms each one after the other would take 2.8 s, past the 1.5 s
    // upstream deadline: they only all succeed when written side by side.
    let gw = stock().await;
    Mock::given(method("PUT"))
        .and(wiremock::matchers::path_regex(
            "^/rest/all/V1/products/[^/]+/stockItems/[0-9]+$",
        ))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(1)
                .set_delay(Duration::from_millis(400)),
        )
        .mount(&gw.upstream)
        .await;
    let items: Vec<Value> = (15..=21)
        .map(|id| json!({"item_id": id, "qty": 3}))
        .collect();
    let sent = Value::Array(items).to_string();
    let r = gw
        .send_body("PUT", "/stockitems", &Who::Admin, "application/json", sent)
        .await;
    assert_eq!(r.status, 207, "{}", r.body);
    let body = r.json();
    assert_eq!(body["success"].as_array().unwrap().len(), 7, "{body}");
    assert_eq!(body["error"], json!([]));
}

#[tokio::test]
async fn a_batch_answers_before_the_deadline_when_one_write_hangs() {
    let gw = stock().await;
    mount_put(&gw, "stock/update-24-mb01").await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB02/stockItems/16"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(16)
                .set_delay(Duration::from_secs(5)),
        )
        .mount(&gw.upstream)
        .await;
    let sent = r#"[{"item_id": 16, "qty": 3}, {"item_id": 15, "qty": 80}]"#;
    let r = gw
        .send_body("PUT", "/stockitems", &Who::Admin, "application/json", sent)
        .await;
    assert_eq!(r.status, 207, "{}", r.body);
    let body = r.json();
    assert_eq!(body["success"][0]["item_id"], 15);
    assert_eq!(
        body["error"],
        // The write went out and was not answered: it may still land (`write_outcome`).
        json!([
            {"item_id": 16, "message": "The store back end did not answer in time.", "code": 504},
            {"item_id": 16, "message": "The change may or may not have been made: read the record again before sending it again.", "code": 504}
        ])
    );
}

#[tokio::test]
async fn batch_refusals() {
    let gw = stock().await;
    for (body, status, message) in [
        (
            r#"{"item_id": 15, "qty": 1}"#.to_owned(),
            400,
            "The request data is invalid.",
        ),
        (
            Value::Array((0..101).map(|_| json!({"item_id": 15, "qty": 1})).collect()).to_string(),
            400,
            "At most 100 stock items can be updated in one request.",
        ),
        ("[".to_owned(), 400, "Decoding error."),
    ] {
        let r = gw
            .send_body("PUT", "/stockitems", &Who::Admin, "application/json", body)
            .await;
        assert_eq!((r.status, r.messages()[0].as_str()), (status, message));
    }
    assert_eq!(gw.upstream_count("PUT", ".").await, 0);
}

/// The recorded catalog reads a product view needs.
async fn mount_catalog(gw: &Gateway) {
    mount_stores(&gw.upstream).await;
    mount_product_as(&gw.upstream, "24-MB01", "products/get-simple-24-mb01").await;
    mount_render(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .and(query_param("searchCriteria[pageSize]", "10"))
        .respond_with(recorded("products/list-page-1"))
        .mount(&gw.upstream)
        .await;
}

#[tokio::test]
async fn a_stock_change_invalidates_the_product_views_that_show_stock() {
    let gw = stock().await;
    mount_catalog(&gw).await;
    mount_put(&gw, "stock/update-24-mb01").await;
    let views = [
        ("/products/1", Who::Guest),
        ("/products/1", Who::Admin),
        ("/products", Who::Guest),
    ];
    for (route, who) in &views {
        let first = gw.get_json(route, who).await;
        assert_eq!(first.status, 200, "{route}: {}", first.body);
        let again = gw.get_json(route, who).await;
        assert_eq!(again.header("x-cache"), Some("HIT"), "{route} {who:?}");
    }
    // A single update...
    let r = gw
        .send(
            gw.request("PUT", "/stockitems/15", &Who::Admin)
                .header("Content-Type", "application/json")
                .body(r#"{"qty": 80, "is_in_stock": 1}"#),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    for (route, who) in &views {
        let after = gw.get_json(route, who).await;
        assert_eq!(after.header("x-cache"), Some("MISS"), "{route} {who:?}");
    }
    // ... and a batch.
    let sent = r#"[{"item_id": 15, "qty": 80}]"#;
    let r = gw
        .send_body("PUT", "/stockitems", &Who::Admin, "application/json", sent)
        .await;
    assert_eq!(r.status, 207, "{}", r.body);
    for (route, who) in &views {
        let after = gw.get_json(route, who).await;
        assert_eq!(after.header("x-cache"), Some("MISS"), "{route} {who:?}");
    }
}

#[tokio::test]
async fn a_product_delete_drops_its_stock_item_from_the_index() {
    let gw = stock().await;
    Mock::given(method("DELETE"))
        .and(path("/rest/all/V1/products/24-MB01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(true))
        .mount(&gw.upstream)
        .await;
    assert_eq!(gw.get_json("/stockitems/15", &Who::Admin).await.status, 200);
    assert_eq!(gw.get_json("/stockitems/17", &Who::Admin).await.status, 200);
    let r = gw
        .send(gw.request("DELETE", "/products/1", &Who::Admin))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    // Item 17 (another product) is still indexed; item 15 is looked up again.
    assert_eq!(gw.get_json("/stockitems/17", &Who::Admin).await.status, 200);
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/stockItems/lowStock/$")
            .await,
        1
    );
    assert_eq!(gw.get_json("/stockitems/15", &Who::Admin).await.status, 200);
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/stockItems/lowStock/$")
            .await,
        2
    );
}

#[tokio::test]
async fn the_index_scans_pages_until_it_finds_the_item() {
    let gw = Gateway::start().await;
    mount_skus(&gw.upstream).await;
    mount(&gw.upstream, "stock/get-24-ug05-out-of-stock").await;
    // A store with 301 items: item 17 is on the second page.
    let mut first = fixture("stock/low-stock-every-item")["response"]["body"].clone();
    first["total_count"] = json!(301);
    first["items"]
        .as_array_mut()
        .unwrap()
        .retain(|i| i["item_id"] != 17);
    let mut second = fixture("stock/low-stock-every-item")["response"]["body"].clone();
    second["total_count"] = json!(301);
    second["items"]
        .as_array_mut()
        .unwrap()
        .retain(|i| i["item_id"] == 17);
    for (page, body) in [("1", first), ("2", second)] {
        Mock::given(method("GET"))
            .and(path("/rest/default/V1/stockItems/lowStock/"))
            .and(query_param("currentPage", page))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .mount(&gw.upstream)
            .await;
    }
    let r = gw.get_json("/stockitems/17", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["product_id"], "3");
    // An item on no page: the pages are cached, so this costs no further call.
    let r = gw.get_json("/stockitems/500", &Who::Admin).await;
    assert_eq!(r.status, 404);
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/stockItems/lowStock/$")
            .await,
        2
    );
}

#[tokio::test]
async fn a_product_created_through_the_gateway_has_its_stock_item_found() {
    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .and(query_param(
            "searchCriteria[filter_groups][0][filters][0][value]",
            "8",
        ))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                json!({"items": [{"id": 8, "sku": "SG-TOTE-01"}], "total_count": 1}),
            ),
        )
        .with_priority(1)
        .mount(&gw.upstream)
        .await;
    // Before the create the store has items 15 to 21; after it, item 22 too.
    let before = fixture("stock/low-stock-every-item")["response"]["body"].clone();
    let mut after = before.clone();
    let mut item = fixture("stock/get-24-mb01")["response"]["body"].clone();
    item["item_id"] = json!(22);
    item["product_id"] = json!(8);
    item["qty"] = json!(40);
    after["items"].as_array_mut().unwrap().push(item.clone());
    after["total_count"] = json!(8);
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/stockItems/lowStock/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(before))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&gw.upstream)
        .await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/stockItems/lowStock/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(after))
        .with_priority(2)
        .mount(&gw.upstream)
        .await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/stockItems/SG-TOTE-01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(item))
        .mount(&gw.upstream)
        .await;
    mount_product_as(&gw.upstream, "SG-TOTE-01", "products/get-error-not-found").await;
    Mock::given(method("POST"))
        .and(path("/rest/all/V1/products"))
        .respond_with(recorded("products/create-sg-tote-01"))
        .mount(&gw.upstream)
        .await;

    assert_eq!(gw.get_json("/stockitems/22", &Who::Admin).await.status, 404);
    let r = gw
        .send(gw.request("POST", "/products", &Who::Admin).json(&json!({
            "type_id": "simple", "attribute_set_id": 4, "sku": "SG-TOTE-01",
            "name": "Market Canvas Tote", "price": "18.5", "weight": "0.6", "status": 1,
            "visibility": 4, "tax_class_id": 2, "description": "A tote.",
            "short_description": "Tote"
        })))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = gw.get_json("/stockitems/22", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["product_id"], "8");
    assert_eq!(r.json()["qty"], "40.0000");
}
