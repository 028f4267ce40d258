//! OAuth 1.0a (RFC 5849, HMAC-SHA1) as an app of the original signs a call: the protocol
//! parameters in an `Authorization: OAuth ...` header, the URL's query signed with them, a
//! fresh nonce and the time now. The primitives are the gateway's (`auth::oauth::signature`,
//! themselves tested against RFC 5849's examples and real client libraries in `tests/oauth`).

use std::time::{SystemTime, UNIX_EPOCH};

use storegate::auth::oauth::signature::{self, Method};

pub struct Signer {
    consumer_key: String,
    consumer_secret: String,
    token: Option<(String, String)>,
}

impl Signer {
    pub fn new(consumer_key: &str, consumer_secret: &str) -> Signer {
        Signer {
            consumer_key: consumer_key.to_owned(),
            consumer_secret: consumer_secret.to_owned(),
            token: None,
        }
    }

    pub fn token(mut self, token: &str, secret: &str) -> Signer {
        self.token = Some((token.to_owned(), secret.to_owned()));
        self
    }

    /// `OAuth oauth_consumer_key="...", ..., oauth_signature="..."` for `verb url`.
    pub fn header(&self, verb: &str, url: &str) -> String {
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
            .to_string();
        let mut protocol = vec![
            ("oauth_consumer_key".to_owned(), self.consumer_key.clone()),
            (
                "oauth_nonce".to_owned(),
                storegate::auth::oauth::store::random_hex32(),
            ),
            ("oauth_signature_method".to_owned(), "HMAC-SHA1".to_owned()),
            ("oauth_timestamp".to_owned(), timestamp),
            ("oauth_version".to_owned(), "1.0".to_owned()),
        ];
        if let Some((token, _)) = &self.token {
            protocol.push(("oauth_token".to_owned(), token.clone()));
        }
        let parsed = reqwest::Url::parse(url).unwrap();
        let mut signed = protocol.clone();
        signed.extend(
            parsed
                .query_pairs()
                .map(|(k, v)| (k.into_owned(), v.into_owned())),
        );
        let host = match parsed.port() {
            Some(port) => format!("{}:{port}", parsed.host_str().unwrap()),
            None => parsed.host_str().unwrap().to_owned(),
        };
        let base_uri = format!("{}://{host}{}", parsed.scheme(), parsed.path());
        let base = signature::base_string(verb, &base_uri, &signed);
        let token_secret = self.token.as_ref().map_or("", |(_, s)| s.as_str());
        protocol.push((
            "oauth_signature".to_owned(),
            signature::sign(Method::HmacSha1, &base, &self.consumer_secret, token_secret),
        ));
        let items: Vec<String> = protocol
            .iter()
            .map(|(k, v)| format!("{}=\"{}\"", signature::encode(k), signature::encode(v)))
            .collect();
        format!("OAuth {}", items.join(", "))
    }
}
