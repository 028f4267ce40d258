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
    let url = stack.url(path);
    let method = reqwest::Method::from_bytes(verb.as_bytes()).unwrap();
    let mut request = stack
        .http
        .request(method, &url)
        .header("Accept", "application/json");
    if let Some((token, secret)) = who.token() {
        let signer = Signer::new(&consumer_key(), &consumer_secret()).token(&token, &secret);
        request = request.header("Authorization", signer.header(verb, &url));
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("the gateway answers");
    Reply {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        body: response.text().await.unwrap(),
    }
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
