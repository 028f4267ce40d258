//! The user's side of the dance: the customer's `/oauth/authorize` (+ `/simple`) and the
//! operator's `/admin/oauth_authorize`, each with `/confirm` and `/reject`.
//!
//! The customer signs in with e-mail and password, checked by Magento 2 exactly as
//! `POST /api/rest/auth/token` does; the operator with an admin key. Forms carry a
//! `form_key` bound to a per-browser cookie (CSRF); the sign-in is a signed, short-lived
//! cookie bound to the request token, so only the browser that signed in can confirm, and
//! confirming is a POST.

use std::collections::HashMap;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, any};
use hmac::{Hmac, Mac};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use super::pages::method_not_allowed;
use super::pages::{self, Audience, FormContext};
use crate::app::AppState;
use crate::auth::oauth::OAuth;
use crate::auth::oauth::callback;
use crate::auth::oauth::params;
use crate::auth::oauth::store::{
    Consumer, Kind, Owner, REQUEST_TOKEN_LIFETIME, Token, now_secs, random_hex32,
};
use crate::auth::oauth::verify;
use crate::resources::customer_sign_in as store_sign_in;

const BROWSER_COOKIE: &str = "sg_oauth_browser";
const SIGNIN_COOKIE: &str = "sg_oauth_signin";
/// How long a sign-in waits for the user to press Authorize.
const SIGNIN_LIFETIME: Duration = Duration::from_secs(900);
const FORM_LIMIT: usize = 64 * 1024;

/// A page request: its query and form fields, cookies and origin.
struct PageInput {
    method: Method,
    /// The client's address (a trusted proxy's `X-Forwarded-For`), for the sign-in guard.
    address: Option<std::net::IpAddr>,
    fields: HashMap<String, String>,
    cookies: HashMap<String, String>,
    secure: bool,
}

impl PageInput {
    async fn read(oauth: &OAuth, request: Request) -> Result<PageInput, Response> {
        let (scheme, _) = verify::client_origin(
            request.headers(),
            crate::context::request::peer().map(|peer| peer.ip()),
            &oauth.trusted_proxies,
        );
        let method = request.method().clone();
        let address = crate::limits::client::client_address(
            request.headers(),
            crate::context::request::peer().map(|peer| peer.ip()),
            &oauth.trusted_proxies,
        );
        let cookies = cookies(request.headers());
        let mut fields: HashMap<String, String> = request
            .uri()
            .query()
            .map(|q| params::parse_form(q.as_bytes()))
            .unwrap_or_default()
            .into_iter()
            .collect();
        if method == Method::POST {
            let bytes = axum::body::to_bytes(request.into_body(), FORM_LIMIT)
                .await
                .map_err(|_| {
                    pages::respond(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        pages::message(false, "Request too large", "The form sent is too large."),
                    )
                })?;
            // Form fields win over the query string.
            fields.extend(params::parse_form(&bytes));
        }
        Ok(PageInput {
            method,
            address,
            fields,
            cookies,
            secure: scheme == "https",
        })
    }

    fn field(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }

    fn simple(&self) -> bool {
        self.field("simple") == "1"
    }
}

fn cookies(headers: &HeaderMap) -> HashMap<String, String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

fn cookie(name: &str, value: &str, max_age: Option<u64>, secure: bool) -> HeaderValue {
    let mut text = format!("{name}={value}; Path=/; HttpOnly; SameSite=Lax");
    if let Some(age) = max_age {
        text.push_str(&format!("; Max-Age={age}"));
    }
    if secure {
        text.push_str("; Secure");
    }
    HeaderValue::from_str(&text).expect("cookie values are hex and digits")
}

impl OAuth {
    fn page_mac(&self, parts: &[&str]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.page_key).expect("HMAC takes any key");
        for part in parts {
            mac.update(part.as_bytes());
            mac.update(b"|");
        }
        mac.finalize()
            .into_bytes()
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn form_key(&self, browser: &str, oauth_token: &str) -> String {
        self.page_mac(&["form", browser, oauth_token])
    }

