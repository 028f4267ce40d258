//! Catalog over HTTP: products, search criteria, store-view values, stock, media,
//! categories and products-render-info.

mod common;

use common::*;
use serde_json::{Value, json};

const PRODUCT_NOT_FOUND: &str =
    "The product that was requested doesn't exist. Verify the product and try again.";

fn skus(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| i["sku"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn product_get_has_stock_media_and_custom_attributes() {
    let h = Harness::start().await;
    let r = h.get("/rest/V1/products/24-MB01").await;
    assert_eq!(r.status, 200);
    let p = &r.body;
    assert_eq!(p["id"], 1);
    assert_eq!(p["type_id"], "simple");
    let stock = &p["extension_attributes"]["stock_item"];
    assert_eq!(stock["product_id"], 1);
    assert_ne!(
        stock["item_id"], stock["product_id"],
        "item ids differ from product ids"
    );
    assert_eq!(stock["qty"], 100);
    assert_eq!(p["extension_attributes"]["website_ids"], json!([1]));
    assert_eq!(
        p["extension_attributes"]["category_links"],
        json!([{"position": 2, "category_id": "3"}, {"position": 3, "category_id": "4"}])
    );
    assert_eq!(p["media_gallery_entries"].as_array().map(Vec::len), Some(3));
    assert_eq!(custom(p, "tax_class_id"), Some(&json!("2")));
    assert_eq!(custom(p, "url_key"), Some(&json!("joust-duffle-bag")));
    assert_eq!(
        custom(p, "news_from_date"),
        Some(&json!("2024-01-01 00:00:00"))
    );
    assert_eq!(custom(p, "image"), Some(&json!("/m/b/mb01-blue-0.png")));
    // Magento returns decimals of custom attributes with six digits.
    let special = h.get("/rest/V1/products/24-MB04").await;
    assert_eq!(
        custom(&special.body, "special_price"),
        Some(&json!("32.000000"))
    );
    // SKUs are found case-insensitively, and the stored spelling comes back.
    let lower = h.get("/rest/V1/products/24-mb01").await;
    assert_eq!(lower.body["sku"], "24-MB01");
}

#[tokio::test]
async fn unknown_product_is_404() {
    let h = Harness::start().await;
    let r = h.get("/rest/V1/products/NOPE").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body, json!({"message": PRODUCT_NOT_FOUND}));
    let r = h.admin("DELETE", "/rest/V1/products/NOPE", None).await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn attribute_sets_say_whether_they_hold_a_media_gallery() {
    let h = Harness::start().await;
    let has_gallery = |body: &Value| {
        body.as_array()
            .expect("a list")
            .iter()
            .any(|a| a["attribute_code"] == "media_gallery")
    };
    let r = h.get("/rest/V1/products/attribute-sets/4/attributes").await;
    assert_eq!(r.status, 200);
    assert!(has_gallery(&r.body));
    assert!(
        r.body
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["attribute_code"] == "name")
    );
    let r = h
        .get("/rest/V1/products/attribute-sets/16/attributes")
        .await;
    assert_eq!(r.status, 200);
    assert!(!has_gallery(&r.body));
    let r = h
        .get("/rest/V1/products/attribute-sets/99/attributes")
        .await;
    assert_eq!(r.status, 404);
    let r = h
        .send(
            "GET",
            "/rest/V1/products/attribute-sets/4/attributes",
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 401);
}

fn new_product(sku: &str, name: &str) -> Value {
    json!({"product": {
        "sku": sku, "name": name, "attribute_set_id": 4, "price": 12.5, "type_id": "simple",
        "extension_attributes": {"stock_item": {"qty": 7, "is_in_stock": true},
                                 "category_links": [{"position": 9, "category_id": "5"}]},
        "custom_attributes": [
            {"attribute_code": "description", "value": "<p>Mug</p>"},
            {"attribute_code": "tax_class_id", "value": 2},
            {"attribute_code": "not_an_attribute", "value": "dropped"}
        ]
    }})
}

#[tokio::test]
async fn post_creates_and_then_upserts() {
    let h = Harness::start().await;
    let created = h
        .admin(
            "POST",
            "/rest/all/V1/products",
            Some(&new_product("MUG-1", "Blue Mug")),
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let id = created.body["id"].clone();
    assert_eq!(created.body["status"], 1, "new products are enabled");
    assert_eq!(created.body["visibility"], 4);
    assert_eq!(
        custom(&created.body, "url_key"),
        Some(&json!("blue-mug")),
        "url key from name"
    );
    assert_eq!(custom(&created.body, "tax_class_id"), Some(&json!("2")));
    assert_eq!(
        custom(&created.body, "not_an_attribute"),
        None,
        "unknown codes are dropped"
    );
    assert_eq!(created.body["extension_attributes"]["stock_item"]["qty"], 7);

    // POST of an existing SKU updates it instead of failing.
    let again = json!({"product": {"sku": "MUG-1", "name": "Blue Mug XL", "attribute_set_id": 4, "price": 14}});
    let updated = h.admin("POST", "/rest/all/V1/products", Some(&again)).await;
    assert_eq!(updated.status, 200);
    assert_eq!(updated.body["id"], id);
    assert_eq!(updated.body["name"], "Blue Mug XL");
    assert_eq!(updated.body["price"], 14);
    assert_eq!(
        custom(&updated.body, "description"),
        Some(&json!("<p>Mug</p>")),
        "unsent fields stay"
    );
    assert_eq!(
        updated.body["extension_attributes"]["category_links"][0]["category_id"],
        "5"
    );
    let list = h
        .get(&format!(
            "/rest/V1/products?{}",
            filter(0, 0, "sku", "MUG-1", "eq")
        ))
        .await;
    assert_eq!(list.body["total_count"], 1);
}

#[tokio::test]
async fn put_changes_only_what_is_sent() {
    let h = Harness::start().await;
    let body = json!({"product": {
        "sku": "24-MB06",
        "price": 47,
        "custom_attributes": [{"attribute_code": "meta_title", "value": "Rival"}],
        "tier_prices": [{"customer_group_id": 32000, "qty": 3, "value": 44}]
    }});
    let r = h
        .admin("PUT", "/rest/all/V1/products/24-MB06", Some(&body))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let p = &r.body;
    assert_eq!(p["price"], 47);
    assert_eq!(
        p["name"], "Rival Field Messenger",
        "name not sent, not changed"
    );
    assert_eq!(custom(p, "meta_title"), Some(&json!("Rival")));
    assert_eq!(
        custom(p, "url_key"),
        Some(&json!("rival-field-messenger")),
        "merged by code"
    );
    assert_eq!(
        p["tier_prices"].as_array().map(Vec::len),
        Some(1),
        "arrays sent replace"
    );
    assert_eq!(p["tier_prices"][0]["value"], 44);
    assert_eq!(
        p["media_gallery_entries"].as_array().map(Vec::len),
        Some(1),
        "gallery untouched"
    );
    // PUT upserts too.
    let new = h
        .admin(
            "PUT",
            "/rest/all/V1/products/NEW-PUT",
            Some(&new_product("NEW-PUT", "Put Created")),
        )
        .await;
    assert_eq!(new.status, 200);
    assert_eq!(new.body["sku"], "NEW-PUT");
}

#[tokio::test]
async fn put_path_sku_replaces_body_sku_when_body_has_only_product() {
    let h = Harness::start().await;
    // Magento's ParamsOverrider writes the path SKU into `product.sku`.
    let body = json!({"product": {"sku": "24-MB01", "price": 99}});
    let r = h
        .admin("PUT", "/rest/all/V1/products/24-MB03", Some(&body))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["sku"], "24-MB03");
    assert_eq!(r.body["price"], 99);
    assert_eq!(h.get("/rest/V1/products/24-MB01").await.body["price"], 34);
}

#[tokio::test]
async fn create_validation_messages() {
    let h = Harness::start().await;
    let no_set = json!({"product": {"sku": "X-1", "name": "X", "price": 1}});
    let r = h.admin("POST", "/rest/V1/products", Some(&no_set)).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!({"message": "Invalid product data: %1", "parameters": ["Invalid attribute set entity type"]})
    );
    let bad_set =
        json!({"product": {"sku": "X-1", "name": "X", "price": 1, "attribute_set_id": 999}});
    assert_eq!(
        h.admin("POST", "/rest/V1/products", Some(&bad_set))
            .await
            .body["message"],
        "Invalid product data: %1"
    );
    let no_name = json!({"product": {"sku": "X-1", "attribute_set_id": 4, "price": 1}});
    let r = h.admin("POST", "/rest/V1/products", Some(&no_name)).await;
    assert_eq!(
        r.body,
        json!({"message": "The \"%1\" attribute value is empty. Set the attribute and try again.", "parameters": ["Product Name"]})
    );
    let no_sku = json!({"product": {"name": "X", "attribute_set_id": 4, "price": 1}});
    let r = h.admin("POST", "/rest/V1/products", Some(&no_sku)).await;
    assert_eq!(r.body["parameters"], json!(["sku"]));
    let no_price = json!({"product": {"sku": "X-1", "name": "X", "attribute_set_id": 4}});
    let r = h.admin("POST", "/rest/V1/products", Some(&no_price)).await;
    assert_eq!(r.body["parameters"], json!(["Price"]));
    let missing = h
        .admin("POST", "/rest/V1/products", Some(&json!({"sku": "X"})))
        .await;
    assert_eq!(
        missing.body,
        json!({"message": "\"%fieldName\" is required. Enter and try again.", "parameters": {"fieldName": "product"}})
    );
    // Same name, same generated URL key: Magento refuses the second product.
    let twin = json!({"product": {"sku": "JOUST-2", "name": "Joust Duffle Bag", "attribute_set_id": 4, "price": 1}});
    let r = h.admin("POST", "/rest/V1/products", Some(&twin)).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body["message"],
        "URL key for specified store already exists."
    );
    // Unknown types fall back to simple, as Magento's type factory does.
    let odd = json!({"product": {"sku": "ODD-1", "name": "Odd", "attribute_set_id": 4, "price": 1, "type_id": "spaceship"}});
    assert_eq!(
        h.admin("POST", "/rest/V1/products", Some(&odd)).await.body["type_id"],
        "simple"
    );
}

