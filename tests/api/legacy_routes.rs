//! The original's routes beyond the spec (its `api2.xml`), against the sandbox: a product's
//! categories and websites, an order's items, addresses and comments. Shapes, field orders,
//! messages and permissions are the original's as captured from it (OpenMage 19.4); the
//! values are the sandbox's (`fixtures/sandbox/README.md`).

use serde_json::{Value, json};

use crate::helpers::keys;
use crate::sandboxed::{As, OnSandbox};

/// The original's Admin fields of an order line on `/orders/:id/items`, in its order.
const ADMIN_ITEM: &[&str] = &[
    "item_id",
    "parent_item_id",
    "created_at",
    "updated_at",
    "sku",
    "name",
    "qty_canceled",
    "qty_invoiced",
    "qty_ordered",
    "qty_refunded",
    "qty_shipped",
    "price",
    "base_price",
    "original_price",
    "base_original_price",
    "tax_percent",
    "tax_amount",
    "base_tax_amount",
    "discount_amount",
    "base_discount_amount",
    "row_total",
    "base_row_total",
    "price_incl_tax",
    "base_price_incl_tax",
    "row_total_incl_tax",
    "base_row_total_incl_tax",
];

/// A customer's.
const CUSTOMER_ITEM: &[&str] = &[
    "item_id",
    "parent_item_id",
    "sku",
    "name",
    "qty_canceled",
    "qty_invoiced",
    "qty_ordered",
    "qty_refunded",
    "qty_shipped",
    "price",
    "row_total",
    "price_incl_tax",
    "row_total_incl_tax",
];

/// An order address on `/orders/:id/addresses`, every user type.
const ORDER_ADDRESS: &[&str] = &[
    "region",
    "postcode",
    "lastname",
    "street",
    "city",
    "email",
    "telephone",
    "country_id",
    "firstname",
    "address_type",
    "prefix",
    "middlename",
    "suffix",
    "company",
];

fn xml_items(body: &str) -> usize {
    body.matches("<data_item>").count()
}

#[tokio::test]
async fn order_items_in_the_originals_shape_for_each_user_type() {
    let gw = OnSandbox::start().await;
    let admin = gw.get("/orders/1/items", As::Admin).await;
    assert_eq!(admin.status, 200, "{}", admin.body);
    assert!(admin.header("cache-control").unwrap().contains("no-store"));
    let lines = admin.json();
    let lines = lines.as_array().expect("an array, as the original");
    assert_eq!(
        lines.len(),
        3,
        "the parent line, its child and the simple line"
    );
    for line in lines {
        assert_eq!(keys(line), ADMIN_ITEM);
    }
    assert_eq!(lines[0]["item_id"], "1");
    assert_eq!(lines[0]["sku"], "MH01-M-Black");
    assert_eq!(lines[0]["parent_item_id"], Value::Null);
    assert_eq!(lines[1]["parent_item_id"], "1");
    assert_eq!(lines[0]["price"], "52.0000");
    assert_eq!(lines[2]["sku"], "24-MB01");

    let own = gw.get("/orders/1/items", As::Customer(1)).await;
    assert_eq!(own.status, 200, "{}", own.body);
    for line in own.json().as_array().unwrap() {
        assert_eq!(keys(line), CUSTOMER_ITEM);
    }
    let xml = gw.get_xml("/orders/1/items", As::Customer(1)).await;
    assert_eq!(xml.status, 200);
    xml.assert_contains("<service_api>");
    assert_eq!(xml_items(&xml.body), 3);
    assert!(
        xml.body.contains("<parent_item_id></parent_item_id>")
            || xml.body.contains("<parent_item_id/>")
    );

    // Another customer's order is one that does not exist; guests have no privilege.
    for (path, who, status, message) in [
        (
            "/orders/1/items",
            As::Customer(2),
            404,
            "Resource not found.",
        ),
        (
            "/orders/9999/items",
            As::Customer(1),
            404,
            "Resource not found.",
        ),
        ("/orders/9999/items", As::Admin, 404, "Resource not found."),
        ("/orders/1/items", As::Guest, 403, "Access denied"),
        ("/orders/9999/items", As::Guest, 403, "Access denied"),
    ] {
        let r = gw.get(path, who).await;
        assert_eq!(r.status, status, "{path} {who:?}: {}", r.body);
        assert_eq!(r.messages(), vec![message]);
        let r = gw.get_xml(path, who).await;
        assert_eq!(r.status, status);
        r.assert_contains(&format!("<message>{message}</message>"));
    }
    // Read-only, like the order.
    let r = gw
        .send_json("POST", "/orders/1/items", As::Admin, &json!({"sku": "x"}))
        .await;
    assert_eq!(r.status, 405);
    assert_eq!(r.messages(), vec!["Resource method not implemented yet."]);
}

