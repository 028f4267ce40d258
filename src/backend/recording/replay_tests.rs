use super::*;
use crate::backend::recording::bench::Bench;
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

/// The gateway's side of the bench (`replay:DIR`): each fault as the network client would
/// report it, delays within the caller's deadline, in paused time (no real waiting).
#[tokio::test(start_paused = true)]
async fn faults_and_delays_reach_the_gateway_as_the_wire_would_give_them() {
    let dir = std::env::temp_dir().join(format!("storegate-replay-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let scrubber = Arc::new(Scrubber::new(&Rules::default(), &[], WIRES).unwrap());
    let library = Arc::new(Library::open(&dir, WIRES).unwrap());
    let store = Arc::new(Store::default());
    let recorder = super::super::recorder::Recorder::new(store, library.clone(), scrubber.clone());
    recorder.send(get("/shop/api/products/A")).await.unwrap();
    let bench = |faults: &str, latency: &str| {
        let settings = super::super::bench::Settings::parse(Some(latency), Some(faults)).unwrap();
        Replay::new(library.clone(), scrubber.clone(), Ignore::default(), None)
            .with_bench(Arc::new(Bench::new(Some(3), settings, WIRES)))
    };
    let call = |replay: Replay| async move {
        let started = tokio::time::Instant::now();
        let result = replay.send(get("/shop/api/products/A")).await;
        (result, started.elapsed())
    };
    // `get` gives every call a one-second deadline.
    let (result, took) = call(bench("", "fixed:300ms")).await;
    assert_eq!(
        (result.unwrap().status.as_u16(), took),
        (200, Duration::from_millis(300))
    );
    for (faults, latency) in [("", "fixed:5s"), ("hang", ""), ("slow_first_byte:2s", "")] {
        let (result, took) = call(bench(faults, latency)).await;
        assert!(
            matches!(result, Err(BackendError::Timeout)),
            "{faults} {latency}"
        );
        assert_eq!(took, Duration::from_secs(1));
    }
    let (result, _) = call(bench("reset", "")).await;
    assert!(matches!(result, Err(BackendError::Connect(m)) if m.contains("reset")));
    let (result, _) = call(bench("empty", "")).await;
    assert!(matches!(result, Err(BackendError::Connect(_))));
    let (result, _) = call(bench("truncate", "")).await;
    assert!(matches!(result, Err(BackendError::Protocol(_))));
    let (result, took) = call(bench("dribble:400ms", "fixed:100ms")).await;
    assert_eq!(
        (result.unwrap().status.as_u16(), took),
        (200, Duration::from_millis(500))
    );
    // A named failure answers in the store's form (the test store has none: the plain one;
    // each adapter's own forms are tested in its folder).
    let (result, _) = call(bench("db_gone", "")).await;
    let answer = result.unwrap();
    assert_eq!(answer.status, 503);
    assert!(String::from_utf8_lossy(&answer.body).contains("There has been an error"));
    let _ = std::fs::remove_dir_all(&dir);
}