#[tokio::test]
async fn sku_path_segments_are_url_decoded() {
    let h = Harness::start().await;
    let r = h
        .admin(
            "POST",
            "/rest/all/V1/products",
            Some(&new_product("A/B 1", "Slash Product")),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let got = h.get("/rest/V1/products/A%2FB%201").await;
    assert_eq!(got.status, 200);
    assert_eq!(got.body["sku"], "A/B 1");
    assert_eq!(
        h.sandbox.count("GET", "/V1/products/A/B 1"),
        1,
        "decoded paths count too"
    );
    assert_eq!(h.sandbox.count("GET", "/V1/products/A%2FB%201"), 1);
}

#[tokio::test]
async fn store_view_writes_create_overrides() {
    let h = Harness::start().await;
    let body = json!({"product": {"sku": "24-MB03", "name": "Sac à dos Crown", "price": 40,
        "custom_attributes": [{"attribute_code": "description", "value": "<p>FR</p>"}]}});
    let r = h
        .admin("PUT", "/rest/french/V1/products/24-MB03", Some(&body))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["name"], "Sac à dos Crown");
    let default = h.get("/rest/V1/products/24-MB03").await.body;
    assert_eq!(
        default["name"], "Crown Summit Backpack",
        "store-scoped name stays in french"
    );
    assert_eq!(default["price"], 40, "price is global");
    let french = h.get("/rest/french/V1/products/24-MB03").await.body;
    assert_eq!(french["name"], "Sac à dos Crown");
    assert_eq!(custom(&french, "description"), Some(&json!("<p>FR</p>")));
    assert_eq!(
        h.get("/rest/V1/products/24-MB03?storeId=2").await.body["name"],
        "Sac à dos Crown"
    );
    // Writes through `all` change the default, never the french override.
    let all = json!({"product": {"sku": "24-MB03", "name": "Crown Backpack"}});
    h.admin("PUT", "/rest/all/V1/products/24-MB03", Some(&all))
        .await;
    assert_eq!(
        h.get("/rest/V1/products/24-MB03").await.body["name"],
        "Crown Backpack"
    );
    assert_eq!(
        h.get("/rest/french/V1/products/24-MB03").await.body["name"],
        "Sac à dos Crown"
    );
    // The seeded french name is there too; storeId=0 shows admin values.
    assert_eq!(
        h.get("/rest/french/V1/products/24-MB01").await.body["name"],
        "Sac de sport Joust"
    );
    assert_eq!(
        h.get("/rest/V1/products/24-MB01?storeId=0").await.body["name"],
        "Joust Duffle Bag"
    );
}

