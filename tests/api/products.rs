//! Products (SPEC 2.2, 4.2) in every view, format and path form, and the writes.

use serde_json::{Value, json};
use wiremock::matchers::{body_partial_json, method, path, query_param, query_param_is_missing};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::*;

/// A gateway whose Magento knows the recorded catalog reads.
async fn catalog() -> Gateway {
    mount_catalog(Gateway::start().await).await
}

/// What [`catalog`] mounts, on any gateway (the profile tests reuse it).
pub(crate) async fn mount_catalog(gw: Gateway) -> Gateway {
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    for (sku, name) in [
        ("24-MB01", "products/get-simple-24-mb01"),
        ("24-MB02", "products/get-special-price-24-mb02"),
        ("24-UG05", "products/get-disabled-24-ug05"),
        ("MT07-M-Gray", "products/get-not-visible-mt07-m-gray"),
    ] {
        mount_product_as(&gw.upstream, sku, name).await;
    }
    mount_render(&gw.upstream).await;
    gw
}

#[tokio::test]
async fn guest_single_product_has_the_shopper_fields_in_json() {
    let gw = catalog().await;
    let r = gw.get_json("/products/1", &Who::Guest).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.header("content-type"),
        Some("application/json; charset=utf-8")
    );
    let p = r.json();
    assert_eq!(
        keys(&p),
        [
            "entity_id",
            "type_id",
            "sku",
            "name",
            "meta_title",
            "meta_description",
            "description",
            "short_description",
            "meta_keyword",
            "tier_price",
            "is_in_stock",
            "regular_price_with_tax",
            "regular_price_without_tax",
            "final_price_with_tax",
            "final_price_without_tax",
            "is_saleable",
            "image_url",
            "url",
            "buy_now_url",
            "total_reviews_count",
            "has_custom_options",
            "created_at",
            "updated_at"
        ]
    );
    assert_eq!(p["entity_id"], "1");
    assert_eq!(p["sku"], "24-MB01");
    assert_eq!(p["regular_price_with_tax"], json!(36.85));
    assert_eq!(p["final_price_without_tax"], json!(34));
    assert_eq!(p["is_saleable"], "1");
    assert_eq!(p["is_in_stock"], "1");
    assert_eq!(p["has_custom_options"], json!(true));
    assert_eq!(p["meta_keyword"], Value::Null);
    assert_eq!(
        p["image_url"],
        "https://shop.example/media/catalog/product/h/a/harbor-duffle-front.png"
    );
    assert_eq!(p["url"], "https://shop.example/harbor-duffle-bag.html");
    assert!(
        p["buy_now_url"]
            .as_str()
            .unwrap()
            .contains("/checkout/cart/add/")
    );
    // The guest's group (NOT LOGGED IN) has only the all-groups tier; General's qty-5 tier
    // is not theirs.
    assert_eq!(
        p["tier_price"],
        json!([{"qty": 10, "price_with_tax": 33.17, "price_without_tax": 30.6}])
    );
    assert_eq!(r.header("cache-control"), Some("public, max-age=60"));
}

#[tokio::test]
async fn guest_single_product_in_xml() {
    let gw = catalog().await;
    let r = gw.get_xml("/products/1", &Who::Guest).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    assert!(
        r.body
            .starts_with("<?xml version=\"1.0\"?>\n<service_api><entity_id>1</entity_id>"),
        "{}",
        r.body
    );
    assert!(
        r.body
            .contains("<has_custom_options>1</has_custom_options>")
    );
    assert!(r.body.contains("<meta_keyword/>"));
    assert!(
        r.body
            .contains("<tier_price><data_item><qty>10</qty><price_with_tax>33.17</price_with_tax>")
    );
    assert!(
        r.body
            .contains("<regular_price_with_tax>36.85</regular_price_with_tax>")
    );
}

