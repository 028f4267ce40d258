//! Customers signing in with their store password, and the sessions a back end keeps for
//! them with the store.
//!
//! Which sessions a back end keeps, and what for, is the adapter's business: it is handed a
//! [`SessionKeeper`] (the gateway keeps them in its OAuth store, shared by every instance)
//! and nothing above the port reads or writes one.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::error::BackendError;

/// A customer's credentials with the store, kept (through a [`SessionKeeper`]) so that the
/// back end can ask the store what the store shows that customer: their group's prices,
/// with their tax, as the store computes them. Obtained when the customer signs in with
/// their store password ([`SignIn::sign_in`]), or carried over with the store's own access
/// tokens (`storegate oauth import`). Kept as JSON text; `Debug` shows no secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreSession {
    /// The customer it speaks for (the store's id).
    pub customer_id: u64,
    /// The OAuth consumer the token was issued to, with its secret; `None`: the gateway's
    /// own (`STOREGATE_UPSTREAM_CONSUMER_KEY`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer: Option<(String, String)>,
    pub token: String,
    #[serde(default)]
    pub secret: String,
}

impl std::fmt::Debug for StoreSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreSession")
            .field("customer_id", &self.customer_id)
            .field("own_consumer", &self.consumer.is_some())
            .finish_non_exhaustive()
    }
}

impl StoreSession {
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_text(text: &str) -> Option<StoreSession> {
        serde_json::from_str(text).ok()
    }
}

/// A sign-in the store accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignedIn {
    /// The customer's id in the store.
    pub customer_id: u64,
    /// A session of theirs with the store was kept: their prices are now the store's own
    /// for them (the caller drops what it cached of their price group).
    pub session_kept: bool,
    /// Their customer group, when the sign-in's answer said it (the caller keeps it, so
    /// that their first priced read need not ask).
    pub group: Option<u64>,
}

/// Why a sign-in did not give a customer.
#[derive(Debug)]
pub enum SignInFailure {
    /// The store refused the e-mail and password (or the account is locked).
    Refused,
    /// The store did not answer as it should: the client is not at fault.
    Store(BackendError),
}

/// Where a back end keeps customers' store sessions: one text per customer, shared by every
/// instance of the gateway. An empty text forgets the session.
#[async_trait]
pub trait SessionKeeper: Send + Sync + std::fmt::Debug {
    async fn session(&self, customer_id: u64) -> Result<Option<String>, String>;
    async fn keep(&self, customer_id: u64, session: &str) -> Result<(), String>;
}

/// Customers' sign-ins.
#[async_trait]
pub trait SignIn: Send + Sync {
    /// Checks a customer's e-mail and password with the store; who they are. (By default:
    /// a store that signs nobody in.)
    async fn sign_in(&self, _username: &str, _password: &str) -> Result<SignedIn, SignInFailure> {
        Err(SignInFailure::Store(BackendError::Unsupported(
            "a customer's sign-in".into(),
        )))
    }
    /// Does the back end hold a session of this customer's with the store (their prices are
    /// then the store's own for them)? By default: it keeps none.
    async fn has_session(&self, _customer_id: u64) -> bool {
        false
    }
}
