//! Sales orders (SPEC 2.6, 4.6): the list keyed by order id (JSON object, XML
//! `data_item_<id>`), one order, and who may see which.

use serde_json::{Value, json};

use crate::helpers::*;

async fn store() -> Gateway {
    mount_orders(Gateway::start().await).await
}

/// What [`store`] mounts, on any gateway (the profile tests reuse it).
pub(crate) async fn mount_orders(gw: Gateway) -> Gateway {
    for name in [
        "orders/list-page-1",
        "orders/get-31",
        "orders/get-32-not-invoiced",
        "orders/get-33-virtual",
        "orders/get-error-not-found",
    ] {
        mount(&gw.upstream, name).await;
    }
    gw
}

fn query_of(request: &wiremock::Request) -> Vec<(String, String)> {
    request
        .url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

const GENERAL: &[&str] = &[
    "customer_id",
    "base_discount_amount",
    "base_shipping_amount",
    "base_shipping_tax_amount",
    "base_subtotal",
    "base_tax_amount",
    "base_total_paid",
    "base_total_refunded",
    "tax_amount",
    "total_paid",
    "total_refunded",
    "base_shipping_discount_amount",
    "base_subtotal_incl_tax",
    "base_total_due",
    "total_due",
    "base_currency_code",
    "tax_name",
    "tax_rate",
    // The original's further fields.
    "entity_id",
    "increment_id",
    "created_at",
    "updated_at",
    "status",
    "shipping_description",
    "payment_method",
    "store_name",
    "remote_ip",
    "store_currency_code",
    "store_to_order_rate",
    "subtotal",
    "subtotal_incl_tax",
    "discount_amount",
    "grand_total",
    "base_grand_total",
    "shipping_amount",
    "shipping_tax_amount",
    "shipping_incl_tax",
    "shipping_discount_amount",
    "coupon_code",
    "discount_description",
    "addresses",
    "order_items",
];

/// The original's view of a customer's own order.
const CUSTOMER: &[&str] = &[
    "entity_id",
    "increment_id",
    "created_at",
    "status",
    "shipping_description",
    "payment_method",
    "store_currency_code",
    "subtotal",
    "subtotal_incl_tax",
    "discount_amount",
    "grand_total",
    "shipping_amount",
    "shipping_tax_amount",
    "shipping_incl_tax",
    "tax_amount",
    "tax_name",
    "tax_rate",
    "addresses",
    "order_items",
];

#[tokio::test]
async fn admin_lists_every_order_keyed_by_id() {
    let gw = store().await;
    let r = gw.get_json("/orders", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("cache-control"), Some("private, no-store"));
    let orders = r.json();
    let ids: Vec<&str> = orders
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(ids, ["31", "32", "33"]);
    let o = &orders["31"];
    let keys: Vec<&str> = o.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, GENERAL);
    assert_eq!(o["customer_id"], "5");
    assert_eq!(o["base_subtotal"], "82.0000");
    assert_eq!(o["base_shipping_amount"], "15.0000");
    assert_eq!(o["base_total_paid"], "103.8700");
    assert_eq!(o["base_total_due"], "0.0000");
    assert_eq!(o["base_total_refunded"], Value::Null);
    assert_eq!(o["total_refunded"], Value::Null);
    assert_eq!(o["base_currency_code"], "USD");
    assert_eq!(o["entity_id"], "31");
    assert_eq!(o["increment_id"], "000000031");
    assert_eq!(o["status"], "processing");
    assert_eq!(o["grand_total"], "103.8700");
    assert_eq!(o["payment_method"], "checkmo");
    assert_eq!(o["tax_name"], "US-NY-*-Rate 1");
    assert_eq!(o["tax_rate"], "8.3750");
    assert_eq!(
        o["addresses"],
        json!([
            {"region": "New York", "postcode": "10118", "lastname": "Doe",
             "street": "350 Fifth Avenue\nSuite 2100", "city": "New York",
             "telephone": "212-555-0187", "country_id": "US", "firstname": "Jane",
             "address_type": "billing", "prefix": null, "middlename": null, "suffix": null,
             "company": null, "email": "jane.doe@example.com"},
            {"region": "New York", "postcode": "11201", "lastname": "Doe",
             "street": "77 Water Street", "city": "Brooklyn", "telephone": "718-555-0133",
             "country_id": "US", "firstname": "Jane", "address_type": "shipping",
             "prefix": null, "middlename": null, "suffix": null, "company": "JD Gifts",
             "email": "jane.doe@example.com"}
        ])
    );
    let items = o["order_items"].as_array().unwrap();
    assert_eq!(items.len(), 3, "parent and child lines are both listed");
    assert_eq!(
        items[0],
        json!({"sku": "MT07-M-Gray", "price": "24.0000", "base_price": "24.0000",
               "base_original_price": "24.0000", "tax_percent": "8.3750", "tax_amount": "4.0200",
               "base_tax_amount": "4.0200", "base_discount_amount": "0.0000",
               "base_row_total": "48.0000", "base_price_incl_tax": "26.0100",
               "base_row_total_incl_tax": "52.0200", "item_id": "61", "parent_item_id": null,
               "name": "Summit Tee", "qty_ordered": "2.0000", "qty_invoiced": "2.0000",
               "qty_shipped": "0.0000", "qty_canceled": "0.0000", "qty_refunded": "0.0000",
               "price_incl_tax": "26.0100", "row_total": "48.0000", "row_total_incl_tax": "52.0200",
               "original_price": "24.0000", "discount_amount": "0.0000"})
    );
    assert_eq!(items[1]["price"], "0.0000");
    // Not invoiced: nothing paid, everything due.
    assert_eq!(orders["32"]["total_paid"], Value::Null);
    assert_eq!(orders["32"]["base_total_paid"], Value::Null);
    assert_eq!(orders["32"]["total_due"], "58.1000");
    // Virtual: no shipping address, no tax applied.
    let virtual_order = &orders["33"];
    assert_eq!(virtual_order["addresses"].as_array().unwrap().len(), 1);
    assert_eq!(virtual_order["addresses"][0]["address_type"], "billing");
    assert_eq!(virtual_order["tax_name"], Value::Null);
    assert_eq!(virtual_order["tax_rate"], Value::Null);

    let calls = gw.upstream_calls("GET", "/V1/orders$").await;
    let query = query_of(&calls[0]);
    assert!(query.contains(&("searchCriteria[pageSize]".into(), "10".into())));
    assert!(
        !query.iter().any(|(_, v)| v == "customer_id"),
        "admin list is not filtered: {query:?}"
    );
}

