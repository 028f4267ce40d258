//! A [`TokenStore`] whose answers the unit tests set: healthy, down (refused at once), hung
//! (never answers), revoked. Access tokens exist for any value: their id is the value's
//! length, their owner customer 7.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use super::store::{
    AccessTokenInfo, Consumer, Exchanged, Export, ImportedToken, Kind, NewConsumer, Owner,
    StoreError, StoreFuture, Token, TokenStore,
};

#[derive(Debug, Default)]
pub struct Fake {
    pub down: AtomicBool,
    pub hung: AtomicBool,
    pub revoked: AtomicBool,
    pub reads: AtomicU64,
    pub probes: AtomicU64,
}

impl Fake {
    /// Fails as the test set it: hung (pending for ever), down, or not at all.
    fn answer<T: Send + 'static>(&self, value: T) -> StoreFuture<'static, T> {
        let (down, hung) = (
            self.down.load(Ordering::SeqCst),
            self.hung.load(Ordering::SeqCst),
        );
        Box::pin(async move {
            if hung {
                std::future::pending::<()>().await;
            }
            if down {
                Err(StoreError::down("fake: connection refused"))
            } else {
                Ok(value)
            }
        })
    }
}

fn unused<T: Send + 'static>() -> StoreFuture<'static, T> {
    Box::pin(async { Err(StoreError::answered("not used by these tests")) })
}

impl TokenStore for Fake {
    fn describe(&self) -> String {
        "fake".into()
    }
    fn ping(&self) -> StoreFuture<'_, ()> {
        self.answer(())
    }
    fn probe(&self) -> StoreFuture<'_, ()> {
        self.probes.fetch_add(1, Ordering::SeqCst);
        self.answer(())
    }
    fn consumer_by_key<'a>(&'a self, _: &'a str) -> StoreFuture<'a, Option<Consumer>> {
        unused()
    }
    fn consumer_by_id(&self, _: i64) -> StoreFuture<'_, Option<Consumer>> {
        unused()
    }
    fn consumers(&self) -> StoreFuture<'_, Vec<Consumer>> {
        unused()
    }
    fn upsert_consumer<'a>(&'a self, _: &'a NewConsumer) -> StoreFuture<'a, Consumer> {
        unused()
    }
    fn token<'a>(&'a self, value: &'a str) -> StoreFuture<'a, Option<Token>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        let token = Token {
            id: value.len() as i64,
            consumer_id: 1,
            kind: Kind::Access,
            token: value.to_owned(),
            secret: "s".into(),
            verifier: None,
            callback_url: None,
            owner: Some(Owner::Customer(7)),
            authorized: true,
            revoked: self.revoked.load(Ordering::SeqCst),
            created_at: 0,
        };
        self.answer(Some(token))
    }
    fn create_request_token<'a>(&'a self, _: i64, _: &'a str) -> StoreFuture<'a, Token> {
        unused()
    }
    fn authorize_request_token<'a>(
        &'a self,
        _: &'a str,
        _: Owner,
    ) -> StoreFuture<'a, Option<String>> {
        unused()
    }
    fn delete_request_token<'a>(&'a self, _: &'a str) -> StoreFuture<'a, ()> {
        unused()
    }
    fn exchange<'a>(&'a self, _: &'a Token) -> StoreFuture<'a, Exchanged> {
        unused()
    }
    fn import_access_token<'a>(&'a self, _: &'a ImportedToken) -> StoreFuture<'a, bool> {
        unused()
    }
    fn list_access_tokens(
        &self,
        _: Option<u64>,
        _: u32,
        _: u64,
    ) -> StoreFuture<'_, Vec<AccessTokenInfo>> {
        unused()
    }
    fn revoke_token(&self, _: i64) -> StoreFuture<'_, bool> {
        unused()
    }
    fn revoke_customer(&self, _: u64, _: u64) -> StoreFuture<'_, usize> {
        self.answer(1)
    }
    fn customer_revocations(&self, _: u64) -> StoreFuture<'_, Vec<(u64, u64)>> {
        self.answer(Vec::new())
    }
    fn prune_revocations(&self, _: u64) -> StoreFuture<'_, u64> {
        self.answer(0)
    }
    fn claim_nonce<'a>(&'a self, _: &'a str, _: Duration) -> StoreFuture<'a, bool> {
        self.answer(true)
    }
    fn export(&self) -> StoreFuture<'_, Export> {
        unused()
    }
    fn put_store_session<'a>(&'a self, _: u64, _: &'a str) -> StoreFuture<'a, ()> {
        unused()
    }
    fn store_session(&self, _: u64) -> StoreFuture<'_, Option<String>> {
        unused()
    }
}
