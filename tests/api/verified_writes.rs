//! Customer writes are verified (`customer_save`): after a save the customer is read back,
//! and a write another writer undid meanwhile is tried again from a fresh read, or refused
//! with a 409. Never a 200 for a write that is gone. The other writer here is a Magento
//! whose customer changes between our save and our read-back, as when the store's admin
//! panel or website saves the same customer from an older read.

use serde_json::{Value, json};

use crate::helpers::*;
use crate::remembering::{Answer, Remembered, remember_customer_with};

async fn store() -> Gateway {
    let gw = Gateway::start().await;
    for name in [
        "addresses/get-7",
        "addresses/get-error-not-found",
        "directory/countries",
    ] {
        mount(&gw.upstream, name).await;
    }
    gw
}

fn jane() -> Value {
    fixture("customers/get-5")["response"]["body"].clone()
}

fn new_address(city: &str) -> Value {
    json!({
        "firstname": "Jane", "lastname": "Doe", "city": city, "postcode": "94111",
        "telephone": "415-555-0100", "country_id": "US", "region": "CA",
        "street": ["1 Ferry Building"]
    })
}

/// Another writer that saved from a read older than ours: our change is gone, theirs is
/// there.
fn overwrite_with_theirs(customer: &mut Value, before: &Value) {
    let mut theirs = before.clone();
    theirs["addresses"].as_array_mut().unwrap().push(
        json!({"id": 50, "customer_id": 5, "firstname": "Other", "lastname": "Writer",
                     "city": "Paris", "postcode": "75001", "country_id": "FR",
                     "street": ["1 rue de Rivoli"], "telephone": "1", "region_id": 0}),
    );
    *customer = theirs;
}

fn address_ids(customer: &Value) -> Vec<u64> {
    customer["addresses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_u64().unwrap())
        .collect()
}

/// Customer 5 remembered from `initial` (Jane's record), saves echoed (new addresses from
/// id 10), and another writer's `change` landing just before read 2 (the read-back after
/// the gateway's first save).
async fn changed_before_the_read_back(
    gw: &Gateway,
    initial: Value,
    change: impl Fn(&mut Value) + Send + Sync + 'static,
) -> Remembered {
    remember_customer_with(
        &gw.upstream,
        5,
        initial,
        Answer::Echo {
            next_address_id: 10,
        },
        Box::new(move |n, customer| {
            if n == 2 {
                change(customer);
            }
        }),
    )
    .await
}

async fn post_address(gw: &Gateway, body: &Value) -> Reply {
    gw.send_json("POST", "/customers/5/addresses", &Who::Customer(5), body)
        .await
}

#[tokio::test]
async fn an_address_another_writer_erased_is_saved_again_before_the_answer() {
    let gw = store().await;
    let before = jane();
    // Read 2 is our read-back after the first save: the other writer's save landed just
    // before it.
    let remembered = changed_before_the_read_back(&gw, jane(), move |customer| {
        overwrite_with_theirs(customer, &before);
    })
    .await;
    let r = post_address(&gw, &new_address("Oakland")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    // Two saves: the first was undone, the second is there, and so is the other writer's.
    assert_eq!(gw.upstream_count("PUT", "/V1/customers/5$").await, 2);
    let now = remembered.get();
    assert_eq!(address_ids(&now), [7, 8, 50, 11]);
    assert_eq!(
        r.header("location"),
        Some("/api/rest/customers/addresses/11")
    );
    assert_eq!(now["addresses"][3]["city"], "Oakland");
}

#[tokio::test]
async fn a_write_that_keeps_racing_is_a_409_never_a_200() {
    let gw = store().await;
    let before = jane();
    remember_customer_with(
        &gw.upstream,
        5,
        jane(),
        Answer::Echo {
            next_address_id: 10,
        },
        // Every read-back (even reads) finds the other writer's version.
        Box::new(move |n, customer| {
            if n % 2 == 0 {
                overwrite_with_theirs(customer, &before);
            }
        }),
    )
    .await;
    let r = post_address(&gw, &new_address("Oakland")).await;
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(
        r.messages(),
        ["The customer was changed by another writer at the same time. Read it and try again."]
    );
    assert_eq!(gw.upstream_count("PUT", "/V1/customers/5$").await, 3);
    let metrics = gw.metrics().await;
    assert!(
        metrics.contains("storegate_customer_write_conflicts_total 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("storegate_customer_write_retries_total 2"),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_create_whose_first_save_survived_is_not_added_twice() {
    // The read-back misses one of the addresses we kept (someone deleted it), but ours is
    // there: the retry finds it and answers without saving a copy.
    let gw = store().await;
    let remembered = changed_before_the_read_back(&gw, jane(), |customer| {
        customer["addresses"]
            .as_array_mut()
            .unwrap()
            .retain(|a| a["id"] != 8);
    })
    .await;
    let r = post_address(&gw, &new_address("Oakland")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.header("location"),
        Some("/api/rest/customers/addresses/10")
    );
    assert_eq!(gw.upstream_count("PUT", "/V1/customers/5$").await, 1);
    assert_eq!(address_ids(&remembered.get()), [7, 10]);
}

#[tokio::test]
async fn a_field_another_writer_overwrote_is_written_again() {
    let gw = store().await;
    let remembered = changed_before_the_read_back(&gw, jane(), |customer| {
        customer["lastname"] = json!("Overwritten");
    })
    .await;
    let sent = json!({"lastname": "Doe-Smith"});
    let r = gw
        .send_json("PUT", "/customers/5", &Who::Admin, &sent)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(gw.upstream_count("PUT", "/V1/customers/5$").await, 2);
    let now = remembered.get();
    assert_eq!(now["lastname"], "Doe-Smith");
    // The update sends no address list: the addresses are untouched.
    assert_eq!(address_ids(&now), [7, 8]);
}

#[tokio::test]
async fn a_deleted_address_another_writer_put_back_is_deleted_again() {
    let gw = store().await;
    mount(&gw.upstream, "addresses/get-7").await;
    let mut start = jane();
    // 7 is default for both, so 8 may go.
    start["default_shipping"] = json!("7");
    let with_8 = start.clone();
    let remembered = changed_before_the_read_back(
        &gw,
        start,
        // Read 1 is the check before the delete, read 2 the read-back: address 8 is back.
        move |customer| {
            *customer = with_8.clone();
        },
    )
    .await;
    let r = gw
        .send(gw.request("DELETE", "/customers/addresses/8", &Who::Customer(5)))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(gw.upstream_count("DELETE", "/V1/addresses/8$").await, 2);
    assert_eq!(address_ids(&remembered.get()), [7]);
}
