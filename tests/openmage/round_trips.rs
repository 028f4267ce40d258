//! The walk of `bench/round_trips.py` over OpenMage (issue 33): each operation's calls to
//! the store counted (the gateway's `storegate_upstream_call_duration_seconds`, by endpoint,
//! read before and after it) against its budget, the least number of calls the store's API
//! allows plus at most one (docs/benchmarks.md has the table and what "least" counts: a
//! product's record is the store's product, websites, categories and gallery, four calls
//! side by side, which every resource of the product shares; the store's sign-in is its
//! authorization page, five steps, then who signed in).
//!
//! Jane signs in with her password (a sign-in replaces the customer's store token, and John's
//! is the one the other scenarios sign with), adds an address and reads her own records; the
//! Admin renames product 4. Recorded from the seeded store: reset it before recording, and
//! after (these change it).

use super::*;
use serde_json::json;

/// Store calls so far, by method and endpoint.
async fn calls(stack: &Stack) -> std::collections::BTreeMap<String, u64> {
    let mut out = std::collections::BTreeMap::new();
    for line in stack.ops("/metrics").await.body.lines() {
        let Some(labels) = line.strip_prefix("storegate_upstream_call_duration_seconds_count{")
        else {
            continue;
        };
        let label = |name: &str| {
            labels
                .split(&format!("{name}=\""))
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or_default()
                .to_owned()
        };
        let count = line.rsplit(' ').next().and_then(|n| n.parse::<u64>().ok());
        *out.entry(format!("{} {}", label("method"), label("endpoint")))
            .or_default() += count.unwrap_or(0);
    }
    out
}

/// The calls made between two readings of [`calls`], named.
fn made_since(
    before: &std::collections::BTreeMap<String, u64>,
    after: &std::collections::BTreeMap<String, u64>,
) -> (u64, String) {
    let mut total = 0;
    let mut named = Vec::new();
    for (endpoint, &count) in after {
        let made = count - before.get(endpoint).copied().unwrap_or(0);
        if made > 0 {
            total += made;
            named.push(if made > 1 {
                format!("{endpoint} x{made}")
            } else {
                endpoint.clone()
            });
        }
    }
    (total, named.join(", "))
}

/// Who makes one call of the walk.
#[derive(Clone, Copy)]
enum Caller {
    Signed(Who),
    /// Jane, with the gateway's Bearer token from her sign-in.
    Jane,
}

async fn call(
    stack: &Stack,
    caller: Caller,
    bearer: &str,
    verb: &str,
    path: &str,
    body: Option<Value>,
) -> Reply {
    let url = stack.url(path);
    let method = reqwest::Method::from_bytes(verb.as_bytes()).unwrap();
    let mut request = stack
        .http
        .request(method, &url)
        .header("Accept", "application/json");
    match caller {
        Caller::Signed(who) => {
            if let Some((token, secret)) = who.token() {
                let signer =
                    Signer::new(&consumer_key(), &consumer_secret()).token(&token, &secret);
                request = request.header("Authorization", signer.header(verb, &url));
            }
        }
        Caller::Jane => request = request.header("Authorization", format!("Bearer {bearer}")),
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    Reply::read(request.send().await.expect("the gateway answers")).await
}

/// One operation of the walk: its name, caller, verb, path, body, and the least calls the
/// store's API allows.
type Operation = (
    &'static str,
    Caller,
    &'static str,
    &'static str,
    Option<Value>,
    u64,
);

#[tokio::test]
async fn every_operation_stays_within_its_store_calls() {
    let stack = Stack::start_alone("round-trips").await;
    let guest = Caller::Signed(Who::Guest);
    let admin = Caller::Signed(Who::Admin);
    let walk: Vec<Operation> = vec![
        (
            "guest product list (cold)",
            guest,
            "GET",
            "/products?limit=5",
            None,
            1,
        ),
        ("guest product (cold)", guest, "GET", "/products/1", None, 5),
        ("admin product (cold)", admin, "GET", "/products/5", None, 4),
        (
            "guest images (cold)",
            guest,
            "GET",
            "/products/3/images",
            None,
            4,
        ),
        (
            "category products (cold)",
            guest,
            "GET",
            "/products/category/2",
            None,
            1,
        ),
        (
            "customer sign-in",
            guest,
            "POST",
            "/auth/token",
            Some(json!({"username": "jane@example.com", "password": "Password123"})),
            6,
        ),
        (
            "customer product (cold, group prices)",
            Caller::Jane,
            "GET",
            "/products/2",
            None,
            7,
        ),
        (
            "customer address create",
            Caller::Jane,
            "POST",
            "/customers/2/addresses",
            Some(json!({"firstname": "Jane", "lastname": "Walker",
                "street": ["1 Round Trip Road"], "city": "Austin", "country_id": "US",
                "region": "Texas", "postcode": "73301", "telephone": "555-0100"})),
            1,
        ),
        (
            "customer own record",
            Caller::Jane,
            "GET",
            "/customers/2",
            None,
            2,
        ),
        (
            "customer addresses",
            Caller::Jane,
            "GET",
            "/customers/2/addresses",
            None,
            1,
        ),
        ("customer orders", Caller::Jane, "GET", "/orders", None, 1),
        (
            "customer order (one)",
            Caller::Jane,
            "GET",
            "/orders/2",
            None,
            1,
        ),
        (
            "admin stock list",
            admin,
            "GET",
            "/stockitems?limit=10",
            None,
            1,
        ),
        (
            "admin product update",
            admin,
            "PUT",
            "/products/4",
            Some(json!({"name": "Walked product"})),
            1,
        ),
        (
            "guest product (repeat: a hit)",
            guest,
            "GET",
            "/products/1",
            None,
            0,
        ),
        (
            "customer product (repeat: a hit)",
            Caller::Jane,
            "GET",
            "/products/2",
            None,
            0,
        ),
    ];
    let mut bearer = String::new();
    let mut over = Vec::new();
    for (name, caller, verb, path, body, least) in walk {
        let before = calls(&stack).await;
        let reply = call(&stack, caller, &bearer, verb, path, body).await;
        assert!(
            reply.status < 300,
            "{name}: {} {}",
            reply.status,
            reply.body
        );
        if path == "/auth/token" {
            bearer = reply.json()["access_token"].as_str().unwrap().to_owned();
        }
        let (made, named) = made_since(&before, &calls(&stack).await);
        eprintln!("| {name} | {made} | {least} | {named} |");
        if made > least + 1 || (least == 0 && made > 0) {
            over.push(format!("{name}: {made} calls, the least {least}"));
        }
    }
    assert!(over.is_empty(), "over budget:\n{}", over.join("\n"));
}
