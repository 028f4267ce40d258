//! An OAuth 1.0a `Authorization` header, HMAC-SHA1, as apps of the original send it: for
//! tests that need a signed call and do not bend the signature (tests/oauth has a signer
//! that can bend every part of one).

#![allow(dead_code)]

use storegate::auth::oauth::signature::{Method, base_string, encode, sign};

/// `OAuth ...` for `verb url` (its query parameters are signed too), by the consumer
/// `(key, secret)` with the access token `(token, secret)` when given, and the `extra`
/// protocol or form parameters.
pub fn oauth_header(
    verb: &str,
    url: &str,
    consumer: (&str, &str),
    token: Option<(&str, &str)>,
    extra: &[(&str, &str)],
) -> String {
    let nonce = storegate::auth::oauth::store::random_hex32();
    oauth_header_with_nonce(verb, url, consumer, token, &nonce, extra)
}

/// [`oauth_header`] with the nonce given, for tests of replays and of nonces used twice.
pub fn oauth_header_with_nonce(
    verb: &str,
    url: &str,
    consumer: (&str, &str),
    token: Option<(&str, &str)>,
    nonce: &str,
    extra: &[(&str, &str)],
) -> String {
    let mut protocol: Vec<(String, String)> = vec![
        ("oauth_consumer_key".into(), consumer.0.to_owned()),
        ("oauth_signature_method".into(), "HMAC-SHA1".into()),
        (
            "oauth_timestamp".into(),
            storegate::auth::oauth::store::now_secs().to_string(),
        ),
        ("oauth_nonce".into(), nonce.to_owned()),
        ("oauth_version".into(), "1.0".into()),
    ];
    if let Some((value, _)) = token {
        protocol.push(("oauth_token".into(), value.to_owned()));
    }
    protocol.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    let parsed = reqwest::Url::parse(url).expect("a URL");
    let mut all = protocol.clone();
    all.extend(
        parsed
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned())),
    );
    let base_uri = format!(
        "{}://{}{}",
        parsed.scheme(),
        match parsed.port() {
            Some(port) => format!("{}:{port}", parsed.host_str().unwrap_or_default()),
            None => parsed.host_str().unwrap_or_default().to_owned(),
        },
        parsed.path()
    );
    let base = base_string(verb, &base_uri, &all);
    let token_secret = token.map_or("", |(_, secret)| secret);
    protocol.push((
        "oauth_signature".into(),
        sign(Method::HmacSha1, &base, consumer.1, token_secret),
    ));
    let items: Vec<String> = protocol
        .iter()
        .map(|(k, v)| format!("{}=\"{}\"", encode(k), encode(v)))
        .collect();
    format!("OAuth {}", items.join(", "))
}

/// A consumer and one of its access tokens: `((key, secret), (token, secret))`.
pub type App = ((String, String), (String, String));

/// `OAuth ...` for `verb url` by `app` with its access token.
pub fn app_header(verb: &str, url: &str, app: &App) -> String {
    oauth_header(
        verb,
        url,
        (&app.0.0, &app.0.1),
        Some((&app.1.0, &app.1.1)),
        &[],
    )
}

/// A consumer and an access token of `owner`, written straight into the SQLite OAuth store
/// in `data_dir` (what `storegate oauth consumer add` and an import of the original's tables
/// do), with its own rate limit when `own_limit` is given: `((key, secret), (token,
/// secret))`.
pub fn register_app(
    data_dir: &std::path::Path,
    owner: storegate::auth::oauth::store::Owner,
    own_limit: Option<&str>,
) -> App {
    use storegate::auth::oauth::store::{ImportedToken, NewConsumer, random_hex32};
    let store = storegate::auth::oauth::sqlite::SqliteStore::open(data_dir).unwrap();
    let consumer = store
        .upsert_consumer(&NewConsumer {
            name: "test app".into(),
            key: random_hex32(),
            secret: random_hex32(),
            callback_url: None,
            rejected_callback_url: None,
            profile: None,
        })
        .unwrap();
    if let Some(own) = own_limit {
        let rate = storegate::config::Rate::parse(own).unwrap();
        store
            .set_consumer_rate_limit(&consumer.key, Some(rate))
            .unwrap();
    }
    let (token, secret) = (random_hex32(), random_hex32());
    store
        .import_access_token(&ImportedToken {
            consumer_id: consumer.id,
            token: token.clone(),
            secret: secret.clone(),
            owner,
        })
        .unwrap();
    ((consumer.key, consumer.secret), (token, secret))
}
