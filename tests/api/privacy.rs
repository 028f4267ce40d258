//! Nothing of one customer reaches another customer or a guest, on any customer, address
//! or order route, in either format; and customer data and passwords stay out of the logs.

use serde_json::json;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::*;

/// What would betray customer 5 (Jane Doe): her e-mail, names, addresses, phone numbers,
/// and the ids of her record, addresses (7, 8) and orders (31, 32).
const JANE: &[&str] = &[
    "jane",
    "Jane",
    "Doe",
    "Fifth Avenue",
    "Suite 2100",
    "Queen St",
    "Toronto",
    "212-555",
    "416-555",
    "718-555",
    "10118",
    "M5H",
    "Brooklyn",
    "Water Street",
    "JD Gifts",
    "000000031",
    "000000032",
    "\"5\"",
    "\"7\"",
    "\"8\"",
    "\"31\"",
    "\"32\"",
    ">5<",
    ">7<",
    ">8<",
    ">31<",
    ">32<",
    "data_item_31",
    "data_item_32",
];

/// A Magento that would hand out everything of customer 5 to anyone who asked it, and
/// would accept any write.
async fn leaky_store() -> Gateway {
    let gw = Gateway::start().await;
    for name in [
        "customers/get-5",
        "customers/get-6-french",
        "customers/search-page-1",
        "customers/update-5",
        "addresses/get-7",
        "addresses/get-9-no-region",
        "addresses/delete-8",
        "directory/countries",
        "orders/list-page-1",
        "orders/get-31",
        "orders/get-32-not-invoiced",
        "orders/get-33-virtual",
    ] {
        mount(&gw.upstream, name).await;
    }
    Mock::given(method("GET"))
        .and(path_regex(any_scope("/V1/customers/addresses/8")))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                fixture("customers/get-5")["response"]["body"]["addresses"][1].clone(),
            ),
        )
        .mount(&gw.upstream)
        .await;
    gw
}

/// Every customer route, aimed at customer 5's data.
fn probes() -> Vec<(&'static str, &'static str)> {
    vec![
        ("GET", "/customers"),
        (
            "GET",
            "/customers?filter[0][attribute]=entity_id&filter[0][eq]=5",
        ),
        ("POST", "/customers"),
        ("PUT", "/customers"),
        ("DELETE", "/customers"),
        ("GET", "/customers/5"),
        ("POST", "/customers/5"),
        ("PUT", "/customers/5"),
        ("DELETE", "/customers/5"),
        ("GET", "/customers/5/addresses"),
        ("POST", "/customers/5/addresses"),
        ("PUT", "/customers/5/addresses"),
        ("DELETE", "/customers/5/addresses"),
        ("GET", "/customers/addresses/7"),
        ("POST", "/customers/addresses/7"),
        ("PUT", "/customers/addresses/7"),
        ("DELETE", "/customers/addresses/7"),
        ("GET", "/customers/addresses/8"),
        ("PUT", "/customers/addresses/8"),
        ("DELETE", "/customers/addresses/8"),
        ("GET", "/orders"),
        (
            "GET",
            "/orders?filter[0][attribute]=customer_id&filter[0][eq]=5",
        ),
        ("POST", "/orders"),
        ("GET", "/orders/31"),
        ("GET", "/orders/32"),
        ("PUT", "/orders/31"),
        ("DELETE", "/orders/31"),
    ]
}

/// A body that would be a valid write of customer 5's data.
const BODY: &str = r#"{"firstname":"Mallory","lastname":"Doe","email":"m@example.com","password":"Tr4il-Head!2024","website_id":1,"group_id":1,"city":"X","postcode":"1","telephone":"1","country_id":"GB","street":["1 A St"]}"#;

