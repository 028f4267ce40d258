//! A product's category and website links and an order's comments over HTTP, as Magento's
//! link repositories and order management answer them.

mod common;

use common::*;
use serde_json::json;

const PRODUCT_MISSING: &str =
    "The product that was requested doesn't exist. Verify the product and try again.";

fn categories_of(product: &serde_json::Value) -> Vec<String> {
    product["extension_attributes"]["category_links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["category_id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn category_links_are_upserted_and_removed() {
    let h = Harness::start().await;
    let link = json!({"productLink": {"sku": "24-MB04", "position": 3, "category_id": "5"}});
    let r = h
        .admin("POST", "/rest/all/V1/categories/5/products", Some(&link))
        .await;
    assert_eq!((r.status, r.body.clone()), (200, json!(true)));
    let product = h.get("/rest/V1/products/24-MB04").await.body;
    assert_eq!(categories_of(&product), ["4", "5"]);
    // Again: an upsert (the position changes), no error.
    let moved = json!({"productLink": {"sku": "24-MB04", "position": 9}});
    let r = h
        .admin("POST", "/rest/all/V1/categories/5/products", Some(&moved))
        .await;
    assert_eq!(r.status, 200);
    let listed = h.get("/rest/V1/categories/5/products").await.body;
    let entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["sku"] == "24-MB04")
        .unwrap()
        .clone();
    assert_eq!(entry["position"], 9);

    let r = h
        .admin("DELETE", "/rest/all/V1/categories/5/products/24-MB04", None)
        .await;
    assert_eq!((r.status, r.body.clone()), (200, json!(true)));
    let r = h
        .admin("DELETE", "/rest/all/V1/categories/5/products/24-MB04", None)
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body["message"],
        "The category doesn't contain the specified product."
    );

    for (path, body, status, message) in [
        (
            "/rest/all/V1/categories/99/products",
            &link,
            404,
            "No such entity with %fieldName = %fieldValue",
        ),
        (
            "/rest/all/V1/categories/5/products",
            &json!({"productLink": {"sku": "NOPE"}}),
            404,
            PRODUCT_MISSING,
        ),
        (
            "/rest/all/V1/categories/5/products",
            &json!({"other": 1}),
            400,
            "\"%fieldName\" is required. Enter and try again.",
        ),
    ] {
        let r = h.admin("POST", path, Some(body)).await;
        assert_eq!(r.status, status, "{path} {body}: {}", r.body);
        assert_eq!(r.body["message"], message);
    }
    // An integration token is needed.
    let r = h
        .send(
            "POST",
            "/rest/all/V1/categories/5/products",
            Some(&link),
            None,
        )
        .await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn website_links_are_added_and_removed() {
    let h = Harness::start().await;
    let r = h
        .admin("DELETE", "/rest/all/V1/products/24-MB04/websites/1", None)
        .await;
    assert_eq!((r.status, r.body.clone()), (200, json!(true)));
    let product = h.get("/rest/V1/products/24-MB04").await.body;
    assert_eq!(product["extension_attributes"]["website_ids"], json!([]));
    let link = json!({"productWebsiteLink": {"sku": "24-MB04", "website_id": 1}});
    let r = h
        .admin(
            "POST",
            "/rest/all/V1/products/24-MB04/websites",
            Some(&link),
        )
        .await;
    assert_eq!((r.status, r.body.clone()), (200, json!(true)));
    let product = h.get("/rest/V1/products/24-MB04").await.body;
    assert_eq!(product["extension_attributes"]["website_ids"], json!([1]));
    let unknown = json!({"productWebsiteLink": {"sku": "24-MB04", "website_id": 7}});
    let r = h
        .admin(
            "POST",
            "/rest/all/V1/products/24-MB04/websites",
            Some(&unknown),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body["message"],
        "Could not assign product \"%1\" to websites %2"
    );
    assert_eq!(r.body["parameters"], json!(["24-MB04", "7"]));
    let r = h
        .admin("DELETE", "/rest/all/V1/products/NOPE/websites/1", None)
        .await;
    assert_eq!(
        (r.status, r.body["message"].clone()),
        (404, json!(PRODUCT_MISSING))
    );
}

#[tokio::test]
async fn order_comments_are_listed_and_added() {
    let h = Harness::start().await;
    let r = h.get("/rest/V1/orders/1/comments").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["total_count"], 2);
    assert_eq!(
        h.get("/rest/V1/orders/2/comments").await.body["items"],
        json!([])
    );

    let entry = json!({"statusHistory": {"comment": "Called the customer.", "is_customer_notified": 0, "is_visible_on_front": 1, "parent_id": 2}});
    let r = h
        .admin("POST", "/rest/V1/orders/2/comments", Some(&entry))
        .await;
    assert_eq!((r.status, r.body.clone()), (200, json!(true)));
    let order = h.get("/rest/V1/orders/2").await.body;
    let added = &order["status_histories"][0];
    assert_eq!(added["comment"], "Called the customer.");
    assert_eq!(added["entity_id"], 5, "after the highest id of every order");
    assert_eq!(
        added["status"], order["status"],
        "no status given: the order's"
    );
    assert_eq!(added["parent_id"], 2);

    let with_status = json!({"statusHistory": {"comment": "Done.", "status": "complete"}});
    h.admin("POST", "/rest/V1/orders/2/comments", Some(&with_status))
        .await;
    assert_eq!(h.get("/rest/V1/orders/2").await.body["status"], "complete");

    let r = h
        .admin("POST", "/rest/V1/orders/99/comments", Some(&entry))
        .await;
    assert_eq!(r.status, 404);
    let r = h
        .admin("POST", "/rest/V1/orders/2/comments", Some(&json!({"x": 1})))
        .await;
    assert_eq!(r.status, 400);
}
