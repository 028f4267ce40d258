//! The recording transport: sends each call on as usual and appends the exchange,
//! scrubbed, to the cassette folder before handing the answer back.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use tokio::time::Instant;

use super::cassette::{Body, Interaction, Request, Response};
use super::library::Library;
use super::scrub::Scrubber;
use crate::upstream::UpstreamError;
use crate::upstream::transport::{Answer, Outgoing, Transport};

#[derive(Debug)]
pub struct Recorder {
    inner: Arc<dyn Transport>,
    library: Arc<Library>,
    scrubber: Arc<Scrubber>,
}

impl Recorder {
    pub fn new(
        inner: Arc<dyn Transport>,
        library: Arc<Library>,
        scrubber: Arc<Scrubber>,
    ) -> Recorder {
        Recorder {
            inner,
            library,
            scrubber,
        }
    }
}

impl Transport for Recorder {
    fn send(&self, outgoing: Outgoing) -> BoxFuture<'static, Result<Answer, UpstreamError>> {
        let request = to_request(&outgoing);
        let started = Instant::now();
        let sent = self.inner.send(outgoing);
        let (library, scrubber) = (self.library.clone(), self.scrubber.clone());
        Box::pin(async move {
            // A call that got no answer (timeout, refused connection) has nothing to replay.
            let answer = sent.await?;
            let elapsed_ms = started.elapsed().as_millis() as u64;
            let mut request = request;
            scrubber.request(&mut request);
            let mut response = Response {
                status: answer.status.as_u16(),
                headers: header_map(&answer.headers),
                body: Body::from_bytes(&answer.body),
                elapsed_ms,
            };
            scrubber.response(&request, &mut response);
            let interaction = Interaction { request, response };
            let written =
                tokio::task::spawn_blocking(move || library.append(interaction, true)).await;
            // Serving goes on when the disk fails; the operator learns of the gap.
            match written {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::error!(%error, "cannot record an upstream exchange"),
                Err(error) => tracing::error!(%error, "cannot record an upstream exchange"),
            }
            Ok(answer)
        })
    }
}

/// A call in cassette form (not scrubbed yet).
pub fn to_request(outgoing: &Outgoing) -> Request {
    let mut request = Request {
        method: outgoing.method.to_string(),
        path: outgoing.path.clone(),
        query: BTreeMap::new(),
        headers: header_map(&outgoing.headers),
        body: outgoing
            .body
            .as_deref()
            .map(Body::from_bytes)
            .unwrap_or_default(),
    };
    request.set_query(&outgoing.query);
    request
}

/// A recorded answer as the wire would have given it.
pub fn to_answer(response: &Response) -> Result<Answer, String> {
    let status = StatusCode::from_u16(response.status)
        .map_err(|_| format!("recorded status {} is not an HTTP status", response.status))?;
    let mut headers = HeaderMap::new();
    for (name, value) in &response.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.append(name, value);
        }
    }
    if response.body.body.is_some() && !headers.contains_key(http::header::CONTENT_TYPE) {
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        );
    }
    Ok(Answer {
        status,
        headers,
        body: response.body.to_bytes()?,
    })
}

fn header_map(headers: &HeaderMap) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        out.entry(name.as_str().to_owned())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    out
}