#[tokio::test]
async fn another_customer_and_a_guest_get_nothing_of_a_customer() {
    let gw = leaky_store().await;
    let mut failures = Vec::new();
    for who in [Who::Customer(6), Who::Guest] {
        for (verb, path) in probes() {
            for accept in ["application/json", "application/xml"] {
                let r = gw
                    .send(
                        gw.request(verb, path, &who)
                            .header("Accept", accept)
                            .header("Content-Type", "application/json")
                            .body(BODY),
                    )
                    .await;
                let leaked: Vec<&&str> = JANE.iter().filter(|s| r.body.contains(**s)).collect();
                if !leaked.is_empty() {
                    failures.push(format!(
                        "{verb} {path} as {who:?} ({accept}): {} shows {leaked:?}: {}",
                        r.status, r.body
                    ));
                }
                let expected: &[u16] = match who {
                    // Own (empty or customer 6's) lists, refusals, or "not found"; a
                    // filter on a field the customer's view does not show is a 400.
                    Who::Customer(_) => &[200, 400, 403, 404, 405],
                    _ => &[200, 403],
                };
                if !expected.contains(&r.status) {
                    failures.push(format!("{verb} {path} as {who:?}: status {}", r.status));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Nothing was written, and customer 5's record and addresses were never even fetched.
    for verb in ["POST", "PUT", "DELETE"] {
        let writes = gw.upstream_calls(verb, "/V1/").await;
        assert!(
            writes.is_empty(),
            "{verb} reached Magento: {:?}",
            writes[0].url
        );
    }
    assert_eq!(gw.upstream_count("GET", "/V1/customers/5$").await, 0);
    assert_eq!(
        gw.upstream_count("GET", "/V1/customers/addresses/").await,
        0
    );
}

#[tokio::test]
async fn the_probe_does_find_jane_when_she_asks() {
    // The same store and checks find her data for her, so the test above can fail.
    let gw = leaky_store().await;
    for path in [
        "/customers/5",
        "/customers/5/addresses",
        "/customers/addresses/7",
        "/orders/31",
    ] {
        let r = gw.get_json(path, &Who::Customer(5)).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert!(
            JANE.iter().any(|s| r.body.contains(s)),
            "{path}: {}",
            r.body
        );
    }
    let r = gw.get_xml("/orders", &Who::Customer(5)).await;
    r.assert_contains("data_item_31");
}

#[tokio::test]
async fn customer_routes_are_never_cached_for_anyone_else() {
    let gw = leaky_store().await;
    // Jane reads her record, addresses and orders; then customer 6 asks the same paths.
    for path in [
        "/customers/5",
        "/customers/5/addresses",
        "/orders",
        "/orders/31",
    ] {
        let jane = gw.get_json(path, &Who::Customer(5)).await;
        assert_eq!(jane.status, 200);
        assert_eq!(jane.header("cache-control"), Some("private, no-store"));
        assert!(jane.header("etag").is_none());
        let other = gw.get_json(path, &Who::Customer(6)).await;
        assert!(
            !other.body.contains("Jane") && !other.body.contains("\"31\""),
            "{path}: {}",
            other.body
        );
    }
}

#[tokio::test]
async fn customer_data_and_passwords_stay_out_of_the_logs() {
    let logs = Captured::default();
    let sink = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .finish();
    // The test runtime is single-threaded: the gateway's tasks log on this thread.
    let _guard = tracing::subscriber::set_default(subscriber);

    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    mount(&gw.upstream, "customers/get-5").await;
    mount(&gw.upstream, "directory/countries").await;
    // Magento failures that quote the customer: a 500 naming her, a 400 quoting her
    // e-mail, an answer of the wrong shape holding her name.
    Mock::given(method("POST"))
        .and(path_regex(any_scope("/V1/customers")))
        .respond_with(ResponseTemplate::new(500).set_body_json(
            json!({"message": "Could not save %1", "parameters": ["jane.doe@example.com"]}),
        ))
        .mount(&gw.upstream)
        .await;
    Mock::given(method("PUT"))
        .and(path_regex(any_scope("/V1/customers/5")))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "message": "Invalid value of \"%value\" provided for the %fieldName field.",
            "parameters": {"fieldName": "email", "value": "jane.doe@example.com"}
        })))
        .mount(&gw.upstream)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(any_scope("/V1/customers/search")))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"items": "Jane Doe jane.doe@example.com"})),
        )
        .mount(&gw.upstream)
        .await;

    let r = gw
        .send(
            gw.request("POST", "/customers", &Who::Admin)
                .header("Content-Type", "application/json")
                .json(
                    &json!({"firstname": "Jane", "lastname": "Doe", "email": "jane.doe@example.com",
                              "password": "Secr3t-Passw0rd!", "website_id": 1, "group_id": 1}),
                ),
        )
        .await;
    assert_eq!(r.status, 500);
    let sent = json!({"email": "jane.doe@example.com"});
    let r = gw
        .send_json("PUT", "/customers/5", &Who::Customer(5), &sent)
        .await;
    assert_eq!(r.status, 400);
    // The client does get Magento's message about its own value.
    assert!(r.messages()[0].contains("jane.doe@example.com"));
    let r = gw.get_json("/customers", &Who::Admin).await;
    assert_eq!(r.status, 502);
    let sent = json!({"firstname": "Jane", "country_id": "Doe-land"});
    let r = gw
        .send_json("POST", "/customers/5/addresses", &Who::Customer(5), &sent)
        .await;
    assert_eq!(r.status, 400);

    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        text.contains("request failed"),
        "the failures were logged at all: {text}"
    );
    for secret in ["jane.doe", "Jane Doe", "Secr3t-Passw0rd!", "Doe-land"] {
        assert!(!text.contains(secret), "{secret:?} in the logs:\n{text}");
    }
}
