//! The dance and every refusal, with the original's answers.

use serde_json::Value;

use super::*;
use crate::common::http::sent;

async fn initiate(stack: &Stack, signer: &Signer) -> (u16, String, String) {
    let url = format!("{}/oauth/initiate", stack.origin());
    let header = signer.header("POST", &url, &[]);
    let reply = stack
        .send("POST", &url, &[("Authorization", &header)], None)
        .await;
    (reply.status, reply.content_type(), reply.body)
}

#[tokio::test]
async fn initiate_answers_as_the_original() {
    let stack = Stack::start().await;
    let consumer = stack.consumer("app");
    let signed = || Signer::new(&consumer).param("oauth_callback", CALLBACK);

    let (status, content_type, body) = initiate(&stack, &signed()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(content_type, "application/x-www-form-urlencoded");
    let answer = form_map(&body);
    assert_eq!(answer["oauth_token"].len(), 32);
    assert_eq!(answer["oauth_token_secret"].len(), 32);
    assert_eq!(answer["oauth_callback_confirmed"], "true");

    let cases: Vec<(Signer, u16, &str)> = vec![
        (
            Signer::new(&consumer),
            400,
            "oauth_problem=parameter_absent&oauth_parameters_absent=oauth_callback",
        ),
        (
            Signer::new(&Consumer {
                key: "f".repeat(32),
                secret: consumer.secret.clone(),
            })
            .param("oauth_callback", CALLBACK),
            401,
            "oauth_problem=consumer_key_rejected",
        ),
        (
            Signer {
                consumer_secret: "wrong".into(),
                ..signed()
            },
            401,
            "oauth_problem=signature_invalid",
        ),
        (
            Signer {
                timestamp: now() + 4000,
                ..signed()
            },
            400,
            "oauth_problem=timestamp_refused",
        ),
        (
            Signer {
                timestamp: now() - 3 * 3600,
                ..signed()
            },
            400,
            "oauth_problem=timestamp_refused",
        ),
        (
            Signer {
                method: "RSA-SHA1",
                ..signed()
            },
            401,
            "oauth_problem=signature_method_rejected",
        ),
        (
            Signer {
                method: "MD5",
                ..signed()
            },
            400,
            "oauth_problem=signature_method_rejected",
        ),
        (
            Signer::new(&consumer).param("oauth_callback", "not a url"),
            400,
            "oauth_problem=parameter_rejected",
        ),
    ];
    for (signer, status, body) in cases {
        let (got, content_type, text) = initiate(&stack, &signer).await;
        assert_eq!((got, text.as_str()), (status, body), "{signer:?}");
        assert_eq!(content_type, "application/x-www-form-urlencoded");
    }

    // The original served clocks running behind; 4000 s is still inside the window.
    let (status, _, body) = initiate(
        &stack,
        &Signer {
            timestamp: now() - 4000,
            ..signed()
        },
    )
    .await;
    assert_eq!(status, 200, "{body}");

    // oauth_version other than 1.0; a missing signature method.
    let url = format!("{}/oauth/initiate", stack.origin());
    let header = signed()
        .header("POST", &url, &[])
        .replace("oauth_version=\"1.0\"", "oauth_version=\"2.0\"");
    let reply = stack
        .send("POST", &url, &[("Authorization", &header)], None)
        .await;
    assert_eq!(
        (reply.status, reply.body.as_str()),
        (400, "oauth_problem=version_rejected")
    );
    let header = signed()
        .header("POST", &url, &[])
        .replace("oauth_signature_method=\"HMAC-SHA1\", ", "");
    let reply = stack
        .send("POST", &url, &[("Authorization", &header)], None)
        .await;
    assert_eq!(
        (reply.status, reply.body.as_str()),
        (
            400,
            "oauth_problem=parameter_absent&oauth_parameters_absent=oauth_signature_method"
        )
    );

    // GET is accepted, with the parameters in the query string; POST with them in the body.
    let query = form_text(&signed().params("GET", &url, &[]));
    let reply = stack
        .send("GET", &format!("{url}?{query}"), &[], None)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = form_text(&signed().params("POST", &url, &[]));
    let reply = stack
        .send("POST", &url, &[("Content-Type", FORM)], Some(body))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

async fn api(
    stack: &Stack,
    signer: &Signer,
    verb: &str,
    path: &str,
    accept: &str,
) -> (u16, String) {
    let url = format!("{}/api/rest{path}", stack.origin());
    let header = signer.header(verb, &url, &[]);
    let reply = stack
        .send(
            verb,
            &url,
            &[("Authorization", &header), ("Accept", accept)],
            None,
        )
        .await;
    (reply.status, reply.body)
}

fn problem(body: &str) -> String {
    let value: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{body}"));
    value["messages"]["error"][0]["message"]
        .as_str()
        .unwrap()
        .to_owned()
}

const JSON: &str = "application/json";
const FORM: &str = "application/x-www-form-urlencoded";

#[tokio::test]
async fn signed_calls_replays_forgeries_and_tokens() {
    let stack = Stack::start().await;
    let consumer = stack.consumer("app");
    let (token, secret) = dance(&stack, &consumer, false, (EMAIL, PASSWORD)).await;
    let signer = || Signer::new(&consumer).token(&token, &secret);

    // The customer's own record; admin-only resources are refused as for any customer.
    let (status, body) = api(&stack, &signer(), "GET", "/customers/1", JSON).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = api(&stack, &signer(), "GET", "/stockitems", JSON).await;
    assert_eq!((status, problem(&body).as_str()), (403, "Access denied"));

    // Signed without the port, as the original's clients did: also accepted.
    let url = format!("{}/api/rest/customers/1", stack.origin());
    let portless = Signer {
        signed_url: Some("http://127.0.0.1/api/rest/customers/1".to_owned()),
        ..signer()
    };
    let header = portless.header("GET", &url, &[]);
    let reply = stack
        .send(
            "GET",
            &url,
            &[("Authorization", &header), ("Accept", JSON)],
            None,
        )
        .await;
    assert_eq!(reply.status, 200);
    // Another host: not what the client sent.
    let elsewhere = Signer {
        signed_url: Some("http://shop.example/api/rest/customers/1".to_owned()),
        ..signer()
    };
    let header = elsewhere.header("GET", &url, &[]);
    let reply = stack
        .send(
            "GET",
            &url,
            &[("Authorization", &header), ("Accept", JSON)],
            None,
        )
        .await;
    assert_eq!(
        (reply.status, problem(&reply.body).as_str()),
        (401, "oauth_problem=signature_invalid")
    );

    // A replay: the same nonce again is refused, also with another timestamp in the window.
    let once = signer();
    assert_eq!(api(&stack, &once, "GET", "/products", JSON).await.0, 200);
    let (status, body) = api(&stack, &once, "GET", "/products", JSON).await;
    assert_eq!(
        (status, problem(&body).as_str()),
        (401, "oauth_problem=nonce_used")
    );
    let later = Signer {
        timestamp: once.timestamp - 60,
        ..once.clone()
    };
    let (status, body) = api(&stack, &later, "GET", "/products", JSON).await;
    assert_eq!(
        (status, problem(&body).as_str()),
        (401, "oauth_problem=nonce_used")
    );

    // A forged signature does not use the nonce up: the genuine request still passes.
    let genuine = signer();
    let forged = Signer {
        consumer_secret: "f".repeat(32),
        ..genuine.clone()
    };
    let (status, body) = api(&stack, &forged, "GET", "/products", JSON).await;
    assert_eq!(
        (status, problem(&body).as_str()),
        (401, "oauth_problem=signature_invalid")
    );
    assert_eq!(api(&stack, &genuine, "GET", "/products", JSON).await.0, 200);

    // The error tree in XML too.
    let (status, body) = api(&stack, &forged, "GET", "/products", "application/xml").await;
    assert_eq!(status, 401);
    assert!(
        body.contains("<message>oauth_problem=signature_invalid</message>"),
        "{body}"
    );

    for (bent, expected) in [
        (
            signer().token(&"0".repeat(32), &secret),
            "oauth_problem=token_rejected",
        ),
        (
            Signer {
                timestamp: now() + 4000,
                ..signer()
            },
            "oauth_problem=timestamp_refused",
        ),
        (
            Signer {
                method: "RSA-SHA1",
                ..signer()
            },
            "oauth_problem=signature_method_rejected",
        ),
        (
            Signer::new(&consumer),
            "oauth_problem=parameter_absent&oauth_parameters_absent=oauth_token",
        ),
    ] {
        let (status, body) = api(&stack, &bent, "GET", "/products", JSON).await;
        assert_eq!(
            (status, problem(&body).as_str()),
            (401, expected),
            "{bent:?}"
        );
    }
    // HMAC-SHA256 and PLAINTEXT.
    for method in ["HMAC-SHA256", "PLAINTEXT"] {
        let (status, body) = api(
            &stack,
            &Signer { method, ..signer() },
            "GET",
            "/products",
            JSON,
        )
        .await;
        assert_eq!(status, 200, "{method}: {body}");
    }

    // OAuth parameters in the query string alone do not authenticate (the original: Guest).
    let url = format!("{}/api/rest/stockitems", stack.origin());
    let query = form_text(&signer().params("GET", &url, &[]));
    let reply = stack
        .send("GET", &format!("{url}?{query}"), &[("Accept", JSON)], None)
        .await;
    assert_eq!(reply.status, 403);

    // Bearer keeps working side by side.
    let admin = format!("Bearer {ADMIN_KEY}");
    let reply = stack
        .send(
            "GET",
            &url,
            &[("Authorization", &admin), ("Accept", JSON)],
            None,
        )
        .await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn admin_dance_listing_and_revocation() {
    let stack = Stack::start().await;
    let consumer = stack.consumer("back office");
    let (admin_token, admin_secret) = dance(&stack, &consumer, true, ("operator", ADMIN_KEY)).await;
    let admin = || Signer::new(&consumer).token(&admin_token, &admin_secret);
    let (status, body) = api(&stack, &admin(), "GET", "/stockitems", JSON).await;
    assert_eq!(status, 200, "{body}");
    let (customer_token, customer_secret) =
        dance(&stack, &consumer, false, (EMAIL, PASSWORD)).await;
    let customer = || Signer::new(&consumer).token(&customer_token, &customer_secret);

    // The listing: Admin only (OAuth or Bearer), no secrets.
    let (status, body) = api(&stack, &customer(), "GET", "/oauth/tokens", JSON).await;
    assert_eq!((status, problem(&body).as_str()), (403, "Access denied"));
    let (status, body) = api(&stack, &admin(), "GET", "/oauth/tokens", JSON).await;
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains(&customer_secret) && !body.contains(&customer_token));
    let list: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 2);
    let (status, body) = api(
        &stack,
        &admin(),
        "GET",
        "/oauth/tokens?limit=1&page=2",
        JSON,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let second: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(second.as_array().unwrap().len(), 1);
    assert_eq!(second[0]["id"], list[1]["id"]);
    let (status, body) = api(&stack, &admin(), "GET", "/oauth/tokens?limit=0", JSON).await;
    assert_eq!(
        (status, problem(&body).as_str()),
        (400, "Invalid value for \"limit\" in request.")
    );
    let reply = stack
        .send(
            "GET",
            &format!("{}/api/rest/oauth/tokens?customer_id=1", stack.origin()),
            &[
                ("Authorization", &format!("Bearer {ADMIN_KEY}")),
                ("Accept", JSON),
            ],
            None,
        )
        .await;
    let mine: Value = serde_json::from_str(&reply.body).unwrap();
    let entries = mine.as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["user_type"], "customer");
    assert_eq!(entries[0]["consumer_name"], "back office");
    let id = entries[0]["id"].as_i64().unwrap();

    // Revoke the customer's token: refused from the next call on; the admin's still works.
    let (status, _) = api(
        &stack,
        &admin(),
        "DELETE",
        &format!("/oauth/tokens/{id}"),
        JSON,
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = api(&stack, &customer(), "GET", "/products", JSON).await;
    assert_eq!(
        (status, problem(&body).as_str()),
        (401, "oauth_problem=token_rejected")
    );
    assert_eq!(api(&stack, &admin(), "GET", "/products", JSON).await.0, 200);
    let (status, _) = api(&stack, &admin(), "DELETE", "/oauth/tokens/999999", JSON).await;
    assert_eq!(status, 404);
    let (status, _) = api(&stack, &admin(), "POST", "/oauth/tokens", JSON).await;
    assert_eq!(status, 405);
}

#[tokio::test]
async fn a_deleted_customer_loses_every_token() {
    let stack = Stack::start().await;
    let consumer = stack.consumer("app");
    // A customer of our own, created by the Admin.
    let email = format!("oauth-{}@example.com", now());
    let response = sent(
        stack
            .http
            .post(format!("{}/api/rest/customers", stack.origin()))
            .bearer_auth(ADMIN_KEY)
            .header("Content-Type", JSON)
            .json(&serde_json::json!({
                "firstname": "Olga", "lastname": "Auth", "email": email,
                "password": "Secret-Pass-123", "website_id": 1, "group_id": 1
            })),
    )
    .await;
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
    let (token, secret) = dance(&stack, &consumer, false, (&email, "Secret-Pass-123")).await;
    let bearer: Value = crate::common::http::json_of(
        stack
            .http
            .post(format!("{}/api/rest/auth/token", stack.origin()))
            .header("Content-Type", JSON)
            .header("Accept", JSON)
            .json(&serde_json::json!({"username": email, "password": "Secret-Pass-123"})),
    )
    .await;
    let id = bearer["customer_id"].as_u64().unwrap();
    let signer = || Signer::new(&consumer).token(&token, &secret);
    assert_eq!(
        api(&stack, &signer(), "GET", &format!("/customers/{id}"), JSON)
            .await
            .0,
        200
    );

    let admin = format!("Bearer {ADMIN_KEY}");
    let url = format!("{}/api/rest/customers/{id}", stack.origin());
    let reply = stack
        .send("DELETE", &url, &[("Authorization", &admin)], None)
        .await;
    assert_eq!(reply.status, 200);
    let (status, body) = api(&stack, &signer(), "GET", "/products", JSON).await;
    assert_eq!(
        (status, problem(&body).as_str()),
        (401, "oauth_problem=token_rejected")
    );
    let revoked = format!("Bearer {}", bearer["access_token"].as_str().unwrap());
    let url = format!("{}/api/rest/products", stack.origin());
    let reply = stack
        .send("GET", &url, &[("Authorization", &revoked)], None)
        .await;
    assert_eq!(reply.status, 401);
}

#[tokio::test]
async fn authorize_pages_refuse_forgery_and_bad_links() {
    let stack = Stack::start().await;
    let consumer = stack.consumer("app");
    let (_, _, body) = initiate(
        &stack,
        &Signer::new(&consumer).param("oauth_callback", "oob"),
    )
    .await;
    let token = form_map(&body)["oauth_token"].clone();

    let mut browser = Browser::default();
    let page = browser
        .send(&stack, "GET", "/oauth/authorize?oauth_token=nope", &[])
        .await;
    assert_eq!(page.status, 400);
    assert!(page.body.contains("expired"));
    let page = browser
        .send(
            &stack,
            "GET",
            &format!("/oauth/authorize/simple?oauth_token={token}"),
            &[],
        )
        .await;
    assert_eq!(page.status, 200);
    assert_eq!(page.headers["content-type"], "text/html; charset=utf-8");
    assert!(page.body.contains("action=\"/oauth/authorize/simple\""));
    assert!(page.body.contains("name=\"login[username]\""));
    let key = page.form_key();
    let login = [("login[username]", EMAIL), ("login[password]", PASSWORD)];

    // Another browser (no cookie) with this browser's form key: refused (CSRF).
    let mut attacker = Browser::default();
    let page = attacker
        .send(
            &stack,
            "POST",
            "/oauth/authorize",
            &[
                ("oauth_token", &token),
                ("form_key", &key),
                login[0],
                login[1],
            ],
        )
        .await;
    assert_eq!(page.status, 403);
    assert!(page.body.contains("Invalid form key"));
    // A wrong form key in the right browser.
    let page = browser
        .send(
            &stack,
            "POST",
            "/oauth/authorize",
            &[
                ("oauth_token", &token),
                ("form_key", "0"),
                login[0],
                login[1],
            ],
        )
        .await;
    assert_eq!(page.status, 403);
    // Confirming without signing in.
    let page = browser
        .send(
            &stack,
            "POST",
            "/oauth/authorize/confirm",
            &[("oauth_token", &token), ("form_key", &key)],
        )
        .await;
    assert_eq!(page.status, 401);
    // The admin page does not take a customer's password.
    let page = browser
        .send(
            &stack,
            "POST",
            "/admin/oauth_authorize",
            &[
                ("oauth_token", &token),
                ("form_key", &key),
                ("login[password]", PASSWORD),
            ],
        )
        .await;
    assert_eq!(page.status, 401);

    // Sign in, then confirm: `oob` shows the verifier instead of redirecting.
    let page = browser
        .send(
            &stack,
            "POST",
            "/oauth/authorize",
            &[
                ("oauth_token", &token),
                ("form_key", &key),
                login[0],
                login[1],
            ],
        )
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    // The sign-in cookie is worth nothing in another browser, even with that browser's own
    // valid form key.
    let mut thief = Browser::default();
    let page = thief
        .send(
            &stack,
            "GET",
            &format!("/oauth/authorize?oauth_token={token}"),
            &[],
        )
        .await;
    let thief_key = page.form_key();
    thief.cookies.insert(
        "sg_oauth_signin".into(),
        browser.cookies["sg_oauth_signin"].clone(),
    );
    let page = thief
        .send(
            &stack,
            "POST",
            "/oauth/authorize/confirm",
            &[("oauth_token", &token), ("form_key", &thief_key)],
        )
        .await;
    assert_eq!(page.status, 401);
    // Confirming by GET (a link another site could plant) is refused.
    let page_get = browser
        .send(
            &stack,
            "GET",
            &format!("/oauth/authorize/confirm?oauth_token={token}&form_key={key}"),
            &[],
        )
        .await;
    assert_eq!(page_get.status, 403);
    let page = browser
        .send(
            &stack,
            "POST",
            "/oauth/authorize/confirm",
            &[("oauth_token", &token), ("form_key", &key)],
        )
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    let verifier = regex::Regex::new(r#"id="oauth_verifier">([0-9a-f]{32})<"#)
        .unwrap()
        .captures(&page.body)
        .unwrap_or_else(|| panic!("{}", page.body))[1]
        .to_owned();
    assert_eq!(verifier.len(), 32);
    // The link is used up.
    let page = browser
        .send(
            &stack,
            "GET",
            &format!("/oauth/authorize?oauth_token={token}"),
            &[],
        )
        .await;
    assert_eq!(page.status, 400);

    // /oauth/token: a wrong verifier is token_rejected; the right one works once.
    let url = format!("{}/oauth/token", stack.origin());
    let request_secret = form_map(&body)["oauth_token_secret"].clone();
    for (verifier, status, answer) in [
        ("0".repeat(32), 401, Some("oauth_problem=token_rejected")),
        (verifier.clone(), 200, None),
        (verifier.clone(), 401, Some("oauth_problem=token_rejected")),
    ] {
        let header = Signer::new(&consumer)
            .token(&token, &request_secret)
            .param("oauth_verifier", &verifier)
            .header("POST", &url, &[]);
        let reply = stack
            .send("POST", &url, &[("Authorization", &header)], None)
            .await;
        assert_eq!(reply.status, status);
        if let Some(answer) = answer {
            assert_eq!(reply.body, answer);
        }
    }
}

#[tokio::test]
async fn forwarded_headers_count_only_from_trusted_proxies() {
    let url_signed = "https://shop.example/api/rest/products";
    for (trusted, expected) in [(false, 401), (true, 200)] {
        let stack = Stack::with(|config| {
            if trusted {
                config.trusted_proxies = vec!["127.0.0.0/8".parse().unwrap()];
            }
        })
        .await;
        let consumer = stack.consumer("app");
        let (token, secret) = dance(&stack, &consumer, false, (EMAIL, PASSWORD)).await;
        let signer = Signer {
            signed_url: Some(url_signed.to_owned()),
            ..Signer::new(&consumer).token(&token, &secret)
        };
        let url = format!("{}/api/rest/products", stack.origin());
        let header = signer.header("GET", &url, &[]);
        let forwarded = [
            ("Authorization", header.as_str()),
            ("X-Forwarded-Proto", "https"),
            ("X-Forwarded-Host", "shop.example"),
        ];
        let reply = stack.send("GET", &url, &forwarded, None).await;
        assert_eq!(reply.status, expected, "trusted: {trusted}");
    }
}

#[tokio::test]
async fn access_tokens_expire_only_with_a_ttl() {
    let stack = Stack::with(|config| {
        config.oauth_token_ttl = Some(std::time::Duration::from_secs(1));
    })
    .await;
    let consumer = stack.consumer("app");
    let (token, secret) = dance(&stack, &consumer, false, (EMAIL, PASSWORD)).await;
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let (status, body) = api(
        &stack,
        &Signer::new(&consumer).token(&token, &secret),
        "GET",
        "/products",
        JSON,
    )
    .await;
    assert_eq!(
        (status, problem(&body).as_str()),
        (401, "oauth_problem=token_expired")
    );
}

#[tokio::test]
async fn signed_form_bodies_count() {
    // A form body's fields are part of the signature: changing one breaks it.
    let stack = Stack::start().await;
    let consumer = stack.consumer("app");
    let (token, secret) = dance(&stack, &consumer, false, (EMAIL, PASSWORD)).await;
    let url = format!("{}/api/rest/customers/1", stack.origin());
    let signer = Signer::new(&consumer).token(&token, &secret);
    let header = signer.header("PUT", &url, &[("firstname", "Form")]);
    let headers = [
        ("Authorization", header.as_str()),
        ("Content-Type", FORM),
        ("Accept", JSON),
    ];
    let reply = stack
        .send("PUT", &url, &headers, Some("firstname=Other".into()))
        .await;
    assert_eq!(
        (reply.status, problem(&reply.body).as_str()),
        (401, "oauth_problem=signature_invalid")
    );
}

#[tokio::test]
async fn rejecting_uses_the_token_up() {
    let stack = Stack::start().await;
    let consumer = stack.consumer("app");
    // A consumer with a rejected-callback URL, as the original's form had.
    let store = storegate::auth::oauth::sqlite::SqliteStore::open(&stack.data_dir).unwrap();
    let with_url = Consumer {
        key: storegate::auth::oauth::store::random_hex32(),
        secret: storegate::auth::oauth::store::random_hex32(),
    };
    storegate::auth::oauth::sqlite::SqliteStore::upsert_consumer(
        &store,
        &storegate::auth::oauth::store::NewConsumer {
            name: "with rejected url".into(),
            key: with_url.key.clone(),
            secret: with_url.secret.clone(),
            callback_url: None,
            rejected_callback_url: Some("https://app.example/rejected".into()),
            profile: None,
        },
    )
    .unwrap();

    // As the original: to the rejected callback, or else back to the app's own callback,
    // with the request token and `rejected=1` (a phone's in-app browser closes only on a
    // redirect to the app); an `oob` request has nowhere to go and gets a page.
    for (consumer, callback, expected) in [
        (&consumer, CALLBACK, Some(CALLBACK)),
        (&with_url, CALLBACK, Some("https://app.example/rejected")),
        (&consumer, "oob", None),
    ] {
        let (_, _, body) = initiate(
            &stack,
            &Signer::new(consumer).param("oauth_callback", callback),
        )
        .await;
        let token = form_map(&body)["oauth_token"].clone();
        let mut browser = Browser::default();
        let page = browser
            .send(
                &stack,
                "GET",
                &format!("/oauth/authorize?oauth_token={token}"),
                &[],
            )
            .await;
        let key = page.form_key();
        let page = browser
            .send(
                &stack,
                "POST",
                "/oauth/authorize",
                &[
                    ("oauth_token", &token),
                    ("form_key", &key),
                    ("login[username]", EMAIL),
                    ("login[password]", PASSWORD),
                ],
            )
            .await;
        assert_eq!(page.status, 200);
        let page = browser
            .send(
                &stack,
                "POST",
                "/oauth/authorize/reject",
                &[("oauth_token", &token), ("form_key", &key)],
            )
            .await;
        match expected {
            Some(target) => {
                assert_eq!(page.status, 302, "{}", page.body);
                assert_eq!(
                    page.location(),
                    format!("{target}?oauth_token={token}&rejected=1")
                );
            }
            None => {
                assert_eq!(page.status, 200, "{}", page.body);
                assert!(page.body.contains("Access rejected"));
            }
        }
        let page = browser
            .send(
                &stack,
                "GET",
                &format!("/oauth/authorize?oauth_token={token}"),
                &[],
            )
            .await;
        assert_eq!(page.status, 400, "a rejected request token is gone");
    }
}

/// A consumer registered with the original's profile: its signed calls get the original's
/// formats (`*/*` is JSON, `magento_api` XML, its JSON types), a consumer without a profile
/// and Bearer calls get the gateway's, and neither is served the other's cached answer.
#[tokio::test]
async fn a_consumers_profile_decides_its_formats() {
    use storegate::context::profile::Profile;
    let stack = Stack::start().await;
    let legacy = stack.consumer_in("legacy app", Some(Profile::Original));
    let plain = stack.consumer("new app");
    let (legacy_token, legacy_secret) = dance(&stack, &legacy, true, ("operator", ADMIN_KEY)).await;
    let (plain_token, plain_secret) = dance(&stack, &plain, true, ("operator", ADMIN_KEY)).await;
    let legacy_admin = || Signer::new(&legacy).token(&legacy_token, &legacy_secret);
    let plain_admin = || Signer::new(&plain).token(&plain_token, &plain_secret);

    for _ in 0..2 {
        // Twice: the second answer may come from the cache, and must still be this profile's.
        let (status, body) = api(&stack, &legacy_admin(), "GET", "/products/1", "*/*").await;
        assert_eq!(status, 200, "{body}");
        let product: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{body}"));
        // The original's JSON types: ISO 8601 dates on a single product.
        assert!(
            product["created_at"].as_str().unwrap().contains('T'),
            "{body}"
        );
        let (_, xml) = api(
            &stack,
            &legacy_admin(),
            "GET",
            "/products/1",
            "application/xml",
        )
        .await;
        assert!(xml.contains("<magento_api>"), "{xml}");

        let (status, body) = api(&stack, &plain_admin(), "GET", "/products/1", "*/*").await;
        assert_eq!(status, 200);
        assert!(body.contains("<service_api>"), "{body}");
        let (_, json) = api(&stack, &plain_admin(), "GET", "/products/1", JSON).await;
        let product: Value = serde_json::from_str(&json).unwrap();
        assert!(
            !product["created_at"].as_str().unwrap().contains('T'),
            "{json}"
        );

        let bearer = stack
            .send(
                "GET",
                &format!("{}/api/rest/products/1", stack.origin()),
                &[
                    ("Authorization", &format!("Bearer {ADMIN_KEY}")),
                    ("Accept", "*/*"),
                ],
                None,
            )
            .await;
        bearer.assert_contains("<service_api>");
    }
    // Even a refusal (a forged signature) is in the consumer's formats.
    let forged = Signer {
        consumer_secret: "f".repeat(32),
        ..legacy_admin()
    };
    let (status, body) = api(&stack, &forged, "GET", "/products/1", "*/*").await;
    assert_eq!(
        (status, problem(&body).as_str()),
        (401, "oauth_problem=signature_invalid")
    );
}
