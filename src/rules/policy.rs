//! The policy table: which user type may call which operation on which route.
//!
//! One row per route of the spec, and of the original's routes beyond it (product
//! categories and websites, an order's items, addresses and comments: its `api2.xml`
//! privileges, read in the OpenMage source). Admin may attempt everything (the original's "All"
//! resources role); Guest and Customer hold the privileges listed. The check runs before the
//! 405 checks: a user type without the operation gets 403 `Access denied`, and only a
//! caller who may use the resource learns that a method is not there (405). Ownership
//! (a customer's own record) is checked by the resource, which answers 404 so nothing about
//! another customer's data leaks.

use http::Method;

use crate::auth::{Principal, UserType};
use crate::http::ApiError;

/// A route of the spec, by resource and action type (collection or entity).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Route {
    StockItems,
    StockItem,
    Products,
    Product,
    /// `/products/store/:store`: the list in a store view.
    StoreProducts,
    /// `/products/:id/store/:store`: one product in a store view.
    StoreProduct,
    CategoryProducts,
    ProductImages,
    ProductImage,
    Customers,
    Customer,
    CustomerAddresses,
    CustomerAddress,
    Orders,
    Order,
    /// `/products/:id/categories`: the categories a product is in.
    ProductCategories,
    /// `/products/:id/categories/:category_id`: one assignment.
    ProductCategory,
    /// `/products/:id/websites`: the websites a product is in.
    ProductWebsites,
    /// `/products/:id/websites/:website_id`: one assignment.
    ProductWebsite,
    /// `/orders/:id/items`.
    OrderItems,
    /// `/orders/:id/addresses`.
    OrderAddresses,
    /// `/orders/:id/addresses/:address_type`.
    OrderAddress,
    /// `/orders/:id/comments`.
    OrderComments,
    /// `/orders/comments/:id`.
    OrderComment,
}

/// What a method does to a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    Retrieve,
    Create,
    Update,
    Delete,
}

impl Operation {
    pub const ALL: [Operation; 4] = [
        Operation::Retrieve,
        Operation::Create,
        Operation::Update,
        Operation::Delete,
    ];

    /// The operation of a method the API has. Other methods never get this far.
    pub fn of(method: &Method) -> Option<Operation> {
        match *method {
            Method::GET | Method::HEAD => Some(Operation::Retrieve),
            Method::POST => Some(Operation::Create),
            Method::PUT => Some(Operation::Update),
            Method::DELETE => Some(Operation::Delete),
            _ => None,
        }
    }
}

/// What a refused method answers for a caller that may use the resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// The resource never had the method: 405 `Resource method not implemented yet.`
    Absent,
    /// The resource has it but refuses it: 405 `Resource does not support method.`
    Refused,
}

/// One row of the table.
#[derive(Debug)]
pub struct Rule {
    pub route: Route,
    pub guest: &'static [Operation],
    pub customer: &'static [Operation],
    /// Operations the gateway serves on this route.
    pub served: &'static [Operation],
    pub missing: Missing,
}

use Operation::{Create as C, Delete as D, Retrieve as R, Update as U};

