//! Customer access tokens: signed, expiring, revocable, and stateless apart from revocation.
//!
//! A token is `sg1.<payload>.<mac>`, both parts base64url. The payload is
//! `<customer id>.<issued at, ms>.<expires at, s>.<nonce>`; the MAC is HMAC-SHA256 over the
//! payload with `STOREGATE_TOKEN_SECRET`, so any instance that shares the secret accepts it
//! and nothing needs storing when a token is issued. Revocation (a deleted customer) is a
//! per-customer "issued before" mark kept for one token lifetime, after which every token it
//! could match has expired anyway.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

const PREFIX: &str = "sg1.";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenError {
    Invalid,
    Expired,
    Revoked,
}

/// A freshly issued token.
#[derive(Debug, Clone)]
pub struct Issued {
    pub token: String,
    pub expires_in: u64,
}

/// Told of every revocation made in this process (customer id, instant in ms), so that it
/// can be passed on to other instances (`shared_state`).
pub type RevocationListener = Box<dyn Fn(u64, u64) + Send + Sync>;

pub struct TokenIssuer {
    key: Vec<u8>,
    ttl: Duration,
    /// customer id -> tokens issued at or before this instant (ms) are refused.
    revoked: moka::sync::Cache<u64, u64>,
    listener: std::sync::OnceLock<RevocationListener>,
}

impl std::fmt::Debug for TokenIssuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenIssuer")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// Milliseconds since the Unix epoch (the clock tokens are issued and revoked by).
pub(super) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl TokenIssuer {
    pub fn new(key: Vec<u8>, ttl: Duration) -> TokenIssuer {
        TokenIssuer {
            key,
            ttl,
            revoked: moka::sync::Cache::builder()
                .max_capacity(1_000_000)
                .time_to_live(ttl + Duration::from_secs(1))
                .build(),
            listener: std::sync::OnceLock::new(),
        }
    }

    /// Sets who is told of this process's revocations (once; later calls are ignored).
    pub fn on_revoke(&self, listener: RevocationListener) {
        let _ = self.listener.set(listener);
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC takes keys of any length.
        Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC accepts any key length")
    }

    pub fn issue(&self, customer_id: u64) -> Issued {
        self.issue_at(customer_id, now_ms())
    }

    fn issue_at(&self, customer_id: u64, now: u64) -> Issued {
        let mut nonce = [0u8; 12];
        getrandom::fill(&mut nonce).expect("the operating system's random generator");
        let expires = now / 1000 + self.ttl.as_secs();
        let payload = format!(
            "{customer_id}.{now}.{expires}.{}",
            URL_SAFE_NO_PAD.encode(nonce)
        );
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        let tag = mac.finalize().into_bytes();
        Issued {
            token: format!(
                "{PREFIX}{}.{}",
                URL_SAFE_NO_PAD.encode(payload.as_bytes()),
                URL_SAFE_NO_PAD.encode(tag)
            ),
            expires_in: self.ttl.as_secs(),
        }
    }

    /// The customer id a token stands for.
    pub fn verify(&self, token: &str) -> Result<u64, TokenError> {
        self.verify_at(token, now_ms())
    }

    fn verify_at(&self, token: &str, now: u64) -> Result<u64, TokenError> {
        let rest = token.strip_prefix(PREFIX).ok_or(TokenError::Invalid)?;
        let (payload_b64, tag_b64) = rest.split_once('.').ok_or(TokenError::Invalid)?;
        if payload_b64.len() > 256 || tag_b64.len() > 64 {
            return Err(TokenError::Invalid);
        }
        let payload = URL_SAFE_NO_PAD
            .decode(payload_b64)
            .map_err(|_| TokenError::Invalid)?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag_b64)
            .map_err(|_| TokenError::Invalid)?;
        let mut mac = self.mac();
        mac.update(&payload);
        // Constant-time comparison.
        mac.verify_slice(&tag).map_err(|_| TokenError::Invalid)?;
        let payload = std::str::from_utf8(&payload).map_err(|_| TokenError::Invalid)?;
        let mut parts = payload.split('.');
        let customer_id: u64 = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or(TokenError::Invalid)?;
        let issued_ms: u64 = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or(TokenError::Invalid)?;
        let expires_s: u64 = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or(TokenError::Invalid)?;
        if now / 1000 >= expires_s {
            return Err(TokenError::Expired);
        }
        if let Some(revoked_at) = self.revoked.get(&customer_id)
            && issued_ms <= revoked_at
        {
            return Err(TokenError::Revoked);
        }
        Ok(customer_id)
    }

    /// Refuses every token issued so far for this customer (the customer was deleted);
    /// the mark's instant (ms), which is what the other instances and the store keep.
    pub fn revoke_customer(&self, customer_id: u64) -> u64 {
        let at = now_ms();
        self.apply_revocation(customer_id, at);
        if let Some(listener) = self.listener.get() {
            listener(customer_id, at);
        }
        at
    }

    /// Applies a revocation made elsewhere (another instance, at `at_ms`), without telling
    /// the listener. The later of two marks wins: marks only ever widen what is refused.
    pub fn apply_revocation(&self, customer_id: u64, at_ms: u64) {
        self.revoked
            .entry(customer_id)
            .and_upsert_with(|current| match current {
                Some(entry) => (*entry.value()).max(at_ms),
                None => at_ms,
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issuer() -> TokenIssuer {
        TokenIssuer::new(b"k".to_vec(), Duration::from_secs(3600))
    }

    #[test]
    fn round_trip() {
        let issuer = issuer();
        let issued = issuer.issue(7);
        assert_eq!(issuer.verify(&issued.token), Ok(7));
        assert_eq!(issued.expires_in, 3600);
    }

    #[test]
    fn forged_tampered_and_foreign_tokens_fail() {
        let issuer = issuer();
        let token = issuer.issue(7).token;
        // Another secret.
        let other = TokenIssuer::new(b"other".to_vec(), Duration::from_secs(3600));
        assert_eq!(other.verify(&token), Err(TokenError::Invalid));
        // Change the customer id in the payload, keep the MAC.
        let (_, rest) = token.split_at(PREFIX.len());
        let (payload, tag) = rest.split_once('.').unwrap();
        let text = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        let forged_payload = URL_SAFE_NO_PAD.encode(text.replacen('7', "8", 1));
        assert_eq!(
            issuer.verify(&format!("{PREFIX}{forged_payload}.{tag}")),
            Err(TokenError::Invalid)
        );
        for junk in ["", "sg1.", "sg1.a.b", "abc", "sg1.!!.??", &"a".repeat(5000)] {
            assert_eq!(issuer.verify(junk), Err(TokenError::Invalid), "{junk}");
        }
    }

    #[test]
    fn expiry() {
        let issuer = issuer();
        let token = issuer.issue_at(7, 1_000_000).token;
        assert_eq!(issuer.verify_at(&token, 1_000_000 + 3_599_000), Ok(7));
        assert_eq!(
            issuer.verify_at(&token, 1_000_000 + 3_600_000),
            Err(TokenError::Expired)
        );
    }

    #[test]
    fn revocation_hits_only_older_tokens_of_that_customer() {
        let issuer = issuer();
        let old = issuer.issue_at(7, now_ms() - 10).token;
        let other = issuer.issue(8).token;
        issuer.revoke_customer(7);
        assert_eq!(issuer.verify(&old), Err(TokenError::Revoked));
        assert_eq!(issuer.verify(&other), Ok(8));
        let newer = issuer.issue_at(7, now_ms() + 10).token;
        assert_eq!(issuer.verify(&newer), Ok(7));
    }
}
