//! Signatures over natural-ordered parameters (Magento 1.9, Zend Framework 1) beside
//! RFC 5849's byte order: the same checks around either, one nonce for both.

use serde_json::Value;
use storegate::auth::oauth::signature::{self, Order};

use super::*;

const FILTERED: &str = "/products?filter[2][attribute]=sku&filter[2][like]=24-MB0%25\
&filter[10][attribute]=name&filter[10][like]=%25Bag%25";

async fn get(stack: &Stack, signer: &Signer, path: &str) -> (u16, Value) {
    let url = format!("{}/api/rest{path}", stack.origin());
    let header = signer.header("GET", &url, &[]);
    let reply = stack.get_signed(&url, &header).await;
    let body = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
    (reply.status, body)
}

fn problem(body: &Value) -> &str {
    body["messages"]["error"][0]["message"]
        .as_str()
        .unwrap_or_default()
}

/// The names of a query as they are signed: encoded, then sorted in `order`.
fn signed_names(query: &str, order: Order) -> Vec<String> {
    let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    signature::normalized(&pairs, order)
        .split('&')
        .map(|pair| pair.split('=').next().unwrap().to_owned())
        .collect()
}

#[test]
fn the_two_orders_differ_for_filter_2_and_10_but_not_for_1_and_10() {
    let query = FILTERED.split_once('?').unwrap().1;
    let bytes = signed_names(query, Order::Bytes);
    let natural = signed_names(query, Order::Natural);
    assert_ne!(bytes, natural);
    assert!(bytes[0].starts_with("filter%5B10%5D"), "{bytes:?}");
    assert!(natural[0].starts_with("filter%5B2%5D"), "{natural:?}");
    // filter[1] and filter[10]: the same order both ways once encoded.
    let alike = "filter[1][attribute]=sku&filter[10][attribute]=name";
    assert_eq!(
        signed_names(alike, Order::Bytes),
        signed_names(alike, Order::Natural)
    );
}

#[tokio::test]
async fn natural_order_is_served_as_the_signer_with_the_same_checks() {
    let stack = Stack::start().await;
    let consumer = stack.consumer("magento 1.9 app");
    let (token, secret) = dance(&stack, &consumer, true, ("operator", ADMIN_KEY)).await;
    let signer = |order| Signer {
        order,
        ..Signer::new(&consumer).token(&token, &secret)
    };

    // Either order: the Admin's filtered list (both filters applied, disabled products too).
    for order in [Order::Natural, Order::Bytes] {
        let (status, body) = get(&stack, &signer(order), FILTERED).await;
        assert_eq!(status, 200, "{order:?}: {body}");
        let mut skus: Vec<&str> = body
            .as_object()
            .unwrap_or_else(|| panic!("{body}"))
            .values()
            .map(|p| p["sku"].as_str().unwrap())
            .collect();
        skus.sort();
        assert_eq!(skus, ["24-MB01", "24-MB05"], "{order:?}");
    }

    // One nonce, whichever order verified it: a natural-order request replayed in byte
    // order (same nonce and timestamp) is refused, and the other way round.
    for (first, second) in [
        (Order::Natural, Order::Bytes),
        (Order::Bytes, Order::Natural),
    ] {
        let once = signer(first);
        assert_eq!(get(&stack, &once, FILTERED).await.0, 200);
        let again = Signer {
            order: second,
            ..once.clone()
        };
        let (status, body) = get(&stack, &again, FILTERED).await;
        assert_eq!(
            (status, problem(&body)),
            (401, "oauth_problem=nonce_used"),
            "{first:?} then {second:?}"
        );
    }

    // The same refusals as in byte order: a forged signature (which spends no nonce), a
    // stale timestamp, an unknown token.
    let genuine = signer(Order::Natural);
    let forged = Signer {
        consumer_secret: "f".repeat(32),
        ..genuine.clone()
    };
    let (status, body) = get(&stack, &forged, FILTERED).await;
    assert_eq!(
        (status, problem(&body)),
        (401, "oauth_problem=signature_invalid")
    );
    assert_eq!(get(&stack, &genuine, FILTERED).await.0, 200);
    let stale = Signer {
        timestamp: now() - 3 * 3600,
        ..signer(Order::Natural)
    };
    let (status, body) = get(&stack, &stale, FILTERED).await;
    assert_eq!(
        (status, problem(&body)),
        (401, "oauth_problem=timestamp_refused")
    );
    let unknown = Signer {
        order: Order::Natural,
        ..Signer::new(&consumer).token(&"0".repeat(32), &secret)
    };
    let (status, body) = get(&stack, &unknown, FILTERED).await;
    assert_eq!(
        (status, problem(&body)),
        (401, "oauth_problem=token_rejected")
    );
}