#[tokio::test]
async fn admin_single_product_has_the_admin_fields() {
    let gw = catalog().await;
    let r = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let p = r.json();
    assert_eq!(
        keys(&p),
        [
            "entity_id",
            "attribute_set_id",
            "type_id",
            "sku",
            "name",
            "url_key",
            "country_of_manufacture",
            "msrp_display_actual_price_type",
            "gift_message_available",
            "price",
            "weight",
            "status",
            "visibility",
            "tax_class_id",
            "description",
            "group_price",
            "tier_price",
            "stock_data",
            "created_at",
            "updated_at"
        ]
    );
    assert_eq!(p["price"], "34.0000");
    assert_eq!(p["weight"], "1.2000");
    assert_eq!(p["tax_class_id"], "2");
    assert_eq!(
        p["group_price"],
        json!([{"website_id": "0", "cust_group": "32000", "price": "32.0000"}])
    );
    let stock = &p["stock_data"];
    // Fields in the order of SPEC 2.1, as the mapping lists them.
    assert_eq!(
        keys(stock),
        [
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
            "notify_stock_qty",
            "use_config_notify_stock_qty",
            "manage_stock",
            "use_config_manage_stock",
            "use_config_qty_increments",
            "qty_increments",
            "use_config_enable_qty_inc",
            "enable_qty_increments",
            "is_decimal_divided",
            "use_config_enable_qty_increments"
        ]
    );
    assert_eq!(stock["qty"], "100.0000");
    assert_eq!(stock["use_config_min_qty"], "1");
    assert_eq!(stock["is_in_stock"], "1");
    assert_eq!(stock["use_config_enable_qty_increments"], "1");
    assert!(stock.get("item_id").is_none() && stock.get("low_stock_date").is_none());
    assert_eq!(r.header("cache-control"), Some("private, max-age=60"));
    // Admin reads need no shopper rendering.
    assert_eq!(gw.upstream_count("GET", "products-render-info").await, 0);
}

#[tokio::test]
async fn shoppers_do_not_see_disabled_or_invisible_products() {
    let gw = catalog().await;
    for id in [3, 4] {
        for who in [Who::Guest, Who::Customer(5)] {
            let r = gw.get_json(&format!("/products/{id}"), &who).await;
            assert_eq!(r.status, 404, "{id} {who:?}");
            assert_eq!(r.messages(), ["Resource not found."]);
        }
        assert_eq!(
            gw.get_json(&format!("/products/{id}"), &Who::Admin)
                .await
                .status,
            200
        );
    }
}

#[tokio::test]
async fn missing_products_are_404_in_both_formats() {
    let gw = catalog().await;
    for path in [
        "/products/999",
        "/products/abc",
        "/products/0",
        "/products/-1",
    ] {
        let r = gw.get_json(path, &Who::Admin).await;
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(
            r.json(),
            json!({"messages": {"error": [{"code": 404, "message": "Resource not found."}]}})
        );
    }
    let r = gw.get_xml("/products/999", &Who::Guest).await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.body,
        "<?xml version=\"1.0\"?>\n<service_api><messages><error><data_item><code>404</code>\
         <message>Resource not found.</message></data_item></error></messages></service_api>"
    );
}

async fn mount_list(gw: &Gateway) {
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .and(query_param_is_missing("fields"))
        .respond_with(recorded("products/list-page-1"))
        .mount(&gw.upstream)
        .await;
}