/// The table. Read it as the answer to "may this user type try this?"; the last two columns
/// say what exists.
pub const RULES: &[Rule] = &[
    // SPEC 5.1: inventory is Admin only. DELETE is refused (4.1).
    Rule {
        route: Route::StockItems,
        guest: &[],
        customer: &[],
        served: &[R, U],
        missing: Missing::Absent,
    },
    Rule {
        route: Route::StockItem,
        guest: &[],
        customer: &[],
        served: &[R, U],
        missing: Missing::Absent,
    },
    // 4.2: everyone reads products; Admin writes. Bulk update/delete of the collection is
    // not something the resource supports (405 "does not support"); POST to an entity is
    // the original's "not implemented yet".
    Rule {
        route: Route::Products,
        guest: &[R],
        customer: &[R],
        served: &[R, C],
        missing: Missing::Refused,
    },
    Rule {
        route: Route::Product,
        guest: &[R],
        customer: &[R],
        served: &[R, U, D],
        missing: Missing::Absent,
    },
    // The original's store-view routes: read by everyone. Writes of a store view's values
    // are not served (the Admin writes through the global routes).
    Rule {
        route: Route::StoreProducts,
        guest: &[R],
        customer: &[R],
        served: &[R],
        missing: Missing::Refused,
    },
    // The original's store-view update: the Admin's PUT writes that view's values.
    Rule {
        route: Route::StoreProduct,
        guest: &[R],
        customer: &[R],
        served: &[R, U],
        missing: Missing::Absent,
    },
    Rule {
        route: Route::CategoryProducts,
        guest: &[R],
        customer: &[R],
        served: &[R],
        missing: Missing::Refused,
    },
    // 4.3: images are read by everyone, written by Admin.
    Rule {
        route: Route::ProductImages,
        guest: &[R],
        customer: &[R],
        served: &[R, C],
        missing: Missing::Absent,
    },
    Rule {
        route: Route::ProductImage,
        guest: &[R],
        customer: &[R],
        served: &[R, U, D],
        missing: Missing::Absent,
    },
    // 4.4 and 5: a customer reads and changes their own record; listing all customers,
    // creating and deleting are Admin's.
    Rule {
        route: Route::Customers,
        guest: &[],
        customer: &[R, U],
        served: &[R, C],
        missing: Missing::Absent,
    },
    Rule {
        route: Route::Customer,
        guest: &[],
        customer: &[R, U],
        served: &[R, U, D],
        missing: Missing::Absent,
    },
    // 4.5: a customer manages their own addresses.
    Rule {
        route: Route::CustomerAddresses,
        guest: &[],
        customer: &[R, C, U, D],
        served: &[R, C],
        missing: Missing::Absent,
    },
    Rule {
        route: Route::CustomerAddress,
        guest: &[],
        customer: &[R, C, U, D],
        served: &[R, U, D],
        missing: Missing::Absent,
    },
    // 4.6: orders are read-only; a guest may list (and has none), only owners read one.
    Rule {
        route: Route::Orders,
        guest: &[R],
        customer: &[R],
        served: &[R],
        missing: Missing::Absent,
    },
    Rule {
        route: Route::Order,
        guest: &[],
        customer: &[R],
        served: &[R],
        missing: Missing::Absent,
    },
    // The original's product categories: everyone reads them (shoppers see the active
    // categories only); Admin assigns and removes. Its resource refused the other methods.
    Rule {
        route: Route::ProductCategories,
        guest: &[R],
        customer: &[R],
        served: &[R, C],
        missing: Missing::Refused,
    },
    Rule {
        route: Route::ProductCategory,
        guest: &[R],
        customer: &[R],
        served: &[D],
        missing: Missing::Absent,
    },
    // Product websites: Admin only (no guest or customer privilege at all).
    Rule {
        route: Route::ProductWebsites,
        guest: &[],
        customer: &[],
        served: &[R, C],
        missing: Missing::Refused,
    },
    Rule {
        route: Route::ProductWebsite,
        guest: &[],
        customer: &[],
        served: &[D],
        missing: Missing::Refused,
    },
    // An order's parts: Admin and the order's customer read them; guests have no privilege.
    // Admin adds comments. One comment by id is Admin's (the original had no customer
    // handler for it: 405 for a customer, answered by the resource).
    Rule {
        route: Route::OrderItems,
        guest: &[],
        customer: &[R],
        served: &[R],
        missing: Missing::Absent,
    },
    Rule {
        route: Route::OrderAddresses,
        guest: &[],
        customer: &[R],
        served: &[R],
        missing: Missing::Absent,
    },
    Rule {
        route: Route::OrderAddress,
        guest: &[],
        customer: &[R],
        served: &[R],
        missing: Missing::Absent,
    },
    Rule {
        route: Route::OrderComments,
        guest: &[],
        customer: &[R],
        served: &[R, C],
        missing: Missing::Absent,
    },
    Rule {
        route: Route::OrderComment,
        guest: &[],
        customer: &[R],
        served: &[R],
        missing: Missing::Absent,
    },
];

pub fn rule(route: Route) -> &'static Rule {
    RULES
        .iter()
        .find(|rule| rule.route == route)
        .expect("every route has a rule")
}

