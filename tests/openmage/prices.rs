//! A customer's prices as the store computes them for their customer group: the gateway
//! asks the store as the customer (with the session it keeps for them: their imported
//! access token, or the store token their sign-in got) and keys the answer by their group
//! and tax destination, so no group is ever shown another's prices.
//!
//! The setup is written to the store directly, as its Admin (the gateway is not told): product
//! 1 (19.99, no special price) gets a group price for General (group 1, John) and for
//! Wholesale (group 2), and Jane moves to Wholesale. Both are undone at the end. Recorded
//! from the seeded store (reset it before recording, and after: Jane's sign-in replaces her
//! store token).

use serde_json::{Value, json};

use super::*;
use crate::common::http::sent;

/// The store's group prices for product 1: General's and Wholesale's.
const GENERAL: f64 = 12.5;
const WHOLESALE: f64 = 11.0;

/// A shopper's single product: the store's own, but for the session's form key.
const SHOPPER_SINGLE: Known = Known {
    differ: &["buy_now_url"],
    ..Known::NONE
};

fn final_price(product: &Value) -> f64 {
    product["final_price_without_tax"]
        .as_f64()
        .unwrap_or_else(|| panic!("no final price in {product}"))
}

#[tokio::test]
async fn customers_see_their_groups_prices_as_the_store_computes_them() {
    let stack = Stack::start_alone("group-prices").await;
    stack
        .store
        .admin_put(
            "/products/1",
            &json!({"group_price": [
                {"website_id": "0", "cust_group": "1", "price": GENERAL},
                {"website_id": "0", "cust_group": "2", "price": WHOLESALE},
            ]}),
        )
        .await;
    stack
        .store
        .admin_put("/customers/2", &json!({"group_id": 2}))
        .await;

    // Jane signs in with her store password: the gateway keeps the store token her sign-in
    // got, and her Bearer reads are priced by the store for Wholesale.
    let signed_in = sent(
        stack
            .http
            .post(stack.url("/auth/token"))
            .header("Accept", "application/json")
            .json(&json!({"username": "jane@example.com", "password": "Password123"})),
    )
    .await;
    assert_eq!(signed_in.status(), 200);
    let body: Value = signed_in.json().await.unwrap();
    assert_eq!(body["customer_id"], 2, "{body}");
    let bearer = format!("Bearer {}", body["access_token"].as_str().unwrap());
    let jane = sent(
        stack
            .http
            .get(stack.url("/products/1"))
            .header("Accept", "application/json")
            .header("Authorization", &bearer),
    )
    .await;
    assert_eq!(jane.status(), 200);
    let jane: Value = jane.json().await.unwrap();
    assert_eq!(final_price(&jane), WHOLESALE, "Jane (Wholesale): {jane}");

    // John's imported access token is also his session with the store: his answer is the
    // store's own answer to him, General's price.
    let john = stack
        .same_as_store(Who::Customer, "/products/1", &SHOPPER_SINGLE)
        .await;
    assert_eq!(final_price(&john), GENERAL, "John (General): {john}");
    let list = stack
        .same_as_store(Who::Customer, "/products", &Known::NONE)
        .await;
    assert_eq!(final_price(&list["1"]), GENERAL, "John's list: {list}");

    // The Guest keeps the NOT LOGGED IN group's price; nobody got another group's.
    let guest = stack
        .same_as_store(Who::Guest, "/products/1", &SHOPPER_SINGLE)
        .await;
    assert_eq!(final_price(&guest), 19.99, "the Guest: {guest}");
    let again = stack.get(Who::Guest, "/products/1").await.json();
    assert_eq!(final_price(&again), 19.99, "the Guest, cached: {again}");
    let john_again = stack.get(Who::Customer, "/products/1").await.json();
    assert_eq!(
        final_price(&john_again),
        GENERAL,
        "John, cached: {john_again}"
    );

    // A gateway that holds no session for John (his sessions forgotten before his first
    // call): the store is asked anonymously, his answers are keyed for the group alone, and
    // they show the NOT LOGGED IN group's final price, not General's.
    let without = Stack::start_beside("group-prices-no-session", &[]).await;
    let store = storegate::auth::oauth::sqlite::SqliteStore::open(&without.data_dir).unwrap();
    store.put_session(1, "").unwrap();
    drop(store);
    let john = without.get(Who::Customer, "/products/1").await;
    assert_eq!(john.status, 200, "{}", john.body);
    let john = john.json();
    assert_eq!(final_price(&john), 19.99, "John without a session: {john}");
    without.stop().await;

    stack
        .store
        .admin_put("/products/1", &json!({"group_price": []}))
        .await;
    stack
        .store
        .admin_put("/customers/2", &json!({"group_id": 1}))
        .await;
    stack.stop().await;
}
