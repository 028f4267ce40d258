//! Orders (SPEC 4.6) and their parts: the Admin reads every order, customer 1 their own
//! (customer 2's is not there); items, addresses and comments.

use serde_json::Value;

use super::*;

// In the original profile the orders are the store's: the lines inside an order with their
// dates, a customer's order with its gift message fields (null: there is none).

const ADMIN_LIST: Known = Known::NONE;
const ADMIN_SINGLE: Known = Known::NONE;
const OWN_LIST: Known = Known::NONE;
const OWN_SINGLE: Known = Known::NONE;

#[tokio::test]
async fn orders_for_the_admin_and_their_customer() {
    let stack = Stack::start("orders").await;
    let list = stack
        .same_as_store(Who::Admin, "/orders", &ADMIN_LIST)
        .await;
    assert_eq!(list.as_object().map(|o| o.len()), Some(2), "{list}");
    let one = stack
        .same_as_store(Who::Admin, "/orders/1", &ADMIN_SINGLE)
        .await;
    assert_eq!(one["increment_id"], "100000001", "{one}");
    assert_eq!(one["customer_id"], "1", "{one}");
    assert_eq!(one["payment_method"], "checkmo", "{one}");
    assert_eq!(
        one["order_items"].as_array().map(Vec::len),
        Some(2),
        "{one}"
    );
    let two = stack
        .same_as_store(Who::Admin, "/orders/2", &ADMIN_SINGLE)
        .await;
    assert_eq!(two["customer_id"], "2", "{two}");
    stack
        .same_as_store(Who::Admin, "/orders/999", &Known::NONE)
        .await;

    let own = stack
        .same_as_store(Who::Customer, "/orders", &OWN_LIST)
        .await;
    assert_eq!(own.as_object().map(|o| o.len()), Some(1), "{own}");
    let own_one = stack
        .same_as_store(Who::Customer, "/orders/1", &OWN_SINGLE)
        .await;
    assert_eq!(own_one["increment_id"], "100000001");
    // The gift message fields, null when the order has none (issue 36), in the list too.
    for order in [&own_one, &own["1"]] {
        for field in ["gift_message_from", "gift_message_to", "gift_message_body"] {
            assert_eq!(order.get(field), Some(&Value::Null), "{field}: {order}");
        }
    }
    assert!(own_one.get("customer_id").is_none(), "{own_one}");
    stack
        .same_as_store(Who::Customer, "/orders/2", &Known::NONE)
        .await;
    let other = stack.get(Who::Customer, "/orders/2").await;
    assert_eq!(other.status, 404, "{}", other.body);

    let xml = stack.get_xml(Who::Admin, "/orders/1").await;
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert_eq!(xml_text(&xml.body, "increment_id"), Some("100000001"));
    stack.stop().await;
}

#[tokio::test]
async fn an_orders_items_addresses_and_comments() {
    let stack = Stack::start("order-parts").await;
    for who in [Who::Admin, Who::Customer] {
        let items = stack
            .same_as_store(who, "/orders/1/items", &Known::NONE)
            .await;
        let skus: Vec<&str> = items
            .as_array()
            .unwrap_or_else(|| panic!("{who:?}: {items}"))
            .iter()
            .filter_map(|i| i["sku"].as_str())
            .collect();
        assert_eq!(skus, ["TP-1", "TP-2"], "{who:?}");
        let addresses = stack
            .same_as_store(who, "/orders/1/addresses", &Known::NONE)
            .await;
        assert_eq!(addresses.as_array().map(Vec::len), Some(2), "{who:?}");
        let billing = stack
            .same_as_store(who, "/orders/1/addresses/billing", &Known::NONE)
            .await;
        assert_eq!(billing["address_type"], "billing", "{who:?}");
        assert_eq!(billing["city"], "Austin", "{who:?}");
        let shipping = stack
            .same_as_store(who, "/orders/1/addresses/shipping", &Known::NONE)
            .await;
        assert_eq!(shipping["address_type"], "shipping", "{who:?}");
        let comments = stack
            .same_as_store(who, "/orders/1/comments", &Known::NONE)
            .await;
        assert!(comments.is_array(), "{who:?}: {comments}");
    }
    // One comment by its id (the Admin's route): the store's status-history entry.
    let comment = stack
        .same_as_store(Who::Admin, "/orders/comments/1", &Known::NONE)
        .await;
    assert_eq!(comment["status"], "pending", "{comment}");
    // Customer 2's order's parts are not customer 1's.
    for path in [
        "/orders/2/items",
        "/orders/2/addresses",
        "/orders/2/comments",
    ] {
        stack.same_as_store(Who::Customer, path, &Known::NONE).await;
    }
    let xml = stack
        .get_xml(Who::Customer, "/orders/1/addresses/billing")
        .await;
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert_eq!(xml_text(&xml.body, "city"), Some("Austin"));
    stack.stop().await;
}