#[tokio::test]
async fn the_xml_list_has_data_item_elements_named_by_order_id() {
    let gw = store().await;
    let r = gw.get_xml("/orders", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body.starts_with(
            "<?xml version=\"1.0\"?>\n<service_api><data_item_31><customer_id>5</customer_id>"
        ),
        "{}",
        r.body
    );
    r.assert_contains("</data_item_31><data_item_32>");
    r.assert_contains("<data_item_33>");
    r.assert_contains("<order_items><data_item><sku>MT07-M-Gray</sku><price>24.0000</price>");
    r.assert_contains("<addresses><data_item><region>New York</region>");
    r.assert_contains("<total_refunded/>");
}

#[tokio::test]
async fn a_customer_lists_only_their_own_orders() {
    let gw = Gateway::answering("orders/list-by-customer-5").await;
    let r = gw.get_json("/orders", &Who::Customer(5)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let ids: Vec<String> = r.json().as_object().unwrap().keys().cloned().collect();
    assert_eq!(ids, ["31", "32"]);
    let calls = gw.upstream_calls("GET", "/V1/orders$").await;
    let query = query_of(&calls[0]);
    for pair in [
        (
            "searchCriteria[filter_groups][0][filters][0][field]",
            "customer_id",
        ),
        ("searchCriteria[filter_groups][0][filters][0][value]", "5"),
        (
            "searchCriteria[filter_groups][0][filters][0][condition_type]",
            "eq",
        ),
    ] {
        assert!(
            query.contains(&(pair.0.to_owned(), pair.1.to_owned())),
            "{pair:?} not in {query:?}"
        );
    }
}

#[tokio::test]
async fn a_customer_never_sees_an_order_magento_should_have_filtered_out() {
    // A Magento that ignores the customer filter (a plugin, a bug) still shows customer 6
    // nothing but order 33.
    let gw = store().await;
    let r = gw.get_json("/orders", &Who::Customer(6)).await;
    assert_eq!(r.status, 200);
    let ids: Vec<String> = r.json().as_object().unwrap().keys().cloned().collect();
    assert_eq!(ids, ["33"]);
}

#[tokio::test]
async fn a_guest_has_no_orders() {
    let gw = store().await;
    let r = gw.get_json("/orders", &Who::Guest).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json(), json!({}));
    let r = gw.get_xml("/orders", &Who::Guest).await;
    assert_eq!(r.body, "<?xml version=\"1.0\"?>\n<service_api/>");
    assert_eq!(gw.upstream_count("GET", "/V1/orders").await, 0);
    let r = gw.get_json("/orders/31", &Who::Guest).await;
    r.assert_first_error(403, "Access denied");
}

