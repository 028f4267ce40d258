//! OpenMage's REST paths as endpoints: the template of a path (`/api/rest/products/{}`),
//! which the back end's metrics, logs and cassettes name a call by. A raw path can hold a
//! customer's id, an order's, a store's; its template holds only the API's own names.

use crate::backend::port::{Canned, Failure, FailureAt, LiveCredentials};

/// The prefix of every path of OpenMage's REST API.
pub const PREFIX: &str = "/api/rest";

/// The store's OAuth endpoints, whose answer is a form holding a token and its secret (the
/// recorder scrubs and learns them).
pub const OAUTH_ENDPOINTS: &[&str] = &["/oauth/initiate", "/oauth/token"];

/// Path segments of OpenMage's REST API (its `api2.xml` routes) that are names, not values.
/// Every other segment (an id, a store, a category, an image, an address type) becomes `{}`,
/// so the endpoint label has a bounded set of values whatever the store holds.
const STATIC_SEGMENTS: &[&str] = &[
    "api",
    "rest",
    "addresses",
    "categories",
    "category",
    "comments",
    "customers",
    "images",
    "items",
    "orders",
    "products",
    "stockitems",
    "store",
    "websites",
];

/// Segments of the store's own pages the gateway calls (a customer's sign-in on its OAuth
/// authorization page): names, as in [`STATIC_SEGMENTS`].
const PAGE_SEGMENTS: &[&str] = &[
    "oauth",
    "initiate",
    "authorize",
    "confirm",
    "token",
    "customer",
    "account",
    "loginPost",
];

/// Is this one of the store's pages the gateway calls to sign a customer in?
fn is_sign_in_page(path: &str) -> bool {
    path.starts_with("/oauth/") || path.starts_with("/customer/account/")
}

