//! The OAuth endpoints on the store's front router (not under `/api/rest`):
//!
//! - `/oauth/initiate` (POST, GET accepted): a request token for a consumer.
//! - `/oauth/authorize` (+ `/simple`, `/confirm`, `/reject`) and `/admin/oauth_authorize`:
//!   the user's pages, in [`super::authorize`].
//! - `/oauth/token`: the authorized request token and its verifier for an access token.
//!
//! Errors of initiate and token are the original's `oauth_problem` bodies.

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use http::{HeaderValue, Method, StatusCode, header};

use super::authorize::{decision_route, page_route};
use super::pages::Audience::{Admin, Customer};
use super::pages::method_not_allowed;
use crate::app::AppState;
use crate::auth::oauth::callback;
use crate::auth::oauth::problem::Problem;
use crate::auth::oauth::verified::Forget;
use crate::auth::oauth::verify::Expect;
use crate::http::route_list::Listed;

/// Listed (`route_list`), so that the OpenAPI document's drift test sees them.
pub fn routes(app: AppState) -> Listed {
    Listed::new()
        .route("/oauth/initiate", any(initiate))
        .route("/oauth/token", any(token))
        .route("/oauth/authorize", page_route(Customer, false))
        .route("/oauth/authorize/simple", page_route(Customer, true))
        .route("/oauth/authorize/confirm", decision_route(Customer, true))
        .route("/oauth/authorize/reject", decision_route(Customer, false))
        .route("/admin/oauth_authorize", page_route(Admin, false))
        .route("/admin/oauth_authorize/simple", page_route(Admin, true))
        .route(
            "/admin/oauth_authorize/confirm",
            decision_route(Admin, true),
        )
        .route(
            "/admin/oauth_authorize/reject",
            decision_route(Admin, false),
        )
        .with_state(app)
}

fn form_response(body: String) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-www-form-urlencoded"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The frame of the dance's two token endpoints: GET or POST only, the signed request
/// read, and a refusal answered in the original's `oauth_problem` form.
async fn token_endpoint<F, Fut>(
    request: Request,
    oauth: &crate::auth::oauth::OAuth,
    step: F,
) -> Response
where
    F: FnOnce(crate::auth::oauth::SignedRequest) -> Fut,
    Fut: std::future::Future<Output = Result<Response, Problem>>,
{
    if !matches!(*request.method(), Method::GET | Method::POST) {
        return method_not_allowed();
    }
    let result = match oauth.read_signed(request).await {
        Ok(signed) => step(signed).await,
        Err(_) => Err(Problem::ParameterRejected),
    };
    result.unwrap_or_else(|problem| problem.endpoint_response())
}

async fn initiate(State(app): State<AppState>, request: Request) -> Response {
    let oauth = &app.oauth;
    token_endpoint(request, oauth, |signed| async move {
        let callback = signed
            .params
            .get("oauth_callback")
            .filter(|c| !c.is_empty())
            .ok_or(Problem::ParameterAbsent("oauth_callback"))?
            .to_owned();
        // A callback that is not even a URL is refused before anything else, as the
        // original did; whether it is one this consumer accepts needs the consumer.
        if callback != callback::OUT_OF_BAND && url::Url::parse(&callback).is_err() {
            return Err(Problem::ParameterRejected);
        }
        let verified = oauth.verify(&signed, Expect::Consumer).await?;
        if !callback::accepts(verified.consumer.callback_url.as_deref(), &callback) {
            return Err(Problem::ParameterRejected);
        }
        let token = oauth
            .store
            .create_request_token(verified.consumer.id, &callback)
            .await?;
        Ok(form_response(format!(
            "oauth_token={}&oauth_token_secret={}&oauth_callback_confirmed=true",
            token.token, token.secret
        )))
    })
    .await
}

async fn token(State(app): State<AppState>, request: Request) -> Response {
    let oauth = &app.oauth;
    token_endpoint(request, oauth, |signed| async move {
        let verified = oauth.verify(&signed, Expect::RequestToken).await?;
        let request_token = verified.token.ok_or(Problem::TokenRejected)?;
        let exchanged = oauth
            .store
            .exchange(&request_token)
            .await
            .map_err(|error| {
                if error.is_outage() {
                    // The store failed: the request token may still be good; say whose
                    // failure it was (503), not the client's.
                    return Problem::from(error);
                }
                // Used up by a concurrent exchange: this request token buys nothing more.
                tracing::warn!(%error, "request token exchange refused");
                Problem::TokenRejected
            })?;
        // The owner's earlier access tokens for this consumer were replaced: no instance may
        // go on accepting them from its cache. Only those: every other verified token stays
        // verified (a sign-in used to empty the cache on every instance, issue 32).
        oauth
            .verified
            .forget_everywhere(Forget::Tokens(exchanged.replaced));
        let access = exchanged.access;
        Ok(form_response(format!(
            "oauth_token={}&oauth_token_secret={}",
            access.token, access.secret
        )))
    })
    .await
}
