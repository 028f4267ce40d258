//! Customers (SPEC 2.4, 4.4): list, read, create, partial update and delete, in both
//! formats, for Admin and for the customer themself.

use serde_json::{Value, json};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::*;
use crate::remembering::{Answer, remember_customer};

fn query_of(request: &wiremock::Request) -> Vec<(String, String)> {
    request
        .url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn has_pair(query: &[(String, String)], key: &str, value: &str) -> bool {
    query.iter().any(|(k, v)| k == key && v == value)
}

/// The body a recorded exchange sent.
fn sent(name: &str) -> Value {
    fixture(name)["request"]["body"].clone()
}

/// Customer 5 (Jane Doe) as recorded, remembered as saves change it (a save answered with
/// the recorded update).
async fn remember_jane(gw: &Gateway) {
    mount(&gw.upstream, "customers/get-5").await;
    remember_customer(
        &gw.upstream,
        5,
        fixture("customers/get-5")["response"]["body"].clone(),
        Answer::Recorded("customers/update-5"),
    )
    .await;
}

/// An admin update of a name, and of where the customer was created (never changed).
fn new_name_and_where_created() -> Value {
    json!({"lastname": "Doe-Smith", "website_id": 9, "created_in": "Elsewhere"})
}

const ADMIN_LIST: &[&str] = &[
    "entity_id",
    "website_id",
    "email",
    "group_id",
    "created_at",
    "updated_at",
    "disable_auto_group_change",
    "firstname",
    "lastname",
    "created_in",
    "prefix",
    "middlename",
    "suffix",
    "taxvat",
];

#[tokio::test]
async fn admin_lists_customers_as_an_array() {
    let gw = Gateway::answering("customers/search-page-1").await;
    let r = gw.get_json("/customers", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("cache-control"), Some("private, no-store"));
    let list = r.json();
    let list = list.as_array().expect("customers are a JSON array");
    assert_eq!(list.len(), 2);
    assert_eq!(keys(&list[0]), ADMIN_LIST);
    assert_eq!(
        list[0],
        json!({
            "entity_id": "5", "website_id": "1", "email": "jane.doe@example.com", "group_id": "1",
            "created_at": "2024-03-11 10:22:31", "updated_at": "2024-05-02 17:40:12",
            "disable_auto_group_change": "0",
            "firstname": "Jane", "lastname": "Doe", "created_in": "Default Store View",
            "prefix": null, "middlename": null, "suffix": null, "taxvat": null
        })
    );
    assert_eq!(list[1]["created_in"], "French Store View");
    let calls = gw.upstream_calls("GET", "/V1/customers/search$").await;
    let query = query_of(&calls[0]);
    assert!(
        has_pair(&query, "searchCriteria[pageSize]", "10"),
        "{query:?}"
    );
    assert!(has_pair(&query, "searchCriteria[currentPage]", "1"));

    let r = gw.get_xml("/customers", &Who::Admin).await;
    assert_eq!(r.status, 200);
    assert!(
        r.body.starts_with(
            "<?xml version=\"1.0\"?>\n<service_api><data_item><entity_id>5</entity_id>\
             <website_id>1</website_id><email>jane.doe@example.com</email>"
        ),
        "{}",
        r.body
    );
    r.assert_contains("<prefix/>");
}

#[tokio::test]
async fn list_parameters_become_search_criteria_and_bad_ones_are_refused() {
    let gw = Gateway::answering("customers/search-page-1").await;
    let r = gw
        .get_json(
            "/customers?page=2&limit=1&order=email&dir=asc&filter[0][attribute]=firstname&filter[0][like]=J%25",
            &Who::Admin,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let calls = gw.upstream_calls("GET", "/V1/customers/search$").await;
    let query = query_of(&calls[0]);
    for (k, v) in [
        ("searchCriteria[pageSize]", "1"),
        ("searchCriteria[currentPage]", "2"),
        ("searchCriteria[sort_orders][0][field]", "email"),
        ("searchCriteria[sort_orders][0][direction]", "ASC"),
        (
            "searchCriteria[filter_groups][0][filters][0][field]",
            "firstname",
        ),
        ("searchCriteria[filter_groups][0][filters][0][value]", "J%"),
        (
            "searchCriteria[filter_groups][0][filters][0][condition_type]",
            "like",
        ),
    ] {
        assert!(has_pair(&query, k, v), "{k}={v} not in {query:?}");
    }
    // total_count is 2: page 3 of 1 is past the end, and empty (not the last page again).
    let r = gw.get_json("/customers?page=3&limit=1", &Who::Admin).await;
    assert_eq!(r.json(), json!([]));

    let r = gw.get_json("/customers?order=password", &Who::Admin).await;
    r.assert_first_error(400, "Resource collection ordering error.");
    let r = gw
        .get_json(
            "/customers?filter[0][attribute]=last_logged_in&filter[0][eq]=x",
            &Who::Admin,
        )
        .await;
    r.assert_first_error(400, "Resource collection filtering error.");
}

#[tokio::test]
async fn a_customer_listing_customers_gets_only_their_own_record() {
    let gw = Gateway::answering("customers/search-by-email").await;
    let r = gw.get_json("/customers", &Who::Customer(5)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let list = r.json();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["email"], "jane.doe@example.com");
    let calls = gw.upstream_calls("GET", "/V1/customers/search$").await;
    let query = query_of(&calls[0]);
    assert!(
        has_pair(
            &query,
            "searchCriteria[filter_groups][0][filters][0][field]",
            "entity_id"
        ) && has_pair(
            &query,
            "searchCriteria[filter_groups][0][filters][0][value]",
            "5"
        ),
        "{query:?}"
    );
}

#[tokio::test]
async fn admin_reads_one_customer_with_every_field() {
    let gw = Gateway::answering("customers/get-5").await;
    let r = gw.get_json("/customers/5", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("cache-control"), Some("private, no-store"));
    let c = r.json();
    assert_eq!(
        keys(&c),
        [
            "entity_id",
            "website_id",
            "email",
            "group_id",
            "created_at",
            "updated_at",
            "disable_auto_group_change",
            "firstname",
            "lastname",
            "created_in",
            "last_logged_in",
            "prefix",
            "middlename",
            "suffix",
            "taxvat"
        ]
    );
    assert_eq!(c["entity_id"], "5");
    assert_eq!(c["last_logged_in"], Value::Null);
    let r = gw.get_xml("/customers/5", &Who::Admin).await;
    r.assert_contains("<firstname>Jane</firstname><lastname>Doe</lastname>");
    r.assert_contains("<last_logged_in/>");
}

#[tokio::test]
async fn a_customer_reads_their_own_record_without_the_admin_only_fields() {
    let gw = Gateway::answering("customers/get-5").await;
    let r = gw.get_json("/customers/5", &Who::Customer(5)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let c = r.json();
    // The original's customer view: no id, website, group, creation store or log data.
    assert_eq!(
        keys(&c),
        ["email", "firstname", "lastname", "created_at", "updated_at"]
    );
    assert_eq!(c["email"], "jane.doe@example.com");
    assert_eq!(c["updated_at"], "2024-05-02 17:40:12");
}

#[tokio::test]
async fn unknown_and_malformed_customer_ids_are_404() {
    let gw = Gateway::answering("customers/get-error-not-found").await;
    for path in ["/customers/99", "/customers/abc", "/customers/0"] {
        let r = gw.get_json(path, &Who::Admin).await;
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.messages(), ["Resource not found."]);
    }
}

async fn mount_create(gw: &Gateway) {
    mount_stores(&gw.upstream).await;
    mount(&gw.upstream, "customers/create-7").await;
}

#[tokio::test]
async fn admin_creates_a_customer_in_json_and_gets_its_location() {
    let gw = Gateway::start().await;
    mount_create(&gw).await;
    let r = gw
        .send(
            gw.request("POST", "/customers", &Who::Admin)
                .header("Content-Type", "application/json")
                .json(&json!({
                    "firstname": "Ana", "lastname": "Lima", "email": "ana.lima@example.com",
                    "password": "Tr4il-Head!2024", "website_id": 1, "group_id": "1"
                })),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, "");
    assert_eq!(r.header("location"), Some("/api/rest/customers/7"));
    let calls = gw.upstream_calls("POST", "/V1/customers$").await;
    assert_eq!(calls.len(), 1);
    // Exactly what the recorded create sent: ints where Magento wants ints, the store view
    // of the website, the password beside the customer.
    assert_eq!(
        calls[0].body_json::<Value>().unwrap(),
        sent("customers/create-7")
    );
}

#[tokio::test]
async fn admin_creates_a_customer_in_xml() {
    let gw = Gateway::start().await;
    mount_create(&gw).await;
    let r = gw
        .send_raw(
            gw.request("POST", "/customers", &Who::Admin)
                .header("Content-Type", "application/xml")
                .body(
                    "<?xml version=\"1.0\"?><service_api><firstname>Ana</firstname>\
                     <lastname>Lima</lastname><email>ana.lima@example.com</email>\
                     <password>Tr4il-Head!2024</password><website_id>1</website_id>\
                     <group_id>1</group_id></service_api>",
                ),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("location"), Some("/api/rest/customers/7"));
    let calls = gw.upstream_calls("POST", "/V1/customers$").await;
    assert_eq!(
        calls[0].body_json::<Value>().unwrap(),
        sent("customers/create-7")
    );
}

pub(crate) async fn post_customer(gw: &Gateway, body: Value) -> Reply {
    gw.send(
        gw.request("POST", "/customers", &Who::Admin)
            .header("Content-Type", "application/json")
            .json(&body),
    )
    .await
}

#[tokio::test]
async fn create_checks_required_fields_and_the_password_before_calling_magento() {
    let gw = Gateway::start().await;
    mount_create(&gw).await;
    let r = post_customer(&gw, json!({"firstname": "Ana", "lastname": " "})).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.messages(),
        [
            "lastname is a required value.",
            "email is a required value.",
            "password is a required value.",
            "website_id is a required value.",
            "group_id is a required value.",
            "Resource data pre-validation error."
        ]
    );
    let full = json!({
        "firstname": "Ana", "lastname": "Lima", "email": "ana.lima@example.com",
        "password": "Tr4!l ", "website_id": 1, "group_id": 1
    });
    let r = post_customer(&gw, full.clone()).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.messages()[0],
        "The password must have at least 7 characters. Leading or trailing spaces will be ignored."
    );
    let mut wrong_type = full.clone();
    wrong_type["password"] = json!(["Tr4il-Head!2024"]);
    let r = post_customer(&gw, wrong_type).await;
    assert_eq!(r.status, 400);
    assert!(
        !r.body.contains("Tr4il"),
        "the password is echoed: {}",
        r.body
    );
    let mut bad_website = full.clone();
    bad_website["password"] = json!("Tr4il-Head!2024");
    bad_website["website_id"] = json!(9);
    let r = post_customer(&gw, bad_website).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.messages()[0],
        "Invalid value \"9\" for attribute \"website_id\"."
    );
    let r = post_customer(&gw, json!([{"firstname": "Ana"}])).await;
    r.assert_first_error(405, "Resource method not implemented yet.");
    assert_eq!(gw.upstream_count("POST", "/V1/customers$").await, 0);
}

