//! The replaying transport: answers upstream calls from a cassette folder.
//!
//! Modes, as VCR and Polly.js have them:
//! - `strict` (the default): a call with no recorded answer fails, naming the call and the
//!   closest recorded one; the gateway's client gets a 502.
//! - `record-missing`: such a call goes to the real store (`STOREGATE_REPLAY_UPSTREAM_URL`)
//!   and its exchange is added to the folder.
//! - `passthrough`: every call goes to the real store; the cassettes are not consulted (with
//!   `STOREGATE_RECORD_DIR` that is a full re-recording).

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::library::Library;
use super::matching::Ignore;
use super::scrub::Scrubber;
use super::wire_form::{to_answer, to_request};
use crate::backend::port::BackendError;
use crate::backend::transport::{Answer, Outgoing, Transport};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Strict,
    RecordMissing,
    Passthrough,
}

impl Mode {
    pub fn parse(text: Option<&str>) -> Result<Mode, String> {
        match text.map(|t| t.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("strict") => Ok(Mode::Strict),
            Some("record-missing") | Some("record_missing") => Ok(Mode::RecordMissing),
            Some("passthrough") => Ok(Mode::Passthrough),
            Some(other) => Err(format!(
                "invalid STOREGATE_REPLAY_MODE: expected strict, record-missing or passthrough, got {other:?}"
            )),
        }
    }
}

/// What a miss says; the first words are stable, for people grepping logs.
pub const MISS: &str = "replay: no recorded answer for";

#[derive(Debug)]
pub struct Replay {
    library: Arc<Library>,
    scrubber: Arc<Scrubber>,
    ignore: Ignore,
    /// `record-missing`: where unrecorded calls go (a recorder into `library`).
    missing: Option<Arc<dyn Transport>>,
}

impl Replay {
    pub fn new(
        library: Arc<Library>,
        scrubber: Arc<Scrubber>,
        ignore: Ignore,
        missing: Option<Arc<dyn Transport>>,
    ) -> Replay {
        Replay {
            library,
            scrubber,
            ignore,
            missing,
        }
    }
}

impl Transport for Replay {
    fn send(&self, outgoing: Outgoing) -> BoxFuture<'static, Result<Answer, BackendError>> {
        // Looked up in the form it was written in: scrubbed and masked the same way.
        let mut wanted = to_request(&outgoing);
        self.scrubber.request(&mut wanted);
        let result = match self.library.answer(&wanted, &self.ignore) {
            Ok(response) => to_answer(&response).map_err(|e| {
                BackendError::Protocol(format!(
                    "replay: the recorded answer to {} is unusable: {e}",
                    wanted.describe()
                ))
            }),
            Err(closest) => match &self.missing {
                Some(forward) => return forward.send(outgoing),
                None => {
                    let message = format!("{MISS} {}; {closest}", wanted.describe());
                    // A warning: the gateway logs the failed request itself, at error.
                    tracing::warn!(
                        cassettes = %self.library.dir().display(),
                        "{message}"
                    );
                    Err(BackendError::Protocol(message))
                }
            },
        };
        Box::pin(std::future::ready(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::recording::cassette::tests::WIRES;
    use crate::backend::recording::scrub::Rules;
    use bytes::Bytes;
    use http::{HeaderMap, Method, StatusCode};
    use std::sync::Mutex;
    use std::time::Duration;

    /// A store that answers every call with its path, and counts the calls.
    #[derive(Debug, Default)]
    struct Store {
        calls: Mutex<Vec<String>>,
    }

    impl Transport for Store {
        fn send(&self, request: Outgoing) -> BoxFuture<'static, Result<Answer, BackendError>> {
            self.calls.lock().unwrap().push(request.path.clone());
            let body = serde_json::json!({ "path": request.path }).to_string();
            Box::pin(std::future::ready(Ok(Answer {
                status: StatusCode::OK,
                headers: HeaderMap::new(),
                body: Bytes::from(body),
            })))
        }
    }

    fn get(path: &str) -> Outgoing {
        Outgoing {
            method: Method::GET,
            path: path.into(),
            query: vec![("b".into(), "2".into()), ("a".into(), "1".into())],
            headers: HeaderMap::new(),
            body: None,
            timeout: Duration::from_secs(1),
            exact_path: false,
        }
    }

    #[tokio::test]
    async fn strict_names_the_miss_and_record_missing_fills_it() {
        let dir = std::env::temp_dir().join(format!("storegate-replay-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let scrubber = Arc::new(Scrubber::new(&Rules::default(), &[], WIRES).unwrap());
        let store = Arc::new(Store::default());
        let library = Arc::new(Library::open(&dir, WIRES).unwrap());
        let recorder =
            super::super::recorder::Recorder::new(store.clone(), library.clone(), scrubber.clone());
        let filling = Replay::new(
            library,
            scrubber.clone(),
            Ignore::default(),
            Some(Arc::new(recorder)),
        );
        for _ in 0..2 {
            let answer = filling.send(get("/shop/api/products/A")).await.unwrap();
            assert_eq!(
                answer.body,
                Bytes::from(r#"{"path":"/shop/api/products/A"}"#)
            );
        }
        // The second call was answered from what the first one recorded.
        assert_eq!(store.calls.lock().unwrap().len(), 1);

        let strict = Replay::new(
            Arc::new(Library::open(&dir, WIRES).unwrap()),
            scrubber,
            Ignore::default(),
            None,
        );
        assert_eq!(
            strict
                .send(get("/shop/api/products/A"))
                .await
                .unwrap()
                .status,
            200
        );
        let Err(BackendError::Protocol(message)) = strict.send(get("/shop/api/products/B")).await
        else {
            panic!("a miss is an error");
        };
        assert_eq!(
            message,
            "replay: no recorded answer for GET /shop/api/products/B?a=1&b=2; \
             closest recorded: GET /shop/api/products/A?a=1&b=2 (differs in path)"
        );
        assert_eq!(
            Mode::parse(Some("Record-Missing")).unwrap(),
            Mode::RecordMissing
        );
        assert_eq!(Mode::parse(None).unwrap(), Mode::Strict);
        assert!(Mode::parse(Some("sometimes")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