#[tokio::test]
async fn delete_removes_product_stock_and_links() {
    let h = Harness::start().await;
    let r = h
        .admin("DELETE", "/rest/all/V1/products/24-MB05", None)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, json!(true));
    assert_eq!(h.get("/rest/V1/products/24-MB05").await.status, 404);
    assert_eq!(h.get("/rest/V1/stockItems/24-MB05").await.status, 404);
    let links = h.get("/rest/V1/categories/4/products").await.body;
    assert!(!links.to_string().contains("24-MB05"));
    // Deleting a child drops it from its configurable parent.
    h.admin("DELETE", "/rest/all/V1/products/MH01-S-Black", None)
        .await;
    let parent = h.get("/rest/V1/products/MH01").await.body;
    assert_eq!(
        parent["extension_attributes"]["configurable_product_links"],
        json!([10])
    );
}

#[tokio::test]
async fn search_criteria_filters_sorting_and_paging() {
    let h = Harness::start().await;
    let h = &h;
    let list = |q: String| async move { h.get(&format!("/rest/V1/products?{q}")).await };
    // like, case-insensitive
    let r = list(filter(0, 0, "name", "%duffle%", "like")).await;
    assert_eq!(skus(&r.body), vec!["24-MB01", "24-WB04"]);
    assert!(
        r.body["items"][0]["extension_attributes"]
            .get("stock_item")
            .is_none(),
        "lists lack stock_item"
    );
    assert_eq!(
        r.body["search_criteria"]["filter_groups"][0]["filters"][0]["condition_type"],
        "like"
    );
    // OR inside a group, AND across groups
    let q = format!(
        "{}&{}&{}",
        filter(0, 0, "sku", "24-MB01", "eq"),
        filter(0, 1, "sku", "24-MB04", "eq"),
        filter(1, 0, "price", "40", "gt")
    );
    assert_eq!(skus(&list(q).await.body), vec!["24-MB04"]);
    // in / nin / category_id / custom attribute / null
    assert_eq!(
        list(filter(0, 0, "entity_id", "2,3,99", "in")).await.body["total_count"],
        2
    );
    assert_eq!(
        skus(
            &list(format!(
                "{}&{}",
                filter(0, 0, "category_id", "4", "eq"),
                filter(1, 0, "sku", "24-MB0%", "nlike")
            ))
            .await
            .body
        ),
        vec!["24-WB04"]
    );
    assert_eq!(
        list(filter(0, 0, "tax_class_id", "0", "eq")).await.body["total_count"],
        1
    );
    assert_eq!(
        list(filter(0, 0, "special_price", "", "notnull"))
            .await
            .body["total_count"],
        2
    );
    assert_eq!(
        list(filter(0, 0, "type_id", "configurable", "neq"))
            .await
            .body["total_count"],
        12
    );
    assert_eq!(
        list(filter(0, 0, "created_at", "2024-01-10 09:00:00", "gteq"))
            .await
            .body["total_count"],
        13
    );
    // sort and page; a page past the end answers the last page again
    let sorted = "searchCriteria[sortOrders][0][field]=price&searchCriteria[sortOrders][0][direction]=DESC&searchCriteria[pageSize]=5";
    let r = list(format!("{sorted}&searchCriteria[currentPage]=1")).await;
    assert_eq!(r.body["items"][0]["sku"], "24-WG02");
    assert_eq!(r.body["total_count"], 13);
    let last = list(format!("{sorted}&searchCriteria[currentPage]=3"))
        .await
        .body;
    let past = list(format!("{sorted}&searchCriteria[currentPage]=40"))
        .await
        .body;
    assert_eq!(skus(&last), skus(&past));
    assert_eq!(past["search_criteria"]["current_page"], 40);
    assert_eq!(past["items"].as_array().map(Vec::len), Some(3));
    // Input limits: default 20, max 300.
    assert_eq!(
        list("searchCriteria=".into()).await.body["search_criteria"]["page_size"],
        20
    );
    let r = list("searchCriteria[pageSize]=301".into()).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!({"message": "Maximum SearchCriteria pageSize is %max", "parameters": {"max": 300}})
    );
    let r = h.get("/rest/V1/products").await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["parameters"], json!({"fieldName": "searchCriteria"}));
    let r = list(filter(0, 0, "colour", "x", "eq")).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!({"message": "Invalid attribute name: %1", "parameters": ["colour"]})
    );
    let r = list(
        "searchCriteria[sortOrders][0][field]=price&searchCriteria[sortOrders][0][direction]=UP"
            .into(),
    )
    .await;
    assert_eq!(r.status, 400);
    // fields projection
    let r = list("searchCriteria[pageSize]=2&fields=items[id,sku],total_count".into()).await;
    assert_eq!(
        r.body,
        json!({"items": [{"id": 1, "sku": "24-MB01"}, {"id": 2, "sku": "24-MB04"}], "total_count": 13})
    );
}

