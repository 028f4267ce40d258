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
        path.starts_with("/V1/") || path.contains("/V1/")
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
