//! The benchmark's floor (bench/bench.py, row 0): a bare hyper server answering one file's
//! bytes from memory, with the content type and the same body as the gateway's hit, and
//! nothing else: no routing, no cache lookup, no headers beyond what hyper adds. What a
//! Rust HTTP/1 server on this machine does at best; the gateway's hits are measured against
//! it (issue 23: at least 0.85x).
//!
//! Built like the gateway (the release profile, mimalloc, one current-thread runtime per
//! core on its own `SO_REUSEPORT` socket, as `STOREGATE_WORKERS` does), so that the ratio
//! is the gateway's own work, not a different server design.
//!
//! `cargo run --release --example bench_floor -- ADDR FILE CONTENT-TYPE [CONTENT-ENCODING]`

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http::header::{CONTENT_ENCODING, CONTENT_TYPE};
use http::{HeaderValue, Response};
use http_body_util::Full;
use hyper_util::rt::TokioIo;

// The gateway's library is linked for its global allocator (mimalloc) alone: the floor
// allocates as the gateway does.
use storegate as _;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [addr, file, content_type, rest @ ..] = args.as_slice() else {
        eprintln!("usage: bench_floor ADDR FILE CONTENT-TYPE [CONTENT-ENCODING]");
        std::process::exit(2);
    };
    let addr: SocketAddr = addr.parse().expect("an address such as 127.0.0.1:18199");
    let body = Bytes::from(std::fs::read(file).expect("the file to serve"));
    let content_type = HeaderValue::from_str(content_type).expect("a content type");
    let encoding = rest
        .first()
        .map(|e| HeaderValue::from_str(e).expect("a content coding"));
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: Vec<_> = (0..workers)
        .map(|_| {
            let (body, content_type, encoding) =
                (body.clone(), content_type.clone(), encoding.clone());
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime");
                runtime.block_on(serve(addr, body, content_type, encoding));
            })
        })
        .collect();
    for thread in threads {
        let _ = thread.join();
    }
}

async fn serve(
    addr: SocketAddr,
    body: Bytes,
    content_type: HeaderValue,
    encoding: Option<HeaderValue>,
) {
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
        let (body, content_type, encoding) = (body.clone(), content_type.clone(), encoding.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |_request| {
                let mut response = Response::new(Full::new(body.clone()));
                response
                    .headers_mut()
                    .insert(CONTENT_TYPE, content_type.clone());
                if let Some(encoding) = &encoding {
                    response
                        .headers_mut()
                        .insert(CONTENT_ENCODING, encoding.clone());
                }
                async move { Ok::<_, Infallible>(response) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
