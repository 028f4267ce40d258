//! Writes through the gateway to the OpenMage store, each read back at once through the
//! gateway: a product renamed (a shopper's cached read of it is not served stale), a stock
//! item's quantity, a customer's own address created, changed and deleted (another customer's
//! is not there for them), an order comment added and read by its id.
//!
//! Recorded from the seeded store (reset it before recording, and after: these change it).

use super::*;
use serde_json::json;

/// `verb /api/rest{path}` as `who` with a JSON body.
async fn send(stack: &Stack, who: Who, verb: &str, path: &str, body: Option<Value>) -> Reply {
    stack.send(who, verb, path, body).await
}

/// The path of a create's `Location` under `/api/rest`.
fn created(reply: &Reply) -> String {
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply
        .header("location")
        .unwrap_or_else(|| panic!("no Location: {}", reply.body))
        .trim_start_matches("/api/rest")
        .to_owned()
}

#[tokio::test]
async fn writes_are_read_back_fresh() {
    let stack = Stack::start("writes").await;

    // A shopper's read fills the cache; the Admin's rename reaches the shopper at once.
    let before = stack.get(Who::Guest, "/products/1").await.json();
    assert_eq!(before["name"], "Test Product One");
    let renamed = send(
        &stack,
        Who::Admin,
        "PUT",
        "/products/1",
        Some(json!({"name": "Renamed through the gateway"})),
    )
    .await;
    assert_eq!(renamed.status, 200, "{}", renamed.body);
    for who in [Who::Guest, Who::Admin] {
        let after = stack.get(who, "/products/1").await.json();
        assert_eq!(
            after["name"], "Renamed through the gateway",
            "{who:?}: {after}"
        );
    }

    // A stock item's quantity.
    let stock = send(
        &stack,
        Who::Admin,
        "PUT",
        "/stockitems/1",
        Some(json!({"qty": 7})),
    )
    .await;
    assert_eq!(stock.status, 200, "{}", stock.body);
    let item = stack.get(Who::Admin, "/stockitems/1").await.json();
    assert_eq!(item["qty"], "7.0000", "{item}");

    // A customer's own address: created, changed, deleted.
    let address = json!({"firstname": "John", "lastname": "Doe", "street": ["Elm St 9"],
        "city": "Dallas", "country_id": "US", "region": "Texas", "postcode": "75201",
        "telephone": "555-0199"});
    let made = send(
        &stack,
        Who::Customer,
        "POST",
        "/customers/1/addresses",
        Some(address),
    )
    .await;
    let path = created(&made);
    let read = stack.get(Who::Customer, &path).await.json();
    assert_eq!(
        (read["city"].as_str(), read["region"].as_str()),
        (Some("Dallas"), Some("Texas"))
    );
    let moved = send(
        &stack,
        Who::Customer,
        "PUT",
        &path,
        Some(json!({"city": "Austin"})),
    )
    .await;
    assert_eq!(moved.status, 200, "{}", moved.body);
    assert_eq!(
        stack.get(Who::Customer, &path).await.json()["city"],
        "Austin"
    );
    // The store's own refusal, in its words: a country it does not know.
    let wrong = send(
        &stack,
        Who::Customer,
        "PUT",
        &path,
        Some(json!({"country_id": "ZZ"})),
    )
    .await;
    assert_eq!(wrong.status, 400, "{}", wrong.body);
    // Jane's address is not there for John.
    let janes = send(
        &stack,
        Who::Customer,
        "PUT",
        "/customers/addresses/3",
        Some(json!({"city": "X"})),
    )
    .await;
    assert_eq!(janes.status, 404, "{}", janes.body);
    let gone = send(&stack, Who::Customer, "DELETE", &path, None).await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    assert_eq!(stack.get(Who::Customer, &path).await.status, 404);
    // A default address stays: the store's refusal.
    let default = send(
        &stack,
        Who::Customer,
        "DELETE",
        "/customers/addresses/1",
        None,
    )
    .await;
    assert_eq!(default.status, 400, "{}", default.body);
    assert_eq!(
        default.message(),
        "Address is default for customer so is not allowed to be deleted"
    );

    // An order comment, read back by its id.
    let comment = send(
        &stack,
        Who::Admin,
        "POST",
        "/orders/1/comments",
        Some(
            json!({"comment": "Shipped today", "is_customer_notified": 0, "is_visible_on_front": 1,
            "status": "pending"}),
        ),
    )
    .await;
    let path = created(&comment);
    let read = stack.get(Who::Admin, &path).await.json();
    assert_eq!(read["comment"], "Shipped today", "{read}");
    stack.stop().await;
}

/// A 64x64 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAEAAAABACAIAAAAlC+aJAAAAb0lEQVR4nO3PAQkAAAyEwO9feoshgnABdLep8QUNyPEFDcjxBQ3I8QUNyPEFDcjxBQ3I8QUNyPEFDcjxBQ3I8QUNyPEFDcjxBQ3I8QUNyPEFDcjxBQ3I8QUNyPEFDcjxBQ3I8QUNyPEFDcjxBQ3IPanc8OLDQitxAAAAAElFTkSuQmCC";

