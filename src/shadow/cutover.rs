//! The cut-over, route class by route class (`STOREGATE_SHADOW_SERVE=products=100,...`):
//! that share of a class's reads is served by the gateway over the candidate (its own
//! cache, its own fast path), and the serving back end becomes their comparison side. When
//! the candidate fails or is slow, the serving back end answers within the deadline, and
//! the fallback is counted. Writes are never sent there: they go to the serving back end
//! until `STOREGATE_BACKEND` itself is switched.

use std::future::Future;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;

use super::tally::field;
use super::{ServedLabels, Shadow, next_random, routes};
use crate::config::shadow::RouteClass;

impl Shadow {
    /// The class of `request` when it is a read this draw sends to the candidate.
    pub fn takes(&self, request: &Request) -> Option<RouteClass> {
        if request.method() != http::Method::GET {
            return None;
        }
        let class = routes::class_of(request.uri().path())?;
        let share = u64::from(self.inner.settings.serve.get(class));
        match share {
            0 => None,
            100 => Some(class),
            share => (next_random() % 100 < share).then_some(class),
        }
    }

    /// `request` (a read of `class` that [`Shadow::takes`]) answered by the candidate's
    /// gateway, or by `serving` when the candidate answers with a server error or takes more
    /// than half of the deadline (the other half is the serving back end's).
    pub async fn serve<F, Fut>(&self, class: RouteClass, request: Request, serving: F) -> Response
    where
        F: FnOnce(Request) -> Fut,
        Fut: Future<Output = Response>,
    {
        let Some(candidate) = self
            .inner
            .sides
            .get()
            .and_then(|sides| sides.candidate_service.clone())
        else {
            return serving(request).await;
        };
        let copy = copy_of(&request);
        let budget = self.budget();
        // A task of its own (the connection's peer carried over): the candidate's gateway is
        // a whole second request path, which nested in this one's would double the depth of
        // every poll; and a candidate past its budget is stopped, not waited for.
        let answer = candidate.answer(request);
        let peer = crate::context::request::peer();
        let mut task = tokio::spawn(async move {
            match peer {
                Some(peer) => crate::context::request::with_peer(peer, answer).await,
                None => answer.await,
            }
        });
        let why = match tokio::time::timeout(budget, &mut task).await {
            Ok(Ok(response)) if !response.status().is_server_error() => {
                self.served(class, "candidate");
                return response;
            }
            Ok(Ok(response)) => format!("status {}", response.status().as_u16()),
            Ok(Err(_)) => "its task failed".to_owned(),
            Err(_) => {
                task.abort();
                format!("no answer within {} ms", budget.as_millis())
            }
        };
        self.served(class, "fallback");
        crate::observe::log_limit::warn(
            "shadow: candidate failed a served read",
            format_args!(
                "shadow: the candidate failed a {} read ({why}); the serving back end answered it",
                class.name()
            ),
        );
        serving(copy).await
    }

    /// The candidate's share of a served read's time: half of the request deadline.
    fn budget(&self) -> Duration {
        (self.inner.deadline / 2).max(Duration::from_millis(50))
    }

    fn served(&self, class: RouteClass, outcome: &'static str) {
        self.inner
            .tally
            .add(field(&["s", class.name(), outcome]), 1);
        self.inner
            .series
            .served
            .get_or_create(&ServedLabels {
                class: class.name(),
                outcome,
            })
            .inc();
    }
}

/// A bodiless copy of a read: what the serving back end answers if the candidate fails.
fn copy_of(request: &Request) -> Request {
    let mut copy = Request::new(Body::empty());
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    copy
}
