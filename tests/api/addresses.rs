//! Customer addresses (SPEC 2.5, 4.5): lists, single reads, creates and updates through
//! Magento's customer save, every validation message of SPEC 7, and the default-address
//! rule on delete.

use serde_json::{Value, json};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::*;
use crate::remembering::{Answer, remember_customer};

/// A gateway whose Magento knows customers 5 and 6, their addresses and the directory.
async fn store() -> Gateway {
    mount_addresses(Gateway::start().await).await
}

/// What [`store`] mounts, on any gateway (the profile tests reuse it).
pub(crate) async fn mount_addresses(gw: Gateway) -> Gateway {
    for name in [
        "customers/get-5",
        "customers/get-6-french",
        "addresses/get-7",
        "addresses/get-9-no-region",
        "addresses/get-error-not-found",
        "directory/countries",
    ] {
        mount(&gw.upstream, name).await;
    }
    gw
}

/// Serves `customer` for `GET /V1/customers/<id>`, ahead of the recorded one.
async fn serve_customer(gw: &Gateway, id: u64, customer: Value) {
    Mock::given(method("GET"))
        .and(path_regex(any_scope(&format!("/V1/customers/{id}"))))
        .respond_with(ResponseTemplate::new(200).set_body_json(customer))
        .with_priority(1)
        .mount(&gw.upstream)
        .await;
}

fn jane() -> Value {
    fixture("customers/get-5")["response"]["body"].clone()
}

async fn saves(gw: &Gateway, customer: u64) -> Vec<Value> {
    gw.upstream_calls("PUT", &format!("/V1/customers/{customer}$"))
        .await
        .iter()
        .map(|r| r.body_json().unwrap())
        .collect()
}

#[tokio::test]
async fn a_customer_lists_their_addresses_in_json_and_xml() {
    let gw = store().await;
    let r = gw
        .get_json("/customers/5/addresses", &Who::Customer(5))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("cache-control"), Some("private, no-store"));
    let list = r.json();
    let list = list.as_array().expect("addresses are a JSON array");
    assert_eq!(list.len(), 2);
    assert_eq!(
        list[0],
        json!({
            "entity_id": "7", "firstname": "Jane", "lastname": "Doe", "city": "New York",
            "region": "New York", "postcode": "10118", "country_id": "US",
            "telephone": "212-555-0187", "prefix": null, "middlename": null, "suffix": null,
            "company": null, "fax": null, "vat_id": null,
            "street": ["350 Fifth Avenue", "Suite 2100"],
            "is_default_billing": "1", "is_default_shipping": "0",
            // Magento 2's address record has no dates.
            "created_at": null, "updated_at": null
        })
    );
    assert_eq!(list[1]["entity_id"], "8");
    assert_eq!(list[1]["company"], "Doe Consulting");
    assert_eq!(list[1]["is_default_shipping"], "1");
    assert_eq!(list[1]["is_default_billing"], "0");

    let r = gw.get_xml("/customers/5/addresses", &Who::Admin).await;
    assert_eq!(r.status, 200);
    assert!(
        r.body.starts_with(
            "<?xml version=\"1.0\"?>\n<service_api><data_item><entity_id>7</entity_id>"
        ),
        "{}",
        r.body
    );
    assert!(
        r.body.contains(
            "<street><data_item>350 Fifth Avenue</data_item><data_item>Suite 2100</data_item></street>"
        ),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn address_lists_filter_sort_and_page() {
    let gw = store().await;
    let ids = |r: &Reply| -> Vec<String> {
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["entity_id"].as_str().unwrap().to_owned())
            .collect()
    };
    let r = gw
        .get_json(
            "/customers/5/addresses?filter[0][attribute]=country_id&filter[0][eq]=ca",
            &Who::Admin,
        )
        .await;
    assert_eq!(ids(&r), ["8"]);
    let r = gw
        .get_json(
            "/customers/5/addresses?filter[0][attribute]=city&filter[0][like]=new%25",
            &Who::Admin,
        )
        .await;
    assert_eq!(ids(&r), ["7"]);
    let r = gw
        .get_json("/customers/5/addresses?order=city&dir=desc", &Who::Admin)
        .await;
    assert_eq!(ids(&r), ["8", "7"]);
    let r = gw
        .get_json(
            "/customers/5/addresses?order=city&dir=asc&limit=1&page=2",
            &Who::Admin,
        )
        .await;
    assert_eq!(ids(&r), ["8"]);
    let r = gw
        .get_json("/customers/5/addresses?page=3&limit=1", &Who::Admin)
        .await;
    assert_eq!(ids(&r), Vec::<String>::new());
    let r = gw
        .get_json(
            "/customers/5/addresses?filter[0][attribute]=region_id&filter[0][eq]=43",
            &Who::Admin,
        )
        .await;
    r.assert_first_error(400, "Resource collection filtering error.");
}

