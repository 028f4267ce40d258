//! Magento's REST paths as endpoints: the template of a path (`/V1/products/{}`), which
//! the back end's metrics, logs and cassettes name a call by. A raw path can hold a SKU, a
//! customer's id or e-mail; its template holds only the API's own names. [`WIRE`] is how
//! Magento 2's traffic looks to the recorder.

/// Path segments of the Magento 2 REST API that are names, not values. Every other segment
/// (a SKU, an id, an e-mail) becomes `{}`, so the endpoint label has a bounded set of
/// values whatever the catalog holds.
const STATIC_SEGMENTS: &[&str] = &[
    "V1",
    "addresses",
    "admin",
    "attributes",
    "authenticate",
    "base-prices-information",
    "billingAddress",
    "categories",
    "children",
    "comments",
    "countries",
    "currency",
    "customer",
    "customers",
    "directory",
    "get-product-salable-quantity",
    "group-prices",
    "id",
    "integration",
    "inventory",
    "is-product-salable",
    "isEmailAvailable",
    "items",
    "links",
    "lowStock",
    "me",
    "media",
    "options",
    "orders",
    "password",
    "price",
    "products",
    "products-render-info",
    "search",
    "shippingAddress",
    "source-items",
    "stockItems",
    "stockStatuses",
    "store",
    "storeConfigs",
    "storeViews",
    "tier-prices-information",
    "tiers",
    "token",
    "types",
    "validate",
    "websites",
];

/// Endpoints whose answer is a bare credential (the recorder scrubs and learns it).
pub const TOKEN_ENDPOINTS: &[&str] = &[
    "/V1/integration/customer/token",
    "/V1/integration/admin/token",
];

/// `/V1/products/24-MB01/media/3` -> `/V1/products/{}/media/{}`.
pub fn template(path: &str) -> String {
    crate::backend::shell::paths::template(path, STATIC_SEGMENTS)
}

/// Magento 2's wire, for the recorder: its paths are `/rest/<scope>/V1/...`; a template
/// starts at `/V1/` (the scope left out), and cassette files leave `V1` out of their names.
#[derive(Debug)]
pub struct Wire;

/// Magento 2's wire.
pub static WIRE: Wire = Wire;