    /// Bound to the request token and to the browser, so it is worth nothing elsewhere.
    fn signin_cookie(&self, owner: Owner, oauth_token: &str, browser: &str) -> String {
        let expires = now_secs() + SIGNIN_LIFETIME.as_secs() as i64;
        let who = owner_text(owner);
        let mac = self.page_mac(&["signin", browser, &who, oauth_token, &expires.to_string()]);
        format!("{who}.{expires}.{mac}")
    }

    /// The owner a sign-in cookie names, when it is ours, unexpired and for this token.
    fn signed_in(
        &self,
        value: &str,
        oauth_token: &str,
        browser: &str,
        audience: Audience,
    ) -> Option<Owner> {
        let mut parts = value.splitn(3, '.');
        let (who, expires, mac) = (parts.next()?, parts.next()?, parts.next()?);
        let expected = self.page_mac(&["signin", browser, who, oauth_token, expires]);
        if !bool::from(expected.as_bytes().ct_eq(mac.as_bytes())) {
            return None;
        }
        if expires.parse::<i64>().ok()? < now_secs() {
            return None;
        }
        match (audience, who) {
            (Audience::Admin, "admin") => Some(Owner::Admin),
            (Audience::Customer, who) => who
                .strip_prefix("customer-")
                .and_then(|id| id.parse().ok())
                .map(Owner::Customer),
            _ => None,
        }
    }
}

fn owner_text(owner: Owner) -> String {
    match owner {
        Owner::Admin => "admin".to_owned(),
        Owner::Customer(id) => format!("customer-{id}"),
    }
}

/// The pieces every page step needs once the request token is known good.
struct Flow {
    input: PageInput,
    audience: Audience,
    simple: bool,
    browser: String,
    new_browser: bool,
    request_token: Token,
    consumer: Consumer,
}

impl Flow {
    fn context<'a>(&'a self, form_key: &'a str) -> FormContext<'a> {
        FormContext {
            audience: self.audience,
            simple: self.simple,
            oauth_token: &self.request_token.token,
            form_key,
            consumer_name: &self.consumer.name,
        }
    }

    fn page(&self, status: StatusCode, html: String) -> Response {
        let mut response = pages::respond(status, html);
        if self.new_browser {
            response.headers_mut().append(
                header::SET_COOKIE,
                cookie(BROWSER_COOKIE, &self.browser, None, self.input.secure),
            );
        }
        response
    }

    fn form_key_ok(&self, oauth: &OAuth) -> bool {
        let expected = oauth.form_key(&self.browser, &self.request_token.token);
        !self.new_browser
            && bool::from(
                expected
                    .as_bytes()
                    .ct_eq(self.input.field("form_key").as_bytes()),
            )
    }
}

fn message_page(simple: bool, status: StatusCode, title: &str, text: &str) -> Response {
    pages::respond(status, pages::message(simple, title, text))
}