/// Is this an OpenMage REST path (`/api/rest/...`)?
pub fn is_openmage(path: &str) -> bool {
    path.strip_prefix(PREFIX)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// `/api/rest/products/12/images/abc/store/2` -> `/api/rest/products/{}/images/{}/store/{}`.
pub fn template(path: &str) -> String {
    crate::backend::shell::paths::template(path, STATIC_SEGMENTS)
}

/// OpenMage's wire, for the recorder: its API under `/api/rest` (templates keep the whole
/// path, so its cassettes never share a file with another store's), its OAuth endpoints
/// answering forms that hold a token and its secret.
#[derive(Debug)]
pub struct Wire;

/// OpenMage's wire.
pub static WIRE: Wire = Wire;

impl crate::backend::port::WireShape for Wire {
    fn kind(&self) -> &'static str {
        "openmage"
    }

    fn owns(&self, path: &str) -> bool {
        is_openmage(path) || is_sign_in_page(path)
    }

    /// Its REST API only (a browser's export of the store's pages holds more).
    fn api_path<'a>(&self, path: &'a str) -> Option<&'a str> {
        let at = path.find(PREFIX)?;
        is_openmage(&path[at..]).then_some(&path[at..])
    }

    fn template(&self, path: &str) -> String {
        if is_sign_in_page(path) {
            return crate::backend::shell::paths::template(path, PAGE_SEGMENTS);
        }
        template(path)
    }

    fn form_token_endpoints(&self) -> &'static [&'static str] {
        OAUTH_ENDPOINTS
    }

    fn failure(&self, failure: &Failure, at: &FailureAt<'_>) -> Option<Canned> {
        super::failures::answer(failure, at)
    }

    /// Signed with OAuth 1.0a as the gateway signs its own calls (`signing::authorization`).
    fn authorize(
        &self,
        method: &http::Method,
        path: &str,
        query: &[(String, String)],
        credentials: &LiveCredentials<'_>,
    ) -> Result<Option<String>, String> {
        let Some((consumer_key, consumer_secret, token_secret)) = credentials.oauth else {
            return Err(
                "a signed OpenMage call needs STOREGATE_UPSTREAM_CONSUMER_KEY, _CONSUMER_SECRET and _TOKEN_SECRET"
                    .into(),
            );
        };
        let keys = super::signing::Keys {
            consumer_key,
            consumer_secret,
            token: credentials.token,
            token_secret,
        };
        let uri = format!("{}{path}", super::signing::signing_base(credentials.url));
        Ok(Some(super::signing::authorization(
            method,
            &uri,
            query,
            &keys,
            &super::signing::nonce(),
            super::signing::timestamp(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::port::WireShape;

    #[test]
    fn endpoints_are_templates() {
        assert_eq!(template("/api/rest/products/1"), "/api/rest/products/{}");
        assert_eq!(template("/api/rest/products"), "/api/rest/products");
        assert_eq!(
            template("/api/rest/products/1/images/123/store/de"),
            "/api/rest/products/{}/images/{}/store/{}"
        );
        assert_eq!(
            template("/api/rest/products/store/2/category/3"),
            "/api/rest/products/store/{}/category/{}"
        );
        assert_eq!(
            template("/api/rest/customers/addresses/7"),
            "/api/rest/customers/addresses/{}"
        );
        assert_eq!(
            template("/api/rest/orders/1/addresses/billing"),
            "/api/rest/orders/{}/addresses/{}"
        );
        assert_eq!(
            template("/api/rest/stockitems/a%2Fb"),
            "/api/rest/stockitems/{}"
        );
        for (path, openmage) in [
            ("/api/rest/products/1", true),
            ("/api/rest", true),
            ("/api/restful", false),
            ("/rest/default/products/x", false),
        ] {
            assert_eq!(is_openmage(path), openmage, "{path}");
        }
    }

    #[test]
    fn the_recorder_names_openmage_calls_by_their_whole_path() {
        const OWN: crate::backend::recording::Wires = crate::backend::recording::Wires(&[&WIRE]);
        // Ids and stores are placeholders; a file never is another store's. The store's
        // sign-in pages, by name.
        let files = [
            (
                "GET",
                "/api/rest/products/1",
                "get.api.rest.products.{}.json",
            ),
            (
                "GET",
                "/api/rest/products/1/images/7/store/2",
                "get.api.rest.products.{}.images.{}.store.{}.json",
            ),
            (
                "POST",
                "/api/rest/customers/1/addresses",
                "post.api.rest.customers.{}.addresses.json",
            ),
            (
                "POST",
                "/customer/account/loginPost/",
                "post.customer.account.loginPost.json",
            ),
        ];
        let endpoints = [
            (
                "put",
                "/api/rest/stockitems/3",
                "PUT /api/rest/stockitems/{}",
            ),
            ("post", "/oauth/token", "POST /oauth/token"),
        ];
        crate::backend::recording::cassette::tests::assert_names(OWN, &files, &endpoints);
        assert!(OWN.hands_out_form_token("/oauth/initiate"));
    }

    #[test]
    fn openmage_fails_in_its_own_form() {
        let at = |xml| FailureAt {
            path: "/api/rest/products/1",
            host: "127.0.0.1:8081",
            xml,
            report: 123_456_789_012,
            line: 77,
        };
        let maintenance = WIRE.failure(&Failure::Maintenance, &at(false)).unwrap();
        assert!(
            maintenance
                .body
                .contains("http://127.0.0.1:8081/errors/default/")
        );
        let fatal = WIRE.failure(&Failure::PhpFatal, &at(false)).unwrap();
        assert!(!fatal.body.contains("messages"));
        let db = WIRE.failure(&Failure::DbGone, &at(false)).unwrap();
        assert_eq!((db.status, db.content_type), (503, Canned::HTML));
        assert!(
            db.body
                .contains("Exception printing is disabled by default for security reasons.")
        );
        let oauth = WIRE
            .failure(&Failure::OAuthTimestampRefused, &at(false))
            .unwrap();
        assert_eq!(oauth.status, 401);
        assert_eq!(
            oauth.body,
            r#"{"messages":{"error":[{"code":401,"message":"oauth_problem=timestamp_refused"}]}}"#
        );
        let oauth = WIRE
            .failure(&Failure::OAuthTimestampRefused, &at(true))
            .unwrap();
        assert!(
            oauth
                .body
                .contains("<message>oauth_problem=timestamp_refused</message>")
        );
    }
}
