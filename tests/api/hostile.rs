//! Hostile clients (issue 12): connection limits and timeouts, draining, cache-busting
//! floods, duplicate credentials, heads over the limits, stalled bodies.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::common::http::sent;
use crate::helpers::*;

fn addr(gw: &Gateway) -> std::net::SocketAddr {
    gw.running.addr
}

/// Reads until the peer closes; how long that took, and what came.
async fn until_closed(stream: &mut TcpStream, at_most: Duration) -> (Duration, String) {
    let started = Instant::now();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(
            at_most.saturating_sub(started.elapsed()),
            stream.read(&mut buf),
        )
        .await
        {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => seen.extend_from_slice(&buf[..n]),
            Err(_) => panic!(
                "still open after {at_most:?}: {}",
                String::from_utf8_lossy(&seen)
            ),
        }
    }
    (
        started.elapsed(),
        String::from_utf8_lossy(&seen).into_owned(),
    )
}

#[tokio::test]
async fn slow_heads_and_idle_connections_are_closed_and_healthz_still_answers() {
    // An idle timeout shorter than the header one: each is kept to its own.
    let gw = Gateway::start_with(|c| {
        c.header_timeout = Duration::from_secs(3);
        c.idle_timeout = Duration::from_secs(1);
    })
    .await;
    // Slowloris: a header line now and then, never the end of the head.
    let mut slow = TcpStream::connect(addr(&gw)).await.unwrap();
    let slow_started = Instant::now();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // A connection that never sends anything.
    let mut silent = TcpStream::connect(addr(&gw)).await.unwrap();
    let silent_started = Instant::now();
    // A keep-alive connection after one answer.
    let mut idle = TcpStream::connect(addr(&gw)).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut first = [0u8; 256];
    let n = idle.read(&mut first).await.unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200"));
    let answered = Instant::now();

    // Meanwhile /healthz answers at once on a fresh connection.
    let started = Instant::now();
    let r = sent(gw.http.get(format!("http://{}/healthz", addr(&gw)))).await;
    assert_eq!(r.status(), 200);
    assert!(started.elapsed() < Duration::from_millis(500));

    let idle_closed = async {
        until_closed(&mut idle, Duration::from_secs(6)).await;
        answered.elapsed()
    };
    let slow_closed = async {
        for _ in 0..3 {
            tokio::time::sleep(Duration::from_millis(400)).await;
            let _ = slow.write_all(b"X-A: b\r\n").await;
        }
        until_closed(&mut slow, Duration::from_secs(6)).await;
        slow_started.elapsed()
    };
    let silent_closed = async {
        until_closed(&mut silent, Duration::from_secs(6)).await;
        silent_started.elapsed()
    };
    let (idle, slow, silent) = tokio::join!(idle_closed, slow_closed, silent_closed);
    // Generous upper bounds (the machine may be busy), still apart from each other.
    let around = |took: Duration, secs: f64| {
        took.as_secs_f64() > secs - 0.2 && took.as_secs_f64() < secs + 1.2
    };
    assert!(
        around(idle, 1.0),
        "idle closed after {idle:?}, not the idle timeout (1 s)"
    );
    assert!(
        around(slow, 3.0),
        "slow head closed after {slow:?}, not the header timeout (3 s)"
    );
    assert!(around(silent, 3.0), "silent closed after {silent:?}");
}

#[tokio::test]
async fn a_slow_head_after_a_keep_alive_answer_gets_the_header_timeout_not_the_idle_one() {
    // A header timeout shorter than the idle one: a client that is answered once, then
    // trickles its next head, must be cut a header timeout after that head began, not when
    // the (longer) idle timeout of the answer runs out.
    let gw = Gateway::start_with(|c| {
        c.header_timeout = Duration::from_secs(1);
        c.idle_timeout = Duration::from_secs(5);
    })
    .await;
    let mut stream = TcpStream::connect(addr(&gw)).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut first = [0u8; 256];
    let n = stream.read(&mut first).await.unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let head_started = Instant::now();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let trickle = async {
        for _ in 0..4 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            if stream.write_all(b"X-A: b\r\n").await.is_err() {
                break;
            }
        }
    };
    trickle.await;
    until_closed(&mut stream, Duration::from_secs(8)).await;
    let took = head_started.elapsed();
    assert!(
        took.as_secs_f64() > 0.8 && took.as_secs_f64() < 2.5,
        "slow head closed {took:?} after it began, not the header timeout (1 s)"
    );
}