#[tokio::test]
async fn one_address_for_admin_and_for_its_owner() {
    let gw = store().await;
    let r = gw.get_json("/customers/addresses/7", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.json()["street"],
        json!(["350 Fifth Avenue", "Suite 2100"])
    );
    assert_eq!(r.json()["is_default_billing"], "1");
    let r = gw
        .get_json("/customers/addresses/9", &Who::Customer(6))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["region"], Value::Null);
    assert_eq!(r.json()["country_id"], "FR");
    // The owner is looked up through their own record only.
    assert_eq!(
        gw.upstream_count("GET", "/V1/customers/addresses/9$").await,
        0
    );
    let r = gw.get_json("/customers/addresses/999", &Who::Admin).await;
    r.assert_first_error(404, "Resource not found.");
    let r = gw
        .get_xml("/customers/addresses/8", &Who::Customer(5))
        .await;
    r.assert_contains("<company>Doe Consulting</company>");
}

#[tokio::test]
async fn more_than_two_street_lines_come_back_as_two() {
    let gw = store().await;
    let mut customer = jane();
    customer["addresses"][0]["street"] =
        json!(["350 Fifth Avenue", "Suite 2100", "Floor 21", "Door B"]);
    serve_customer(&gw, 5, customer).await;
    let r = gw
        .get_json("/customers/addresses/7", &Who::Customer(5))
        .await;
    assert_eq!(
        r.json()["street"],
        json!(["350 Fifth Avenue", "Suite 2100; Floor 21; Door B"])
    );
}

pub(crate) fn new_address() -> Value {
    json!({
        "firstname": "Jane", "lastname": "Doe", "city": "San Francisco", "postcode": "94111",
        "telephone": "415-555-0100", "country_id": "US", "region": "CA",
        "street": ["1 Ferry Building", "Suite 3", "Marketplace"]
    })
}

async fn post_address(gw: &Gateway, who: &Who, customer: u64, body: &Value) -> Reply {
    let path = format!("/customers/{customer}/addresses");
    gw.send_json("POST", &path, who, body).await
}

#[tokio::test]
async fn creating_an_address_saves_the_customer_with_every_other_address_kept() {
    let gw = store().await;
    remember_customer(
        &gw.upstream,
        5,
        jane(),
        Answer::Recorded("customers/update-5-add-address"),
    )
    .await;
    let r = post_address(&gw, &Who::Customer(5), 5, &new_address()).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, "");
    assert_eq!(
        r.header("location"),
        Some("/api/rest/customers/addresses/10")
    );
    let saves = saves(&gw, 5).await;
    assert_eq!(saves.len(), 1);
    // Addresses 7 and 8 go back with their ids and defaults; the new one has no id, its
    // region resolved from the code, its third street line folded into the second.
    assert_eq!(
        saves[0],
        fixture("customers/update-5-add-address")["request"]["body"]
    );
}

#[tokio::test]
async fn creating_an_address_in_xml_with_a_region_name() {
    let gw = store().await;
    remember_customer(
        &gw.upstream,
        5,
        jane(),
        Answer::Recorded("customers/update-5-add-address"),
    )
    .await;
    let r = gw
        .send_raw(
            gw.request("POST", "/customers/5/addresses", &Who::Admin)
                .header("Content-Type", "application/xml")
                .body(
                    "<?xml version=\"1.0\"?><service_api><firstname>Jane</firstname>\
                     <lastname>Doe</lastname><city>San Francisco</city><postcode>94111</postcode>\
                     <telephone>415-555-0100</telephone><country_id>usa</country_id>\
                     <region>california</region><street><data_item>1 Ferry Building</data_item>\
                     <data_item>Suite 3</data_item><data_item>Marketplace</data_item></street>\
                     </service_api>",
                ),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.header("location"),
        Some("/api/rest/customers/addresses/10")
    );
    assert_eq!(
        saves(&gw, 5).await[0],
        fixture("customers/update-5-add-address")["request"]["body"]
    );
}

