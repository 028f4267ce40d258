//! What never reaches a cassette: credentials always, personal data on request.
//!
//! The same [`Scrubber`] runs on every request before it is written (recording) and
//! before it is looked up (replay), so a scrubbed or masked value still matches: a
//! password becomes `[scrubbed]` on both sides, an e-mail the same fake on both sides.
//!
//! Always scrubbed: the `Authorization` and cookie headers (a Bearer token, an OAuth 1.0a
//! signature with its consumer key and token); the values of `oauth_*` query parameters;
//! the gateway's own credential and any token a store handed out during the recording,
//! wherever they appear; password and token fields of JSON bodies (at any depth); the
//! answers of the endpoints each store's wire names as handing out credentials
//! (`WireShape::token_endpoints`, `form_token_endpoints`). Operator rules add header names,
//! JSON paths and regular expressions. PII masking ([`super::mask`]) replaces e-mails,
//! names and telephones by consistent fakes.

use std::collections::BTreeMap;
use std::sync::RwLock;

use regex::Regex;
use serde_json::Value;

use super::cassette::{Request, Response};
use super::json_path::JsonPath;
use super::mask::Masker;
use super::wires::Wires;

pub const SCRUBBED: &str = "[scrubbed]";

/// Body fields that hold credentials, wherever they are.
const SECRET_FIELDS: &[&str] = &[
    "password",
    "password_hash",
    "new_password",
    "newPassword",
    "current_password",
    "currentPassword",
    "rp_token",
    "confirmation",
    "token",
    "access_token",
    "refresh_token",
];

/// Headers whose values never reach a cassette.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "cookie",
    "set-cookie",
    "proxy-authorization",
];

/// Headers not worth recording: they change on every call or describe the connection.
const NOISE_HEADERS: &[&str] = &[
    "connection",
    "content-length",
    "date",
    "keep-alive",
    "transfer-encoding",
    "user-agent",
    "host",
    "x-request-id",
];

/// A form body (`login[username]=...&login[password]=...`, a store's login page) with the
/// values of its credential fields scrubbed: a field whose name, or the part of it in
/// brackets, is one of [`SECRET_FIELDS`], the form's `form_key` and its OAuth parameters (so
/// a value scrubbed in a recording and the same value replayed are written alike). Anything that is not such a form comes back as it
/// was.
fn form_secrets(text: &str) -> String {
    let looks_like_form =
        !text.is_empty() && text.contains('=') && !text.trim_start().starts_with(['{', '[', '<']);
    if !looks_like_form {
        return text.to_owned();
    }
    let secret = |name: &str| {
        let inner = name
            .rsplit_once('[')
            .map_or(name, |(_, rest)| rest.trim_end_matches(']'));
        // A login form's `form_key` is its session's anti-forgery token: a secret of that
        // session, and different in every recording of the same login.
        SECRET_FIELDS.contains(&inner)
            || SECRET_FIELDS.contains(&name)
            || name == "form_key"
            || oauth_parameter(name)
    };
    let pairs: Vec<(String, String)> = form_urlencoded::parse(text.as_bytes())
        .map(|(n, v)| (n.into_owned(), v.into_owned()))
        .collect();
    if !pairs.iter().any(|(n, _)| secret(n)) {
        return text.to_owned();
    }
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(
            pairs
                .iter()
                .map(|(n, v)| (n.as_str(), if secret(n) { SCRUBBED } else { v.as_str() })),
        )
        .finish()
}

/// Query parameters of OAuth 1.0a (RFC 5849 §3.5.3: a request may be signed in its query):
/// credentials, and a nonce, timestamp and signature that differ on every call. Their
/// values are scrubbed, so a recorded call and its replay still match.
fn oauth_parameter(name: &str) -> bool {
    name.starts_with("oauth_")
}

/// The operator's rules, as configured.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub headers: Vec<String>,
    pub json_paths: Vec<String>,
    pub patterns: Vec<String>,
    /// Some(key): mask personal data with fakes keyed by it.
    pub mask_key: Option<Vec<u8>>,
}