#[tokio::test]
async fn order_addresses_and_one_by_type() {
    let gw = OnSandbox::start().await;
    for who in [As::Admin, As::Customer(1)] {
        let r = gw.get("/orders/1/addresses", who).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let list = r.json();
        let list = list.as_array().unwrap();
        assert_eq!(list.len(), 2);
        for address in list {
            assert_eq!(keys(address), ORDER_ADDRESS);
        }
        assert_eq!(list[0]["address_type"], "billing");
        assert_eq!(list[1]["address_type"], "shipping");
        let billing = gw.get("/orders/1/addresses/billing", who).await;
        assert_eq!(billing.status, 200);
        assert_eq!(billing.json(), list[0]);
        let xml = gw.get_xml("/orders/1/addresses/shipping", who).await;
        assert_eq!(xml.status, 200);
        xml.assert_contains("<address_type>shipping</address_type>");
        assert_eq!(xml_items(&xml.body), 0, "one record, not a list");
    }
    // A virtual order has a billing address only.
    let virtual_order = gw.get("/orders/2/addresses", As::Customer(1)).await;
    assert_eq!(virtual_order.json().as_array().unwrap().len(), 1);
    for (path, who, status) in [
        ("/orders/2/addresses/shipping", As::Customer(1), 404),
        ("/orders/1/addresses/home", As::Admin, 404),
        ("/orders/1/addresses", As::Customer(2), 404),
        ("/orders/1/addresses/billing", As::Customer(2), 404),
        ("/orders/9999/addresses", As::Admin, 404),
        ("/orders/1/addresses", As::Guest, 403),
        ("/orders/1/addresses/billing", As::Guest, 403),
    ] {
        let r = gw.get(path, who).await;
        assert_eq!(r.status, status, "{path} {who:?}: {}", r.body);
    }
}

#[tokio::test]
async fn order_comments_show_a_customer_only_the_storefront_ones() {
    let gw = OnSandbox::start().await;
    let admin = gw.get("/orders/1/comments", As::Admin).await;
    assert_eq!(admin.status, 200, "{}", admin.body);
    let all = admin.json();
    let all = all.as_array().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(
        keys(&all[0]),
        [
            "created_at",
            "comment",
            "is_customer_notified",
            "is_visible_on_front",
            "status"
        ]
    );
    // Oldest first, as the original's collection.
    assert_eq!(all[0]["created_at"], "2024-02-28 10:05:00");
    assert_eq!(all[1]["comment"], "Your order has shipped.");
    assert_eq!(all[1]["is_visible_on_front"], "0");

    let own = gw.get("/orders/1/comments", As::Customer(1)).await;
    assert_eq!(own.status, 200);
    let own = own.json();
    assert_eq!(
        own,
        json!([{"created_at": "2024-02-28 10:05:00", "comment": "Thank you for your order. It ships within two days."}])
    );
    // An order with no comments: an empty list, in XML an empty root.
    let none = gw.get_xml("/orders/2/comments", As::Customer(1)).await;
    assert_eq!(none.status, 200);
    assert_eq!(xml_items(&none.body), 0, "{}", none.body);
    assert_eq!(
        gw.get("/orders/2/comments", As::Customer(1)).await.json(),
        json!([])
    );

    for (who, status) in [(As::Customer(2), 404), (As::Guest, 403)] {
        let r = gw.get("/orders/1/comments", who).await;
        assert_eq!(r.status, status, "{who:?}: {}", r.body);
    }
}