#[tokio::test]
async fn magentos_refusals_of_a_create_are_400_with_its_message() {
    for (name, password, group, message) in [
        (
            "customers/create-error-password-classes",
            "trailheadtrail",
            1,
            "Minimum of different classes of characters in password is 3. Classes of characters: \
             Lower Case, Upper Case, Digits, Special Characters.",
        ),
        (
            "customers/create-error-password-too-short",
            "Tr4!l-x",
            1,
            "The password needs at least 8 characters. Create a new password and try again.",
        ),
        (
            "customers/create-error-duplicate-email",
            "Tr4il-Head!2024",
            1,
            "A customer with the same email address already exists in an associated website.",
        ),
        (
            "customers/create-error-group-not-found",
            "Tr4il-Head!2024",
            99,
            "No such entity with groupId = 99",
        ),
    ] {
        let gw = Gateway::start().await;
        mount_stores(&gw.upstream).await;
        mount(&gw.upstream, name).await;
        let r = post_customer(
            &gw,
            json!({"firstname": "Ana", "lastname": "Lima", "email": "ana.lima@example.com",
                   "password": password, "website_id": 1, "group_id": group}),
        )
        .await;
        assert_eq!(r.status, 400, "{name}: {}", r.body);
        assert_eq!(r.messages(), [message], "{name}");
    }
}

