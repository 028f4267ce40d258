//! Magento's REST paths as endpoints: the template of a path (`/V1/products/{}`), which
//! the upstream metrics, logs and cassettes name a call by. A raw path can hold a SKU, a
//! customer's id or e-mail; its template holds only the API's own names.

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
    let mut out = String::with_capacity(path.len());
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        out.push('/');
        if STATIC_SEGMENTS.contains(&segment) {
            out.push_str(segment);
        } else {
            out.push_str("{}");
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
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
