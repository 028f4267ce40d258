//! A customer's store password, checked by the store itself.
//!
//! The original's REST API has no sign-in call, and its SOAP and XML-RPC APIs sign in API
//! users, not customers. What checks a customer's password is the store's own OAuth 1.0a
//! authorization, the page customers already sign in on: the gateway plays it as a
//! browser would (a request token from `/oauth/initiate`, the login form of
//! `/oauth/authorize` with its `form_key` and session cookie, `loginPost`, the confirm step
//! that gives the verifier) and exchanges the verifier for an access token of that
//! customer (`/oauth/token`). The store counts the attempt as a login (its own lockout and
//! logs apply), and the token lets the adapter read the customer's own record as the store
//! shows it to them.
//!
//! The confirm step deletes that customer's other tokens **of the same consumer**; the
//! gateway's consumer (`STOREGATE_UPSTREAM_CONSUMER_KEY`) must therefore be its own, not one
//! an app signs with (docs/decisions/openmage-adapter.md). Nothing is followed: each
//! redirect's `Location` is read. Cookies and the password never reach a cassette (the
//! recorder scrubs cookies, and the form's password field).

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode};

use super::OpenMage;
use super::signing::{nonce, timestamp};
use crate::auth::oauth::signature;
use crate::backend::port::BackendError;
use crate::backend::transport::{Answer, Outgoing};

/// Where the store is told to send the verifier: never called (the redirect is read, not
/// followed).
const CALLBACK: &str = "http://localhost/storegate/signed-in";

/// The store's answer to a wrong password, as its login page says it.
pub const REFUSED: &str = "Invalid login or password.";

fn refused() -> BackendError {
    BackendError::Status {
        status: 401,
        error: super::store_message(
            format!(r#"{{"messages":{{"error":[{{"code":401,"message":"{REFUSED}"}}]}}}}"#)
                .as_bytes(),
        ),
    }
}

fn protocol(step: &str, answer: &Answer) -> BackendError {
    BackendError::Protocol(format!(
        "store sign-in, {step}: unexpected answer {}",
        answer.status.as_u16()
    ))
}

/// The session cookies a browser would keep, as one `Cookie` header value.
#[derive(Default)]
struct Jar(Vec<(String, String)>);

impl Jar {
    fn take(&mut self, headers: &HeaderMap) {
        for value in headers.get_all(http::header::SET_COOKIE) {
            let Some(pair) = value.to_str().ok().and_then(|v| v.split(';').next()) else {
                continue;
            };
            let Some((name, value)) = pair.split_once('=') else {
                continue;
            };
            let (name, value) = (name.trim().to_owned(), value.trim().to_owned());
            self.0.retain(|(n, _)| *n != name);
            if value != "deleted" {
                self.0.push((name, value));
            }
        }
    }

    fn header(&self) -> Option<HeaderValue> {
        if self.0.is_empty() {
            return None;
        }
        let text: Vec<String> = self.0.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let mut value = HeaderValue::from_str(&text.join("; ")).ok()?;
        value.set_sensitive(true);
        Some(value)
    }

    /// Headers carrying the session's cookies (none yet: no header).
    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(cookie) = self.header() {
            headers.insert(http::header::COOKIE, cookie);
        }
        headers
    }
}

/// The value of a hidden form field in a page (`name="form_key" value="..."`).
fn field(html: &str, name: &str) -> Option<String> {
    let at = html.find(&format!("name=\"{name}\""))?;
    let tag_start = html[..at].rfind('<')?;
    let tag_end = at + html[at..].find('>')?;
    let tag = &html[tag_start..tag_end];
    let value = tag.split("value=\"").nth(1)?.split('"').next()?;
    Some(value.to_owned())
}

/// A query parameter of a URL.
fn parameter(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    form_urlencoded::parse(query.as_bytes())
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.into_owned())
}

fn form(body: &Bytes) -> Vec<(String, String)> {
    form_urlencoded::parse(body)
        .map(|(n, v)| (n.into_owned(), v.into_owned()))
        .collect()
}

