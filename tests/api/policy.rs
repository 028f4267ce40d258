//! The policy table, route by route and user type by user type, as the spec states it:
//! 403 `Access denied` for a user type without the operation, then 405 for a caller who may
//! use the resource but not that method, else the request reaches the resource.
//!
//! The expectations are written out here from SPEC 4 and 5, not computed from the
//! gateway's own table, so a wrong row in either shows up.

use crate::helpers::*;

/// What a request must get before the resource does any work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Passes the policy: anything but 401, 403 or 405.
    Pass,
    /// 403 `Access denied`.
    Denied,
    /// 405 `Resource method not implemented yet.`
    NotImplemented,
    /// 405 `Resource does not support method.`
    NotSupported,
}
use Expect::{Denied as D, NotImplemented as N, NotSupported as S, Pass as P};

/// (method, path, guest, customer 5, admin)
const TABLE: &[(&str, &str, Expect, Expect, Expect)] = &[
    ("GET", "/products", P, P, P),
    ("POST", "/products", D, D, P),
    ("PUT", "/products", D, D, S),
    ("DELETE", "/products", D, D, S),
    ("GET", "/products/1", P, P, P),
    ("POST", "/products/1", D, D, N),
    ("PUT", "/products/1", D, D, P),
    ("DELETE", "/products/1", D, D, P),
    ("GET", "/products/category/4", P, P, P),
    ("POST", "/products/category/4", D, D, S),
    ("PUT", "/products/category/4", D, D, S),
    ("DELETE", "/products/category/4", D, D, S),
    ("GET", "/products/category_id=4", P, P, P),
    ("POST", "/products/category_id=4", D, D, S),
    ("PUT", "/products/category_id=4", D, D, S),
    ("DELETE", "/products/category_id=4", D, D, S),
    // The original's store-view routes (issue 11): read by everyone, written by nobody.
    ("GET", "/products/store/2", P, P, P),
    ("POST", "/products/store/2", D, D, S),
    ("PUT", "/products/store/2", D, D, S),
    ("DELETE", "/products/store/2", D, D, S),
    ("GET", "/products/1/store/2", P, P, P),
    ("POST", "/products/1/store/2", D, D, N),
    ("PUT", "/products/1/store/2", D, D, P),
    ("DELETE", "/products/1/store/2", D, D, N),
    ("GET", "/products/category/4/store/2", P, P, P),
    ("POST", "/products/category/4/store/2", D, D, S),
    ("GET", "/products/store/2/category/4", P, P, P),
    ("PUT", "/products/store/2/category/4", D, D, S),
    // A trailing slash is the same route.
    ("GET", "/products/", P, P, P),
    ("POST", "/products/1/", D, D, N),
    ("PUT", "/stockitems/15/", D, D, P),
    // 4.4 and 5.2, 5.4: a customer reads and changes their own record; listing (their own
    // record only), create and delete are Admin's. PUT and DELETE on the collection exist
    // for nobody; a customer, who may update, learns that with a 405.
    ("GET", "/customers", D, P, P),
    ("POST", "/customers", D, D, P),
    ("PUT", "/customers", D, N, N),
    ("DELETE", "/customers", D, D, N),
    ("GET", "/customers/5", D, P, P),
    ("POST", "/customers/5", D, D, N),
    ("PUT", "/customers/5", D, P, P),
    // Admin deletes another customer here: deleting 5 would revoke the tokens the next
    // rows use for customer 5.
    ("DELETE", "/customers/7", D, D, P),
    // 4.5 and 5.2, 5.3: a customer lists, creates, changes and deletes their own addresses.
    ("GET", "/customers/5/addresses", D, P, P),
    ("POST", "/customers/5/addresses", D, P, P),
    ("PUT", "/customers/5/addresses", D, N, N),
    ("DELETE", "/customers/5/addresses", D, N, N),
    ("GET", "/customers/addresses/7", D, P, P),
    ("POST", "/customers/addresses/7", D, N, N),
    ("PUT", "/customers/addresses/7", D, P, P),
    ("DELETE", "/customers/addresses/7", D, P, P),
    // 4.6: read-only; everyone may list (a guest has no orders), a guest reads none.
    ("GET", "/orders", P, P, P),
    ("POST", "/orders", D, D, N),
    ("PUT", "/orders", D, D, N),
    ("DELETE", "/orders", D, D, N),
    ("GET", "/orders/31", D, P, P),
    ("POST", "/orders/31", D, D, N),
    ("PUT", "/orders/31", D, D, N),
    ("DELETE", "/orders/31", D, D, N),
    // 4.1 and 5.1: stock items are Admin's; nobody deletes one, nobody creates one.
    ("GET", "/stockitems", D, D, P),
    ("POST", "/stockitems", D, D, N),
    ("PUT", "/stockitems", D, D, P),
    ("DELETE", "/stockitems", D, D, N),
    ("GET", "/stockitems/15", D, D, P),
    ("POST", "/stockitems/15", D, D, N),
    ("PUT", "/stockitems/15", D, D, P),
    ("DELETE", "/stockitems/15", D, D, N),
    // 4.3: everyone reads images, globally and per store; Admin writes them.
    ("GET", "/products/1/images", P, P, P),
    ("POST", "/products/1/images", D, D, P),
    ("PUT", "/products/1/images", D, D, N),
    ("DELETE", "/products/1/images", D, D, N),
    ("GET", "/products/1/images/store/2", P, P, P),
    ("POST", "/products/1/images/store/2", D, D, P),
    ("PUT", "/products/1/images/store/2", D, D, N),
    ("DELETE", "/products/1/images/store/2", D, D, N),
    ("GET", "/products/1/images/11", P, P, P),
    ("POST", "/products/1/images/11", D, D, N),
    ("PUT", "/products/1/images/11", D, D, P),
    ("DELETE", "/products/1/images/11", D, D, P),
    ("GET", "/products/1/images/11/store/2", P, P, P),
    ("POST", "/products/1/images/11/store/2", D, D, N),
    ("PUT", "/products/1/images/11/store/2", D, D, P),
    ("DELETE", "/products/1/images/11/store/2", D, D, P),
];

#[tokio::test]
async fn every_route_for_every_user_type() {
    let gw = Gateway::start().await;
    let mut failures = Vec::new();
    for &(verb, route, guest, customer, admin) in TABLE {
        for (who, expect) in [
            (Who::Guest, guest),
            (Who::Customer(5), customer),
            (Who::Admin, admin),
        ] {
            let r = gw
                .send(
                    gw.request(verb, route, &who)
                        .header("Accept", "application/json")
                        .header("Content-Type", "application/json")
                        .body("{\"probe\":1}"),
                )
                .await;
            let got_message = || r.messages().first().cloned().unwrap_or_default();
            let ok = match expect {
                P => {
                    ![401, 403, 405].contains(&r.status) && r.status != 404
                        || (r.status == 404 && got_message() != "Request does not match any route.")
                }
                D => r.status == 403 && got_message() == "Access denied",
                N => r.status == 405 && got_message() == "Resource method not implemented yet.",
                S => r.status == 405 && got_message() == "Resource does not support method.",
            };
            if !ok {
                failures.push(format!(
                    "{verb} {route} as {who:?}: expected {expect:?}, got {} {}",
                    r.status, r.body
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