#[tokio::test]
async fn update_merges_the_fields_sent_into_the_stored_customer_and_keeps_its_addresses() {
    let gw = Gateway::start().await;
    remember_jane(&gw).await;
    let r = gw
        .send_json(
            "PUT",
            "/customers/5",
            &Who::Admin,
            &new_name_and_where_created(),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, "");
    let calls = gw.upstream_calls("PUT", "/V1/customers/5$").await;
    assert_eq!(calls.len(), 1);
    let body: Value = calls[0].body_json().unwrap();
    // The whole stored customer with one field changed, and no `addresses` key, which would
    // replace (or with an empty list, delete) the stored addresses.
    assert_eq!(body, sent("customers/update-5"));
    assert!(body["customer"].get("addresses").is_none());
    assert_eq!(body["customer"]["website_id"], 1);
    assert_eq!(body["customer"]["created_in"], "Default Store View");
}

#[tokio::test]
async fn a_customer_updates_their_name_but_not_their_group() {
    let gw = Gateway::start().await;
    remember_jane(&gw).await;
    let r = gw
        .send_raw(
            gw.request("PUT", "/customers/5", &Who::Customer(5))
                .header("Content-Type", "text/xml")
                .body(
                    "<service_api><firstname>Janet</firstname><group_id>4</group_id></service_api>",
                ),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let body: Value = gw.upstream_calls("PUT", "/V1/customers/5$").await[0]
        .body_json()
        .unwrap();
    assert_eq!(body["customer"]["firstname"], "Janet");
    assert_eq!(body["customer"]["group_id"], 1);
}

#[tokio::test]
async fn website_and_store_of_creation_never_change_even_if_a_mapping_lets_them() {
    // An operator adds website_id and created_in to the admin update view.
    let dir = edited_mappings("customer-update-view", "customer.toml", |text| {
        let text = text.replace(
            "update = [\"firstname\", \"lastname\", \"email\", \"group_id\",",
            "update = [\"website_id\", \"created_in\", \"firstname\", \"lastname\", \"email\", \"group_id\",",
        );
        assert!(
            text.contains("update = [\"website_id\""),
            "the edit applies"
        );
        text
    });
    let gw = Gateway::start_with(|c| c.mappings = Some(dir.clone())).await;
    remember_jane(&gw).await;
    let r = gw
        .send_json(
            "PUT",
            "/customers/5",
            &Who::Admin,
            &new_name_and_where_created(),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let body: Value = gw.upstream_calls("PUT", "/V1/customers/5$").await[0]
        .body_json()
        .unwrap();
    assert_eq!(body, sent("customers/update-5"));
}

#[tokio::test]
async fn update_refusals() {
    let gw = Gateway::answering("customers/get-5").await;
    mount(&gw.upstream, "customers/update-5").await;
    let put = |who: Who, path: &'static str, body: Value| {
        let gw = &gw;
        async move {
            gw.send(
                gw.request("PUT", path, &who)
                    .header("Content-Type", "application/json")
                    .json(&body),
            )
            .await
        }
    };
    // Only fields that cannot change: nothing is left to write.
    let r = put(
        Who::Admin,
        "/customers/5",
        json!({"website_id": 2, "created_in": "x"}),
    )
    .await;
    r.assert_first_error(400, "The request data is invalid.");
    let r = put(Who::Customer(5), "/customers/5", json!({"group_id": 2})).await;
    assert_eq!(r.status, 400);
    let r = put(Who::Admin, "/customers/5", json!({"firstname": ""})).await;
    r.assert_first_error(400, "firstname is a required value.");
    let r = put(Who::Customer(6), "/customers/5", json!({"firstname": "X"})).await;
    r.assert_first_error(404, "Resource not found.");
    assert_eq!(gw.upstream_count("PUT", "/V1/customers/").await, 0);
    // Magento's refusal of the save (an e-mail taken by another customer) is passed on.
    Mock::given(method("PUT"))
        .and(path_regex(any_scope("/V1/customers/5")))
        .respond_with(recorded("customers/create-error-duplicate-email"))
        .with_priority(1)
        .mount(&gw.upstream)
        .await;
    let r = put(
        Who::Admin,
        "/customers/5",
        json!({"email": "luc.martin@example.fr"}),
    )
    .await;
    r.assert_error(
        400,
        "A customer with the same email address already exists in an associated website.",
    );
}

#[tokio::test]
async fn deleting_a_customer_revokes_their_tokens_at_once() {
    let gw = Gateway::start().await;
    Mock::given(method("GET"))
        .and(path_regex(any_scope("/V1/customers/7")))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(fixture("customers/create-7")["response"]["body"].clone()),
        )
        .mount(&gw.upstream)
        .await;
    mount(&gw.upstream, "customers/delete-7").await;
    mount(&gw.upstream, "customers/get-5").await;
    let ana = Who::Bearer(format!("Bearer {}", gw.token_for(7)));
    let jane = Who::Bearer(format!("Bearer {}", gw.token_for(5)));
    assert_eq!(gw.get_json("/customers/7", &ana).await.status, 200);

    let r = gw
        .send(gw.request("DELETE", "/customers/7", &Who::Admin))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, "");
    assert_eq!(gw.upstream_count("DELETE", "/V1/customers/7$").await, 1);

    let r = gw.get_json("/customers/7", &ana).await;
    assert_eq!(r.status, 401, "{}", r.body);
    // Other customers' tokens are not touched.
    assert_eq!(gw.get_json("/customers/5", &jane).await.status, 200);
}

#[tokio::test]
async fn delete_refusals() {
    let gw = Gateway::answering("customers/delete-error-not-found").await;
    let r = gw
        .send(gw.request("DELETE", "/customers/99", &Who::Admin))
        .await;
    r.assert_error(404, "Resource not found.");
    let r = gw
        .send(gw.request("DELETE", "/customers/5", &Who::Customer(5)))
        .await;
    r.assert_error(403, "Access denied");
    assert_eq!(gw.upstream_count("DELETE", "/V1/customers/5").await, 0);
}