#[tokio::test]
async fn admin_adds_a_comment_and_reads_it_by_id() {
    let gw = OnSandbox::start().await;
    let body = json!({"comment": "Called the customer about the delivery.", "is_visible_on_front": 1, "is_customer_notified": "0"});
    for who in [As::Customer(1), As::Guest] {
        let r = gw.send_json("POST", "/orders/2/comments", who, &body).await;
        assert_eq!(r.status, 403, "{who:?}: {}", r.body);
    }
    let created = gw
        .send_json("POST", "/orders/2/comments", As::Admin, &body)
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    assert_eq!(created.body, "");
    let location = created.header("location").unwrap().to_owned();
    assert_eq!(location, "/api/rest/orders/comments/5");

    let one = gw.get("/orders/comments/5", As::Admin).await;
    assert_eq!(one.status, 200, "{}", one.body);
    let one = one.json();
    assert_eq!(one["comment"], "Called the customer about the delivery.");
    assert_eq!(one["is_visible_on_front"], "1");
    assert_eq!(one["is_customer_notified"], "0");
    assert_eq!(one["status"], "pending", "no status sent: the order's own");
    // Shown on the storefront: the order's customer sees it.
    let theirs = gw.get("/orders/2/comments", As::Customer(1)).await.json();
    assert_eq!(
        theirs[0]["comment"],
        "Called the customer about the delivery."
    );

    // The original had no customer handler for one comment; unknown ids are not found.
    let r = gw.get("/orders/comments/5", As::Customer(1)).await;
    assert_eq!(r.status, 405);
    assert_eq!(r.messages(), vec!["Resource method not implemented yet."]);
    assert_eq!(gw.get("/orders/comments/5", As::Guest).await.status, 403);
    assert_eq!(gw.get("/orders/comments/77", As::Admin).await.status, 404);

    // In XML too, and bad values are the original's 400s.
    let xml = gw
        .send(
            gw.request("POST", "/orders/1/comments", As::Admin, "application/xml")
                .header("Content-Type", "application/xml")
                .body("<magento_api><comment>Packed.</comment><status>complete</status></magento_api>"),
        )
        .await;
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert_eq!(xml.header("location"), Some("/api/rest/orders/comments/6"));
    let bad = gw
        .send_json(
            "POST",
            "/orders/1/comments",
            As::Admin,
            &json!({"is_visible_on_front": "often"}),
        )
        .await;
    assert_eq!(bad.status, 400);
    assert_eq!(
        bad.messages(),
        vec![
            "Invalid value for \"is_visible_on_front\" in request.",
            "Resource data pre-validation error."
        ]
    );
    let empty = gw
        .send_json(
            "POST",
            "/orders/1/comments",
            As::Admin,
            &json!({"unknown": 1}),
        )
        .await;
    assert_eq!(empty.status, 400);
    assert_eq!(empty.messages(), vec!["The request data is invalid."]);
    let missing = gw
        .send_json("POST", "/orders/9999/comments", As::Admin, &body)
        .await;
    assert_eq!(missing.status, 404);
}

