//! Where the rate limits (`crate::limits`) meet the request path.
//!
//! Two places decide, and a request is counted in exactly one of them:
//!
//! - the front, for a caller it resolved before routing (guests, Bearer customers, admin
//!   keys): in `Early` for a GET that may be a cache hit, in `front_steps` otherwise. A
//!   refusal is answered there (429 in the negotiated format); a hit carries the
//!   verdict's headers; a miss carries [`Decided`] on, and the front adds the headers to
//!   whatever the API answers;
//! - the API's layer [`after_authentication`], for what the front could not resolve:
//!   signed OAuth calls (their consumer is known once `auth::authenticate` verified them)
//!   and requests whose credentials travel in a form body.
//!
//! The hit path's part is synchronous ([`before_routing`] decides a repeat request from
//! its worker's own slot); only a request that must wait for its budget gets a boxed
//! future. A hit's `RateLimit` goes into the place its map keeps for it
//! (`Cache::reserve_hit_field`).

use std::time::Instant;

use axum::extract::{OriginalUri, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::HeaderMap;

use crate::app::AppState;
use crate::auth::Principal;
use crate::auth::caller::Caller;
use crate::http::Format;
use crate::limits::{SignedConsumer, Verdict};

/// Left in a request's extensions by the front once it counted the request: the API's
/// layer does not count it again.
#[derive(Debug, Clone, Copy)]
pub struct Decided;

/// What the front makes of a resolved caller's request before routing.
pub enum Step {
    /// Not counted here (limits off, not an API call, no caller resolved, not limited).
    Skip,
    /// Decided at once (a repeat request: from the worker's own slot).
    Decided(crate::limits::Verdict),
    /// The budget must be asked ([`Step::verdict`]).
    Ask(crate::limits::Budget, crate::config::Rate),
}

impl Step {
    /// The verdict, waiting for the budget when it must: boxed, since that is rare and a
    /// hit's future need not carry room for it.
    pub async fn verdict(self, app: &AppState) -> Option<crate::limits::Verdict> {
        match self {
            Step::Skip => None,
            Step::Decided(verdict) => Some(verdict),
            Step::Ask(budget, rate) => Some(Box::pin(app.limits.decide(budget, rate)).await),
        }
    }
}

/// The front's step for a resolved caller: synchronous, so a repeat request pays for no
/// future of its own.
pub fn before_routing(
    app: &AppState,
    caller: Option<Caller>,
    method: &http::Method,
    path: &str,
    headers: &HeaderMap,
    now: Instant,
) -> Step {
    let limits = &app.limits;
    if !limits.is_on() {
        return Step::Skip;
    }
    let Some(caller) = caller else {
        return Step::Skip;
    };
    let Some((budget, rate)) = limits.budget(
        caller.principal,
        || app.auth.admin_key_index(headers),
        headers,
        method,
        path,
    ) else {
        return Step::Skip;
    };
    match limits.decide_now(budget, rate, now) {
        Some(verdict) => Step::Decided(verdict),
        None => Step::Ask(budget, rate),
    }
}

/// The 429 of a refused verdict, in `format`.
pub fn refusal(format: Format, verdict: &Verdict) -> Option<Response> {
    match verdict {
        Verdict::Refused(quota) => Some(crate::http::middleware::finish(
            format,
            crate::limits::too_many(quota).into_response(),
        )),
        _ => None,
    }
}

/// The API's layer, after authentication: counts what the front did not (signed calls,
/// credentials in a form body) and adds the verdict's headers to the answer.
pub async fn after_authentication(
    State(app): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if request.extensions().get::<Decided>().is_some() {
        return next.run(request).await;
    }
    let Some(principal) = request.extensions().get::<Principal>().copied() else {
        return next.run(request).await;
    };
    let path = request
        .extensions()
        .get::<OriginalUri>()
        .map_or_else(|| request.uri().path(), |original| original.0.path());
    let method = request.method();
    let budgets = match request.extensions().get::<SignedConsumer>() {
        Some(consumer) => app.limits.signed(principal, consumer, method, path),
        None => [
            app.limits.budget(
                principal,
                || app.auth.admin_key_index(request.headers()),
                request.headers(),
                method,
                path,
            ),
            None,
        ],
    };
    if budgets.iter().all(Option::is_none) {
        return next.run(request).await;
    }
    let verdict = app.limits.decide_all(budgets).await;
    if let Verdict::Refused(quota) = &verdict {
        return crate::limits::too_many(quota).into_response();
    }
    let mut response = next.run(request).await;
    verdict.apply(response.headers_mut());
    response
}