#[tokio::test]
async fn past_the_connection_cap_connections_are_closed_at_once_and_counted() {
    let gw = Gateway::start_with(|c| c.max_connections = Some(3)).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(TcpStream::connect(addr(&gw)).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut excess = TcpStream::connect(addr(&gw)).await.unwrap();
    let (took, _) = until_closed(&mut excess, Duration::from_secs(2)).await;
    assert!(took < Duration::from_millis(500), "{took:?}");
    drop(held);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let metrics = reqwest::get(format!("http://{}/metrics", addr(&gw)))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let refused = metrics
        .lines()
        .find(|l| l.starts_with("storegate_connections_refused_total "))
        .unwrap_or_else(|| panic!("{metrics}"));
    assert!(!refused.ends_with(" 0"), "{refused}");
    assert!(metrics.contains("storegate_connections_open "), "{metrics}");
}

#[tokio::test]
async fn draining_fails_readyz_at_once_and_stops_within_the_deadline() {
    let gw = Gateway::start_with(|c| {
        c.drain_timeout = Duration::from_secs(1);
        c.upstream_timeout = Duration::from_secs(10);
    })
    .await;
    mount_stores(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/store/storeViews"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&gw.upstream)
        .await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(8)))
        .mount(&gw.upstream)
        .await;
    let ready = reqwest::get(format!("http://{}/readyz", addr(&gw)))
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    // A request stuck on Magento.
    let slow = tokio::spawn(reqwest::get(gw.url("/products/1")));
    tokio::time::sleep(Duration::from_millis(300)).await;

    gw.running.app.connections.drain();
    let ready = reqwest::get(format!("http://{}/readyz", addr(&gw)))
        .await
        .unwrap();
    assert_eq!(ready.status(), 503);
    assert_eq!(ready.text().await.unwrap(), r#"{"status":"draining"}"#);

    let Gateway { running, .. } = gw;
    let started = Instant::now();
    running.stop().await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "stop took {took:?}");
    assert!(
        slow.await.unwrap().is_err(),
        "the request past the deadline is cut"
    );
}

