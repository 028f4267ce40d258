//! The binary's serving mode: worker threads, each with its own runtime and socket on one
//! address, sharing one gateway.

use storegate::Parts;

use crate::common::http::sent;
use crate::helpers::*;

// Multi-threaded: the workers wait for the start's revocation load, which runs on this
// runtime while `serve_workers` blocks the test's thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_share_one_port_one_cache_and_stop_cleanly() {
    let upstream = wiremock::MockServer::start().await;
    crate::cassettes::mount(&upstream, "api-formats").await;
    let config = test_config();
    let parts = Parts {
        upstream_url: upstream.uri(),
        upstream_token: UPSTREAM_TOKEN.to_owned(),
        admin_digests: vec![storegate::auth::admin_key_digest(ADMIN_KEY)],
        token_secret: b"k".to_vec(),
        mappings: storegate::load_mappings(&config).unwrap(),
    };
    let workers = storegate::serve_workers(config, parts, 3).unwrap();
    assert_ne!(workers.addr.port(), 0);
    let url = format!("{}/products/1", workers.base_url());
    for _ in 0..24 {
        // A new connection each time, so the kernel spreads them over the workers.
        let client = reqwest::Client::new();
        let r = sent(
            client
                .get(&url)
                .bearer_auth(ADMIN_KEY)
                .header("Accept", "application/json"),
        )
        .await;
        assert_eq!(r.status(), 200);
    }
    workers.stop().await;
    assert!(
        reqwest::Client::new().get(&url).send().await.is_err(),
        "no worker accepts after stop"
    );
    // One cache behind every worker: one upstream read however the connections spread.
    let reads = upstream
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path() == "/rest/default/V1/products/24-MB01")
        .count();
    assert_eq!(reads, 1);
}
