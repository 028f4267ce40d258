//! Store round trips per operation (issue 33): a phone's walk of 16 operations against the
//! sandbox, each one's calls to the store counted at the proxy, and how many of them ran one
//! after another: its depth, the longest chain of calls each sent after the one before had
//! its answer. The sandbox answers 40 ms late, so calls side by side overlap and calls in a
//! row do not, whatever the machine's load (no time is asserted, only the order of calls).
//!
//! Each operation has a budget of both, the same as `bench/round_trips.py` measures with
//! the sandbox 100 ms late and docs/benchmarks.md lists: the least number of round trips
//! in a row the store's API allows, plus one only for the address create (Magento 2 saves
//! addresses through the customer, and the gateway reads the customer back to be sure no
//! other writer undid the save, `resources::customer_save`). One call or round trip more
//! than its budget fails here, and so does a walk of more than 17 round trips in all.

use std::time::Duration;

use serde_json::{Value, json};
use storegate_sandbox::SandboxOptions;

use crate::harness::{Exchange, Stack};

/// One operation of the walk: who asks what, and its budget.
struct Step {
    name: &'static str,
    verb: &'static str,
    path: &'static str,
    who: Who,
    body: Option<Value>,
    /// Round trips in a row at most.
    depth: usize,
    /// Calls to the store at most.
    calls: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Who {
    Guest,
    Admin,
    Customer,
}

fn walk() -> Vec<Step> {
    let step = |name, verb, path, who, depth, calls| Step {
        name,
        verb,
        path,
        who,
        body: None,
        depth,
        calls,
    };
    vec![
        step(
            "guest product list (cold)",
            "GET",
            "/products?limit=5",
            Who::Guest,
            1,
            2,
        ),
        step(
            "guest product (cold)",
            "GET",
            "/products/6",
            Who::Guest,
            1,
            2,
        ),
        step(
            "admin product (cold)",
            "GET",
            "/products/7",
            Who::Admin,
            1,
            1,
        ),
        step(
            "guest images (cold)",
            "GET",
            "/products/1/images",
            Who::Guest,
            1,
            1,
        ),
        step(
            "category products (cold)",
            "GET",
            "/products/category/5",
            Who::Guest,
            1,
            2,
        ),
        Step {
            body: Some(json!({"username": "roni_cost@example.com", "password": "Roni-Cost-2024"})),
            ..step("customer sign-in", "POST", "/auth/token", Who::Guest, 1, 2)
        },
        step(
            "customer product (cold, group prices)",
            "GET",
            "/products/5",
            Who::Customer,
            1,
            2,
        ),
        Step {
            body: Some(json!({"firstname": "Walk", "lastname": "Er",
                "street": ["1 Round Trip Road"], "city": "Austin", "country_id": "US",
                "region": "Texas", "postcode": "73301", "telephone": "555-0100"})),
            ..step(
                "customer address create",
                "POST",
                "/customers/1/addresses",
                Who::Customer,
                3,
                3,
            )
        },
        step(
            "customer own record",
            "GET",
            "/customers/1",
            Who::Customer,
            1,
            1,
        ),
        step(
            "customer addresses",
            "GET",
            "/customers/1/addresses",
            Who::Customer,
            1,
            1,
        ),
        step("customer orders", "GET", "/orders", Who::Customer, 1, 1),
        step(
            "customer order (one)",
            "GET",
            "/orders/1",
            Who::Customer,
            1,
            1,
        ),
        step(
            "admin stock list",
            "GET",
            "/stockitems?limit=10",
            Who::Admin,
            1,
            1,
        ),
        Step {
            body: Some(json!({"name": "Walked product"})),
            ..step(
                "admin product update",
                "PUT",
                "/products/8",
                Who::Admin,
                1,
                1,
            )
        },
        step(
            "guest product (repeat: a hit)",
            "GET",
            "/products/6",
            Who::Guest,
            0,
            0,
        ),
        step(
            "customer product (repeat: a hit)",
            "GET",
            "/products/5",
            Who::Customer,
            0,
            0,
        ),
    ]
}

/// The longest chain of calls each sent after the previous one had its answer.
fn depth(calls: &[Exchange]) -> usize {
    let mut calls: Vec<&Exchange> = calls.iter().collect();
    calls.sort_by_key(|c| c.ended);
    let mut chain: Vec<usize> = Vec::with_capacity(calls.len());
    for (i, call) in calls.iter().enumerate() {
        let before = (0..i)
            .filter(|&j| calls[j].ended <= call.started)
            .map(|j| chain[j])
            .max()
            .unwrap_or(0);
        chain.push(before + 1);
    }
    chain.into_iter().max().unwrap_or(0)
}

#[tokio::test]
async fn every_cold_operation_stays_within_its_round_trips_and_calls() {
    let stack = Stack::start_on(
        SandboxOptions {
            latency: Duration::from_millis(40),
            ..SandboxOptions::default()
        },
        |_| {},
    )
    .await;
    // What the start's warm-up loaded (lookups, the product index) is not the walk's.
    let mut seen = stack.exchanges().len();
    let mut token = String::new();
    let mut total = 0;
    let mut over = Vec::new();
    for step in walk() {
        let bearer = match step.who {
            Who::Guest => None,
            Who::Admin => Some(crate::harness::ADMIN_KEY.to_owned()),
            Who::Customer => Some(token.clone()),
        };
        let reply = stack
            .call(step.verb, step.path, bearer.as_deref(), step.body.clone())
            .await;
        assert!(
            reply.status < 300,
            "{}: {} {} answered {}: {}",
            step.name,
            step.verb,
            step.path,
            reply.status,
            reply.body
        );
        if step.path == "/auth/token" {
            token = reply.json()["access_token"].as_str().unwrap().to_owned();
        }
        let exchanges = stack.exchanges();
        let calls = &exchanges[seen..];
        seen = exchanges.len();
        let trips = depth(calls);
        total += trips;
        let named: Vec<String> = calls
            .iter()
            .map(|c| format!("{} {}", c.method, c.path))
            .collect();
        eprintln!(
            "{:40} {trips} in a row (budget {}), {} calls (budget {}): {named:?}",
            step.name,
            step.depth,
            calls.len(),
            step.calls
        );
        if trips > step.depth || calls.len() > step.calls {
            over.push(format!(
                "{}: {trips} round trips in a row (budget {}), {} calls (budget {}): {named:?}",
                step.name,
                step.depth,
                calls.len(),
                step.calls
            ));
        }
        if step.depth == 0 {
            assert_eq!(reply.header("x-cache"), Some("HIT"), "{}", step.name);
        }
    }
    assert!(over.is_empty(), "over budget:\n{}", over.join("\n"));
    assert!(total <= 17, "{total} round trips in the walk, at most 17");
}