#[derive(Debug)]
pub struct Scrubber {
    headers: Vec<String>,
    paths: Vec<JsonPath>,
    patterns: Vec<Regex>,
    masker: Option<Masker>,
    /// Credentials seen during this run (the gateway's own, tokens a store issued):
    /// replaced wherever they turn up.
    secrets: RwLock<Vec<String>>,
    /// The stores whose answers it reads (which endpoints hand out credentials).
    wires: Wires,
}

impl Scrubber {
    /// The stores whose exchanges it scrubs.
    pub fn wires(&self) -> Wires {
        self.wires
    }

    /// Compiles the rules; `known_secrets` (the gateway's credential) are scrubbed anywhere;
    /// `wires`: the stores whose exchanges it scrubs.
    pub fn new(rules: &Rules, known_secrets: &[&str], wires: Wires) -> Result<Scrubber, String> {
        let paths = rules
            .json_paths
            .iter()
            .map(|p| JsonPath::parse(p).map_err(|e| format!("STOREGATE_SCRUB_JSON_PATHS: {e}")))
            .collect::<Result<_, _>>()?;
        let patterns = rules
            .patterns
            .iter()
            .map(|p| {
                Regex::new(p).map_err(|e| {
                    format!("STOREGATE_SCRUB_PATTERNS: {p:?} is not a regular expression: {e}")
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Scrubber {
            headers: rules
                .headers
                .iter()
                .map(|h| h.trim().to_ascii_lowercase())
                .collect(),
            paths,
            patterns,
            masker: rules.mask_key.as_deref().map(Masker::new),
            secrets: RwLock::new(
                known_secrets
                    .iter()
                    .filter(|s| s.len() >= 8)
                    .map(|s| (*s).to_owned())
                    .collect(),
            ),
            wires,
        })
    }

    /// A request as it may be written, or looked up.
    pub fn request(&self, request: &mut Request) {
        request.headers = self.headers(std::mem::take(&mut request.headers));
        request.path = self.text(&request.path);
        let pairs: Vec<(String, String)> = request
            .query_pairs()
            .into_iter()
            .map(|(name, value)| {
                if oauth_parameter(&name) {
                    return (name, SCRUBBED.to_owned());
                }
                let mut value = self.text(&value);
                if let Some(masker) = &self.masker {
                    value = masker.emails(&value);
                }
                (name, value)
            })
            .collect();
        request.set_query(&pairs);
        if let Some(body) = &mut request.body.body {
            self.json(body);
        }
        if let Some(text) = &request.body.body_text {
            request.body.body_text = Some(self.text(&form_secrets(text)));
        }
    }

    /// An answer as it may be written; `request` is the (scrubbed) request it answers.
    pub fn response(&self, request: &Request, response: &mut Response) {
        response.headers = self.headers(std::mem::take(&mut response.headers));
        if self.wires.hands_out_token(&request.path)
            && let Some(Value::String(token)) = &response.body.body
        {
            self.learn(token);
            response.body.body = Some(Value::String(SCRUBBED.to_owned()));
        }
        if self.wires.hands_out_form_token(&request.path)
            && let Some(text) = &response.body.body_text
        {
            // `oauth_token=...&oauth_token_secret=...`: every value learned, then replaced.
            let pairs: Vec<(String, String)> = form_urlencoded::parse(text.as_bytes())
                .map(|(name, value)| (name.into_owned(), value.into_owned()))
                .collect();
            for (name, value) in &pairs {
                if oauth_parameter(name) && name != "oauth_callback_confirmed" {
                    self.learn(value);
                }
            }
        }
        if let Some(body) = &mut response.body.body {
            self.json(body);
        }
        if let Some(text) = &response.body.body_text {
            response.body.body_text = Some(self.text(text));
        }
    }

    fn learn(&self, secret: &str) {
        if secret.len() < 8 || secret == SCRUBBED {
            return;
        }
        let mut secrets = self.secrets.write().unwrap_or_else(|e| e.into_inner());
        if !secrets.iter().any(|s| s == secret) {
            secrets.push(secret.to_owned());
        }
    }

    fn headers(&self, headers: BTreeMap<String, String>) -> BTreeMap<String, String> {
        headers
            .into_iter()
            .filter(|(name, _)| !NOISE_HEADERS.contains(&name.as_str()))
            .map(|(name, value)| {
                if SECRET_HEADERS.contains(&name.as_str()) || self.headers.contains(&name) {
                    (name, SCRUBBED.to_owned())
                } else {
                    let value = self.text(&value);
                    (name, value)
                }
            })
            .collect()
    }

    /// Known secrets and the operator's patterns, in free text.
    fn text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in self
            .secrets
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), SCRUBBED);
            }
        }
        for pattern in &self.patterns {
            if pattern.is_match(&out) {
                out = pattern.replace_all(&out, SCRUBBED).into_owned();
            }
        }
        out
    }

    fn json(&self, value: &mut Value) {
        secret_fields(value);
        for path in &self.paths {
            path.for_each(value, &mut |v| *v = Value::String(SCRUBBED.to_owned()));
        }
        if let Some(masker) = &self.masker {
            masker.json(value, None);
        }
        self.strings(value);
    }

    fn strings(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                let mut scrubbed = self.text(s);
                if let Some(masker) = &self.masker {
                    scrubbed = masker.emails(&scrubbed);
                }
                if scrubbed != *s {
                    *s = scrubbed;
                }
            }
            Value::Array(list) => list.iter_mut().for_each(|v| self.strings(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.strings(v)),
            _ => {}
        }
    }
}