#[tokio::test]
async fn product_categories_are_read_by_everyone_and_written_by_the_admin() {
    let gw = OnSandbox::start().await;
    for who in [As::Admin, As::Customer(1), As::Guest] {
        let r = gw.get("/products/1/categories", who).await;
        assert_eq!(r.status, 200, "{who:?}: {}", r.body);
        assert_eq!(
            r.json(),
            json!([{"category_id": "3"}, {"category_id": "4"}])
        );
        let xml = gw.get_xml("/products/1/categories", who).await;
        assert!(
            xml.body
                .contains("<data_item><category_id>3</category_id></data_item>")
                || xml_items(&xml.body) == 2,
            "{}",
            xml.body
        );
    }
    assert_eq!(
        gw.get("/products/9999/categories", As::Guest).await.status,
        404
    );

    // Writes: Admin only.
    let assign = |category: Value| json!({ "category_id": category });
    for who in [As::Customer(1), As::Guest] {
        let r = gw
            .send_json("POST", "/products/1/categories", who, &assign(json!(8)))
            .await;
        assert_eq!(r.status, 403, "{}", r.body);
        assert_eq!(r.messages(), vec!["Access denied"]);
    }
    for (category, status, messages) in [
        (
            json!(4),
            400,
            vec!["Product #1 is already assigned to category #4"],
        ),
        (json!(999), 404, vec!["Category not found"]),
        (
            json!(1),
            400,
            vec!["Cannot assign product to tree root category."],
        ),
        (
            json!("abc"),
            400,
            vec![
                "category_id: Please use numbers only in \"category_id\" field.",
                "Resource data pre-validation error.",
            ],
        ),
    ] {
        let r = gw
            .send_json(
                "POST",
                "/products/1/categories",
                As::Admin,
                &assign(category.clone()),
            )
            .await;
        assert_eq!(r.status, status, "{category}: {}", r.body);
        assert_eq!(r.messages(), messages, "{category}");
    }

    // The guest's cached list of category 4 shows product 1 until the Admin removes it.
    let before = gw.get("/products/category/4", As::Guest).await;
    let lists_product_1 = |body: &str| body.contains("\"entity_id\":\"1\"");
    assert!(lists_product_1(&before.body), "{}", before.body);
    let removed = gw
        .send(gw.request(
            "DELETE",
            "/products/1/categories/4",
            As::Admin,
            "application/json",
        ))
        .await;
    assert_eq!(removed.status, 200, "{}", removed.body);
    let after = gw.get("/products/category/4", As::Guest).await;
    assert!(!lists_product_1(&after.body), "{}", after.body);
    assert_eq!(
        gw.get("/products/1/categories", As::Guest).await.json(),
        json!([{"category_id": "3"}])
    );
    let again = gw
        .send(gw.request(
            "DELETE",
            "/products/1/categories/4",
            As::Admin,
            "application/json",
        ))
        .await;
    assert_eq!(again.status, 400);
    assert_eq!(
        again.messages(),
        vec!["Product #1 isn't assigned to category #4"]
    );

    // Assigned to the inactive category 8, in XML: the Admin sees it, shoppers do not.
    let xml = gw
        .send(
            gw.request(
                "POST",
                "/products/1/categories",
                As::Admin,
                "application/xml",
            )
            .header("Content-Type", "application/xml")
            .body("<?xml version=\"1.0\"?><magento_api><category_id>8</category_id></magento_api>"),
        )
        .await;
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert_eq!(
        xml.header("location"),
        Some("/api/rest/products/1/categories/8")
    );
    assert_eq!(
        gw.get("/products/1/categories", As::Admin).await.json(),
        json!([{"category_id": "3"}, {"category_id": "8"}])
    );
    assert_eq!(
        gw.get("/products/1/categories", As::Customer(1))
            .await
            .json(),
        json!([{"category_id": "3"}])
    );
    // One assignment has no GET; the collection no PUT.
    let r = gw.get("/products/1/categories/8", As::Admin).await;
    assert_eq!(r.status, 405);
    let r = gw.get("/products/1/categories/8", As::Guest).await;
    assert_eq!(
        r.status, 405,
        "guests may read categories: the method is what is missing"
    );
    let r = gw
        .send(gw.request(
            "DELETE",
            "/products/1/categories/8",
            As::Guest,
            "application/json",
        ))
        .await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn product_websites_are_the_admins() {
    let gw = OnSandbox::start().await;
    for who in [As::Customer(1), As::Guest] {
        let r = gw.get("/products/1/websites", who).await;
        assert_eq!(r.status, 403, "{who:?}: {}", r.body);
        assert_eq!(r.messages(), vec!["Access denied"]);
        let xml = gw.get_xml("/products/1/websites", who).await;
        assert!(xml.body.contains("<message>Access denied</message>"));
    }
    let r = gw.get("/products/2/websites", As::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json(), json!([{"website_id": "1"}]));
    let xml = gw.get_xml("/products/2/websites", As::Admin).await;
    xml.assert_contains("<website_id>1</website_id>");

    let site = |id: Value| json!({ "website_id": id });
    let already = gw
        .send_json("POST", "/products/2/websites", As::Admin, &site(json!(1)))
        .await;
    assert_eq!(already.status, 400);
    assert_eq!(
        already.messages(),
        vec![
            "Product #2 is already assigned to website #1",
            "Resource data pre-validation error."
        ]
    );
    let removed = gw
        .send(gw.request(
            "DELETE",
            "/products/2/websites/1",
            As::Admin,
            "application/json",
        ))
        .await;
    assert_eq!(removed.status, 200, "{}", removed.body);
    assert_eq!(
        gw.get("/products/2/websites", As::Admin).await.json(),
        json!([])
    );
    let not_in = gw
        .send(gw.request(
            "DELETE",
            "/products/2/websites/1",
            As::Admin,
            "application/json",
        ))
        .await;
    assert_eq!(
        not_in.messages()[0],
        "Product #2 isn't assigned to website #1"
    );

    let added = gw
        .send_json("POST", "/products/2/websites", As::Admin, &site(json!("1")))
        .await;
    assert_eq!(added.status, 200, "{}", added.body);
    assert_eq!(
        added.header("location"),
        Some("/api/rest/products/2/websites/1")
    );
    assert_eq!(
        gw.get("/products/2/websites", As::Admin).await.json(),
        json!([{"website_id": "1"}])
    );

    for (body, status, first) in [
        (site(json!(7)), 400, "Website #7 not found."),
        (
            site(json!("x")),
            400,
            "Invalid value for \"website_id\" in request.",
        ),
        (
            json!({"name": "y"}),
            400,
            "Invalid value for \"website_id\" in request.",
        ),
    ] {
        let r = gw
            .send_json("POST", "/products/3/websites", As::Admin, &body)
            .await;
        assert_eq!(r.status, status, "{body}: {}", r.body);
        assert_eq!(r.messages()[0], first);
    }
    let r = gw.get("/products/9999/websites", As::Admin).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.messages(), vec!["Product #9999 not found."]);
    let r = gw
        .send(gw.request(
            "DELETE",
            "/products/2/websites/9",
            As::Admin,
            "application/json",
        ))
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.messages(), vec!["Website #9 not found."]);
    let r = gw.get("/products/2/websites/1", As::Admin).await;
    assert_eq!(r.status, 405);
    assert_eq!(r.messages(), vec!["Resource does not support method."]);
}

