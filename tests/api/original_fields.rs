//! The original's last fields over Magento 2 (issue 36), against the sandbox: in the
//! original profile the Admin's product lists carry `attribute_set_id` (and the meta fields
//! the original's carried), a customer's orders their gift message fields (null when there
//! is none), a category's product list in a store view that view's names for every user
//! type; the spec profile keeps the contract's views.

use serde_json::Value;

use crate::sandboxed::{As, OnSandbox};

async fn original() -> OnSandbox {
    OnSandbox::start_with(|c| {
        c.profile = storegate::context::profile::Profile::Original;
    })
    .await
}

#[tokio::test]
async fn the_admins_product_lists_carry_the_attribute_set() {
    let gw = original().await;
    for path in [
        "/products",
        "/products/store/2",
        "/products/category/4",
        "/products/category/4/store/french",
    ] {
        let r = gw.get(path, As::Admin).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        let list = r.json();
        // 24-MB01 is in the Bag set (15), 24-UG06 in the Default one (4).
        assert_eq!(list["1"]["attribute_set_id"], "15", "{path}: {list}");
        assert_eq!(list["1"]["meta_title"], "Joust Duffle Bag", "{path}");
        for item in list.as_object().unwrap().values() {
            assert!(item["attribute_set_id"].is_string(), "{path}: {item}");
        }
    }
    let list = gw.get("/products", As::Admin).await.json();
    assert_eq!(list["6"]["attribute_set_id"], "4", "{list}");
    // In XML too.
    let xml = gw.get_xml("/products?limit=1", As::Admin).await;
    xml.assert_contains("<attribute_set_id>15</attribute_set_id>");
    // Shoppers' lists do not show it (the original's did not).
    let shopper = gw.get("/products", As::Guest).await.json();
    assert!(shopper["1"].get("attribute_set_id").is_none(), "{shopper}");

    // The contract's Admin list (SPEC 2.2) has no attribute set.
    let spec = OnSandbox::start().await;
    let list = spec.get("/products", As::Admin).await.json();
    assert!(list["1"].get("attribute_set_id").is_none(), "{list}");
}

#[tokio::test]
async fn a_customers_orders_carry_their_gift_message_null_when_there_is_none() {
    let gw = original().await;
    let order = gw.get("/orders/1", As::Customer(1)).await.json();
    assert_eq!(
        (
            &order["gift_message_from"],
            &order["gift_message_to"],
            &order["gift_message_body"]
        ),
        (
            &Value::from("Veronica"),
            &Value::from("Sam"),
            &Value::from("Happy birthday!")
        ),
        "{order}"
    );
    let none = gw.get("/orders/2", As::Customer(1)).await.json();
    for field in ["gift_message_from", "gift_message_to", "gift_message_body"] {
        assert_eq!(none.get(field), Some(&Value::Null), "{field}: {none}");
    }
    let list = gw.get("/orders", As::Customer(1)).await.json();
    assert_eq!(list["1"]["gift_message_body"], "Happy birthday!", "{list}");
    assert_eq!(list["2"].get("gift_message_body"), Some(&Value::Null));
    // XML: the message, and an empty element where there is none.
    let xml = gw.get_xml("/orders/2", As::Customer(1)).await;
    assert!(
        xml.body.contains("<gift_message_body/>")
            || xml.body.contains("<gift_message_body></gift_message_body>"),
        "{}",
        xml.body
    );
    let xml = gw.get_xml("/orders/1", As::Customer(1)).await;
    xml.assert_contains("<gift_message_body>Happy birthday!</gift_message_body>");
    // Another customer's order is not there for them, gift message or not.
    assert_eq!(gw.get("/orders/1", As::Customer(2)).await.status, 404);

    // The contract's customer view of an order (SPEC 2.6) has none.
    let spec = OnSandbox::start().await;
    let order = spec.get("/orders/1", As::Customer(1)).await.json();
    assert!(order.get("gift_message_body").is_none(), "{order}");
}

#[tokio::test]
async fn a_categorys_products_in_a_store_view_have_that_views_names_for_everyone() {
    let gw = original().await;
    for who in [As::Admin, As::Customer(1), As::Guest] {
        for path in [
            "/products/category/4/store/2",
            "/products/category/4/store/french",
            "/products/store/2/category/4",
            "/products/store/french/category/4",
        ] {
            let r = gw.get(path, who).await;
            assert_eq!(r.status, 200, "{path} {who:?}: {}", r.body);
            let list = r.json();
            assert_eq!(list["1"]["name"], "Sac de sport Joust", "{path} {who:?}");
            assert_eq!(
                list["2"]["name"], "Sac à bandoulière Strive",
                "{path} {who:?}"
            );
            // A product without a French name keeps its own.
            assert_eq!(list["5"]["name"], "Rival Field Messenger", "{path} {who:?}");
        }
        let english = gw.get("/products/category/4", who).await.json();
        assert_eq!(english["1"]["name"], "Joust Duffle Bag", "{who:?}");
    }
}

/// The original's store-view update (`PUT /products/:id/store/:store`, found missing by the
/// legacy walk): the Admin writes one store view's values; the default store's stay.
#[tokio::test]
async fn the_admin_updates_a_product_in_a_store_view() {
    let gw = original().await;
    let put = |path: &'static str, who: As, body: &'static str| {
        gw.send(
            gw.request("PUT", path, who, "application/json")
                .header("Content-Type", "application/json")
                .body(body),
        )
    };
    let r = put(
        "/products/1/store/french",
        As::Admin,
        r#"{"name": "Sac Joust (nouveau)"}"#,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    for who in [As::Admin, As::Guest] {
        let french = gw.get("/products/1/store/2", who).await.json();
        assert_eq!(french["name"], "Sac Joust (nouveau)", "{who:?}: {french}");
        let english = gw.get("/products/1", who).await.json();
        assert_eq!(english["name"], "Joust Duffle Bag", "{who:?}");
    }
    // The default store view by id writes its own values.
    let r = put(
        "/products/2/store/1",
        As::Admin,
        r#"{"name": "Strive Pack"}"#,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        gw.get("/products/2/store/default", As::Guest).await.json()["name"],
        "Strive Pack"
    );
    for (path, who, status) in [
        ("/products/1/store/french", As::Customer(1), 403),
        ("/products/1/store/french", As::Guest, 403),
        ("/products/1/store/nowhere", As::Admin, 400),
        ("/products/9999/store/french", As::Admin, 404),
    ] {
        let r = put(path, who, r#"{"name": "x"}"#).await;
        assert_eq!(r.status, status, "{path} {who:?}: {}", r.body);
    }
    let r = put("/products/1/store/french", As::Admin, r#"{"sku": "other"}"#).await;
    assert_eq!(r.status, 400, "{}", r.body);
}