impl crate::backend::port::WireShape for Wire {
    fn kind(&self) -> &'static str {
        "magento2"
    }

    fn owns(&self, path: &str) -> bool {
        path.contains("/V1/")
    }

    /// From `/rest/` on (a shop may serve Magento under a path of its own).
    fn api_path<'a>(&self, path: &'a str) -> Option<&'a str> {
        let at = path.find("/rest/")?;
        self.owns(&path[at..]).then_some(&path[at..])
    }

    fn template(&self, path: &str) -> String {
        let service = path.find("/V1/").map_or(path, |at| &path[at..]);
        template(service)
    }

    fn unnamed_segments(&self) -> &'static [&'static str] {
        &["V1"]
    }

    fn token_endpoints(&self) -> &'static [&'static str] {
        TOKEN_ENDPOINTS
    }

    fn failure(
        &self,
        failure: &crate::backend::port::Failure,
        at: &crate::backend::port::FailureAt<'_>,
    ) -> Option<crate::backend::port::Canned> {
        super::failures::answer(failure, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::port::WireShape;
    use crate::backend::recording::{Wires, cassette, har, scrub};

    const OWN: Wires = Wires(&[&WIRE]);
    use serde_json::json;
    use std::collections::BTreeMap;

    /// A Magento 2 call as the recorder gets it.
    fn request(path: &str, body: serde_json::Value) -> cassette::Request {
        let mut headers = BTreeMap::new();
        headers.insert("authorization".into(), "Bearer abcdefgh12345".into());
        headers.insert("x-request-id".into(), "r-1".into());
        headers.insert("accept".into(), "application/json".into());
        cassette::Request {
            method: "POST".into(),
            path: path.into(),
            query: BTreeMap::new(),
            headers,
            body: cassette::Body::json(body),
        }
    }

    #[test]
    fn the_recorder_names_magento_calls_by_their_endpoint() {
        let files = [
            (
                "GET",
                "/rest/default/V1/products/24-MB01",
                "get.products.{}.json",
            ),
            (
                "POST",
                "/rest/all/V1/products/24-MB01/media",
                "post.products.{}.media.json",
            ),
            (
                "POST",
                "/rest/default/V1/integration/customer/token",
                "post.integration.customer.token.json",
            ),
        ];
        let endpoints = [(
            "get",
            "/rest/default/V1/products/24-MB01",
            "GET /V1/products/{}",
        )];
        cassette::tests::assert_names(OWN, &files, &endpoints);
    }

    #[test]
    fn endpoints_are_templates() {
        assert_eq!(
            template("/V1/products/24-MB01/media/3"),
            "/V1/products/{}/media/{}"
        );
        assert_eq!(template("/V1/products"), "/V1/products");
        assert_eq!(
            template("/V1/customers/me/billingAddress"),
            "/V1/customers/me/billingAddress"
        );
        assert_eq!(template("/V1/stockItems/a%2Fb%20c"), "/V1/stockItems/{}");
        assert_eq!(template(""), "/");
    }

    #[test]
    fn credentials_never_stay() {
        let scrubber =
            scrub::Scrubber::new(&scrub::Rules::default(), &["integration-token-1"], OWN).unwrap();
        let mut req = request(
            "/rest/default/V1/integration/customer/token",
            json!({"username": "a@b.example", "password": "hunter2!"}),
        );
        scrubber.request(&mut req);
        assert_eq!(req.headers["authorization"], scrub::SCRUBBED);
        assert!(!req.headers.contains_key("x-request-id"));
        assert_eq!(
            req.body.body,
            Some(json!({"username": "a@b.example", "password": scrub::SCRUBBED}))
        );
        let mut answer = cassette::Response {
            status: 200,
            headers: BTreeMap::new(),
            body: cassette::Body::json(json!("customer-token-0123456789")),
            elapsed_ms: 1,
        };
        scrubber.response(&req, &mut answer);
        assert_eq!(answer.body.body, Some(json!(scrub::SCRUBBED)));
        // Learned: the token is scrubbed where it turns up later, and so is the integration token.
        let mut later = request(
            "/rest/default/V1/x",
            json!({"note": "t=customer-token-0123456789 i=integration-token-1"}),
        );
        scrubber.request(&mut later);
        assert_eq!(
            later.body.body,
            Some(json!({"note": "t=[scrubbed] i=[scrubbed]"}))
        );
    }

    #[test]
    fn magento_calls_become_scrubbed_cassettes() {
        let dir = std::env::temp_dir().join(format!("storegate-har-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let har = json!({"log": {"version": "1.2", "entries": [
            {"time": 12.5,
             "request": {"method": "POST", "url": "https://shop.example/rest/default/V1/integration/customer/token",
                "headers": [{"name": "Authorization", "value": "Bearer secret-token-123"}, {"name": ":authority", "value": "x"}],
                "postData": {"mimeType": "application/json", "text": "{\"username\":\"a@b.example\",\"password\":\"pw-123456\"}"}},
             "response": {"status": 200, "headers": [{"name": "Set-Cookie", "value": "PHPSESSID=1"}],
                "content": {"mimeType": "application/json", "text": "\"customer-token-abcdef\""}}},
            {"time": 3,
             "request": {"method": "GET", "url": "https://shop.example/rest/default/V1/products?searchCriteria%5BpageSize%5D=2", "headers": []},
             "response": {"status": 200, "headers": [],
                "content": {"mimeType": "application/json", "encoding": "base64", "text": "eyJpdGVtcyI6W119"}}},
            {"time": 1,
             "request": {"method": "GET", "url": "https://shop.example/static/logo.png", "headers": []},
             "response": {"status": 200, "headers": [], "content": {}}}
        ]}});
        let file = dir.with_extension("har");
        std::fs::write(&file, har.to_string()).unwrap();
        let scrubber = scrub::Scrubber::new(&scrub::Rules::default(), &[], OWN).unwrap();
        let imported = har::import(&file, &dir, &scrubber, OWN).unwrap();
        assert_eq!(
            imported,
            har::Imported {
                interactions: 2,
                skipped: 1
            }
        );
        let files = cassette::load_dir(&dir).unwrap();
        let all = serde_json::to_string(&files.values().collect::<Vec<_>>()).unwrap();
        for secret in [
            "secret-token-123",
            "pw-123456",
            "customer-token-abcdef",
            "PHPSESSID",
        ] {
            assert!(!all.contains(secret), "{secret} in {all}");
        }
        let list = &files[std::path::Path::new("get.products.json")].interactions[0];
        assert_eq!(
            list.request.query_pairs(),
            vec![("searchCriteria[pageSize]".to_owned(), "2".to_owned())]
        );
        assert_eq!(list.response.body.body, Some(json!({"items": []})));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_file(&file);
    }

    #[test]
    fn a_replay_rule_may_name_a_magento_call_with_or_without_its_scope() {
        use crate::backend::recording::bench::{Bench, Settings};
        use rand::SeedableRng;
        for rule in [
            "GET /rest/default/V1/products/{sku}=http:500",
            "GET /V1/products/{}=http:500",
        ] {
            let settings = Settings::parse(None, Some(rule)).unwrap();
            let bench = Bench::new(Some(1), settings, OWN);
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
            let endpoint = OWN.endpoint("GET", "/rest/default/V1/products/24-MB01");
            assert!(bench.fault(&endpoint, &mut rng).is_some(), "{rule}");
        }
    }

    #[test]
    fn magento_fails_in_its_own_form() {
        use crate::backend::port::{Canned, Failure, FailureAt};
        let at = |path| FailureAt {
            path,
            host: "127.0.0.1:8081",
            xml: false,
            report: 123_456_789_012,
            line: 77,
        };
        let maintenance = WIRE
            .failure(&Failure::Maintenance, &at("/rest/default/V1/products/A"))
            .unwrap();
        assert_eq!(
            (maintenance.status, maintenance.content_type),
            (503, Canned::HTML)
        );
        assert!(
            maintenance
                .body
                .contains("<title>Error 503: Service Unavailable</title>")
        );
        assert!(maintenance.body.contains("/pub/errors/default/"));
        let fatal = WIRE
            .failure(&Failure::PhpFatal, &at("/rest/default/V1/products/A"))
            .unwrap();
        assert_eq!(fatal.status, 200);
        assert!(
            fatal
                .body
                .starts_with("<br />\n<b>Fatal error</b>:  Uncaught Error")
        );
        assert!(
            fatal
                .body
                .contains("Server internal error. See details in report api\\/")
        );
        let db = WIRE
            .failure(&Failure::DbGone, &at("/rest/default/V1/products/A"))
            .unwrap();
        assert_eq!(db.status, 500);
        let body: serde_json::Value = serde_json::from_str(&db.body).unwrap();
        assert!(body["message"].as_str().unwrap().starts_with(
            "Internal Error. Details are available in Magento log file. Report ID: webapi-"
        ));
        let oauth = WIRE
            .failure(
                &Failure::OAuthTimestampRefused,
                &at("/rest/all/V1/customers/1"),
            )
            .unwrap();
        assert!(
            oauth.body.contains("Magento_Customer::customer"),
            "{}",
            oauth.body
        );
    }
}
