//! OpenMage's REST paths as endpoints: the template of a path (`/api/rest/products/{}`),
//! which the back end's metrics, logs and cassettes name a call by. A raw path can hold a
//! customer's id, an order's, a store's; its template holds only the API's own names.

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
        is_openmage(path) || OAUTH_ENDPOINTS.contains(&path)
    }

    fn template(&self, path: &str) -> String {
        template(path)
    }

    fn form_token_endpoints(&self) -> &'static [&'static str] {
        OAUTH_ENDPOINTS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(is_openmage("/api/rest/products/1"));
        assert!(is_openmage("/api/rest"));
        assert!(!is_openmage("/api/restful"));
        assert!(!is_openmage("/rest/default/V1/products/x"));
    }
}