#[tokio::test]
async fn admin_list_is_keyed_by_id_in_json_and_items_in_xml() {
    let gw = catalog().await;
    mount_list(&gw).await;
    let r = gw.get_json("/products", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let list = r.json();
    assert_eq!(keys(&list), ["1", "2", "3", "4", "5", "6", "7"]);
    assert_eq!(
        keys(&list["1"]),
        [
            "entity_id",
            "type_id",
            "sku",
            "status",
            "visibility",
            "tax_class_id",
            "weight",
            "price",
            "special_price",
            "name",
            "url_key",
            "country_of_manufacture",
            "msrp_display_actual_price_type",
            "gift_message_available",
            "news_from_date",
            "news_to_date",
            "special_from_date",
            "special_to_date",
            "description",
            "created_at",
            "updated_at"
        ]
    );
    assert_eq!(list["2"]["special_price"], "49.0000");
    assert_eq!(list["2"]["special_from_date"], "2024-05-01 00:00:00");
    // The default page is 10 items; the gateway asked Magento for exactly that.
    let calls = gw
        .upstream_calls("GET", "^/rest/default/V1/products$")
        .await;
    let query: Vec<(String, String)> = calls[0].url.query_pairs().into_owned().collect();
    assert!(query.contains(&("searchCriteria[pageSize]".into(), "10".into())));
    assert!(query.contains(&("searchCriteria[currentPage]".into(), "1".into())));

    let r = gw.get_xml("/products", &Who::Admin).await;
    assert!(
        r.body.starts_with(
            "<?xml version=\"1.0\"?>\n<service_api><data_item><entity_id>1</entity_id>"
        ),
        "{}",
        r.body
    );
    assert_eq!(r.body.matches("<data_item><entity_id>").count(), 7);
}

#[tokio::test]
async fn shopper_lists_ask_magento_for_visible_products_only_and_add_prices() {
    let gw = catalog().await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .and(query_param_is_missing("fields"))
        .and(query_param(
            "searchCriteria[filter_groups][0][filters][0][field]",
            "status",
        ))
        .and(query_param(
            "searchCriteria[filter_groups][0][filters][0][value]",
            "1",
        ))
        .and(query_param(
            "searchCriteria[filter_groups][1][filters][0][field]",
            "visibility",
        ))
        .and(query_param(
            "searchCriteria[filter_groups][1][filters][0][condition_type]",
            "in",
        ))
        .respond_with(recorded("products/list-by-entity-id-in"))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    let r = gw.get_json("/products", &Who::Guest).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let list = r.json();
    let first = &list["1"];
    assert_eq!(
        keys(first),
        [
            "entity_id",
            "type_id",
            "sku",
            "description",
            "short_description",
            "meta_keyword",
            "name",
            "meta_title",
            "meta_description",
            "regular_price_with_tax",
            "regular_price_without_tax",
            "final_price_with_tax",
            "final_price_without_tax",
            "is_saleable",
            "image_url",
            "created_at",
            "updated_at"
        ]
    );
    assert_eq!(first["final_price_with_tax"], json!(36.85));
    // One render call for the whole page.
    assert_eq!(gw.upstream_count("GET", "products-render-info").await, 1);
}

#[tokio::test]
async fn a_page_past_the_end_is_empty() {
    let gw = catalog().await;
    mount_list(&gw).await;
    let r = gw.get_json("/products?page=5", &Who::Admin).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), json!({}));
    let r = gw.get_xml("/products?page=5", &Who::Admin).await;
    assert_eq!(r.body, "<?xml version=\"1.0\"?>\n<service_api/>");
}