#[tokio::test]
async fn the_original_profile_answers_the_extra_routes_in_its_own_xml() {
    let gw = OnSandbox::start_with(|c| {
        c.profile = storegate::context::profile::Profile::Original;
    })
    .await;
    let r = gw.get_xml("/orders/1/items", As::Admin).await;
    assert_eq!(r.status, 200);
    r.assert_contains("<magento_api>");
    assert_eq!(xml_items(&r.body), 3);
    let r = gw.get_xml("/products/1/categories", As::Guest).await;
    assert!(r.body.contains("<magento_api>"));
    assert_eq!(xml_items(&r.body), 2);
    // No comments: the original's empty document.
    let r = gw.get_xml("/orders/2/comments", As::Customer(1)).await;
    assert_eq!(r.status, 200);
    r.assert_contains("<magento_api/>");
    assert_eq!(
        gw.get("/orders/2/comments", As::Customer(1)).await.body,
        "[]"
    );
}

/// Item 4 of issue 22: what the original's answers had besides, in its profile.
#[tokio::test]
async fn the_original_profile_shows_what_the_original_showed() {
    let gw = OnSandbox::start_with(|c| {
        c.profile = storegate::context::profile::Profile::Original;
    })
    .await;
    // A category's products in a store view carry that store view's names.
    let r = gw.get("/products/category/4/store/french", As::Guest).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let list = r.json();
    assert_eq!(list["1"]["name"], "Sac de sport Joust", "{}", r.body);
    for (path, who) in [
        ("/products/category/4/store/french", As::Admin),
        ("/products/store/french/category/4", As::Customer(1)),
        ("/products/store/2/category/4", As::Guest),
    ] {
        let r = gw.get(path, who).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert_eq!(
            r.json()["1"]["name"],
            "Sac de sport Joust",
            "{path} {who:?}"
        );
    }
    let r = gw.get("/products/category/4", As::Guest).await;
    assert_eq!(r.json()["1"]["name"], "Joust Duffle Bag");

    // The Admin's product views show options_container and short_description.
    let one = gw.get("/products/1", As::Admin).await.json();
    assert_eq!(
        one["short_description"],
        "<p>Sporty duffle with a padded shoulder strap.</p>"
    );
    assert!(one.get("options_container").is_some(), "{one}");
    let list = gw.get("/products?limit=2", As::Admin).await.json();
    assert!(list["1"].get("short_description").is_some(), "{list}");
    assert!(list["1"].get("options_container").is_some(), "{list}");

    // The customer list is an object keyed by id; in XML the same <data_item>s.
    let customers = gw.get("/customers", As::Admin).await.json();
    assert_eq!(
        customers["1"]["email"], "roni_cost@example.com",
        "{customers}"
    );
    assert!(customers.is_object());
    let own = gw.get("/customers", As::Customer(2)).await.json();
    assert_eq!(own.as_object().unwrap().keys().collect::<Vec<_>>(), ["2"]);
    let xml = gw.get_xml("/customers", As::Customer(2)).await;
    assert_eq!(xml_items(&xml.body), 1, "{}", xml.body);

    // Orders: the Admin sees the gift message and the comments, oldest first.
    let order = gw.get("/orders/1", As::Admin).await.json();
    assert_eq!(order["gift_message_from"], "Veronica");
    assert_eq!(order["gift_message_to"], "Sam");
    assert_eq!(order["gift_message_body"], "Happy birthday!");
    let comments = order["order_comments"].as_array().unwrap();
    assert_eq!(comments.len(), 2);
    assert_eq!(comments[1]["comment"], "Your order has shipped.");
    assert_eq!(
        keys(&comments[0]),
        [
            "created_at",
            "comment",
            "is_customer_notified",
            "is_visible_on_front",
            "status"
        ]
    );
    let listed = gw.get("/orders", As::Admin).await.json();
    assert_eq!(listed["1"]["gift_message_body"], "Happy birthday!");
    assert_eq!(listed["2"]["gift_message_body"], Value::Null);
    // A customer: base currency, base grand total and the update date.
    let theirs = gw.get("/orders/1", As::Customer(1)).await.json();
    assert_eq!(theirs["base_currency_code"], "USD");
    assert_eq!(theirs["base_grand_total"], "103.1000");
    assert!(theirs["updated_at"].is_string(), "{theirs}");
    assert!(theirs.get("order_comments").is_none());
    // Addresses have the original's date fields (empty: Magento 2 keeps none it shows).
    let addresses = gw
        .get("/customers/1/addresses", As::Customer(1))
        .await
        .json();
    let first = &addresses[0];
    assert!(
        first.get("created_at").is_some() && first.get("updated_at").is_some(),
        "{first}"
    );
}

