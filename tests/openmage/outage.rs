//! The store's PHP stopped (live only: the workers of the local `php-fpm` are paused with
//! SIGSTOP and resumed with SIGCONT, whatever happens): a cached read is still served, past
//! its TTL too (stale-if-error), and an uncached one gets the API's 504 error body within
//! the request's deadline (the upstream timeout and its margin).
//!
//! Replay has no outage to replay, and a recording has nothing to keep: the scenario runs
//! live only, against a store on this machine (`STOREGATE_TEST_OPENMAGE_URL`, with its
//! `php-fpm` here), and passes without one.

use std::process::Command;
use std::time::{Duration, Instant};

use super::*;

/// Pauses the store's PHP workers for as long as it lives.
struct Paused;

impl Paused {
    fn workers() -> bool {
        Command::new("pgrep")
            .args(["-f", "php-fpm: pool"])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn start() -> Paused {
        let status = Command::new("pkill")
            .args(["-STOP", "-f", "php-fpm: pool"])
            .status()
            .expect("pkill runs");
        assert!(status.success(), "no php-fpm worker paused");
        Paused
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        let _ = Command::new("pkill")
            .args(["-CONT", "-f", "php-fpm: pool"])
            .status();
    }
}

#[tokio::test]
async fn with_the_stores_php_stopped_cached_reads_are_served_and_others_fail_in_time() {
    if !matches!(mode(), Mode::Live { .. }) || !Paused::workers() {
        eprintln!("skipped: needs a live store whose php-fpm runs on this machine");
        return;
    }
    let upstream_timeout = Duration::from_millis(1500);
    let stack = Stack::start_alone_with(
        "outage",
        &[
            ("STOREGATE_UPSTREAM_TIMEOUT_MS", "1500"),
            ("STOREGATE_CACHE_TTL_SECS", "1"),
        ],
    )
    .await;
    let first = stack.get(Who::Guest, "/products/1").await;
    assert_eq!(first.status, 200, "{}", first.body);

    let paused = Paused::start();
    // Past its TTL: served stale while the refresh fails.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let started = Instant::now();
    let cached = stack.get(Who::Guest, "/products/1").await;
    let took = started.elapsed();
    assert_eq!(cached.status, 200, "{}", cached.body);
    assert_eq!(cached.json()["name"], "Test Product One");
    assert!(
        took < Duration::from_millis(500),
        "the cached read took {took:?}"
    );

    let started = Instant::now();
    let uncached = stack.get(Who::Guest, "/products/2").await;
    let took = started.elapsed();
    drop(paused);
    assert_eq!(uncached.status, 504, "{}", uncached.body);
    assert_eq!(uncached.json()["messages"]["error"][0]["code"], 504);
    assert!(
        took < upstream_timeout + Duration::from_secs(1),
        "the uncached read took {took:?}"
    );
    stack.stop().await;
}