#[tokio::test]
async fn list_parameters_become_search_criteria() {
    let gw = catalog().await;
    mount_list(&gw).await;
    let r = gw
        .get_json(
            "/products?page=2&limit=3&order=name&dir=asc&filter[0][attribute]=price&filter[0][from]=10&filter[0][to]=40\
             &filter[1][attribute]=sku&filter[1][in][0]=24-MB01&filter[1][in][1]=24-MB02\
             &filter[2][attribute]=url_key&filter[2][like]=harbor%25",
            &Who::Admin,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let calls = gw
        .upstream_calls("GET", "^/rest/default/V1/products$")
        .await;
    let q: Vec<(String, String)> = calls[0].url.query_pairs().into_owned().collect();
    let has = |k: &str, v: &str| q.contains(&(k.to_owned(), v.to_owned()));
    assert!(
        has("searchCriteria[pageSize]", "3") && has("searchCriteria[currentPage]", "2"),
        "{q:?}"
    );
    assert!(
        has("searchCriteria[sort_orders][0][field]", "name")
            && has("searchCriteria[sort_orders][0][direction]", "ASC")
    );
    assert!(has(
        "searchCriteria[filter_groups][0][filters][0][field]",
        "price"
    ));
    assert!(has(
        "searchCriteria[filter_groups][0][filters][0][condition_type]",
        "gteq"
    ));
    assert!(has(
        "searchCriteria[filter_groups][1][filters][0][condition_type]",
        "lteq"
    ));
    assert!(has(
        "searchCriteria[filter_groups][2][filters][0][value]",
        "24-MB01,24-MB02"
    ));
    assert!(has(
        "searchCriteria[filter_groups][3][filters][0][field]",
        "url_key"
    ));
    assert!(has(
        "searchCriteria[filter_groups][3][filters][0][value]",
        "harbor%"
    ));
}

#[tokio::test]
async fn bad_list_parameters_get_the_original_messages() {
    let gw = catalog().await;
    mount_list(&gw).await;
    for (query, who, message) in [
        (
            "limit=101",
            Who::Admin,
            "The paging limit exceeds the allowed number.",
        ),
        ("page=-2", Who::Admin, "Resource collection paging error."),
        (
            "order=nonsense",
            Who::Admin,
            "Resource collection ordering error.",
        ),
        // url_key is in the Admin list view but not in the shoppers'.
        (
            "order=url_key",
            Who::Guest,
            "Resource collection ordering error.",
        ),
        (
            "filter[0][attribute]=weight&filter[0][eq]=1",
            Who::Guest,
            "Resource collection filtering error.",
        ),
        (
            "filter[0][attribute]=price&filter[0][regex]=1",
            Who::Admin,
            "Resource collection filtering error.",
        ),
    ] {
        let r = gw.get_json(&format!("/products?{query}"), &who).await;
        assert_eq!(
            (r.status, r.messages()),
            (400, vec![message.to_owned()]),
            "{query}"
        );
    }
    // Nothing reached Magento for a refused list.
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/products$")
            .await,
        0
    );
}

pub(crate) async fn mount_category(gw: &Gateway) {
    mount_category_4(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/categories/404/products"))
        .respond_with(recorded("categories/products-error-not-found"))
        .mount(&gw.upstream)
        .await;
}

#[tokio::test]
async fn category_lists_in_three_path_forms_ordered_by_position() {
    let gw = catalog().await;
    mount_category(&gw).await;
    for path in [
        "/products/category_id=4",
        "/products/category/4",
        "/products?category_id=4",
    ] {
        for who in [Who::Admin, Who::Customer(5), Who::Guest] {
            let r = gw.get_json(path, &who).await;
            assert_eq!(r.status, 200, "{path} {who:?}: {}", r.body);
            let list = r.json();
            let skus: Vec<&str> = list
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["entity_id"].as_str().unwrap())
                .collect();
            // 24-MB02 (id 2) sits at position 0, 24-MB01 (id 1) at position 2.
            assert_eq!(skus, ["2", "1"], "{path}");
            assert_eq!(keys(&list[0]), crate::common::spec::CATEGORY_LIST_FIELDS);
        }
    }
    let r = gw.get_xml("/products/category/4", &Who::Guest).await;
    r.assert_contains("<service_api><data_item><entity_id>2</entity_id>");
}

#[tokio::test]
async fn unknown_categories_are_refused() {
    let gw = catalog().await;
    mount_category(&gw).await;
    for path in [
        "/products/category/404",
        "/products/category_id=abc",
        "/products?category_id=0",
    ] {
        let r = gw.get_json(path, &Who::Guest).await;
        assert_eq!(
            (r.status, r.messages()),
            (400, vec!["Category not found.".to_owned()]),
            "{path}"
        );
    }
}

pub(crate) fn create_body() -> Value {
    json!({
        "type_id": "simple", "attribute_set_id": "4", "sku": "SG-TOTE-01", "name": "Market Canvas Tote",
        "price": "18.50", "weight": "0.6", "status": "1", "visibility": "4", "tax_class_id": "2",
        "description": "A canvas tote", "short_description": "Tote", "url_key": "market-canvas-tote",
        "special_from_date": "05/01/2024", "news_from_date": "01.06.2024",
        "group_price": [{"website_id": "0", "cust_group": "1", "price": "17"}],
        "tier_price": [{"website_id": "0", "cust_group": "32000", "price": "16", "price_qty": "5"}],
        "stock_data": {"qty": "40", "is_in_stock": "1", "manage_stock": "1", "use_config_min_sale_qty": "1"}
    })
}