#[tokio::test]
async fn categories_and_their_products() {
    let h = Harness::start().await;
    let links = h.get("/rest/V1/categories/4/products").await.body;
    let first = &links[0];
    assert_eq!(
        first,
        &json!({"sku": "24-MB01", "position": 3, "category_id": "4"})
    );
    assert_eq!(links.as_array().map(Vec::len), Some(7));
    let category = h.get("/rest/V1/categories/3").await.body;
    assert_eq!(category["name"], "Gear");
    assert_eq!(category["children"], "4,5");
    let missing = h.get("/rest/V1/categories/99/products").await;
    assert_eq!(missing.status, 404);
    assert_eq!(
        missing.body,
        json!({"message": "No such entity with %fieldName = %fieldValue", "parameters": {"fieldName": "id", "fieldValue": 99}})
    );
}

#[tokio::test]
async fn stock_items_update_and_low_stock() {
    let h = Harness::start().await;
    let item = h.get("/rest/V1/stockItems/24-MB01").await.body;
    let item_id = item["item_id"].as_u64().unwrap_or_default();
    assert_eq!(item["product_id"], 1);
    assert_ne!(item_id, 1);
    // Only the fields sent change; quantity 0 forces out of stock, and back.
    let zero = json!({"stockItem": {"qty": 0}});
    let r = h
        .admin(
            "PUT",
            &format!("/rest/V1/products/24-MB01/stockItems/{item_id}"),
            Some(&zero),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, json!(item_id));
    let after = h.get("/rest/V1/stockItems/24-MB01").await.body;
    assert_eq!(after["is_in_stock"], false);
    assert_eq!(after["max_sale_qty"], 10000);
    let back = json!({"stockItem": {"qty": 12}});
    h.admin("PUT", "/rest/V1/products/24-MB01/stockItems/1", Some(&back))
        .await;
    let after = h.get("/rest/V1/stockItems/24-MB01").await.body;
    assert_eq!(after["qty"], 12);
    assert_eq!(after["is_in_stock"], true);
    let status = h
        .send("GET", "/rest/V1/stockStatuses/24-MB01", None, None)
        .await;
    assert_eq!(status.status, 200, "stock statuses are anonymous");
    assert_eq!(status.body["stock_status"], 1);
    let unknown = h
        .admin("PUT", "/rest/V1/products/NOPE/stockItems/1", Some(&back))
        .await;
    assert_eq!(unknown.status, 404);
    assert_eq!(
        unknown.body,
        json!({"message": "The Product with the \"%1\" SKU doesn't exist.", "parameters": ["NOPE"]})
    );
    assert_eq!(h.get("/rest/V1/stockItems/NOPE").await.status, 404);
    // lowStock: qty at or below the threshold, configurable parents included.
    let low = h
        .get("/rest/V1/stockItems/lowStock?scopeId=0&qty=5")
        .await
        .body;
    let ids: Vec<u64> = low["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["product_id"].as_u64())
        .collect();
    assert_eq!(ids, vec![7, 8, 12]);
    assert_eq!(low["total_count"], 3);
    let paged = h
        .get("/rest/V1/stockItems/lowStock?scopeId=0&qty=10&pageSize=2&currentPage=2")
        .await
        .body;
    assert_eq!(paged["total_count"], 4);
    assert_eq!(paged["items"].as_array().map(Vec::len), Some(2));
    let missing = h.get("/rest/V1/stockItems/lowStock?qty=5").await;
    assert_eq!(missing.body["parameters"], json!({"fieldName": "scopeId"}));
}

fn entry(name: &str, label: &str, types: Value) -> Value {
    json!({"entry": {"media_type": "image", "label": label, "position": 5, "disabled": false, "types": types,
        "content": {"base64_encoded_data": png_base64(), "type": "image/png", "name": name}}})
}

#[tokio::test]
async fn media_create_update_delete_and_store_labels() {
    let h = Harness::start().await;
    let r = h
        .admin(
            "POST",
            "/rest/all/V1/products/24-MB04/media",
            Some(&entry("Test Image.png", "Back", json!(["thumbnail"]))),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let id = r.body.as_u64().unwrap_or_default();
    let created = h
        .get(&format!("/rest/V1/products/24-MB04/media/{id}"))
        .await
        .body;
    assert_eq!(created["file"], "/t/e/test_image.png");
    assert_eq!(created["label"], "Back");
    assert_eq!(created["types"], json!(["thumbnail"]));
    let other = h.get("/rest/V1/products/24-MB04/media/4").await.body;
    assert_eq!(
        other["types"],
        json!(["image", "small_image"]),
        "roles move to the new entry"
    );
    // The same file name again gets a suffix.
    let r = h
        .admin(
            "POST",
            "/rest/all/V1/products/24-MB03/media",
            Some(&entry("test_image.png", "x", json!([]))),
        )
        .await;
    let second = h
        .get(&format!("/rest/V1/products/24-MB03/media/{}", r.body))
        .await
        .body;
    assert_eq!(second["file"], "/t/e/test_image_1.png");
    // Through a store code only that store view's label changes.
    let french = json!({"entry": {"id": id, "label": "Dos", "position": 0, "disabled": false, "types": ["thumbnail"], "media_type": "image"}});
    let r = h
        .admin(
            "PUT",
            &format!("/rest/french/V1/products/24-MB04/media/{id}"),
            Some(&french),
        )
        .await;
    assert_eq!(r.body, json!(true));
    assert_eq!(
        h.get(&format!("/rest/french/V1/products/24-MB04/media/{id}"))
            .await
            .body["label"],
        "Dos"
    );
    assert_eq!(
        h.get(&format!("/rest/V1/products/24-MB04/media/{id}"))
            .await
            .body["label"],
        "Back"
    );
    let list = h.get("/rest/french/V1/products/24-MB04/media").await.body;
    assert_eq!(list[0]["id"], id, "french position 0 sorts first");
    // Through `all` the default changes and the french value stays.
    let all = json!({"entry": {"id": id, "label": "Rear", "types": ["thumbnail"]}});
    h.admin(
        "PUT",
        &format!("/rest/all/V1/products/24-MB04/media/{id}"),
        Some(&all),
    )
    .await;
    assert_eq!(
        h.get(&format!("/rest/V1/products/24-MB04/media/{id}"))
            .await
            .body["label"],
        "Rear"
    );
    assert_eq!(
        h.get(&format!("/rest/french/V1/products/24-MB04/media/{id}"))
            .await
            .body["label"],
        "Dos"
    );
    // Delete removes it everywhere and frees its roles.
    let r = h
        .admin(
            "DELETE",
            &format!("/rest/all/V1/products/24-MB04/media/{id}"),
            None,
        )
        .await;
    assert_eq!(r.body, json!(true));
    assert_eq!(
        h.get(&format!("/rest/french/V1/products/24-MB04/media/{id}"))
            .await
            .status,
        404
    );
    let product = h.get("/rest/V1/products/24-MB04").await.body;
    assert_eq!(custom(&product, "thumbnail"), None);
    // The file can be downloaded from base_media_url + catalog/product + file.
    let (status, bytes, content_type) = h
        .raw_get("/media/catalog/product/t/e/test_image_1.png")
        .await;
    assert_eq!((status, content_type.as_str()), (200, "image/png"));
    assert_eq!(bytes, png_bytes());
}

#[tokio::test]
async fn seeded_french_media_labels() {
    let h = Harness::start().await;
    let default = h.get("/rest/V1/products/24-MB01/media").await.body;
    let french = h.get("/rest/french/V1/products/24-MB01/media").await.body;
    assert_eq!(default[0]["label"], "Joust Duffle Bag - front");
    assert_eq!(french[0]["label"], "Sac Joust - côté");
    assert_eq!(french[1]["label"], "Sac Joust - face");
    assert_eq!(
        french[2]["label"], "Joust Duffle Bag - inside",
        "falls back to the default"
    );
}

#[tokio::test]
async fn media_validation_errors() {
    let h = Harness::start().await;
    let h = &h;
    let post = |body: Value| async move {
        h.admin("POST", "/rest/all/V1/products/24-MB04/media", Some(&body))
            .await
    };
    let with = |data: String, mime: &str, name: &str| {
        json!({"entry": {"media_type": "image", "label": "x", "position": 1, "disabled": false, "types": [],
            "content": {"base64_encoded_data": data, "type": mime, "name": name}}})
    };
    let r = post(with("%%%not-base64".into(), "image/png", "a.png")).await;
    assert_eq!(
        (r.status, r.body["message"].as_str()),
        (
            400,
            Some("The image content must be valid base64 encoded data.")
        )
    );
    let r = post(with("aGVsbG8gd29ybGQ=".into(), "image/png", "a.png")).await;
    assert_eq!(
        r.body["message"], "The image content must be valid base64 encoded data.",
        "not an image"
    );
    let r = post(with(png_base64(), "image/jpeg", "a.png")).await;
    assert_eq!(
        (r.status, r.body["message"].as_str()),
        (
            400,
            Some("The image MIME type is not valid or not supported.")
        )
    );
    let r = post(with(png_base64(), "image/png", "bad:name?.png")).await;
    assert_eq!(
        (r.status, r.body["message"].as_str()),
        (
            400,
            Some("Provided image name contains forbidden characters.")
        )
    );
    let r = h
        .admin(
            "POST",
            "/rest/all/V1/products/VIRT-WARRANTY/media",
            Some(&with(png_base64(), "image/png", "a.png")),
        )
        .await;
    assert_eq!(r.status, 400, "attribute set without media gallery");
    assert_eq!(r.body, json!({"message": "The product can't be saved."}));
    let r = h
        .admin(
            "POST",
            "/rest/all/V1/products/NOPE/media",
            Some(&with(png_base64(), "image/png", "a.png")),
        )
        .await;
    assert_eq!(
        (r.status, r.body["message"].as_str()),
        (404, Some(PRODUCT_NOT_FOUND))
    );
    let update = json!({"entry": {"id": 999, "label": "x"}});
    let r = h
        .admin(
            "PUT",
            "/rest/all/V1/products/24-MB04/media/999",
            Some(&update),
        )
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.body["message"],
        "No image with the provided ID was found. Verify the ID and try again."
    );
    let r = h.get("/rest/V1/products/24-MB04/media/999").await;
    assert_eq!(
        (r.status, r.body["message"].as_str()),
        (404, Some("The image doesn't exist. Verify and try again."))
    );
    let r = h.get("/rest/V1/products/NOPE/media/1").await;
    assert_eq!(
        r.body["message"],
        "The product doesn't exist. Verify and try again."
    );
    let r = h
        .admin("DELETE", "/rest/all/V1/products/24-MB04/media/999", None)
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(
        h.get("/rest/V1/products/VIRT-WARRANTY/media").await.body,
        json!([])
    );
}

fn render_item(body: &Value, sku_id: u64) -> Option<&Value> {
    body["items"].as_array()?.iter().find(|i| i["id"] == sku_id)
}

#[tokio::test]
async fn products_render_info_prices_and_visibility() {
    let h = Harness::start().await;
    let r = h
        .send(
            "GET",
            "/rest/V1/products-render-info?searchCriteria[pageSize]=50&storeId=1&currencyCode=USD",
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 200, "anonymous: {}", r.body);
    let body = &r.body;
    let ids: Vec<u64> = body["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["id"].as_u64())
        .collect();
    assert!(!ids.contains(&4), "disabled product excluded");
    assert!(!ids.contains(&9), "not visible individually excluded");
    assert!(
        ids.contains(&12) && ids.contains(&13),
        "catalog-only and search-only are visible"
    );
    let bag = render_item(body, 1).cloned().unwrap_or_default();
    assert_eq!(bag["price_info"]["final_price"], 34);
    assert_eq!(
        bag["price_info"]["extension_attributes"]["tax_adjustments"]["final_price"],
        36.81
    );
    assert_eq!(
        bag["price_info"]["formatted_prices"]["final_price"],
        "<span class=\"price\">$34.00</span>"
    );
    assert_eq!(bag["is_salable"], "1");
    assert!(
        bag["url"]
            .as_str()
            .unwrap_or("")
            .ends_with("/joust-duffle-bag.html")
    );
    assert_eq!(bag["images"][0]["label"], "Joust Duffle Bag - front");
    let special = render_item(body, 2).cloned().unwrap_or_default();
    assert_eq!(special["price_info"]["final_price"], 32);
    assert_eq!(special["price_info"]["regular_price"], 45);
    assert_eq!(special["price_info"]["special_price"], 32);
    let expired = render_item(body, 3).cloned().unwrap_or_default();
    assert_eq!(expired["price_info"]["final_price"], 38);
    assert_eq!(expired["price_info"]["special_price"], Value::Null);
    let warranty = render_item(body, 11).cloned().unwrap_or_default();
    assert_eq!(
        warranty["price_info"]["extension_attributes"]["tax_adjustments"]["final_price"],
        19.99
    );
    let hoodie = render_item(body, 8).cloned().unwrap_or_default();
    assert_eq!(hoodie["price_info"]["final_price"], 52);
    assert_eq!(hoodie["add_to_cart_button"]["required_options"], true);
    assert_eq!(
        render_item(body, 7).map(|w| w["is_salable"].clone()),
        Some(json!(""))
    );
    let french = h
        .get(&format!(
            "/rest/V1/products-render-info?{}&storeId=2&currencyCode=EUR",
            filter(0, 0, "sku", "24-MB01", "eq")
        ))
        .await
        .body;
    assert!(
        french["items"][0]["url"]
            .as_str()
            .unwrap_or("")
            .ends_with("/sac-de-sport-joust.html")
    );
    assert_eq!(french["items"][0]["name"], "Sac de sport Joust");
    assert_eq!(french["items"][0]["images"][0]["label"], "Sac Joust - face");
    let missing = h.get("/rest/V1/products-render-info?searchCriteria=").await;
    assert_eq!(missing.status, 400);
    assert_eq!(
        missing.body["message"],
        "One or more input exceptions have occurred."
    );
    assert_eq!(missing.body["errors"].as_array().map(Vec::len), Some(2));
}

/// `GET path` on a connection of its own, with the path exactly as written (HTTP clients
/// built on URL parsers would resolve `%2E%2E`).
async fn raw_get_exact(h: &Harness, path: &str) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(h.sandbox.addr())
        .await
        .unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: m2\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        h.sandbox.token()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let text = String::from_utf8_lossy(&answer);
    let status = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[tokio::test]
async fn dot_segments_are_decoded_as_skus_not_resolved() {
    let h = Harness::start().await;
    for (i, sku) in [".", ".."].into_iter().enumerate() {
        let created = h
            .admin(
                "POST",
                "/rest/all/V1/products",
                Some(&json!({"product": {"sku": sku, "name": format!("Dot {i}"),
                    "attribute_set_id": 4, "type_id": "simple", "price": 1}})),
            )
            .await;
        assert_eq!(created.status, 200, "{}", created.body);
    }
    let (status, body) = raw_get_exact(&h, "/rest/default/V1/products/%2E%2E").await;
    assert_eq!((status, body["sku"].as_str()), (200, Some("..")), "{body}");
    let (status, body) = raw_get_exact(&h, "/rest/default/V1/products/%2e").await;
    assert_eq!((status, body["sku"].as_str()), (200, Some(".")), "{body}");
    // A literal dot segment is not resolved either: it names SKU ".." too, as Magento's
    // router (which splits the raw path) would.
    let (status, body) = raw_get_exact(&h, "/rest/default/V1/products/..").await;
    assert_eq!((status, body["sku"].as_str()), (200, Some("..")), "{body}");
}
