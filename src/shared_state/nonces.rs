//! OAuth nonces claimed once across every instance: the shared state's one-time claim
//! behind the OAuth provider's replay guard ([`NonceGuard`]); and its revocations carried
//! to the other instances ([`RevocationChannel`]). They live here, not with the provider,
//! so that authentication knows nothing of Redis.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

use super::SharedState;
use crate::auth::oauth::nonce::NonceGuard;
use crate::auth::oauth::problem::Problem;
use crate::auth::oauth::verified::RevocationChannel;
use crate::shared_state::RedisStatus;

/// Nonces in the state instances share through Redis (`STOREGATE_REDIS_URL`): a nonce used
/// on one instance is refused on all. Redis down is an error, and the call is refused (503):
/// a replay guard that cannot check must not pass.
#[derive(Debug, Clone)]
pub struct SharedNonces(pub Arc<SharedState>);

impl NonceGuard for SharedNonces {
    fn claim_once<'a>(
        &'a self,
        key: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, Problem>> {
        Box::pin(async move {
            self.0
                .claim_once(key, ttl)
                .await
                .map_err(|e| Problem::Internal(e.to_string()))
        })
    }
}

/// OAuth revocations between instances: "forget what you verified" on the Redis channel
/// (`Event::OAuthForget`), live while Redis is up.
#[derive(Debug, Clone)]
pub struct SharedRevocations(pub Arc<SharedState>);

impl RevocationChannel for SharedRevocations {
    fn live(&self) -> bool {
        self.0.redis_status() == RedisStatus::Up
    }

    fn announce(&self) {
        self.0.announce_oauth_forget();
    }
}