async fn mount_create(gw: &Gateway) {
    mount_product_as(&gw.upstream, "SG-TOTE-01", "products/get-error-not-found").await;
    Mock::given(method("POST"))
        .and(path("/rest/all/V1/products"))
        .respond_with(recorded("products/create-sg-tote-01"))
        .mount(&gw.upstream)
        .await;
}

#[tokio::test]
async fn admin_creates_a_simple_product_in_json() {
    let gw = catalog().await;
    mount_create(&gw).await;
    let r = gw
        .send_json("POST", "/products", &Who::Admin, &create_body())
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, "");
    assert_eq!(r.header("location"), Some("/api/rest/products/8"));
    let posted = gw.upstream_calls("POST", "^/rest/all/V1/products$").await;
    let sent: Value = serde_json::from_slice(&posted[0].body).unwrap();
    let product = &sent["product"];
    assert_eq!(product["sku"], "SG-TOTE-01");
    assert_eq!(product["price"], json!(18.5));
    assert_eq!(product["status"], json!(1));
    assert_eq!(product["attribute_set_id"], json!(4));
    assert_eq!(product["extension_attributes"]["website_ids"], json!([1]));
    assert_eq!(
        product["extension_attributes"]["stock_item"]["qty"],
        json!(40.0)
    );
    assert_eq!(
        product["extension_attributes"]["stock_item"]["is_in_stock"],
        json!(true)
    );
    assert_eq!(
        product["extension_attributes"]["stock_item"]["use_config_min_sale_qty"],
        json!(1)
    );
    let attr = |code: &str| {
        product["custom_attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["attribute_code"] == code)
            .map(|a| a["value"].clone())
    };
    assert_eq!(attr("tax_class_id"), Some(json!("2")));
    assert_eq!(attr("url_key"), Some(json!("market-canvas-tote")));
    assert_eq!(
        attr("special_from_date"),
        Some(json!("2024-05-01 00:00:00"))
    );
    assert_eq!(attr("news_from_date"), Some(json!("2024-06-01 00:00:00")));
    assert_eq!(
        product["tier_prices"],
        json!([
            {"customer_group_id": 1, "qty": 1.0, "value": 17.0, "extension_attributes": {"website_id": 0}},
            {"customer_group_id": 32000, "qty": 5.0, "value": 16.0, "extension_attributes": {"website_id": 0}}
        ])
    );
    // The upstream token was sent, and only to the upstream.
    assert_eq!(
        posted[0]
            .headers
            .get("authorization")
            .unwrap()
            .to_str()
            .unwrap(),
        format!("Bearer {UPSTREAM_TOKEN}")
    );
}

#[tokio::test]
async fn admin_creates_a_product_in_xml_with_nested_lists() {
    let gw = catalog().await;
    mount_create(&gw).await;
    let xml = "<?xml version=\"1.0\"?><service_api><type_id>simple</type_id><attribute_set_id>4</attribute_set_id>\
        <sku>SG-TOTE-01</sku><name>Tote</name><price>18.5</price><weight>1</weight><status>1</status>\
        <visibility>4</visibility><tax_class_id>2</tax_class_id><description>d</description>\
        <short_description>s</short_description>\
        <tier_price><data_item><cust_group>1</cust_group><price>10</price><price_qty>3</price_qty></data_item>\
        <data_item><cust_group>2</cust_group><price>9</price><price_qty>6</price_qty></data_item></tier_price>\
        <stock_data><qty>5</qty></stock_data></service_api>";
    let r = gw
        .send_body("POST", "/products", &Who::Admin, "application/xml", xml)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let posted = gw.upstream_calls("POST", "^/rest/all/V1/products$").await;
    let sent: Value = serde_json::from_slice(&posted[0].body).unwrap();
    assert_eq!(sent["product"]["tier_prices"].as_array().unwrap().len(), 2);
    assert_eq!(
        sent["product"]["extension_attributes"]["stock_item"]["qty"],
        json!(5.0)
    );
}