fn location(answer: &Answer) -> Option<String> {
    answer
        .headers
        .get(http::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

impl OpenMage {
    /// The `Authorization` of an OAuth endpoint call: the consumer, `extra` protocol
    /// parameters (`oauth_callback`, `oauth_token`, `oauth_verifier`), signed with the
    /// consumer secret and `token_secret`.
    fn oauth_header(
        &self,
        path: &str,
        extra: &[(&str, &str)],
        token_secret: &str,
    ) -> Result<HeaderValue, BackendError> {
        let nonce = nonce();
        let timestamp = timestamp().to_string();
        let mut params: Vec<(String, String)> = vec![
            (
                "oauth_consumer_key".into(),
                self.credentials.consumer_key.expose().to_owned(),
            ),
            ("oauth_nonce".into(), nonce),
            ("oauth_signature_method".into(), "HMAC-SHA1".into()),
            ("oauth_timestamp".into(), timestamp),
            ("oauth_version".into(), "1.0".into()),
        ];
        params.extend(
            extra
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned())),
        );
        let uri = format!("{}{path}", self.signing_base);
        let base = signature::base_string("POST", &uri, &params);
        let signed = signature::sign(
            signature::Method::HmacSha1,
            &base,
            self.credentials.consumer_secret.expose(),
            token_secret,
        );
        params.push(("oauth_signature".into(), signed));
        let text: Vec<String> = params
            .iter()
            .map(|(n, v)| format!("{n}=\"{}\"", signature::encode(v)))
            .collect();
        let mut value = HeaderValue::from_str(&format!("OAuth {}", text.join(", ")))
            .map_err(|_| BackendError::Protocol("cannot write the OAuth header".into()))?;
        value.set_sensitive(true);
        Ok(value)
    }

    async fn send_raw(
        &self,
        method: Method,
        path: &str,
        query: Vec<(String, String)>,
        headers: HeaderMap,
        body: Option<Bytes>,
    ) -> Result<Answer, BackendError> {
        let started = tokio::time::Instant::now();
        let answer = self
            .shell
            .transport()
            .send(Outgoing {
                method: method.clone(),
                path: path.to_owned(),
                query,
                headers,
                body,
                timeout: self.shell.timeout().min(Duration::from_secs(30)),
                exact_path: false,
            })
            .await;
        // Counted like every other call to the store (its paths are templates already).
        self.shell
            .count(&method, path, answer.as_ref().err(), started.elapsed());
        answer
    }

    /// Signs a customer in with their store password; their access token and its secret.
    /// A wrong e-mail or password is the store's 401 "Invalid login or password.".
    pub async fn customer_sign_in(
        &self,
        email: &str,
        password: &str,
    ) -> Result<(String, String), BackendError> {
        // 1. A request token.
        let signed = self.oauth_header("/oauth/initiate", &[("oauth_callback", CALLBACK)], "")?;
        let (request_token, request_secret) = self
            .token_pair("initiate", "/oauth/initiate", signed)
            .await?;
        // 2. The login page: its form key and session.
        let mut jar = Jar::default();
        let page = self
            .send_raw(
                Method::GET,
                "/oauth/authorize",
                vec![("oauth_token".into(), request_token.clone())],
                HeaderMap::new(),
                None,
            )
            .await?;
        jar.take(&page.headers);
        let html = String::from_utf8_lossy(&page.body);
        let form_key = field(&html, "form_key").ok_or_else(|| protocol("authorize", &page))?;
        // 3. The login.
        let body: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("form_key", &form_key)
            .append_pair("login[username]", email)
            .append_pair("login[password]", password)
            .append_pair("oauth_token", &request_token)
            .append_pair("send", "")
            .finish();
        let mut headers = jar.headers();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        let login = self
            .send_raw(
                Method::POST,
                "/customer/account/loginPost/",
                Vec::new(),
                headers,
                Some(Bytes::from(body)),
            )
            .await?;
        jar.take(&login.headers);
        match location(&login) {
            // Back to the authorization page: the store refused the credentials.
            Some(to) if to.contains("/oauth/authorize") => return Err(refused()),
            Some(_) if login.status.is_redirection() => {}
            _ => return Err(protocol("login", &login)),
        }
        // 4. The confirmation: a redirect to the callback with the verifier.
        let confirm = self
            .send_raw(
                Method::GET,
                "/oauth/authorize/confirm/",
                vec![("oauth_token".into(), request_token.clone())],
                jar.headers(),
                None,
            )
            .await?;
        let verifier = location(&confirm)
            .filter(|to| to.starts_with(CALLBACK))
            .and_then(|to| parameter(&to, "oauth_verifier"));
        let Some(verifier) = verifier else {
            // Not signed in after all (the session did not hold): the store's refusal.
            return match location(&confirm) {
                Some(to) if to.contains("/oauth/authorize") => Err(refused()),
                _ => Err(protocol("confirm", &confirm)),
            };
        };
        // 5. The access token.
        let signed = self.oauth_header(
            "/oauth/token",
            &[
                ("oauth_token", &request_token),
                ("oauth_verifier", &verifier),
            ],
            &request_secret,
        )?;
        self.token_pair("token", "/oauth/token", signed).await
    }

    /// A signed `POST` of one of the store's OAuth endpoints (`step` of the sign-in) and the
    /// token and secret its form answer holds.
    async fn token_pair(
        &self,
        step: &str,
        path: &str,
        signed: HeaderValue,
    ) -> Result<(String, String), BackendError> {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::AUTHORIZATION, signed);
        let answer = self
            .send_raw(Method::POST, path, Vec::new(), headers, None)
            .await?;
        if answer.status != StatusCode::OK {
            return Err(protocol(step, &answer));
        }
        let pairs = form(&answer.body);
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        match (get("oauth_token"), get("oauth_token_secret")) {
            (Some(token), Some(secret)) => Ok((token, secret)),
            _ => Err(protocol(step, &answer)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_give_their_form_key_and_redirects_their_verifier() {
        let html = r#"<form><input name="form_key" type="hidden" value="AbC123" /><input name="x"></form>"#;
        assert_eq!(field(html, "form_key").as_deref(), Some("AbC123"));
        assert_eq!(field(html, "nope"), None);
        let to = "http://localhost/storegate/signed-in?oauth_token=t&oauth_verifier=v1";
        assert_eq!(parameter(to, "oauth_verifier").as_deref(), Some("v1"));
        let mut headers = HeaderMap::new();
        headers.append(
            http::header::SET_COOKIE,
            HeaderValue::from_static("om_frontend=a1; path=/"),
        );
        headers.append(
            http::header::SET_COOKIE,
            HeaderValue::from_static("other=b; HttpOnly"),
        );
        let mut jar = Jar::default();
        jar.take(&headers);
        let mut again = HeaderMap::new();
        again.append(
            http::header::SET_COOKIE,
            HeaderValue::from_static("om_frontend=a2; path=/"),
        );
        jar.take(&again);
        assert_eq!(
            jar.header().unwrap().to_str().unwrap(),
            "other=b; om_frontend=a2"
        );
    }
}