/// Reads the request and finds its request token; a page explaining what is wrong if not.
async fn start(
    app: &AppState,
    request: Request,
    audience: Audience,
    simple_path: bool,
) -> Result<Flow, Response> {
    let oauth = &app.oauth;
    let input = PageInput::read(oauth, request).await?;
    let simple = simple_path || input.simple();
    if !matches!(input.method, Method::GET | Method::POST) {
        return Err(method_not_allowed());
    }
    let invalid = || {
        message_page(
            simple,
            StatusCode::BAD_REQUEST,
            "Link expired",
            "This sign-in link is invalid or has expired. Go back to the application and start again.",
        )
    };
    let oauth_token = input.field("oauth_token");
    if oauth_token.is_empty() {
        return Err(invalid());
    }
    let stored = oauth.store.token(oauth_token).await.map_err(|error| {
        tracing::error!(%error, "token store failed");
        message_page(
            simple,
            StatusCode::SERVICE_UNAVAILABLE,
            "Try again later",
            "The store cannot handle sign-ins right now. Try again in a moment.",
        )
    })?;
    let fresh = |t: &Token| {
        t.kind == Kind::Request
            && !t.authorized
            && t.created_at >= now_secs() - REQUEST_TOKEN_LIFETIME.as_secs() as i64
    };
    let Some(request_token) = stored.filter(fresh) else {
        return Err(invalid());
    };
    let consumer = match oauth.store.consumer_by_id(request_token.consumer_id).await {
        Ok(Some(consumer)) => consumer,
        _ => return Err(invalid()),
    };
    let (browser, new_browser) = match input.cookies.get(BROWSER_COOKIE) {
        Some(value) if value.len() == 32 && value.bytes().all(|b| b.is_ascii_hexdigit()) => {
            (value.clone(), false)
        }
        _ => (random_hex32(), true),
    };
    Ok(Flow {
        input,
        audience,
        simple,
        browser,
        new_browser,
        request_token,
        consumer,
    })
}

/// The route of `audience`'s page (`simple`: the original's plain variant of it).
pub(super) fn page_route(audience: Audience, simple: bool) -> MethodRouter<AppState> {
    any(move |State(app): State<AppState>, request: Request| page(app, request, audience, simple))
}

/// The route of `audience`'s confirm (`allow`) or reject button.
pub(super) fn decision_route(audience: Audience, allow: bool) -> MethodRouter<AppState> {
    any(move |State(app): State<AppState>, request: Request| decide(app, request, audience, allow))
}

/// GET: the sign-in form (or the confirm page when this browser already signed in for
/// this token). POST: a sign-in.
async fn page(app: AppState, request: Request, audience: Audience, simple: bool) -> Response {
    let flow = match start(&app, request, audience, simple).await {
        Ok(flow) => flow,
        Err(response) => return response,
    };
    let oauth = &app.oauth;
    let form_key = oauth.form_key(&flow.browser, &flow.request_token.token);
    let context = flow.context(&form_key);
    if flow.input.method == Method::GET {
        let signed_in =
            flow.input.cookies.get(SIGNIN_COOKIE).and_then(|v| {
                oauth.signed_in(v, &flow.request_token.token, &flow.browser, audience)
            });
        let html = match signed_in {
            Some(owner) => pages::confirm(&context, &describe(owner)),
            None => pages::sign_in(&context, None),
        };
        return flow.page(StatusCode::OK, html);
    }
    if !flow.form_key_ok(oauth) {
        return flow.page(
            StatusCode::FORBIDDEN,
            pages::sign_in(&context, Some("Invalid form key. Please refresh the page.")),
        );
    }
    let username = flow.input.field("login[username]");
    let password = flow.input.field("login[password]");
    let address = flow.input.address;
    let too_many = |refused: crate::limits::signin::TooMany| {
        let mut response = flow.page(
            StatusCode::TOO_MANY_REQUESTS,
            pages::sign_in(
                &context,
                Some(&crate::limits::too_many_signins_text(&refused)),
            ),
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(refused.retry_secs));
        response
    };
    let owner = match audience {
        Audience::Admin => {
            if password.is_empty() {
                return flow.page(
                    StatusCode::UNAUTHORIZED,
                    pages::sign_in(&context, Some("Invalid admin key.")),
                );
            }
            // Admin keys are guessed like passwords: the same guard, apart from customers.
            let attempt = match app.limits.signin.begin("admin", username, address).await {
                Ok(attempt) => attempt,
                Err(refused) => return too_many(refused),
            };
            if !app.auth.is_admin_key(password) {
                attempt.failed();
                return flow.page(
                    StatusCode::UNAUTHORIZED,
                    pages::sign_in(&context, Some("Invalid admin key.")),
                );
            }
            attempt.succeeded().await;
            Owner::Admin
        }
        Audience::Customer => {
            match customer_sign_in(&app, username, password, address).await {
                Ok(id) => Owner::Customer(id),
                Err(SignInError::TooMany(refused)) => return too_many(refused),
                Err(SignInError::Refused) => {
                    return flow.page(
                        StatusCode::UNAUTHORIZED,
                        pages::sign_in(&context, Some("Invalid login or password.")),
                    );
                }
                Err(SignInError::Unavailable) => {
                    return flow.page(StatusCode::SERVICE_UNAVAILABLE,
                    pages::sign_in(
                        &context,
                        Some("The store cannot check your sign-in right now. Try again in a moment."),
                    ),
                );
                }
            }
        }
    };
    let mut response = flow.page(StatusCode::OK, pages::confirm(&context, &describe(owner)));
    response.headers_mut().append(
        header::SET_COOKIE,
        cookie(
            SIGNIN_COOKIE,
            &oauth.signin_cookie(owner, &flow.request_token.token, &flow.browser),
            Some(SIGNIN_LIFETIME.as_secs()),
            flow.input.secure,
        ),
    );
    response
}