#[tokio::test]
async fn create_checks_every_required_field_before_calling_magento() {
    let gw = catalog().await;
    mount_create(&gw).await;
    let sent =
        json!({"type_id": "simple", "attribute_set_id": 4, "sku": "", "price": "-1", "status": 7});
    let r = gw.send_json("POST", "/products", &Who::Admin, &sent).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.messages(),
        [
            "Empty value for \"sku\" in request.",
            "Missing \"name\" in request.",
            "Missing \"weight\" in request.",
            "Missing \"visibility\" in request.",
            "Missing \"tax_class_id\" in request.",
            "Missing \"description\" in request.",
            "Missing \"short_description\" in request.",
            "Invalid value \"7\" for attribute \"status\".",
            "Please enter a number 0 or greater in the \"price\" field.",
            "Resource data pre-validation error."
        ]
    );
    for (body, status, message) in [
        (json!({"sku": "x"}), 400, "Missing \"type_id\" in request."),
        (
            json!({"type_id": "spaceship"}),
            400,
            "Invalid product type.",
        ),
        (
            json!({"type_id": "configurable"}),
            405,
            "Creation of products with type 'configurable' is not implemented",
        ),
        (
            json!({"type_id": "simple"}),
            400,
            "Missing \"attribute_set_id\" in request.",
        ),
        (
            json!({"type_id": "simple", "attribute_set_id": "x"}),
            400,
            "Invalid attribute set.",
        ),
    ] {
        let r = gw
            .send(gw.request("POST", "/products", &Who::Admin).json(&body))
            .await;
        assert_eq!(
            (r.status, r.messages()[0].as_str()),
            (status, message),
            "{body}"
        );
    }
    let mut bad_date = create_body();
    bad_date["news_to_date"] = json!("31/31/2024");
    let r = gw
        .send(gw.request("POST", "/products", &Who::Admin).json(&bad_date))
        .await;
    assert_eq!(
        r.messages()[0],
        "Invalid date in the \"news_to_date\" field."
    );
    assert_eq!(gw.upstream_count("POST", "products").await, 0);
}

#[tokio::test]
async fn create_refuses_an_existing_sku_instead_of_overwriting_it() {
    let gw = catalog().await;
    Mock::given(method("POST"))
        .and(path("/rest/all/V1/products"))
        .respond_with(recorded("products/create-sg-tote-01"))
        .expect(0)
        .mount(&gw.upstream)
        .await;
    let mut body = create_body();
    body["sku"] = json!("24-MB01");
    let r = gw
        .send(gw.request("POST", "/products", &Who::Admin).json(&body))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.messages()[0],
        "The value of attribute \"sku\" must be unique."
    );
}

#[tokio::test]
async fn update_sends_only_what_changed_and_keeps_the_other_price_kind() {
    let gw = catalog().await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB01"))
        .and(body_partial_json(json!({"product": {"sku": "24-MB01"}})))
        .respond_with(recorded("products/update-price-24-mb02"))
        .expect(2)
        .mount(&gw.upstream)
        .await;
    let sent = json!({"price": "40", "type_id": "virtual"});
    let r = gw.send_json("PUT", "/products/1", &Who::Admin, &sent).await;
    assert_eq!((r.status, r.body.as_str()), (200, ""));
    let sent: Value =
        serde_json::from_slice(&gw.upstream_calls("PUT", "24-MB01").await[0].body).unwrap();
    assert_eq!(sent, json!({"product": {"price": 40.0, "sku": "24-MB01"}}));

    // Only group prices sent: Magento would drop the quantity tiers, so they are sent back.
    let sent = json!({"group_price": [{"cust_group": "2", "price": "31"}]});
    let r = gw.send_json("PUT", "/products/1", &Who::Admin, &sent).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let sent: Value =
        serde_json::from_slice(&gw.upstream_calls("PUT", "24-MB01").await[1].body).unwrap();
    let tiers = sent["product"]["tier_prices"].as_array().unwrap();
    let quantities: Vec<f64> = tiers.iter().map(|t| t["qty"].as_f64().unwrap()).collect();
    assert_eq!(quantities, [1.0, 5.0, 10.0]);
    assert_eq!(tiers[0]["customer_group_id"], json!(2));
}