/// May this principal try this operation here, and is it served? 403 first, then 405.
pub fn authorize(
    route: Route,
    method: &Method,
    principal: Principal,
) -> Result<Operation, ApiError> {
    let operation = Operation::of(method).ok_or_else(ApiError::invalid_method)?;
    let rule = rule(route);
    let allowed = match principal.user_type() {
        UserType::Admin => true,
        UserType::Customer => rule.customer.contains(&operation),
        UserType::Guest => rule.guest.contains(&operation),
    };
    if !allowed {
        return Err(ApiError::access_denied());
    }
    if !rule.served.contains(&operation) {
        return Err(match rule.missing {
            Missing::Absent => ApiError::not_implemented(),
            Missing::Refused => ApiError::not_supported(),
        });
    }
    Ok(operation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_has_exactly_one_rule() {
        let routes = [
            Route::StockItems,
            Route::StockItem,
            Route::Products,
            Route::Product,
            Route::StoreProducts,
            Route::StoreProduct,
            Route::CategoryProducts,
            Route::ProductImages,
            Route::ProductImage,
            Route::Customers,
            Route::Customer,
            Route::CustomerAddresses,
            Route::CustomerAddress,
            Route::Orders,
            Route::Order,
            Route::ProductCategories,
            Route::ProductCategory,
            Route::ProductWebsites,
            Route::ProductWebsite,
            Route::OrderItems,
            Route::OrderAddresses,
            Route::OrderAddress,
            Route::OrderComments,
            Route::OrderComment,
        ];
        for route in routes {
            assert_eq!(
                RULES.iter().filter(|r| r.route == route).count(),
                1,
                "{route:?}"
            );
        }
        assert_eq!(RULES.len(), routes.len());
    }

    #[test]
    fn the_originals_extra_routes_have_its_privileges() {
        let customer = Principal::Customer(1);
        for (route, method, principal, status) in [
            (
                Route::ProductCategories,
                Method::GET,
                Principal::Guest,
                None,
            ),
            (Route::ProductCategories, Method::POST, customer, Some(403)),
            (
                Route::ProductCategories,
                Method::POST,
                Principal::Admin,
                None,
            ),
            (
                Route::ProductCategory,
                Method::DELETE,
                Principal::Guest,
                Some(403),
            ),
            (Route::ProductWebsites, Method::GET, customer, Some(403)),
            (
                Route::ProductWebsites,
                Method::GET,
                Principal::Guest,
                Some(403),
            ),
            (
                Route::ProductWebsite,
                Method::DELETE,
                Principal::Admin,
                None,
            ),
            (Route::OrderItems, Method::GET, Principal::Guest, Some(403)),
            (Route::OrderItems, Method::GET, customer, None),
            (Route::OrderAddress, Method::GET, customer, None),
            (Route::OrderComments, Method::POST, customer, Some(403)),
            (Route::OrderComments, Method::POST, Principal::Admin, None),
            (
                Route::OrderComment,
                Method::GET,
                Principal::Guest,
                Some(403),
            ),
            (Route::OrderItems, Method::PUT, Principal::Admin, Some(405)),
        ] {
            let got = authorize(route, &method, principal)
                .err()
                .map(|e| e.status().as_u16());
            assert_eq!(got, status, "{route:?} {method} {principal:?}");
        }
    }

    #[test]
    fn permission_comes_before_405() {
        let guest = Principal::Guest;
        let err = authorize(Route::StockItem, &Method::DELETE, guest).unwrap_err();
        assert_eq!(err.status().as_u16(), 403);
        let err = authorize(Route::StockItem, &Method::DELETE, Principal::Admin).unwrap_err();
        assert_eq!(err.status().as_u16(), 405);
        let err = authorize(Route::Orders, &Method::POST, Principal::Customer(1)).unwrap_err();
        assert_eq!(err.status().as_u16(), 403);
        let err = authorize(Route::Orders, &Method::POST, Principal::Admin).unwrap_err();
        assert_eq!(err.first_message(), "Resource method not implemented yet.");
        let err = authorize(Route::Products, &Method::PUT, Principal::Admin).unwrap_err();
        assert_eq!(err.first_message(), "Resource does not support method.");
    }
}