fn describe(owner: Owner) -> String {
    match owner {
        Owner::Admin => "the store's operator".to_owned(),
        Owner::Customer(id) => format!("customer #{id}"),
    }
}

enum SignInError {
    Refused,
    Unavailable,
    /// Past the failed sign-ins of this username or address: the store was not asked.
    TooMany(crate::limits::signin::TooMany),
}

/// The customer's id when the store accepts the e-mail and password, under the same
/// guard against guessing as `POST /api/rest/auth/token` (one count for both).
async fn customer_sign_in(
    app: &AppState,
    username: &str,
    password: &str,
    address: Option<std::net::IpAddr>,
) -> Result<u64, SignInError> {
    if username.is_empty() || password.is_empty() {
        return Err(SignInError::Refused);
    }
    let attempt = app
        .limits
        .signin
        .begin("customer", username, address)
        .await
        .map_err(SignInError::TooMany)?;
    match store_sign_in::sign_in(app, username, password).await {
        Ok(id) => {
            attempt.succeeded().await;
            Ok(id)
        }
        Err(store_sign_in::SignInError::Refused) => {
            attempt.failed();
            Err(SignInError::Refused)
        }
        Err(store_sign_in::SignInError::Store(error)) => {
            attempt.undecided().await;
            tracing::warn!(%error, "customer sign-in: the store did not answer");
            Err(SignInError::Unavailable)
        }
    }
}

