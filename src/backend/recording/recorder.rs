//! The recording transport: sends each call on as usual and appends the exchange,
//! scrubbed, to the cassette folder before handing the answer back.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::cassette::{Body, Interaction, Request, Response};
use super::library::Library;
use super::scrub::Scrubber;
use super::wire_form::{header_map, to_request};
use crate::backend::port::BackendError;
use crate::backend::transport::{Answer, Outgoing, Transport};

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

/// The interaction to write for `request` (scrubbed already) and the store's `answer`:
/// the answer in cassette form, scrubbed and masked the way the request was.
pub fn recorded(
    request: Request,
    answer: &Answer,
    elapsed_ms: u64,
    recorded_at: String,
    scrubber: &Scrubber,
) -> Interaction {
    let mut response = Response {
        status: answer.status.as_u16(),
        headers: header_map(&answer.headers),
        body: Body::from_bytes(&answer.body),
        elapsed_ms,
    };
    scrubber.response(&request, &mut response);
    Interaction {
        recorded_at: Some(recorded_at),
        request,
        response,
    }
}

impl Transport for Recorder {
    fn send(&self, outgoing: Outgoing) -> BoxFuture<'static, Result<Answer, BackendError>> {
        let request = to_request(&outgoing);
        // When the call went out: the answer's age counts from here (`ageing`).
        let recorded_at = super::ageing::now_text();
        let started = Instant::now();
        let sent = self.inner.send(outgoing);
        let (library, scrubber) = (self.library.clone(), self.scrubber.clone());
        Box::pin(async move {
            // A call that got no answer (timeout, refused connection) has nothing to replay.
            let answer = sent.await?;
            let elapsed_ms = started.elapsed().as_millis() as u64;
            let mut request = request;
            scrubber.request(&mut request);
            let interaction = recorded(request, &answer, elapsed_ms, recorded_at, &scrubber);
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