fn secret_fields(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if SECRET_FIELDS.contains(&key.as_str()) && !v.is_null() {
                    *v = Value::String(SCRUBBED.to_owned());
                } else {
                    secret_fields(v);
                }
            }
        }
        Value::Array(list) => list.iter_mut().for_each(secret_fields),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::recording::cassette::tests::WIRES;

    #[test]
    fn a_login_forms_password_is_scrubbed() {
        let form =
            "form_key=abc&login%5Busername%5D=j%40x.com&login%5Bpassword%5D=Password123&send=";
        let scrubbed = form_secrets(form);
        assert!(!scrubbed.contains("Password123"), "{scrubbed}");
        assert!(
            !scrubbed.contains("form_key=abc") && scrubbed.contains("j%40x.com"),
            "{scrubbed}"
        );
        assert_eq!(form_secrets(r#"{"password":"x"}"#), r#"{"password":"x"}"#);
        assert_eq!(form_secrets("a=1&b=2"), "a=1&b=2");
    }
    use crate::backend::recording::cassette::Body;
    use serde_json::json;

    fn request(path: &str, body: Value) -> Request {
        let mut headers = BTreeMap::new();
        headers.insert("authorization".into(), "Bearer abcdefgh12345".into());
        headers.insert("x-request-id".into(), "r-1".into());
        headers.insert("accept".into(), "application/json".into());
        Request {
            method: "POST".into(),
            path: path.into(),
            query: BTreeMap::new(),
            headers,
            body: Body::json(body),
        }
    }

    #[test]
    fn oauth_signatures_never_stay_and_still_match() {
        let scrubber = Scrubber::new(
            &Rules::default(),
            &["admintokenaaaaaaaaaaaaaaaaaaaaaa"],
            WIRES,
        )
        .unwrap();
        let signed = |nonce: &str| {
            let mut req = request("/api/rest/products", json!({"sku": "x"}));
            req.headers.insert(
                "authorization".into(),
                format!(
                    "{} oauth_consumer_key=\"kkkk\", oauth_nonce=\"{nonce}\", \
                     oauth_signature=\"abc%3D\", oauth_token=\"admintokenaaaaaaaaaaaaaaaaaaaaaa\"",
                    "OAuth"
                ),
            );
            req.set_query(&[
                ("limit".into(), "2".into()),
                ("oauth_nonce".into(), nonce.into()),
                ("oauth_signature".into(), format!("sig-{nonce}")),
                (
                    "oauth_token".into(),
                    "admintokenaaaaaaaaaaaaaaaaaaaaaa".into(),
                ),
            ]);
            scrubber.request(&mut req);
            req
        };
        let (first, second) = (signed("n1"), signed("n2"));
        assert_eq!(first.headers["authorization"], SCRUBBED);
        let text = serde_json::to_string(&first).unwrap();
        for secret in ["kkkk", "admintoken", "n1", "sig-", "abc"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(text.contains("\"limit\":\"2\""), "{text}");
        // A replay of the same call, signed anew, is the same request.
        assert_eq!(first, second);

        // The store's answer to the OAuth dance: its token and secret, learned and scrubbed.
        let mut req = request("/oauth/token", json!(null));
        req.body = Body::default();
        scrubber.request(&mut req);
        let mut answer = Response {
            status: 200,
            headers: BTreeMap::new(),
            body: Body::from_bytes(
                b"oauth_token=custtokencccccccccccccccccccccccc&oauth_token_secret=custsecretcccccccccccccccccccccc",
            ),
            elapsed_ms: 1,
        };
        scrubber.response(&req, &mut answer);
        assert_eq!(
            answer.body.body_text.as_deref(),
            Some("oauth_token=[scrubbed]&oauth_token_secret=[scrubbed]")
        );
        let mut later = request(
            "/api/rest/customers/1",
            json!({"note": "custsecretcccccccccccccccccccccc"}),
        );
        scrubber.request(&mut later);
        assert_eq!(later.body.body, Some(json!({"note": SCRUBBED})));
    }

    #[test]
    fn operator_rules_apply() {
        let rules = Rules {
            headers: vec!["X-Secret".into()],
            json_paths: vec!["customer.dob".into()],
            patterns: vec![r"card-\d{4}".into()],
            mask_key: None,
        };
        let scrubber = Scrubber::new(&rules, &[], WIRES).unwrap();
        let mut req = request(
            "/api/rest/customers/card-1234",
            json!({"customer": {"dob": "1990-01-01", "note": "pay with card-9876"}}),
        );
        req.headers.insert("x-secret".into(), "s".into());
        scrubber.request(&mut req);
        assert_eq!(req.headers["x-secret"], SCRUBBED);
        assert_eq!(req.path, "/api/rest/customers/[scrubbed]");
        assert_eq!(
            req.body.body,
            Some(json!({"customer": {"dob": SCRUBBED, "note": "pay with [scrubbed]"}}))
        );
        let bad_pattern = Rules {
            patterns: vec!["(".into()],
            ..Rules::default()
        };
        let bad_path = Rules {
            json_paths: vec!["a..b".into()],
            ..Rules::default()
        };
        for bad in [bad_pattern, bad_path] {
            assert!(Scrubber::new(&bad, &[], WIRES).is_err());
        }
    }

    #[test]
    fn masking_is_consistent_and_idempotent() {
        let rules = Rules {
            mask_key: Some(b"k".to_vec()),
            ..Rules::default()
        };
        let scrubber = Scrubber::new(&rules, &[], WIRES).unwrap();
        let body = json!({"customer": {"email": "Roni@Example.com", "firstname": "Roni",
            "addresses": [{"telephone": "(555) 229-3326", "firstname": "Roni", "city": "Calder"}]},
            "note": "write to roni@example.com"});
        let mut first = request("/api/rest/customers", body.clone());
        scrubber.request(&mut first);
        let masked = first.body.body.clone().unwrap();
        let email = masked["customer"]["email"].as_str().unwrap();
        assert!(
            email.starts_with("masked-") && email.ends_with("@example.invalid"),
            "{email}"
        );
        assert_eq!(masked["note"], format!("write to {email}"));
        assert_eq!(
            masked["customer"]["firstname"],
            masked["customer"]["addresses"][0]["firstname"]
        );
        assert_ne!(masked["customer"]["firstname"], "Roni");
        assert_eq!(masked["customer"]["addresses"][0]["city"], "Calder");
        // Masking what is already masked changes nothing: replayed fakes sent back match.
        let mut again = request("/api/rest/customers", masked.clone());
        scrubber.request(&mut again);
        assert_eq!(again.body.body.unwrap(), masked);
        // Another key, other fakes.
        let other = Scrubber::new(
            &Rules {
                mask_key: Some(b"other".to_vec()),
                ..Rules::default()
            },
            &[],
            WIRES,
        )
        .unwrap();
        let mut third = request("/api/rest/customers", body);
        other.request(&mut third);
        assert_ne!(
            third.body.body.unwrap()["customer"]["email"],
            masked["customer"]["email"]
        );
    }
}
