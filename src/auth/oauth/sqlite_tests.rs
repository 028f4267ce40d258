//! The embedded store's own tests (beside it, to keep `sqlite.rs` to its one job).

use super::*;

#[test]
fn a_customers_store_session_is_replaced_and_forgotten_with_them() {
    let dir = std::env::temp_dir().join(format!("storegate-session-{}", random_hex32()));
    let store = SqliteStore::open(&dir).unwrap();
    assert_eq!(store.session(7).unwrap(), None);
    store.put_session(7, "first").unwrap();
    store.put_session(7, "second").unwrap();
    store.put_session(8, "other").unwrap();
    assert_eq!(store.session(7).unwrap().as_deref(), Some("second"));
    store.revoke_customer(7, 1_000).unwrap();
    assert_eq!(store.session(7).unwrap(), None);
    assert_eq!(store.session(8).unwrap().as_deref(), Some("other"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gateways_opening_one_folder_at_once_all_get_the_store() {
    // Instances (and the CLI) share the data folder; at their first start they create
    // the file and switch it to WAL together.
    let dir = std::env::temp_dir().join(format!("storegate-store-{}", random_hex32()));
    let openers: Vec<_> = (0..16)
        .map(|_| {
            let dir = dir.clone();
            std::thread::spawn(move || SqliteStore::open(&dir).map(|_| ()))
        })
        .collect();
    for opener in openers {
        opener.join().unwrap().unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn store() -> (SqliteStore, PathBuf) {
    let dir = std::env::temp_dir().join(format!("storegate-store-{}", random_hex32()));
    (SqliteStore::open(&dir).unwrap(), dir)
}

fn consumer(store: &SqliteStore) -> Consumer {
    store
        .upsert_consumer(&NewConsumer {
            name: "app".into(),
            key: random_hex32(),
            secret: random_hex32(),
            callback_url: Some("http://app.example/cb".into()),
            rejected_callback_url: None,
            profile: None,
        })
        .unwrap()
}

#[test]
fn the_dance_replaces_earlier_access_tokens() {
    let (store, dir) = store();
    let consumer = consumer(&store);
    let mut first = None;
    for _ in 0..2 {
        let request = store.create_request_token(consumer.id, "oob").unwrap();
        let verifier = store
            .authorize_request_token(&request.token, Owner::Customer(5))
            .unwrap()
            .unwrap();
        assert_eq!(
            store
                .authorize_request_token(&request.token, Owner::Admin)
                .unwrap(),
            None,
            "a request token is authorized once"
        );
        let request = store.token(&request.token).unwrap().unwrap();
        assert_eq!(request.verifier.as_deref(), Some(verifier.as_str()));
        let exchanged = store.exchange(&request).unwrap();
        let access = exchanged.access;
        let error = store.exchange(&request).unwrap_err();
        assert!(
            !error.is_outage(),
            "used up is the store's answer: {error:?}"
        );
        assert!(store.token(&request.token).unwrap().is_none());
        assert_eq!(access.owner, Some(Owner::Customer(5)));
        match first.replace(access.token.clone()) {
            Some(first) => {
                let replaced = store.token(&first).unwrap();
                assert!(replaced.is_none(), "replaced");
                assert_eq!(exchanged.replaced.len(), 1, "its id came back");
            }
            None => assert!(exchanged.replaced.is_empty()),
        }
    }
    assert_eq!(store.list_access_tokens(Some(5), 10, 0).unwrap().len(), 1);
    assert!(store.list_access_tokens(Some(5), 10, 1).unwrap().is_empty());
    assert_eq!(store.revoke_customer(5, 1_000).unwrap(), 1);
    let token = store.token(first.as_deref().unwrap()).unwrap().unwrap();
    assert!(token.revoked);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_schema_is_versioned_and_files_made_before_adopt_it() {
    // A file made by an earlier build: the tables, no migrations table.
    let dir = std::env::temp_dir().join(format!("storegate-store-{}", random_hex32()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("oauth.sqlite3");
    let old = Connection::open(&path).unwrap();
    old.execute_batch(MIGRATIONS[0].2).unwrap();
    old.execute(
        "INSERT INTO oauth_consumer (name, key, secret, created_at) VALUES ('a', 'k', 's', 1)",
        [],
    )
    .unwrap();
    drop(old);
    let store = SqliteStore::open(&dir).unwrap();
    assert_eq!(store.consumer_by_key("k").unwrap().unwrap().secret, "s");
    let versions: i64 = store
        .with(|c| {
            c.query_row(
                "SELECT MAX(version) FROM storegate_oauth_migrations",
                [],
                |r| r.get(0),
            )
        })
        .unwrap();
    assert_eq!(versions, MIGRATIONS.last().unwrap().0);
    // A file from a newer build is refused, not misread.
    store
        .with(|c| {
            c.execute(
                "INSERT INTO storegate_oauth_migrations VALUES (999, 'x', 0)",
                [],
            )
        })
        .unwrap();
    drop(store);
    let error = SqliteStore::open(&dir).unwrap_err().to_string();
    assert!(error.contains("schema version 999"), "{error}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn nonces_are_claimed_once_until_they_expire() {
    let (store, dir) = store();
    assert!(store.claim("k|n", Duration::from_secs(60)).unwrap());
    assert!(!store.claim("k|n", Duration::from_secs(60)).unwrap());
    assert!(store.claim("k|other", Duration::from_secs(60)).unwrap());
    assert!(store.claim("k|gone", Duration::ZERO).unwrap());
    assert!(store.claim("k|gone", Duration::ZERO).unwrap(), "expired");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn customer_revocations_are_kept_the_later_mark_winning_and_pruned() {
    let (store, dir) = store();
    store.revoke_customer(3, 5_000).unwrap();
    store.revoke_customer(3, 4_000).unwrap();
    store.revoke_customer(4, 9_000).unwrap();
    let mut marks = store.customer_revocations(0).unwrap();
    marks.sort();
    assert_eq!(marks, vec![(3, 5_000), (4, 9_000)]);
    assert_eq!(store.customer_revocations(6_000).unwrap(), vec![(4, 9_000)]);
    assert_eq!(store.prune_revocations(6_000).unwrap(), 1);
    assert_eq!(store.customer_revocations(0).unwrap(), vec![(4, 9_000)]);
    store.probe().unwrap();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_locked_file_is_a_slow_store_not_a_refusal() {
    let (store, dir) = store();
    let holder = Connection::open(store.path()).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let waiting = std::time::Instant::now();
    let error = store
        .with(|c| {
            c.busy_timeout(Duration::from_millis(50))?;
            c.execute("DELETE FROM oauth_nonce", [])
        })
        .unwrap_err();
    assert_eq!(
        error.failure,
        crate::auth::oauth::store::Failure::Slow,
        "{error}"
    );
    assert!(waiting.elapsed() < Duration::from_secs(2));
    holder.execute_batch("ROLLBACK").unwrap();
    std::fs::remove_dir_all(dir).unwrap();
}
