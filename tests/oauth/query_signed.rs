//! OAuth parameters outside the header on `/api/rest` (RFC 5849 §3.5.2 and §3.5.3): a call
//! signed in the query string or in a form body is served as its signer, exactly as one
//! signed in the header; one whose parameters do not verify is the 401 of its
//! `oauth_problem`, never the Guest's answer (the original served it as Guest).

use serde_json::Value;

use super::*;

const JSON: &str = "application/json";
const FORM: &str = "application/x-www-form-urlencoded";

/// `url` with the signer's protocol parameters appended to its query.
fn query_signed(signer: &Signer, verb: &str, url: &str) -> String {
    let params = signer.params(verb, url, &[]);
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{}", form_text(&params))
}

fn message(body: &str) -> String {
    let value: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{body}"));
    value["messages"]["error"][0]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{body}"))
        .to_owned()
}

#[tokio::test]
async fn query_signed_calls_are_served_as_their_signer() {
    let stack = Stack::start().await;
    let consumer = stack.consumer("query app");
    let (admin, admin_secret) = dance(&stack, &consumer, true, ("operator", ADMIN_KEY)).await;
    let (customer, customer_secret) = dance(&stack, &consumer, false, (EMAIL, PASSWORD)).await;

    // Admin-only: a Guest would get 403.
    let url = format!("{}/api/rest/stockitems?limit=2", stack.origin());
    let signed = query_signed(
        &Signer::new(&consumer).token(&admin, &admin_secret),
        "GET",
        &url,
    );
    let reply = stack.send("GET", &signed, &[("Accept", JSON)], None).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let items: Value = serde_json::from_str(&reply.body).unwrap();
    assert_eq!(
        items.as_array().map(Vec::len),
        Some(2),
        "the resource saw limit=2 and none of the oauth_* parameters: {}",
        reply.body
    );

    // A customer's own record (a Guest gets 403) and orders (a Guest gets an empty list):
    // the same answers as when the customer signs in the header.
    for path in ["/customers/1", "/orders"] {
        let url = format!("{}/api/rest{path}", stack.origin());
        let signer = || Signer::new(&consumer).token(&customer, &customer_secret);
        let in_query = stack
            .send(
                "GET",
                &query_signed(&signer(), "GET", &url),
                &[("Accept", JSON)],
                None,
            )
            .await;
        let header = signer().header("GET", &url, &[]);
        let in_header = stack
            .send(
                "GET",
                &url,
                &[("Authorization", &header), ("Accept", JSON)],
                None,
            )
            .await;
        assert_eq!(in_query.status, 200, "{path}: {}", in_query.body);
        assert_eq!((in_query.status, &in_query.body), (200, &in_header.body));
        let guest = stack.send("GET", &url, &[("Accept", JSON)], None).await;
        assert_ne!(
            (guest.status, guest.body),
            (in_query.status, in_query.body),
            "{path}: the signed answer is not the Guest's"
        );
    }
}

#[tokio::test]
async fn a_form_body_carries_the_parameters_too() {
    let stack = Stack::start().await;
    let consumer = stack.consumer("form app");
    let (customer, secret) = dance(&stack, &consumer, false, (EMAIL, PASSWORD)).await;
    let url = format!("{}/api/rest/customers/1", stack.origin());
    let signer = Signer::new(&consumer).token(&customer, &secret);
    let body = form_text(&signer.params("GET", &url, &[]));
    let reply = stack
        .send(
            "GET",
            &url,
            &[("Content-Type", FORM), ("Accept", JSON)],
            Some(body.clone()),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        serde_json::from_str::<Value>(&reply.body).unwrap()["email"],
        EMAIL
    );
    // The same body again: its nonce is used.
    let again = stack
        .send(
            "GET",
            &url,
            &[("Content-Type", FORM), ("Accept", JSON)],
            Some(body),
        )
        .await;
    assert_eq!(
        (again.status, message(&again.body).as_str()),
        (401, "oauth_problem=nonce_used")
    );
}

#[tokio::test]
async fn parameters_that_do_not_verify_are_401_never_guest() {
    let stack = Stack::start().await;
    let consumer = stack.consumer("bad app");
    let (customer, secret) = dance(&stack, &consumer, false, (EMAIL, PASSWORD)).await;
    let product = format!("{}/api/rest/products/1", stack.origin());
    // A Guest's read of the product, twice: the second is a fast-path hit.
    for _ in 0..2 {
        let guest = stack.send("GET", &product, &[("Accept", JSON)], None).await;
        assert_eq!(guest.status, 200);
    }

    let good = || Signer::new(&consumer).token(&customer, &secret);
    let mut forged = good();
    forged.consumer_secret = "f".repeat(32);
    let mut stale = good();
    stale.timestamp = now() - 3 * 3600;
    let cases = [
        (
            query_signed(&forged, "GET", &product),
            "oauth_problem=signature_invalid",
        ),
        (
            query_signed(
                &good().token("0".repeat(32).as_str(), &secret),
                "GET",
                &product,
            ),
            "oauth_problem=token_rejected",
        ),
        (
            query_signed(&stale, "GET", &product),
            "oauth_problem=timestamp_refused",
        ),
        (
            format!("{product}?oauth_consumer_key={}", consumer.key),
            "oauth_problem=parameter_absent&oauth_parameters_absent=oauth_signature_method",
        ),
    ];
    for (url, expected) in cases {
        let reply = stack.send("GET", &url, &[("Accept", JSON)], None).await;
        assert_eq!(
            (reply.status, message(&reply.body).as_str()),
            (401, expected),
            "{url}"
        );
    }

    // A replay of a query-signed call.
    let once = query_signed(&good(), "GET", &product);
    let first = stack.send("GET", &once, &[("Accept", JSON)], None).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let replay = stack.send("GET", &once, &[("Accept", JSON)], None).await;
    assert_eq!(
        (replay.status, message(&replay.body).as_str()),
        (401, "oauth_problem=nonce_used")
    );

    // A Bearer header and OAuth parameters: which one was meant cannot be told.
    let both = query_signed(&good(), "GET", &product);
    let reply = stack
        .send(
            "GET",
            &both,
            &[
                ("Authorization", &format!("Bearer {ADMIN_KEY}")),
                ("Accept", JSON),
            ],
            None,
        )
        .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
}
