//! The cache's rules: coalescing, tags, ages, staleness windows, the second level.

use super::*;
use std::sync::atomic::AtomicUsize;

impl FetchError for () {
    fn allows_stale(&self) -> bool {
        true
    }
}

fn cache(ttl: u64, stale: u64) -> Arc<Cache> {
    Arc::new(Cache::new(
        1 << 20,
        Duration::from_secs(ttl),
        Duration::from_secs(stale),
    ))
}

fn text(entry: &Entry) -> &str {
    match &entry.value {
        Value::Text(t) => t,
        _ => panic!("not text"),
    }
}

async fn get(
    cache: &Arc<Cache>,
    key: &str,
    calls: &Arc<AtomicUsize>,
    answer: Result<&'static str, ()>,
) -> Result<(String, Source), ()> {
    let calls = calls.clone();
    cache
        .get_or_fetch(key, move || async move {
            calls.fetch_add(1, Ordering::SeqCst);
            answer.map(|a| Fetched::new(Value::Text(a.into()), vec!["p:1".into()]))
        })
        .await
        .map(|(e, s)| (text(&e).to_owned(), s))
}

#[tokio::test]
async fn concurrent_misses_make_one_fetch() {
    let cache = cache(60, 0);
    let calls = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let cache = cache.clone();
        let calls = calls.clone();
        tasks.push(tokio::spawn(async move {
            cache
                .get_or_fetch("k", move || async move {
                    calls.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    Ok::<_, ()>(Fetched::new(Value::Text("v".into()), vec![]))
                })
                .await
                .unwrap()
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn invalidation_by_tag_and_all() {
    let cache = cache(60, 0);
    let calls = Arc::new(AtomicUsize::new(0));
    assert_eq!(
        get(&cache, "k", &calls, Ok("a")).await.unwrap().1,
        Source::Fetched
    );
    assert_eq!(
        get(&cache, "k", &calls, Ok("b")).await.unwrap(),
        ("a".into(), Source::Hit)
    );
    cache.invalidate(&["p:2".into()]);
    assert_eq!(get(&cache, "k", &calls, Ok("b")).await.unwrap().0, "a");
    cache.invalidate(&["p:1".into()]);
    assert!(cache.fresh("k").await.is_none());
    assert_eq!(get(&cache, "k", &calls, Ok("b")).await.unwrap().0, "b");
    cache.invalidate_all();
    assert_eq!(get(&cache, "k", &calls, Ok("c")).await.unwrap().0, "c");
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn stale_while_revalidate_then_stale_if_error() {
    let cache = cache(10, 30);
    let calls = Arc::new(AtomicUsize::new(0));
    get(&cache, "k", &calls, Ok("a")).await.unwrap();
    tokio::time::advance(Duration::from_secs(11)).await;
    // Expired but within the window: served at once, refreshed behind.
    let (v, s) = get(&cache, "k", &calls, Ok("b")).await.unwrap();
    assert_eq!((v.as_str(), s), ("a", Source::StaleWhileRevalidate));
    tokio::task::yield_now().await;
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(
        get(&cache, "k", &calls, Ok("x")).await.unwrap(),
        ("b".into(), Source::Hit)
    );
    // Expire again; the background refresh fails, so the stale entry keeps being served.
    tokio::time::advance(Duration::from_secs(11)).await;
    assert_eq!(
        get(&cache, "k", &calls, Err(())).await.unwrap().1,
        Source::StaleWhileRevalidate
    );
    tokio::time::sleep(Duration::from_millis(1)).await;
    // Past TTL + window: nothing stale may be served any more.
    tokio::time::advance(Duration::from_secs(40)).await;
    assert!(get(&cache, "k", &calls, Err(())).await.is_err());
}

#[tokio::test(start_paused = true)]
async fn stale_if_error_on_the_foreground_path_and_never_after_invalidation() {
    let cache = Arc::new(Cache::new(
        1 << 20,
        Duration::from_secs(10),
        Duration::from_secs(30),
    ));
    let calls = Arc::new(AtomicUsize::new(0));
    get(&cache, "k", &calls, Ok("a")).await.unwrap();
    tokio::time::advance(Duration::from_secs(11)).await;
    // First caller after expiry gets SWR; make its refresh fail, then a second caller
    // finds the refresh flag cleared and the entry still stale.
    get(&cache, "k", &calls, Err(())).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1)).await;
    cache.invalidate(&["p:1".into()]);
    assert!(get(&cache, "k", &calls, Err(())).await.is_err());
}

#[tokio::test]
async fn a_fetch_that_raced_a_write_is_not_kept() {
    let cache = cache(60, 0);
    let c2 = cache.clone();
    let (_, source) = cache
        .get_or_fetch("k", move || async move {
            // The write lands while we are fetching the old state.
            c2.invalidate(&["p:1".into()]);
            Ok::<_, ()>(Fetched::new(Value::Text("old".into()), vec!["p:1".into()]))
        })
        .await
        .unwrap();
    assert_eq!(source, Source::Fetched);
    assert!(cache.fresh("k").await.is_none());
}

/// An upstream that is down (stale allowed) or that says the record is gone (not).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fail {
    Down,
    Gone,
}

impl FetchError for Fail {
    fn allows_stale(&self) -> bool {
        *self == Fail::Down
    }
}

async fn get2(
    cache: &Arc<Cache>,
    answer: Result<&'static str, Fail>,
) -> Result<(String, Source), Fail> {
    cache
        .get_or_fetch("k", move || async move {
            answer.map(|a| Fetched::new(Value::Text(a.into()), vec!["p:1".into()]))
        })
        .await
        .map(|(e, s)| (text(&e).to_owned(), s))
}

#[tokio::test(start_paused = true)]
async fn past_the_revalidate_window_a_failure_serves_stale_and_an_answer_does_not() {
    // TTL 10 s, stale-while-revalidate 5 s, stale-if-error 60 s.
    let cache = Arc::new(Cache::with_windows(
        1 << 20,
        Duration::from_secs(10),
        Duration::from_secs(5),
        Duration::from_secs(60),
    ));
    get2(&cache, Ok("a")).await.unwrap();
    tokio::time::advance(Duration::from_secs(20)).await;
    // Past the revalidate window: the caller fetches, the upstream is down.
    assert_eq!(
        get2(&cache, Err(Fail::Down)).await.unwrap(),
        ("a".into(), Source::StaleIfError)
    );
    // The upstream answers that the record is gone: that is not served stale.
    assert_eq!(get2(&cache, Err(Fail::Gone)).await, Err(Fail::Gone));
    // Up again: fresh data.
    assert_eq!(
        get2(&cache, Ok("b")).await.unwrap(),
        ("b".into(), Source::Fetched)
    );
    assert_eq!(cache.stats().stale_if_error.load(Ordering::Relaxed), 1);
}

#[tokio::test(start_paused = true)]
async fn a_failed_background_refresh_marks_later_serves_and_a_gone_record_is_dropped() {
    let cache = cache(10, 30);
    get2(&cache, Ok("a")).await.unwrap();
    tokio::time::advance(Duration::from_secs(11)).await;
    assert_eq!(
        get2(&cache, Err(Fail::Down)).await.unwrap().1,
        Source::StaleWhileRevalidate
    );
    tokio::time::sleep(Duration::from_millis(1)).await;
    // The refresh failed: the next stale serve says so.
    assert_eq!(
        get2(&cache, Err(Fail::Gone)).await.unwrap().1,
        Source::StaleIfError
    );
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(cache.stats().refresh_failures.load(Ordering::Relaxed), 2);
    // That refresh learnt the record is gone: the entry was dropped, nothing stale left.
    assert_eq!(get2(&cache, Err(Fail::Down)).await, Err(Fail::Down));
}

/// An outer entry built from an inner one, as a rendered body is built from records.
async fn outer(cache: &Arc<Cache>, up: bool) -> Result<(String, Source), Fail> {
    let inner_cache = cache.clone();
    cache
        .get_or_fetch("outer", move || async move {
            let (inner, _) = inner_cache
                .get_or_fetch("inner", move || async move {
                    if up {
                        Ok(Fetched::new(Value::Text("record".into()), vec![]))
                    } else {
                        Err(Fail::Down)
                    }
                })
                .await?;
            let text = format!("body of {}", super::tests::text(&inner));
            Ok(Fetched::new(Value::Text(text.into()), vec![]))
        })
        .await
        .map(|(e, s)| (text(&e).to_owned(), s))
}

#[tokio::test(start_paused = true)]
async fn an_entry_built_from_stale_data_is_as_old_and_says_so() {
    let cache = Arc::new(Cache::with_windows(
        1 << 20,
        Duration::from_secs(10),
        Duration::ZERO,
        Duration::from_secs(60),
    ));
    assert_eq!(outer(&cache, true).await.unwrap().1, Source::Fetched);
    tokio::time::advance(Duration::from_secs(11)).await;
    // The record cannot be refreshed: the body is rebuilt from the stale record, and is
    // stale itself, with no freshness left.
    assert_eq!(
        outer(&cache, false).await.unwrap(),
        ("body of record".into(), Source::StaleIfError)
    );
    let entry = cache.store.as_ref().unwrap().get("outer").await.unwrap();
    assert_eq!(cache.remaining(&entry), Duration::ZERO);
    // Back up: the next read fetches both again.
    assert_eq!(outer(&cache, true).await.unwrap().1, Source::Fetched);
    let entry = cache.store.as_ref().unwrap().get("outer").await.unwrap();
    assert_eq!(cache.remaining(&entry), Duration::from_secs(10));
}

#[tokio::test]
async fn purging_everything_empties_the_store() {
    let cache = cache(60, 0);
    let calls = Arc::new(AtomicUsize::new(0));
    get(&cache, "k", &calls, Ok("a")).await.unwrap();
    cache.invalidate_all();
    assert!(cache.fresh("k").await.is_none());
    assert_eq!(get(&cache, "k", &calls, Ok("b")).await.unwrap().0, "b");
}

#[tokio::test]
async fn disabled_cache_always_fetches() {
    let cache = Arc::new(Cache::new(1 << 20, Duration::ZERO, Duration::ZERO));
    let calls = Arc::new(AtomicUsize::new(0));
    get(&cache, "k", &calls, Ok("a")).await.unwrap();
    get(&cache, "k", &calls, Ok("a")).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_alias_shares_the_entry_is_weighed_as_it_and_goes_with_its_invalidation() {
    let cache = Arc::new(Cache::new(
        64 * 1024 * 1024,
        Duration::from_secs(60),
        Duration::ZERO,
    ));
    let body = Body::new(Bytes::from(vec![b'x'; 100_000]), "application/json");
    let (entry, _) = cache
        .get_or_fetch("b|guest|json|p/1", move || async move {
            Ok::<_, ()>(Fetched::new(Value::Body(body), vec!["p:1".into()]))
        })
        .await
        .unwrap();
    cache.settle().await;
    let (before, _) = cache.usage();
    cache
        .alias("f|guest|json|/api/rest/products/1".into(), &entry)
        .await;
    cache.settle().await;
    let (after, entries) = cache.usage();
    assert_eq!(entries, 2);
    // Paid in full: evicting the first key must not leave a body the budget forgot.
    assert!(
        after - before >= 100_000,
        "an alias weighs {}",
        after - before
    );
    let hit = cache
        .fresh("f|guest|json|/api/rest/products/1")
        .await
        .unwrap();
    assert!(Arc::ptr_eq(&hit, &entry));
    cache.invalidate(&["p:1".into()]);
    assert!(
        cache
            .fresh("f|guest|json|/api/rest/products/1")
            .await
            .is_none()
    );
}

/// What the fast path reads through `with_fresh`: this thread's kept copy (`hot`) or moka.
async fn served(cache: &Arc<Cache>, key: &str) -> Option<String> {
    cache
        .with_fresh(key, Instant::now(), |entry| text(entry).to_owned())
        .await
}

#[tokio::test(start_paused = true)]
async fn a_kept_entry_is_served_only_while_moka_would_serve_it() {
    let cache = cache(60, 0);
    let calls = Arc::new(AtomicUsize::new(0));
    get(&cache, "k", &calls, Ok("one")).await.unwrap();
    // From moka, then kept by this thread: the second read is the kept copy.
    assert_eq!(served(&cache, "k").await.as_deref(), Some("one"));
    assert_eq!(served(&cache, "k").await.as_deref(), Some("one"));
    assert_eq!(cache.stats().hits.get(), 2);
    // An invalidation of its tag: the kept copy is not served.
    cache.invalidate(&["p:1".to_owned()]);
    assert_eq!(served(&cache, "k").await, None);
    get(&cache, "k", &calls, Ok("two")).await.unwrap();
    assert_eq!(served(&cache, "k").await.as_deref(), Some("two"));
    assert_eq!(served(&cache, "k").await.as_deref(), Some("two"));
    // Past its TTL: not served.
    tokio::time::advance(Duration::from_secs(61)).await;
    assert_eq!(served(&cache, "k").await, None);
    // A purge of everything.
    get(&cache, "k", &calls, Ok("three")).await.unwrap();
    assert_eq!(served(&cache, "k").await.as_deref(), Some("three"));
    cache.invalidate_all();
    assert_eq!(served(&cache, "k").await, None);
    // Held off (a write with an unknown outcome touched it).
    get(&cache, "k", &calls, Ok("four")).await.unwrap();
    assert_eq!(served(&cache, "k").await.as_deref(), Some("four"));
    cache.hold_off(&["p:1".to_owned()], Duration::from_secs(60));
    assert_eq!(served(&cache, "k").await, None);
}

#[tokio::test]
async fn a_kept_entry_moka_replaced_or_dropped_is_not_served_and_another_cache_has_its_own() {
    let cache = cache(60, 0);
    let calls = Arc::new(AtomicUsize::new(0));
    get(&cache, "k", &calls, Ok("one")).await.unwrap();
    assert_eq!(served(&cache, "k").await.as_deref(), Some("one"));
    let kept = cache.store.as_ref().unwrap().get("k").await.unwrap();
    // moka drops it (its listener marks the entry): the kept copy goes too.
    cache.store.as_ref().unwrap().invalidate("k").await;
    cache.store.as_ref().unwrap().run_pending_tasks().await;
    assert!(kept.is_superseded());
    assert_eq!(served(&cache, "k").await, None);
    // The same key in another cache is another entry.
    let other = self::cache(60, 0);
    get(&other, "k", &calls, Ok("other")).await.unwrap();
    get(&cache, "k", &calls, Ok("mine")).await.unwrap();
    assert_eq!(served(&other, "k").await.as_deref(), Some("other"));
    assert_eq!(served(&cache, "k").await.as_deref(), Some("mine"));
    assert_eq!(served(&other, "k").await.as_deref(), Some("other"));
}