#[tokio::test]
async fn one_order_for_admin_and_its_customer_only() {
    let gw = store().await;
    let r = gw.get_json("/orders/31", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let keys: Vec<String> = r.json().as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, GENERAL);
    let r = gw.get_json("/orders/32", &Who::Customer(5)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let keys: Vec<String> = r.json().as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, CUSTOMER);
    assert!(!r.body.contains("base_"), "{}", r.body);
    let item = &r.json()["order_items"][0];
    assert_eq!(
        crate::helpers::keys(item),
        [
            "item_id",
            "name",
            "parent_item_id",
            "sku",
            "price",
            "price_incl_tax",
            "qty_ordered",
            "qty_invoiced",
            "qty_shipped",
            "qty_canceled",
            "qty_refunded",
            "row_total",
            "row_total_incl_tax"
        ]
    );
    let r = gw.get_json("/orders/33", &Who::Customer(5)).await;
    r.assert_first_error(404, "Resource not found.");
    let r = gw.get_json("/orders/33", &Who::Customer(6)).await;
    assert_eq!(r.status, 200);
    let r = gw.get_json("/orders/9999", &Who::Admin).await;
    r.assert_first_error(404, "Resource not found.");
    let r = gw.get_xml("/orders/31", &Who::Admin).await;
    assert!(
        r.body
            .starts_with("<?xml version=\"1.0\"?>\n<service_api><customer_id>5</customer_id>"),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn orders_are_read_only() {
    let gw = store().await;
    for (verb, path) in [
        ("POST", "/orders"),
        ("PUT", "/orders"),
        ("DELETE", "/orders"),
        ("POST", "/orders/31"),
        ("PUT", "/orders/31"),
        ("DELETE", "/orders/31"),
    ] {
        let sent = "{\"status\":\"canceled\"}";
        let r = gw
            .send_body(verb, path, &Who::Admin, "application/json", sent)
            .await;
        assert_eq!(r.status, 405, "{verb} {path}");
        assert_eq!(r.messages(), ["Resource method not implemented yet."]);
    }
}

#[tokio::test]
async fn order_list_parameters() {
    let gw = store().await;
    let r = gw
        .get_json(
            "/orders?page=2&limit=2&order=base_subtotal&dir=asc&filter[0][attribute]=base_currency_code&filter[0][eq]=USD",
            &Who::Admin,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let query = query_of(&gw.upstream_calls("GET", "/V1/orders$").await[0]);
    for pair in [
        ("searchCriteria[pageSize]", "2"),
        ("searchCriteria[currentPage]", "2"),
        ("searchCriteria[sort_orders][0][field]", "base_subtotal"),
        ("searchCriteria[sort_orders][0][direction]", "ASC"),
        (
            "searchCriteria[filter_groups][0][filters][0][field]",
            "base_currency_code",
        ),
    ] {
        assert!(
            query.contains(&(pair.0.to_owned(), pair.1.to_owned())),
            "{pair:?} not in {query:?}"
        );
    }
    // total_count is 3: the third page of two is past the end.
    let r = gw.get_json("/orders?page=3&limit=2", &Who::Admin).await;
    assert_eq!(r.json(), json!({}));
    let r = gw
        .get_json(
            "/orders?filter[0][attribute]=tax_name&filter[0][eq]=x",
            &Who::Admin,
        )
        .await;
    r.assert_first_error(400, "Resource collection filtering error.");
}
