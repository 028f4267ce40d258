//! The benchmark's floor (bench/bench.py, row 0): a bare hyper server answering the bytes of
//! the gateway's cache hit from memory: the same body and the same header fields with the
//! same values (the gateway's hit read once by the bench and written to a file), and
//! nothing else: no routing, no cache lookup, no header made per request. What a Rust
//! HTTP/1 server on this machine does at best with that answer; the gateway's hits are
//! measured against it (issue 23: at least 0.85x).
//!
//! The same header fields, not just the same body: wrk, on the same two cores, parses every
//! field of every answer, and hyper writes each, so a floor sending three fields where the
//! gateway must send nine (`ETag`, `Cache-Control`, `Vary`, `Cache-Status`, `X-Request-Id`,
//! ...) would charge the gateway for the answer the API requires rather than for its own
//! work. docs/decisions/measuring-the-edge.md has the measured difference.
//!
//! Built like the gateway (the release profile, mimalloc, one current-thread runtime per
//! core on its own `SO_REUSEPORT` socket, as `STOREGATE_WORKERS` does), so that the ratio
//! is the gateway's own work, not a different server design.
//!
//! `cargo run --release --example bench_floor -- ADDR BODY-FILE HEAD-FILE`: HEAD-FILE holds
//! one `name: value` line per field, in order (hyper adds `content-length` and `date`).

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Response};
use http_body_util::Full;
use hyper_util::rt::TokioIo;

// The gateway's library is linked for its global allocator (mimalloc) alone: the floor
// allocates as the gateway does.
use storegate as _;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [addr, body, head] = args.as_slice() else {
        eprintln!("usage: bench_floor ADDR BODY-FILE HEAD-FILE");
        std::process::exit(2);
    };
    let addr: SocketAddr = addr.parse().expect("an address such as 127.0.0.1:18199");
    let body = Bytes::from(std::fs::read(body).expect("the body to serve"));
    let head = fields(&std::fs::read_to_string(head).expect("the header fields to send"));
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: Vec<_> = (0..workers)
        .map(|_| {
            let (body, head) = (body.clone(), head.clone());
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime");
                runtime.block_on(serve(addr, body, head));
            })
        })
        .collect();
    for thread in threads {
        let _ = thread.join();
    }
}

/// `name: value` lines, in order.
fn fields(text: &str) -> HeaderMap {
    let mut head = HeaderMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (name, value) = line.split_once(':').expect("a `name: value` line");
        head.append(
            HeaderName::from_bytes(name.trim().as_bytes()).expect("a field name"),
            HeaderValue::from_str(value.trim()).expect("a field value"),
        );
    }
    head
}

async fn serve(addr: SocketAddr, body: Bytes, head: HeaderMap) {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket.set_reuseaddr(true).expect("SO_REUSEADDR");
    socket.set_reuseport(true).expect("SO_REUSEPORT");
    socket.bind(addr).expect("the address");
    let listener = socket.listen(4096).expect("listen");
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (body, head) = (body.clone(), head.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |_request| {
                let mut response = Response::new(Full::new(body.clone()));
                *response.headers_mut() = head.clone();
                async move { Ok::<_, Infallible>(response) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