#[tokio::test]
async fn a_new_default_address_takes_the_default_from_the_old_one() {
    let gw = store().await;
    remember_customer(
        &gw.upstream,
        5,
        jane(),
        Answer::Recorded("customers/update-5-add-address"),
    )
    .await;
    let mut body = new_address();
    body["is_default_billing"] = json!("1");
    let r = post_address(&gw, &Who::Customer(5), 5, &body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let sent = &saves(&gw, 5).await[0]["customer"];
    assert!(sent.get("default_billing").is_none(), "{sent}");
    assert_eq!(sent["default_shipping"], "8");
    let flags: Vec<(Value, Value)> = sent["addresses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["default_billing"].clone(), a["default_shipping"].clone()))
        .collect();
    assert_eq!(
        flags,
        [
            (json!(false), json!(false)),
            (json!(false), json!(true)),
            (json!(true), Value::Null)
        ]
    );
}

#[tokio::test]
async fn every_validation_message_of_spec_7_and_nothing_is_saved() {
    let gw = store().await;
    mount(&gw.upstream, "customers/update-5-add-address").await;
    let with = |changes: Value| {
        let mut body = new_address();
        for (k, v) in changes.as_object().unwrap() {
            if v.is_null() {
                body.as_object_mut().unwrap().remove(k);
            } else {
                body[k] = v.clone();
            }
        }
        body
    };
    let cases = [
        (json!({"country_id": null}), "Country is required"),
        (json!({"country_id": ""}), "Country is required"),
        (
            json!({"country_id": 840}),
            "Invalid country identifier type",
        ),
        (
            json!({"country_id": ["US"]}),
            "Invalid country identifier type",
        ),
        (
            json!({"country_id": "U"}),
            "Country is not between '2' and '3' inclusively.",
        ),
        (
            json!({"country_id": "USAX"}),
            "Country is not between '2' and '3' inclusively.",
        ),
        (json!({"country_id": "ZZ"}), "Country does not exist"),
        (json!({"country_id": "JP"}), "Country does not exist"),
        (json!({"region": null}), "State/Province is required"),
        (json!({"region": ""}), "Invalid State/Province type"),
        (json!({"region": ["CA"]}), "Invalid State/Province type"),
        (
            json!({"region": {"code": "CA"}}),
            "Invalid State/Province type",
        ),
        (json!({"region": "@@"}), "State/Province is invalid"),
        (json!({"region": "<CA>"}), "State/Province is invalid"),
        (
            json!({"region": "Atlantis"}),
            "State/Province does not exist",
        ),
        (
            json!({"region": "Ontario"}),
            "State/Province does not exist",
        ),
        (json!({"firstname": null}), "firstname is a required value."),
        (json!({"lastname": " "}), "lastname is a required value."),
        (json!({"street": []}), "street is a required value."),
        (json!({"street": ["", " "]}), "street is a required value."),
        (json!({"city": null}), "city is a required value."),
        (json!({"postcode": ""}), "postcode is a required value."),
        (json!({"telephone": null}), "telephone is a required value."),
    ];
    for (changes, message) in cases {
        let body = with(changes.clone());
        let r = post_address(&gw, &Who::Customer(5), 5, &body).await;
        assert_eq!(r.status, 400, "{changes}: {}", r.body);
        assert_eq!(r.messages()[0], message, "{changes}");
        assert_eq!(
            r.messages().last().unwrap(),
            "Resource data pre-validation error."
        );
    }
    // In XML: a region sent as a list.
    let r = gw
        .send_raw(
            gw.request("POST", "/customers/5/addresses", &Who::Customer(5))
                .header("Accept", "application/json")
                .header("Content-Type", "text/xml")
                .body(
                    "<service_api><firstname>Jane</firstname><lastname>Doe</lastname>\
                     <city>SF</city><postcode>94111</postcode><telephone>1</telephone>\
                     <country_id>US</country_id><region><data_item>CA</data_item></region>\
                     <street><data_item>1 Ferry Building</data_item></street></service_api>",
                ),
        )
        .await;
    r.assert_first_error(400, "Invalid State/Province type");
    // Several problems at once are all reported.
    let r = post_address(
        &gw,
        &Who::Customer(5),
        5,
        &with(json!({"firstname": null, "city": null, "region": "Atlantis"})),
    )
    .await;
    assert_eq!(
        r.messages(),
        [
            "firstname is a required value.",
            "city is a required value.",
            "State/Province does not exist",
            "Resource data pre-validation error."
        ]
    );
    assert!(
        saves(&gw, 5).await.is_empty(),
        "a refused address reached Magento"
    );
}

#[tokio::test]
async fn countries_without_regions_take_free_text_or_none() {
    let gw = store().await;
    remember_customer(
        &gw.upstream,
        5,
        jane(),
        Answer::Echo {
            next_address_id: 10,
        },
    )
    .await;
    let mut body = new_address();
    body["country_id"] = json!("GB");
    body["region"] = json!("Greater London");
    let r = post_address(&gw, &Who::Admin, 5, &body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    body.as_object_mut().unwrap().remove("region");
    let r = post_address(&gw, &Who::Admin, 5, &body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let saves = saves(&gw, 5).await;
    let added = |i: usize| saves[i]["customer"]["addresses"][2].clone();
    assert_eq!(added(0)["country_id"], "GB");
    assert_eq!(
        added(0)["region"],
        json!({"region_code": null, "region": "Greater London", "region_id": 0})
    );
    assert_eq!(added(1)["region_id"], 0);
    // The directory is read once and shared.
    assert_eq!(
        gw.upstream_count("GET", "/V1/directory/countries$").await,
        1
    );
}

#[tokio::test]
async fn magentos_own_refusal_of_the_save_is_passed_on() {
    let gw = store().await;
    Mock::given(method("PUT"))
        .and(path_regex(any_scope("/V1/customers/5")))
        .respond_with(recorded("customers/update-error-address-aggregated"))
        .mount(&gw.upstream)
        .await;
    let r = post_address(&gw, &Who::Admin, 5, &new_address()).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.messages(),
        [
            "\"firstname\" is required. Enter and try again.",
            "\"city\" is required. Enter and try again.",
            "Resource data pre-validation error."
        ]
    );
}

#[tokio::test]
async fn addresses_of_another_customer_are_not_found() {
    let gw = store().await;
    mount(&gw.upstream, "customers/update-5-add-address").await;
    let r = post_address(&gw, &Who::Customer(6), 5, &new_address()).await;
    r.assert_first_error(404, "Resource not found.");
    for (verb, path) in [
        ("GET", "/customers/addresses/7"),
        ("PUT", "/customers/addresses/7"),
        ("DELETE", "/customers/addresses/7"),
        ("GET", "/customers/5/addresses"),
    ] {
        let sent = "{\"telephone\":\"1\"}";
        let r = gw
            .send_body(verb, path, &Who::Customer(6), "application/json", sent)
            .await;
        assert_eq!(r.status, 404, "{verb} {path}: {}", r.body);
        assert_eq!(r.messages(), ["Resource not found."]);
    }
    assert!(saves(&gw, 5).await.is_empty());
    assert_eq!(gw.upstream_count("DELETE", "/V1/addresses/").await, 0);
    assert_eq!(gw.upstream_count("GET", "/V1/customers/5$").await, 0);
}

async fn put_address(gw: &Gateway, who: &Who, id: u64, body: Value) -> Reply {
    gw.send(
        gw.request("PUT", &format!("/customers/addresses/{id}"), who)
            .header("Content-Type", "application/json")
            .json(&body),
    )
    .await
}

#[tokio::test]
async fn updating_an_address_changes_that_entry_only() {
    let gw = store().await;
    remember_customer(
        &gw.upstream,
        5,
        jane(),
        Answer::Echo {
            next_address_id: 10,
        },
    )
    .await;
    let r = put_address(
        &gw,
        &Who::Customer(5),
        8,
        json!({"telephone": "416-555-0199"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, "");
    assert_eq!(
        saves(&gw, 5).await,
        [fixture("customers/update-5-edit-address-8")["request"]["body"].clone()]
    );
    // Admin reaches the same address through Magento's address record.
    let r = put_address(
        &gw,
        &Who::Admin,
        7,
        json!({"street": ["1 Main St"], "is_default_shipping": 1}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let sent = &saves(&gw, 5).await[1]["customer"];
    assert_eq!(sent["addresses"][0]["street"], json!(["1 Main St"]));
    assert_eq!(sent["addresses"][0]["default_shipping"], true);
    assert_eq!(sent["addresses"][1]["default_shipping"], false);
    assert!(sent.get("default_shipping").is_none());
    assert_eq!(sent["default_billing"], "7");
}

#[tokio::test]
async fn updates_are_checked_against_the_country_the_address_will_have() {
    let gw = store().await;
    remember_customer(
        &gw.upstream,
        5,
        jane(),
        Answer::Recorded("customers/update-5-edit-address-8"),
    )
    .await;
    // Address 8 is in Canada (Ontario). Moving it to the US needs a US region.
    let r = put_address(&gw, &Who::Customer(5), 8, json!({"country_id": "US"})).await;
    r.assert_first_error(400, "State/Province is required");
    let r = put_address(&gw, &Who::Customer(5), 8, json!({"region": "NY"})).await;
    r.assert_first_error(400, "State/Province does not exist");
    let r = put_address(&gw, &Who::Customer(5), 8, json!({"city": ""})).await;
    r.assert_first_error(400, "city is a required value.");
    let r = put_address(&gw, &Who::Customer(5), 8, json!({"bogus": "x"})).await;
    r.assert_first_error(400, "The request data is invalid.");
    assert!(saves(&gw, 5).await.is_empty());
    let r = put_address(
        &gw,
        &Who::Customer(5),
        8,
        json!({"country_id": "GB", "region": ""}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let moved = &saves(&gw, 5).await[0]["customer"]["addresses"][1];
    assert_eq!(moved["country_id"], "GB");
    assert_eq!(moved["region_id"], 0);
}

#[tokio::test]
async fn a_default_address_cannot_be_deleted_another_can() {
    let gw = store().await;
    mount(&gw.upstream, "addresses/delete-8").await;
    let remembered = remember_customer(
        &gw.upstream,
        5,
        jane(),
        Answer::Echo {
            next_address_id: 10,
        },
    )
    .await;
    for id in [7, 8] {
        let r = gw
            .send(gw.request(
                "DELETE",
                &format!("/customers/addresses/{id}"),
                &Who::Customer(5),
            ))
            .await;
        assert_eq!(r.status, 400, "{id}");
        assert_eq!(
            r.messages(),
            ["Address is default for customer so is not allowed to be deleted"]
        );
    }
    assert_eq!(gw.upstream_count("DELETE", "/V1/addresses/").await, 0);
    // Make 7 the default for both: 8 is then an ordinary address.
    let mut customer = jane();
    customer["default_shipping"] = json!("7");
    remembered.set(customer);
    let r = gw
        .send(gw.request("DELETE", "/customers/addresses/8", &Who::Customer(5)))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, "");
    assert_eq!(gw.upstream_count("DELETE", "/V1/addresses/8$").await, 1);
    let r = gw
        .send(gw.request("DELETE", "/customers/addresses/999", &Who::Admin))
        .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn a_zero_default_flag_changes_no_default() {
    let gw = store().await;
    remember_customer(
        &gw.upstream,
        5,
        jane(),
        Answer::Recorded("customers/update-5-edit-address-8"),
    )
    .await;
    let r = put_address(
        &gw,
        &Who::Customer(5),
        7,
        json!({"is_default_billing": "0", "telephone": "212-555-0100"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let sent = &saves(&gw, 5).await[0]["customer"];
    assert_eq!(sent["default_billing"], "7");
    assert_eq!(sent["addresses"][0]["default_billing"], true);
}

#[tokio::test]
async fn concurrent_writes_to_one_customer_take_turns() {
    // Each address write reads the customer and saves the whole list; two at once would
    // each save a list without the other's address. They must not interleave.
    let gw = store().await;
    remember_customer(
        &gw.upstream,
        5,
        jane(),
        Answer::Echo {
            next_address_id: 10,
        },
    )
    .await;
    let (body, jane, admin) = (new_address(), Who::Customer(5), Who::Admin);
    let (a, b) = tokio::join!(
        post_address(&gw, &jane, 5, &body),
        post_address(&gw, &admin, 5, &body),
    );
    assert_eq!((a.status, b.status), (200, 200), "{} {}", a.body, b.body);
    let sequence: Vec<String> = gw
        .upstream
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path().ends_with("/V1/customers/5"))
        .map(|r| r.method.to_string())
        .collect();
    // Each write: read, save, read back to verify; the second starts after the first.
    assert_eq!(sequence, ["GET", "PUT", "GET", "GET", "PUT", "GET"]);
}