#[tokio::test]
async fn catalog_and_customer_writes_reach_the_store() {
    let stack = Stack::start("catalog-writes").await;

    // A product created, shown to shoppers, deleted.
    let product = json!({"type_id": "simple", "attribute_set_id": 4, "sku": "GW-NEW-1",
        "name": "Made through the gateway", "price": 12.5, "weight": 1, "status": 1,
        "visibility": 4, "tax_class_id": 2, "description": "d", "short_description": "s",
        "stock_data": {"qty": 10, "is_in_stock": 1, "manage_stock": 1, "use_config_manage_stock": 0}});
    let made = send(&stack, Who::Admin, "POST", "/products", Some(product)).await;
    let path = created(&made);
    let admin = stack.get(Who::Admin, &path).await.json();
    assert_eq!(
        (admin["sku"].as_str(), admin["price"].as_str()),
        (Some("GW-NEW-1"), Some("12.5000"))
    );
    let guest = stack.get(Who::Guest, &path).await;
    assert_eq!(guest.status, 200, "{}", guest.body);
    assert_eq!(guest.json()["final_price_with_tax"], 12.5);

    // An image added to it, relabelled, removed.
    let image = json!({"file_mime_type": "image/png", "file_content": PNG, "file_name": "red",
        "label": "Red", "types": ["image"]});
    let added = send(
        &stack,
        Who::Admin,
        "POST",
        &format!("{path}/images"),
        Some(image),
    )
    .await;
    let image_path = created(&added);
    let read = stack.get(Who::Admin, &image_path).await.json();
    assert_eq!(
        (read["label"].as_str(), read["types"][0].as_str()),
        (Some("Red"), Some("image"))
    );
    let relabelled = send(
        &stack,
        Who::Admin,
        "PUT",
        &image_path,
        Some(json!({"label": "Crimson"})),
    )
    .await;
    assert_eq!(relabelled.status, 200, "{}", relabelled.body);
    assert_eq!(
        stack.get(Who::Admin, &image_path).await.json()["label"],
        "Crimson"
    );
    let removed = send(&stack, Who::Admin, "DELETE", &image_path, None).await;
    assert_eq!(removed.status, 200, "{}", removed.body);
    assert_eq!(stack.get(Who::Admin, &image_path).await.status, 404);

    let deleted = send(&stack, Who::Admin, "DELETE", &path, None).await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert_eq!(stack.get(Who::Admin, &path).await.status, 404);
    assert_eq!(stack.get(Who::Guest, &path).await.status, 404);

    // A customer created and deleted by the Admin.
    let customer = json!({"firstname": "Ann", "lastname": "Lee", "email": "ann@example.com",
        "password": "Password123", "website_id": 1, "group_id": 1});
    let made = send(&stack, Who::Admin, "POST", "/customers", Some(customer)).await;
    let customer_path = created(&made);
    let read = stack.get(Who::Admin, &customer_path).await.json();
    assert_eq!(read["email"], "ann@example.com", "{read}");
    let gone = send(&stack, Who::Admin, "DELETE", &customer_path, None).await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    assert_eq!(stack.get(Who::Admin, &customer_path).await.status, 404);
    stack.stop().await;
}

#[tokio::test]
async fn links_stock_lists_and_customers_are_written() {
    let stack = Stack::start("link-writes").await;

    // A product put in a category and taken out again (the original's routes beyond the
    // contract), read back each time.

    let before = categories_of(&stack).await;
    assert!(
        !before.to_string().contains("\"2\""),
        "product 5 starts outside category 2: {before}"
    );
    let put = send(
        &stack,
        Who::Admin,
        "POST",
        "/products/5/categories",
        Some(json!({"category_id": 2})),
    )
    .await;
    assert_eq!(put.status, 200, "{}", put.body);
    assert!(categories_of(&stack).await.to_string().contains("\"2\""));
    let again = send(
        &stack,
        Who::Admin,
        "POST",
        "/products/5/categories",
        Some(json!({"category_id": 2})),
    )
    .await;
    assert_eq!(again.status, 400, "{}", again.body);
    let out = send(
        &stack,
        Who::Admin,
        "DELETE",
        "/products/5/categories/2",
        None,
    )
    .await;
    assert_eq!(out.status, 200, "{}", out.body);
    assert_eq!(categories_of(&stack).await, before);

    // Several stock items in one call.
    let items = json!([{"item_id": 1, "qty": 11}, {"item_id": 2, "qty": 12}]);
    let updated = send(&stack, Who::Admin, "PUT", "/stockitems", Some(items)).await;
    assert!(
        updated.status == 200 || updated.status == 207,
        "{}",
        updated.body
    );
    assert_eq!(
        stack.get(Who::Admin, "/stockitems/1").await.json()["qty"],
        "11.0000"
    );
    assert_eq!(
        stack.get(Who::Admin, "/stockitems/2").await.json()["qty"],
        "12.0000"
    );

    // A customer's own record changed by the Admin, seen by the customer.
    let renamed = send(
        &stack,
        Who::Admin,
        "PUT",
        "/customers/1",
        Some(json!({"firstname": "Johnny"})),
    )
    .await;
    assert_eq!(renamed.status, 200, "{}", renamed.body);
    let own = stack.get(Who::Customer, "/customers/1").await.json();
    assert_eq!(own["firstname"], "Johnny", "{own}");
    stack.stop().await;
}

async fn categories_of(stack: &Stack) -> Value {
    stack.get(Who::Admin, "/products/5/categories").await.json()
}
