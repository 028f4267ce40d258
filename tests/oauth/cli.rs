//! `storegate oauth consumer add` and `storegate oauth import`, run as a user would while a
//! gateway serves from the same data folder: the gateway sees the change at once.

use std::process::Command;

use super::*;
use crate::common::http::sent;

pub fn storegate(stack: &Stack, args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_storegate"))
        .args(args)
        .env("STOREGATE_DATA_DIR", &stack.data_dir)
        .env("STOREGATE_LOG_FORMAT", "text")
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `storegate oauth consumer <args>` on the stack's store.
pub fn oauth_consumer(stack: &Stack, args: &[&str]) -> (bool, String, String) {
    let all: Vec<&str> = ["oauth", "consumer"].iter().chain(args).copied().collect();
    storegate(stack, &all)
}

/// The CLI's key and secret lines of `consumer add`.
pub fn added(out: &str) -> Consumer {
    let field = |name: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {out}"))
            .trim()
            .to_owned()
    };
    Consumer {
        key: field("key:"),
        secret: field("secret:"),
    }
}

/// `storegate oauth import --consumers <file>` on the stack's store.
pub fn import_consumers(stack: &Stack, file: &std::path::Path) -> (bool, String, String) {
    storegate(
        stack,
        &["oauth", "import", "--consumers", file.to_str().unwrap()],
    )
}