#[tokio::test]
async fn update_in_xml() {
    let gw = catalog().await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB01"))
        .respond_with(recorded("products/update-price-24-mb02"))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    let xml = "<?xml version=\"1.0\"?><service_api><name>Harbor &amp; Co Duffle</name>\
        <stock_data><qty>7</qty><is_in_stock>1</is_in_stock></stock_data></service_api>";
    let r = gw
        .send_raw(
            gw.request("PUT", "/products/1", &Who::Admin)
                .header("Content-Type", "text/xml")
                .body(xml),
        )
        .await;
    assert_eq!((r.status, r.body.as_str()), (200, ""));
    let sent: Value =
        serde_json::from_slice(&gw.upstream_calls("PUT", "24-MB01").await[0].body).unwrap();
    assert_eq!(
        sent,
        json!({"product": {"name": "Harbor & Co Duffle", "sku": "24-MB01",
               "extension_attributes": {"stock_item": {"qty": 7.0, "is_in_stock": true}}}})
    );
    // A refusal in XML.
    let r = gw
        .send_raw(
            gw.request("PUT", "/products/1", &Who::Admin)
                .header("Content-Type", "application/xml")
                .header("Accept", "application/xml")
                .body("<service_api><price>cheap</price></service_api>"),
        )
        .await;
    assert_eq!(r.status, 400);
    r.assert_contains("<message>Please enter a valid number in the \"price\" field.</message>");
}

#[tokio::test]
async fn update_refusals() {
    let gw = catalog().await;
    for (body, status, message) in [
        (
            json!({"name": ""}),
            400,
            "Empty value for \"name\" in request.",
        ),
        (
            json!({"sku": "OTHER"}),
            400,
            "Changing the SKU of a product is not supported; create a new product instead.",
        ),
        (json!({"unknown": 1}), 400, "The request data is invalid."),
        (
            json!({"weight": "heavy"}),
            400,
            "Please enter a valid number in the \"weight\" field.",
        ),
    ] {
        let r = gw
            .send(gw.request("PUT", "/products/1", &Who::Admin).json(&body))
            .await;
        assert_eq!(
            (r.status, r.messages()[0].as_str()),
            (status, message),
            "{body}"
        );
    }
    let r = gw
        .send_json("PUT", "/products/999", &Who::Admin, &json!({"name": "x"}))
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(gw.upstream_count("PUT", "products").await, 0);
}

#[tokio::test]
async fn delete_is_200_empty_and_404_when_missing() {
    let gw = catalog().await;
    Mock::given(method("DELETE"))
        .and(path("/rest/all/V1/products/24-MB02"))
        .respond_with(ResponseTemplate::new(200).set_body_json(true))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    Mock::given(method("DELETE"))
        .and(path("/rest/all/V1/products/MT07"))
        .respond_with(recorded("products/delete-error-not-found"))
        .mount(&gw.upstream)
        .await;
    let r = gw
        .send(gw.request("DELETE", "/products/2", &Who::Admin))
        .await;
    assert_eq!((r.status, r.body.as_str()), (200, ""));
    let r = gw
        .send(gw.request("DELETE", "/products/6", &Who::Admin))
        .await;
    r.assert_error(404, "Resource not found.");
}

#[tokio::test]
async fn skus_are_encoded_in_upstream_paths() {
    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .and(query_param("fields", "items[id,sku],total_count"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"items": [{"id": 9, "sku": "A/B C?"}], "total_count": 1})),
        )
        .mount(&gw.upstream)
        .await;
    let mut product = fixture("products/get-simple-24-mb01")["response"]["body"].clone();
    product["id"] = json!(9);
    product["sku"] = json!("A/B C?");
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/A%2FB%20C%3F"))
        .respond_with(ResponseTemplate::new(200).set_body_json(product))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    let r = gw.get_json("/products/9", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["sku"], "A/B C?");
}
