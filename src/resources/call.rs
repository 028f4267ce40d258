//! One API call as a resource handler sees it: the shared state, the [`Caller`] the front
//! settled (who, in which format), the method, the URI, the headers and the body, taken
//! from the request in one extractor. Every `/api/rest` handler used to list the same six
//! extractors; they now take an [`ApiCall`] (after their `Path`, which axum extracts
//! first: it comes from the request's head only) and hand it on whole.
//!
//! Nothing here decides anything: authentication and negotiation happened in the front's
//! layers before routing (`auth::caller`), the policy is `rules::policy`'s. The helpers
//! only spare each handler the same few lines of plumbing around them.

use std::future::Future;

use axum::body::Body;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::response::Response;
use http::{HeaderMap, Method, Uri};
use serde_json::{Map, Value};

use crate::app::AppState;
use crate::auth::Principal;
use crate::auth::caller::Caller;
use crate::cache;
use crate::cache::response::Built;
use crate::http::body::decode_record;
use crate::http::{ApiError, Doc, Format, ok};
use crate::rules::policy::{Operation, Route, authorize};
use crate::rules::privacy::private;

/// What a resource handler reads of its request. Built by axum as the handler's last
/// argument (it takes the body).
pub struct ApiCall {
    pub app: AppState,
    pub caller: Caller,
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Body,
}

impl FromRequest<AppState> for ApiCall {
    type Rejection = ApiError;

    async fn from_request(request: Request, app: &AppState) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = request.into_parts();
        let caller = Caller::from_request_parts(&mut parts, app).await?;
        Ok(ApiCall {
            app: app.clone(),
            caller,
            method: parts.method,
            uri: parts.uri,
            headers: parts.headers,
            body,
        })
    }
}

impl ApiCall {
    /// The policy's verdict on this call's method on `route` (403 before 405, as
    /// everywhere in the API): the operation to serve.
    pub fn authorize(&self, route: Route) -> Result<Operation, ApiError> {
        authorize(route, &self.method, self.caller.principal)
    }

    /// The query string, when there is one.
    pub fn query(&self) -> Option<&str> {
        self.uri.query()
    }

    /// The one record the body sends, in the format its `Content-Type` names (`default`
    /// without one), within the body limit; a list where one record belongs is `on_list`.
    /// The body is read once: a second call finds it empty.
    pub async fn record(
        &mut self,
        default: Format,
        on_list: fn() -> ApiError,
    ) -> Result<Map<String, Value>, ApiError> {
        let limit = self.app.config.body_limit;
        self.record_within(default, limit, on_list).await
    }

    /// [`ApiCall::record`] with a limit of its own (an image's body is larger).
    pub async fn record_within(
        &mut self,
        default: Format,
        limit: usize,
        on_list: fn() -> ApiError,
    ) -> Result<Map<String, Value>, ApiError> {
        let body = std::mem::take(&mut self.body);
        decode_record(&self.headers, body, default, limit, on_list).await
    }

    /// The record an update sends: XML unless its `Content-Type` says otherwise; a list
    /// where one record belongs is the original's `Request data is invalid.`.
    pub async fn update_record(&mut self) -> Result<Map<String, Value>, ApiError> {
        self.record(Format::Xml, ApiError::request_data_invalid)
            .await
    }

    /// The record a create sends into a collection: XML unless its `Content-Type` says
    /// otherwise; a list (several records at once) is the original's 501, which it never
    /// implemented for these collections.
    pub async fn created_record(&mut self) -> Result<Map<String, Value>, ApiError> {
        self.record(Format::Xml, ApiError::not_implemented).await
    }

    /// The gateway's own routes for the Admin alone: anyone else is refused (403) before
    /// the method is looked at, as everywhere in the API.
    pub fn admin_only(&self) -> Result<(), ApiError> {
        if self.caller.principal == Principal::Admin {
            Ok(())
        } else {
            Err(ApiError::access_denied())
        }
    }

    /// A read through the response cache ([`cache::response::cached`]), answered for
    /// `caller` (this call's, or the same with the prices it is shown); `build` makes the
    /// answer on a miss, from the shared state.
    pub async fn cached<F, Fut>(
        self,
        caller: Caller,
        logical: &str,
        build: F,
    ) -> Result<Response, ApiError>
    where
        F: FnOnce(AppState) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Built, ApiError>> + Send + 'static,
    {
        let app = self.app.clone();
        let build = move || build(app);
        cache::response::cached(&self.app.cache, caller, &self.headers, logical, build).await
    }

    /// 200 with `value` in the caller's format.
    pub fn ok(&self, value: Value) -> Response {
        ok(self.caller.format, &Doc::new(value))
    }

    /// 200 with one person's data in the caller's format: `private, no-store`.
    pub fn private_ok(&self, value: Value) -> Response {
        private(self.ok(value))
    }
}

/// `response` marked `Cache-Control: no-store`: an operator's answer, kept by no one.
pub fn no_store(mut response: Response) -> Response {
    response.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    response
}

/// An operation the policy table serves on a route but its handler does not: the table
/// and the handler disagree, a bug of ours (500, with the route named for the log).
pub fn unserved(op: Operation, route: &str) -> ApiError {
    ApiError::internal().with_cause(format!("{op:?} is not served on {route}"))
}
