//! A customer's store password, checked by the store: the one sign-in behind both the
//! Bearer token endpoint (`gateway::auth_token`) and the OAuth authorization page
//! (`oauth::authorize`).
//!
//! The store says whether the password is right and whose it is (`customer_token`, then
//! `customer_me`). For a store that renders for each customer (OpenMage: a customer's
//! prices are their group's, taxed for their address), the store token the sign-in got is
//! kept in the OAuth store as the customer's session (`backend::port::StoreSession`), one
//! per customer, so that every instance can ask the store what it shows them. The password
//! is never logged, cached or kept.

use crate::app::AppState;
use crate::backend::port::UpstreamError;
use crate::rules::mapping::convert::as_i64;

/// Why a sign-in did not give a customer.
#[derive(Debug)]
pub enum SignInError {
    /// The store refused the e-mail and password (or the account is locked).
    Refused,
    /// The store did not answer as it should: the client is not at fault.
    Store(UpstreamError),
}

/// The customer's id when the store accepts the e-mail and password.
pub async fn sign_in(app: &AppState, username: &str, password: &str) -> Result<u64, SignInError> {
    let upstream_token = match app.backend.customer_token(username, password).await {
        Ok(token) => token,
        // Stores answer 401 for bad credentials and a locked account, 400 for empty ones.
        Err(UpstreamError::Status {
            status: 400 | 401, ..
        }) => return Err(SignInError::Refused),
        Err(other) => return Err(SignInError::Store(other)),
    };
    let me = app
        .backend
        .customer_me(&upstream_token)
        .await
        .map_err(SignInError::Store)?;
    let customer_id = me
        .get("id")
        .and_then(as_i64)
        .filter(|&id| id > 0)
        .ok_or_else(|| {
            SignInError::Store(UpstreamError::Protocol("customers/me has no id".into()))
        })? as u64;
    if let Some(session) = app.backend.store_session(customer_id, &upstream_token) {
        // Without it the customer still signs in; their prices are worked out by the
        // gateway instead of the store until the next sign-in.
        if let Err(error) = app
            .oauth
            .store()
            .put_store_session(customer_id, &session.to_text())
            .await
        {
            tracing::warn!(%error, "customer sign-in: could not keep the store session");
        }
        // Their price group is looked up again: with a session it names their tax
        // destination (`records::lookups::customer_group`).
        app.cache
            .invalidate(&[crate::cache::keys::tag::customer_group(customer_id)]);
    }
    Ok(customer_id)
}