async fn call(stack: &Stack, signer: &Signer, path: &str) -> (u16, String) {
    let url = format!("{}/api/rest{path}", stack.origin());
    let response = sent(
        stack
            .http
            .get(&url)
            .header("Authorization", signer.header("GET", &url, &[]))
            .header("Accept", "application/json"),
    )
    .await;
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn consumer_add_is_seen_by_a_running_gateway() {
    let stack = Stack::start().await;
    let (ok, out, err) = oauth_consumer(&stack, &["add", "--name", "Mobile app"]);
    assert!(ok, "{err}");
    let consumer = added(&out);
    assert_eq!(consumer.key.len(), 32);
    assert_eq!(consumer.secret.len(), 32);
    assert!(out.contains("not shown again"));
    // No restart: the dance works at once with the new consumer.
    let (token, secret) = dance(&stack, &consumer, false, (EMAIL, PASSWORD)).await;
    let (status, body) = call(
        &stack,
        &Signer::new(&consumer).token(&token, &secret),
        "/customers/1",
    )
    .await;
    assert_eq!(status, 200, "{body}");

    // Chosen credentials; the same key twice is refused; bad input named.
    let (ok, out, err) = oauth_consumer(
        &stack,
        &[
            "add",
            "--name",
            "Legacy",
            "--key",
            "legacy-key",
            "--secret",
            "legacy-secret",
            "--callback",
            "https://app.example/cb",
            "--profile",
            "original",
        ],
    );
    assert!(ok, "{err}");
    assert!(out.contains("legacy-key"));
    assert!(out.contains("profile: original"), "{out}");
    let (ok, _, err) = oauth_consumer(&stack, &["add", "--name", "Again", "--key", "legacy-key"]);
    assert!(!ok);
    assert!(err.contains("already exists"), "{err}");
    let (ok, out, _) = oauth_consumer(&stack, &["list"]);
    assert!(ok);
    assert!(out.starts_with("2 consumer(s)"), "{out}");
    assert!(
        out.contains("legacy-key\tLegacy\thttps://app.example/cb\toriginal"),
        "{out}"
    );
    assert!(out.contains("\tMobile app\t-\t(the gateway's)"), "{out}");
    assert!(
        !out.contains("legacy-secret") && !out.contains(&consumer.secret),
        "{out}"
    );
    let (ok, _, err) = oauth_consumer(
        &stack,
        &["add", "--name", "Bad", "--callback", "app.example/cb"],
    );
    assert!(!ok);
    assert!(
        err.contains("--callback") && err.contains("no scheme"),
        "{err}"
    );
    let (ok, _, err) = oauth_consumer(&stack, &["add", "--name", "Bad", "--profile", "m1"]);
    assert!(!ok);
    assert!(
        err.contains("--profile: expected spec or original"),
        "{err}"
    );
}

const CONSUMERS: &str = "entity_id\tcreated_at\tupdated_at\tname\tkey\tsecret\tcallback_url\trejected_callback_url
3\t2019-04-01 10:00:00\tNULL\tShop app\tc0nsumerkey000000000000000000001\tc0nsumersecret000000000000000001\thttps://app.example/cb\tNULL
7\t2019-04-01 10:00:00\tNULL\tWith\\ttab\tc0nsumerkey000000000000000000002\tc0nsumersecret000000000000000002\tNULL\tNULL
";

const TOKENS: &str = "entity_id\tconsumer_id\tadmin_id\tcustomer_id\ttype\ttoken\tsecret\tverifier\tcallback_url\trevoked\tauthorized\tcreated_at
1\t3\tNULL\t1\taccess\taccesstokencustomer0000000000001\taccesssecretcustomer000000000001\tverifier00000000000000000000001\thttps://app.example/cb\t0\t1\t2020-01-01 00:00:00
2\t3\t1\tNULL\taccess\taccesstokenadmin0000000000000001\taccesssecretadmin000000000000001\tNULL\toob\t0\t1\t2020-01-01 00:00:00
3\t3\tNULL\t1\taccess\taccesstokenrevoked00000000000001\taccesssecretrevoked0000000000001\tNULL\toob\t1\t1\t2020-01-01 00:00:00
4\t3\tNULL\tNULL\trequest\trequesttoken0000000000000000001\trequestsecret000000000000000001\tNULL\toob\t0\t0\t2020-01-01 00:00:00
5\t99\tNULL\t1\taccess\taccesstokenorphan00000000000001\taccesssecretorphan0000000000001\tNULL\toob\t0\t1\t2020-01-01 00:00:00
";

#[tokio::test]
async fn import_of_the_original_tables() {
    let stack = Stack::start().await;
    let dir = temp_dir("import");
    let consumers = dir.join("oauth_consumer.tsv");
    let tokens = dir.join("oauth_token.tsv");
    std::fs::write(&consumers, CONSUMERS).unwrap();
    std::fs::write(&tokens, TOKENS).unwrap();
    let args = [
        "oauth",
        "import",
        "--consumers",
        consumers.to_str().unwrap(),
        "--tokens",
        tokens.to_str().unwrap(),
    ];
    let (ok, out, err) = storegate(&stack, &args);
    assert!(ok, "{err}");
    assert!(
        out.contains("imported 2 consumer(s) and 2 access token(s)"),
        "{out}"
    );
    assert!(
        out.contains("1 request token(s)") && out.contains("1 revoked"),
        "{out}"
    );
    assert!(out.contains("1 of unknown consumers"), "{out}");
    // Rerunnable.
    let (ok, out, _) = storegate(&stack, &args);
    assert!(ok);
    assert!(
        out.contains("0 access token(s)") && out.contains("2 already there"),
        "{out}"
    );

    // The app's baked-in credentials and its users' tokens work at once, with their owners.
    let consumer = Consumer {
        key: "c0nsumerkey000000000000000000001".into(),
        secret: "c0nsumersecret000000000000000001".into(),
    };
    let customer = Signer::new(&consumer).token(
        "accesstokencustomer0000000000001",
        "accesssecretcustomer000000000001",
    );
    let (status, body) = call(&stack, &customer, "/customers/1").await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = call(
        &stack,
        &Signer {
            nonce: "n2".into(),
            ..customer.clone()
        },
        "/stockitems",
    )
    .await;
    assert_eq!(status, 403, "a customer's token stays a customer's");
    let admin = Signer::new(&consumer).token(
        "accesstokenadmin0000000000000001",
        "accesssecretadmin000000000000001",
    );
    let (status, body) = call(&stack, &admin, "/stockitems").await;
    assert_eq!(status, 200, "{body}");
    // Imported apps are apps of the original: their calls get its profile.
    let (ok, out, _) = oauth_consumer(&stack, &["list"]);
    assert!(ok);
    assert!(
        out.contains("\tShop app\thttps://app.example/cb\toriginal"),
        "{out}"
    );
    let url = format!("{}/api/rest/products/1", stack.origin());
    let signer = Signer {
        nonce: "n-any".into(),
        ..admin.clone()
    };
    let reply = stack
        .send(
            "GET",
            &url,
            &[
                ("Authorization", &signer.header("GET", &url, &[])),
                ("Accept", "*/*"),
            ],
            None,
        )
        .await;
    assert!(
        reply.content_type().starts_with("application/json"),
        "{}",
        reply.content_type()
    );
    for (token, secret) in [
        (
            "accesstokenrevoked00000000000001",
            "accesssecretrevoked0000000000001",
        ),
        (
            "requesttoken0000000000000000001",
            "requestsecret000000000000000001",
        ),
    ] {
        let (status, body) = call(
            &stack,
            &Signer::new(&consumer).token(token, secret),
            "/products",
        )
        .await;
        assert_eq!(status, 401);
        assert!(body.contains("oauth_problem=token_rejected"), "{body}");
    }
    // A tab escaped in a name is a tab again.
    let store = storegate::auth::oauth::sqlite::SqliteStore::open(&stack.data_dir).unwrap();
    let second = storegate::auth::oauth::sqlite::SqliteStore::consumer_by_key(
        &store,
        "c0nsumerkey000000000000000000002",
    )
    .unwrap()
    .unwrap();
    assert_eq!(second.name, "With\ttab");

    // A malformed file is refused with its name.
    std::fs::write(&consumers, "entity_id\tkey\n1\n").unwrap();
    let (ok, _, err) = import_consumers(&stack, &consumers);
    assert!(!ok);
    assert!(err.contains("oauth_consumer.tsv"), "{err}");
}