/// Authorize (302 to the callback, or the verifier page for `oob`) or reject.
async fn decide(app: AppState, request: Request, audience: Audience, authorize: bool) -> Response {
    let flow = match start(&app, request, audience, false).await {
        Ok(flow) => flow,
        Err(response) => return response,
    };
    let oauth = &app.oauth;
    let form_key = oauth.form_key(&flow.browser, &flow.request_token.token);
    let context = flow.context(&form_key);
    if flow.input.method != Method::POST || !flow.form_key_ok(oauth) {
        return flow.page(
            StatusCode::FORBIDDEN,
            pages::sign_in(&context, Some("Invalid form key. Please refresh the page.")),
        );
    }
    let Some(owner) = flow
        .input
        .cookies
        .get(SIGNIN_COOKIE)
        .and_then(|v| oauth.signed_in(v, &flow.request_token.token, &flow.browser, audience))
    else {
        return flow.page(
            StatusCode::UNAUTHORIZED,
            pages::sign_in(&context, Some("Please sign in first.")),
        );
    };
    let clear = cookie(SIGNIN_COOKIE, "", Some(0), flow.input.secure);
    let token = &flow.request_token;
    let callback = token
        .callback_url
        .as_deref()
        .unwrap_or(callback::OUT_OF_BAND);
    // Checked again against the consumer as it is now: an operator who changed its
    // registered callback since the app's initiate has the last word.
    if !callback::accepts(flow.consumer.callback_url.as_deref(), callback) {
        return message_page(
            flow.simple,
            StatusCode::BAD_REQUEST,
            "Link expired",
            "This sign-in link is invalid or has expired. Go back to the application and start again.",
        );
    }
    if !authorize {
        if let Err(error) = oauth.store.delete_request_token(&token.token).await {
            tracing::error!(%error, "token store failed");
        }
        // As the original: to the consumer's rejected callback, or else back to the app's
        // own, with the request token and `rejected=1`, so that an app (a phone's in-app
        // browser closes only on a redirect to the app) learns of the refusal; `oob` has
        // nowhere to go.
        let target = flow
            .consumer
            .rejected_callback_url
            .as_deref()
            .filter(|url| callback::usable_redirect(url))
            .or((callback != callback::OUT_OF_BAND).then_some(callback));
        let mut response = match target {
            Some(url) => redirect(&with_params(
                url,
                &[("oauth_token", &token.token), ("rejected", "1")],
            )),
            None => message_page(
                flow.simple,
                StatusCode::OK,
                "Access rejected",
                "You did not give the application access. You can close this window.",
            ),
        };
        response.headers_mut().append(header::SET_COOKIE, clear);
        return response;
    }
    let verifier = match oauth
        .store
        .authorize_request_token(&token.token, owner)
        .await
    {
        Ok(Some(verifier)) => verifier,
        Ok(None) => {
            return message_page(
                flow.simple,
                StatusCode::BAD_REQUEST,
                "Link expired",
                "This sign-in link is invalid or has expired. Go back to the application and start again.",
            );
        }
        Err(error) => {
            tracing::error!(%error, "token store failed");
            return message_page(
                flow.simple,
                StatusCode::SERVICE_UNAVAILABLE,
                "Try again later",
                "The store cannot handle sign-ins right now. Try again in a moment.",
            );
        }
    };
    let mut response = if callback == callback::OUT_OF_BAND {
        pages::respond(
            StatusCode::OK,
            pages::verifier(flow.simple, &flow.consumer.name, &verifier),
        )
    } else {
        redirect(&with_params(
            callback,
            &[("oauth_token", &token.token), ("oauth_verifier", &verifier)],
        ))
    };
    response.headers_mut().append(header::SET_COOKIE, clear);
    response
}

/// A callback (of any scheme: `myapp://cb/done`) with `params` added to its query (its own
/// query and fragment kept in place).
fn with_params(callback: &str, params: &[(&str, &str)]) -> String {
    match url::Url::parse(callback) {
        Ok(mut url) => {
            url.query_pairs_mut().extend_pairs(params);
            url.to_string()
        }
        // Checked at initiate; kept as sent if it no longer parses.
        Err(_) => {
            let pairs = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(params)
                .finish();
            let separator = if callback.contains('?') { '&' } else { '?' };
            format!("{callback}{separator}{pairs}")
        }
    }
}

fn redirect(location: &str) -> Response {
    let mut response = (StatusCode::FOUND, Body::empty()).into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callbacks_keep_their_query_and_fragment() {
        let verifier = [("oauth_token", "t"), ("oauth_verifier", "v")];
        assert_eq!(
            with_params("https://app.example/cb", &verifier),
            "https://app.example/cb?oauth_token=t&oauth_verifier=v"
        );
        assert_eq!(
            with_params("https://app.example/cb?state=1#done", &verifier),
            "https://app.example/cb?state=1&oauth_token=t&oauth_verifier=v#done"
        );
        assert_eq!(
            with_params("myapp://cb/done", &verifier),
            "myapp://cb/done?oauth_token=t&oauth_verifier=v"
        );
        assert_eq!(
            with_params(
                "com.example.app:/oauth",
                &[("oauth_token", "t"), ("rejected", "1")]
            ),
            "com.example.app:/oauth?oauth_token=t&rejected=1"
        );
    }
}