#[tokio::test]
async fn a_cache_buster_flood_leaves_the_hot_product_cached() {
    // A budget a few hot entries fit in, and the flood's 2,000 answers would not.
    let gw = Gateway::start_with(|c| c.cache_max_bytes = 1024 * 1024).await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_render(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(recorded("products/get-simple-24-mb01"))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    for _ in 0..3 {
        let r = gw.get_json("/products/1", &Who::Guest).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    gw.running.app.cache.settle().await;
    let (_, entries_before) = gw.running.app.cache.usage();
    let mut tasks = Vec::new();
    for worker in 0..8 {
        let http = gw.http.clone();
        let url = gw.url("/products/1");
        tasks.push(tokio::spawn(async move {
            for i in 0..250 {
                // Unknown parameters, and list parameters a product does not read.
                let query = match i % 2 {
                    0 => format!("_={worker}-{i}"),
                    _ => format!("page={}", worker * 1000 + i + 1),
                };
                let r = sent(
                    http.get(format!("{url}?{query}"))
                        .header("Accept", "application/json"),
                )
                .await;
                assert_eq!(r.status(), 200);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    gw.running.app.cache.settle().await;
    // The flood added nothing: a busted query is answered from the entry already there.
    let (_, entries_after) = gw.running.app.cache.usage();
    assert_eq!(entries_after, entries_before);
    let r = gw.get_json("/products/1", &Who::Guest).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-cache"), Some("HIT"));
    // `expect(1)`: the product was read from Magento once, before the flood.
    gw.upstream.verify().await;
    let (weight, _) = gw.running.app.cache.usage();
    assert!(weight <= 1024 * 1024, "{weight}");
}

#[tokio::test]
async fn two_authorization_headers_are_a_400_in_the_apis_body() {
    let gw = Gateway::start().await;
    let r = gw
        .send(
            gw.request("GET", "/products/1", &Who::Admin)
                .header("Authorization", "Bearer someone-else"),
        )
        .await;
    r.assert_error(400, "Only one Authorization header may be sent.");
    assert!(r.header("x-request-id").is_some());
}

#[tokio::test]
async fn heads_over_the_limits_get_the_apis_body_and_a_request_id() {
    let gw = Gateway::start().await;
    let long = format!(
        "/products?filter[0][attribute]=sku&filter[0][eq]={}",
        "a".repeat(9000)
    );
    let r = gw.get_json(&long, &Who::Guest).await;
    r.assert_error(414, "Request-URI too long.");
    assert!(r.header("x-request-id").is_some());

    let mut builder = gw.request("GET", "/products", &Who::Guest);
    for i in 0..120 {
        builder = builder.header(format!("x-h{i}"), "1");
    }
    let r = gw.send(builder.header("Accept", "application/xml")).await;
    assert_eq!(r.status, 431);
    r.assert_contains("<message>Request header fields too large.</message>");
    assert!(r.header("x-request-id").is_some());
}

/// Sends raw bytes on a new connection; the whole answer until the gateway closes it.
async fn raw_exchange(gw: &Gateway, bytes: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr(gw)).await.unwrap();
    // The gateway may refuse before it has read everything: a failed write is fine.
    let _ = stream.write_all(bytes).await;
    until_closed(&mut stream, Duration::from_secs(5)).await.1
}

/// The head and body of a raw answer, with its `content-length` checked.
fn split_answer(answer: &str) -> (&str, &str) {
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("{answer}"));
    assert!(
        head.to_ascii_lowercase()
            .contains(&format!("content-length: {}", body.len())),
        "{answer}"
    );
    assert!(
        head.to_ascii_lowercase().contains("\r\nx-request-id: "),
        "{answer}"
    );
    (head, body)
}

#[tokio::test]
async fn heads_the_http_parser_refuses_get_the_apis_body_and_a_request_id() {
    let gw = Gateway::start().await;
    // Two Content-Length headers: hyper's own 400, now with the error tree in JSON.
    let answer = raw_exchange(
        &gw,
        b"POST /api/rest/products HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\
          Content-Length: 1\r\nContent-Length: 2\r\n\r\n{}",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    let (_, body) = split_answer(&answer);
    assert_eq!(
        body,
        "{\"messages\":{\"error\":[{\"code\":400,\"message\":\"The request head could not be read.\"}]}}"
    );
    // A Content-Length that is not a number.
    let answer = raw_exchange(
        &gw,
        b"POST /api/rest/products HTTP/1.1\r\nHost: x\r\nAccept: text/xml\r\nContent-Length: ten\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    let (_, body) = split_answer(&answer);
    assert!(
        body.contains("<message>The request head could not be read.</message>"),
        "{body}"
    );
    // 200 header fields: past hyper's own count.
    let mut head =
        b"GET /api/rest/products HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n".to_vec();
    for i in 0..200 {
        head.extend_from_slice(format!("x-h{i}: 1\r\n").as_bytes());
    }
    head.extend_from_slice(b"\r\n");
    let answer = raw_exchange(&gw, &head).await;
    assert!(answer.starts_with("HTTP/1.1 431 "), "{answer}");
    let (_, body) = split_answer(&answer);
    assert!(body.contains("Request header fields too large."), "{body}");
    assert!(body.starts_with("{"), "JSON, as asked: {body}");
    // A 107 KB URI: past hyper's own limit; its Accept line was never read, so XML.
    let uri = format!("/api/rest/products?q={}", "a".repeat(107_000));
    let answer = raw_exchange(
        &gw,
        format!("GET {uri} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n").as_bytes(),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 414 "), "{answer}");
    let (_, body) = split_answer(&answer);
    assert!(body.contains("Request-URI too long."), "{body}");
    // A keep-alive connection whose second head is refused: the first answer is untouched.
    let answer = raw_exchange(
        &gw,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n\
          GET /api/rest/products HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    let second = &answer[answer
        .find("HTTP/1.1 400 ")
        .unwrap_or_else(|| panic!("{answer}"))..];
    // No Accept on the second head: XML, not the first head's JSON.
    let (_, body) = split_answer(second);
    assert!(body.contains("<code>400</code>"), "{body}");
}

#[tokio::test]
async fn a_stalled_body_is_a_408_not_a_504() {
    let gw = Gateway::start_with(|c| {
        c.body_timeout = Duration::from_secs(1);
        c.upstream_timeout = Duration::from_millis(500);
    })
    .await;
    let mut stream = TcpStream::connect(addr(&gw)).await.unwrap();
    let head = format!(
        "POST /api/rest/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ADMIN_KEY}\r\n\
         Accept: application/json\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"sku\":"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (took, answer) = until_closed(&mut stream, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains("The request body did not arrive in time."),
        "{answer}"
    );
    // The stall is refused within the request's deadline (500 ms), not the 1 s configured
    // for the body.
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_millis(900),
        "{took:?}"
    );
    // A slow body that keeps coming is not cut by the upstream deadline (500 ms).
    let mut stream = TcpStream::connect(addr(&gw)).await.unwrap();
    let body = b"{\"sku\":\"slow\"}";
    let head = format!(
        "POST /api/rest/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ADMIN_KEY}\r\n\
         Accept: application/json\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    for byte in body {
        tokio::time::sleep(Duration::from_millis(80)).await;
        stream.write_all(&[*byte]).await.unwrap();
    }
    let (_, answer) = until_closed(&mut stream, Duration::from_secs(5)).await;
    assert!(
        answer.starts_with("HTTP/1.1 400"),
        "validation, not a timeout: {answer}"
    );
    assert!(upstream_untouched(&gw).await);
}

async fn upstream_untouched(gw: &Gateway) -> bool {
    gw.upstream
        .received_requests()
        .await
        .unwrap_or_default()
        .is_empty()
}

fn png_header(width: u32, height: u32) -> String {
    use base64::Engine as _;
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    bytes.extend_from_slice(&width.to_be_bytes());
    bytes.extend_from_slice(&height.to_be_bytes());
    bytes.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[tokio::test]
async fn an_image_whose_header_gives_no_sensible_size_is_refused_before_magento() {
    let gw = Gateway::start().await;
    for (width, height) in [(0, 10), (10, 0), (50_000, 50_000)] {
        let r = gw
            .send(gw.request("POST", "/products/7/images", &Who::Admin).json(
                &json!({"file_mime_type": "image/png", "file_content": png_header(width, height)}),
            ))
            .await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(
            r.messages()[0],
            "The image content is not a valid PNG image."
        );
    }
    assert!(upstream_untouched(&gw).await);
}

#[tokio::test]
async fn uploads_past_the_bound_wait_then_get_a_503() {
    let gw = Gateway::start_with(|c| {
        c.max_uploads_in_flight = 1;
        c.body_timeout = Duration::from_secs(1);
    })
    .await;
    // An upload whose body keeps coming, slowly, holds the only place.
    let mut first = TcpStream::connect(addr(&gw)).await.unwrap();
    let head = format!(
        "POST /api/rest/products/7/images HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ADMIN_KEY}\r\n\
         Accept: application/json\r\nContent-Type: application/json\r\nContent-Length: 10\r\nConnection: close\r\n\r\n{{"
    );
    first.write_all(head.as_bytes()).await.unwrap();
    let trickle = tokio::spawn(async move {
        for _ in 0..8 {
            tokio::time::sleep(Duration::from_millis(250)).await;
            first.write_all(b" ").await.unwrap();
        }
        first.write_all(b"}").await.unwrap();
        until_closed(&mut first, Duration::from_secs(5)).await.1
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let sent = json!({"file_mime_type": "image/png", "file_content": png_header(10, 10)});
    let r = gw
        .send_json("POST", "/products/7/images", &Who::Admin, &sent)
        .await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.header("retry-after"), Some("1"));
    assert!(started.elapsed() >= Duration::from_millis(900));
    // The slow one was served in the end (its empty body is refused as such).
    let answer = trickle.await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
}
