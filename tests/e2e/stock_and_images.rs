//! Stock items and product images against the stateful sandbox, where stock item ids are
//! product id + 1000 and the french store view has its own image labels.

use serde_json::json;

use crate::common::http::sent;
use crate::harness::{ADMIN_KEY, Stack};
use crate::schema::assert_answers_match_schema;

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

#[tokio::test]
async fn stock_reads_writes_and_the_batch() {
    let stack = Stack::start().await;
    let item = stack.admin("GET", "/stockitems/1001", None).await;
    assert_eq!(item.status, 200, "{}", item.body);
    let item = item.json();
    assert_eq!(
        (item["item_id"].as_str(), item["product_id"].as_str()),
        (Some("1001"), Some("1"))
    );
    assert_eq!(item["qty"], "100.0000");

    let list = stack.admin("GET", "/stockitems?limit=100", None).await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert!(
        list.json()
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["item_id"] == "1001"),
        "{}",
        list.body
    );

    // A single update in XML: only qty changes, and the product views show it.
    let before = stack.call("GET", "/products/1", None, None).await.json();
    assert_eq!(before["is_in_stock"], "1");
    let r = sent(
        stack
            .http
            .put(stack.url("/stockitems/1001"))
            .bearer_auth(ADMIN_KEY)
            .header("Content-Type", "text/xml")
            .body("<service_api><qty>0</qty><is_in_stock>0</is_in_stock></service_api>"),
    )
    .await;
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let item = stack.admin_json("/stockitems/1001").await;
    assert_eq!(
        (item["qty"].as_str(), item["is_in_stock"].as_str()),
        (Some("0.0000"), Some("0"))
    );
    assert_eq!(item["min_sale_qty"], "1.0000");
    assert_eq!(
        stack.admin_json("/products/1").await["stock_data"]["qty"],
        "0.0000"
    );
    assert_eq!(
        stack.call("GET", "/products/1", None, None).await.json()["is_in_stock"],
        "0"
    );

    // The batch: good, missing and empty items side by side.
    let batch = "<service_api>\
        <data_item item_id=\"1001\"><qty>12</qty><is_in_stock>1</is_in_stock></data_item>\
        <data_item item_id=\"987654\"><qty>1</qty></data_item>\
        <data_item item_id=\"1002\"><product_id></product_id><qty>3</qty></data_item>\
        <data_item item_id=\"1005\"><qty>7</qty></data_item>\
        </service_api>";
    let r = sent(
        stack
            .http
            .put(stack.url("/stockitems"))
            .bearer_auth(ADMIN_KEY)
            .header("Accept", "application/json")
            .header("Content-Type", "application/xml")
            .body(batch),
    )
    .await;
    assert_eq!(r.status(), 207);
    let body: serde_json::Value = r.json().await.unwrap();
    let codes = |group: &str| -> Vec<(String, u64)> {
        body[group]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|e| {
                        (
                            e["item_id"].to_string().trim_matches('"').to_owned(),
                            e["code"].as_u64().unwrap(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut success = codes("success");
    success.sort();
    assert_eq!(
        success,
        [("1001".to_owned(), 200), ("1005".to_owned(), 200)],
        "{body}"
    );
    let mut errors = codes("error");
    errors.sort();
    assert_eq!(
        errors,
        [("1002".to_owned(), 400), ("987654".to_owned(), 404)],
        "{body}"
    );
    assert_eq!(stack.admin_json("/stockitems/1001").await["qty"], "12.0000");
    assert_eq!(stack.admin_json("/stockitems/1005").await["qty"], "7.0000");
    // The empty product_id stopped item 1002 and nothing else.
    assert_eq!(stack.admin_json("/stockitems/1002").await["qty"], "50.0000");

    assert_eq!(
        stack.admin("DELETE", "/stockitems/1001", None).await.status,
        405
    );
    assert_eq!(
        stack
            .call("GET", "/stockitems/1001", None, None)
            .await
            .status,
        403
    );
    assert_answers_match_schema(&stack.exchanges());
}

#[tokio::test]
async fn images_global_per_store_and_their_writes() {
    let stack = Stack::start().await;
    let guest = stack.call("GET", "/products/1/images", None, None).await;
    assert_eq!(guest.status, 200, "{}", guest.body);
    let guest = guest.json();
    // Entry 3 is disabled: shoppers do not see it, nor the exclude flag.
    assert_eq!(guest.as_array().unwrap().len(), 2, "{guest}");
    assert!(guest[0].get("exclude").is_none());
    let admin = stack.admin_json("/products/1/images").await;
    assert_eq!(admin.as_array().unwrap().len(), 3, "{admin}");
    assert!(
        admin[0]["url"]
            .as_str()
            .unwrap()
            .ends_with("/media/catalog/product/m/b/mb01-blue-0.png"),
        "{admin}"
    );

    let french = stack
        .call("GET", "/products/1/images/1/store/2", None, None)
        .await
        .json();
    assert_eq!(french["label"], "Sac Joust - face");
    assert_eq!(
        stack
            .call("GET", "/products/1/images/1", None, None)
            .await
            .json()["label"],
        "Joust Duffle Bag - front"
    );
    assert_eq!(
        stack
            .call("GET", "/products/1/images/store/9", None, None)
            .await
            .status,
        400
    );

    // Create, read, relabel in one store, delete.
    let r = stack
        .admin(
            "POST",
            "/products/6/images",
            Some(json!({"file_mime_type": "image/png", "file_content": PNG})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let location = r.header("location").unwrap().to_owned();
    assert!(
        location.starts_with("/api/rest/products/6/images/"),
        "{location}"
    );
    let path = location.strip_prefix("/api/rest").unwrap().to_owned();
    let image = stack.admin_json(&path).await;
    assert!(image["url"].as_str().unwrap().contains("/image"), "{image}");

    let r = stack
        .admin(
            "PUT",
            &format!("{path}/store/2"),
            Some(json!({"label": "Gourde"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        stack.admin_json(&format!("{path}/store/2")).await["label"],
        "Gourde"
    );
    assert_ne!(stack.admin_json(&path).await["label"], "Gourde");

    assert_eq!(stack.admin("DELETE", &path, None).await.status, 200);
    assert_eq!(stack.admin("GET", &path, None).await.status, 404);

    // Validation before Magento, and a product that holds no images.
    let r = stack
        .admin(
            "POST",
            "/products/6/images",
            Some(json!({"file_mime_type": "image/bmp", "file_content": PNG})),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = stack
        .admin(
            "POST",
            "/products/11/images",
            Some(json!({"file_mime_type": "image/png", "file_content": PNG})),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    r.assert_contains("Requested product does not support images");

    assert_answers_match_schema(&stack.exchanges());
}
