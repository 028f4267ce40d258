//! A customer's store password, checked by the store: the one sign-in behind both the
//! Bearer token endpoint (`gateway::auth_token`) and the OAuth authorization page
//! (`oauth::authorize`).
//!
//! The back end asks the store whether the password is right and whose it is
//! (`SignIn::sign_in`), and keeps whatever session with the store it needs for that
//! customer itself. When it kept one, the customer's price group is looked up again (it
//! then names their tax destination, `records::lookups::customer_group`); when the store's
//! answer named their group, it is kept for their first priced read. The password is
//! never logged, cached or kept.

use crate::app::AppState;
pub use crate::backend::port::SignInFailure as SignInError;
use crate::records::lookups::customer_group;

/// The customer's id when the store accepts the e-mail and password.
pub async fn sign_in(app: &AppState, username: &str, password: &str) -> Result<u64, SignInError> {
    let signed_in = app.backend.sign_in(username, password).await?;
    if signed_in.session_kept {
        app.cache
            .invalidate(&[crate::cache::keys::tag::customer_group(
                signed_in.customer_id,
            )]);
    } else if let Some(group) = signed_in.group {
        // Their first priced read (a product with their group's tiers) need not ask.
        customer_group::remember(app, signed_in.customer_id, group).await;
    }
    Ok(signed_in.customer_id)
}
