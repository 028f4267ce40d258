//! OAuth nonces claimed once across every instance: the shared state's one-time claim
//! behind the OAuth provider's replay guard ([`NonceGuard`]); and its revocations carried
//! to the other instances ([`RevocationChannel`]). They live here, not with the provider,
//! so that authentication knows nothing of Redis.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

use super::SharedState;
use super::events::Event;
use crate::auth::oauth::nonce::{NonceGuard, SeenNonces};
use crate::auth::oauth::problem::Problem;
use crate::auth::oauth::verified::{Forget, RevocationChannel};
use crate::shared_state::RedisStatus;

/// Nonces in the state instances share through Redis (`STOREGATE_REDIS_URL`): a nonce used
/// on one instance is refused on all.
///
/// Redis unreachable (down, or past its deadline) does not stop signed calls: the nonce is
/// claimed in this instance's own set instead ([`SeenNonces::fallback_only`]), counted in
/// `storegate_oauth_nonce_fallbacks_total` and logged once per interval. A replay of a nonce
/// claimed during the outage is still refused here; one to another instance, or of a nonce
/// claimed before the outage, is not until Redis is back, and only inside the timestamp
/// window every request must fall in anyway (docs/decisions/failing-soft.md). Nonces
/// claimed through Redis are not kept here: in steady operation this costs no memory (a set
/// of every nonce would grow with the signed calls of the two-hour window). While Redis is
/// known to be down it is not asked at all, so no signed call waits for its deadline.
#[derive(Debug)]
pub struct SharedNonces {
    shared: Arc<SharedState>,
    seen: SeenNonces,
}

impl SharedNonces {
    pub fn new(shared: Arc<SharedState>) -> SharedNonces {
        SharedNonces {
            shared,
            seen: SeenNonces::fallback_only(),
        }
    }
}

impl NonceGuard for SharedNonces {
    fn claim_once<'a>(
        &'a self,
        key: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, Problem>> {
        Box::pin(async move {
            if self.shared.redis_status() == RedisStatus::Down {
                return Ok(self
                    .seen
                    .claim_here(key, format_args!("the shared guard, Redis, is unreachable")));
            }
            let claimed = self.shared.claim_once(key, ttl).await;
            Ok(self.seen.decide(key, claimed.map_err(|e| e.to_string())))
        })
    }

    fn fallbacks(&self) -> u64 {
        self.seen.fallbacks()
    }
}

/// OAuth revocations between instances: "forget what you verified" on the Redis channel
/// (`Event::OAuthForget`), naming what to forget; live while Redis is up.
#[derive(Debug, Clone)]
pub struct SharedRevocations(pub Arc<SharedState>);

impl RevocationChannel for SharedRevocations {
    fn live(&self) -> bool {
        self.0.redis_status() == RedisStatus::Up
    }

    fn announce(&self, forget: &Forget) {
        self.0.announce_oauth_forget(forget);
    }
}

/// The event that tells the other instances to forget `forget`.
pub(super) fn forget_event(origin: String, forget: &Forget) -> Event {
    let (tokens, customer) = match forget {
        Forget::Tokens(ids) => (ids.clone(), None),
        Forget::Customer(id) => (Vec::new(), Some(*id)),
        Forget::All => (Vec::new(), None),
    };
    Event::OAuthForget {
        origin,
        tokens,
        customer,
    }
}

/// What an `Event::OAuthForget` asks to forget (an event of an older instance, naming
/// nothing, is everything).
pub(super) fn forget_of(tokens: Vec<i64>, customer: Option<u64>) -> Forget {
    match (tokens.is_empty(), customer) {
        (false, _) => Forget::Tokens(tokens),
        (true, Some(id)) => Forget::Customer(id),
        (true, None) => Forget::All,
    }
}