/// The default profile keeps the contract's shapes for the same reads.
#[tokio::test]
async fn the_default_profile_keeps_the_contracts_shapes() {
    let gw = OnSandbox::start().await;
    assert!(gw.get("/customers", As::Admin).await.json().is_array());
    let order = gw.get("/orders/1", As::Admin).await.json();
    assert!(order.get("gift_message_from").is_none());
    assert!(order.get("order_comments").is_none());
    let one = gw.get("/products/1", As::Admin).await.json();
    assert!(one.get("options_container").is_none());
}

/// Every route of the original's `api2.xml` (OpenMage 19.4) is served: none is the unknown
/// route's 404, for the Admin, who may try them all.
#[tokio::test]
async fn every_route_of_the_originals_api2_xml_is_served() {
    let gw = OnSandbox::start().await;
    for path in [
        "/products",
        "/products/1",
        "/products/1/store/2",
        "/products/store/2",
        "/products/category/3",
        "/products/category/3/store/2",
        "/products/store/2/category/3",
        "/products/1/categories",
        "/products/1/categories/3",
        "/products/1/websites",
        "/products/1/websites/1",
        "/products/1/images",
        "/products/1/images/1",
        "/products/1/images/store/2",
        "/products/1/images/1/store/2",
        "/stockitems",
        "/stockitems/1001",
        "/customers",
        "/customers/1",
        "/customers/1/addresses",
        "/customers/addresses/1",
        "/orders",
        "/orders/1",
        "/orders/1/items",
        "/orders/1/addresses",
        "/orders/1/addresses/billing",
        "/orders/1/comments",
        "/orders/comments/1",
    ] {
        let r = gw.get(path, As::Admin).await;
        let unknown =
            r.status == 404 && r.messages() == vec!["Request does not match any route.".to_owned()];
        assert!(!unknown, "{path} is not served");
        assert!(r.status < 500, "{path}: {} {}", r.status, r.body);
    }
}
