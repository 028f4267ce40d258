//! Which reads the dual run compares and serves: a route's class (`products`, `images`,
//! `stock_items`, `customers`, `addresses`, `orders`), from its template or from a raw path,
//! and the route's name in the report (`GET /products/:id`).

use crate::config::shadow::RouteClass;

/// The class of an API path, raw (`/api/rest/products/5/images`) or a template
/// (`/api/rest/products/{id}/images`); None for what is not one of the six resources (the
/// gateway's own endpoints, tokens, the report itself).
pub fn class_of(path: &str) -> Option<RouteClass> {
    let rest = path.strip_prefix("/api/rest/")?;
    let mut segments = rest.split('/');
    let first = segments.next()?;
    let second = segments.next();
    let third = segments.next();
    match first {
        "products" if third == Some("images") => Some(RouteClass::Images),
        "products" => Some(RouteClass::Products),
        "stockitems" => Some(RouteClass::StockItems),
        "customers" if second == Some("addresses") || third == Some("addresses") => {
            Some(RouteClass::Addresses)
        }
        "customers" => Some(RouteClass::Customers),
        "orders" => Some(RouteClass::Orders),
        _ => None,
    }
}

/// A route as the report names it: the method and the template under `/api/rest`, its
/// parameters written `:name` (`GET /products/:id`).
pub fn route_name(method: &http::Method, template: &str) -> String {
    let path = template.strip_prefix("/api/rest").unwrap_or(template);
    let mut name = String::with_capacity(method.as_str().len() + 1 + path.len());
    name.push_str(method.as_str());
    name.push(' ');
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        name.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        name.push(':');
        name.push_str(&rest[open + 1..open + close]);
        rest = &rest[open + close + 1..];
    }
    name.push_str(rest);
    name
}

/// Whether `method` changes the store (never sent to the candidate).
pub fn is_write(method: &http::Method) -> bool {
    matches!(
        *method,
        http::Method::POST | http::Method::PUT | http::Method::PATCH | http::Method::DELETE
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_templates_and_paths() {
        let cases = [
            ("/api/rest/products", Some(RouteClass::Products)),
            ("/api/rest/products/{id}", Some(RouteClass::Products)),
            (
                "/api/rest/products/7/categories",
                Some(RouteClass::Products),
            ),
            ("/api/rest/products/{id}/images", Some(RouteClass::Images)),
            (
                "/api/rest/products/7/images/3/store/2",
                Some(RouteClass::Images),
            ),
            ("/api/rest/products/category/3", Some(RouteClass::Products)),
            ("/api/rest/stockitems/{id}", Some(RouteClass::StockItems)),
            ("/api/rest/customers", Some(RouteClass::Customers)),
            ("/api/rest/customers/{id}", Some(RouteClass::Customers)),
            (
                "/api/rest/customers/{id}/addresses",
                Some(RouteClass::Addresses),
            ),
            (
                "/api/rest/customers/addresses/4",
                Some(RouteClass::Addresses),
            ),
            ("/api/rest/orders/{id}/items", Some(RouteClass::Orders)),
            ("/api/rest/auth/token", None),
            ("/api/rest/shadow/report", None),
            ("/api/rest/cache/purge", None),
            ("/healthz", None),
        ];
        for (path, class) in cases {
            assert_eq!(class_of(path), class, "{path}");
        }
    }

    #[test]
    fn route_names() {
        let get = http::Method::GET;
        assert_eq!(
            route_name(&get, "/api/rest/products/{id}"),
            "GET /products/:id"
        );
        assert_eq!(
            route_name(
                &http::Method::PUT,
                "/api/rest/products/{id}/images/{image_id}"
            ),
            "PUT /products/:id/images/:image_id"
        );
        assert_eq!(route_name(&get, "/api/rest/orders"), "GET /orders");
    }
}
