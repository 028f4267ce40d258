//! OpenMage (Magento 1.9) as a back end: its own REST API, `{url}/api/rest/...`.
//!
//! Why it exists: many stores built on this API's original never moved to Magento 2. With
//! `STOREGATE_BACKEND=openmage` the gateway fronts such a store as it is today, and the same
//! apps keep working when the store moves (DESIGN.md). The original's REST API already
//! speaks the API's field names, so the adapter maps little.
//!
//! - [`client`]: [`OpenMage`], every call signed with OAuth 1.0a (HMAC-SHA1) as the admin
//!   token the operator configured, or as a customer's token, or unsigned as the store's
//!   Guest, in the client shell every back end shares; creates answered by `Location` (200,
//!   or 302 behind nginx + php-fpm); the store's error body as a [`StoreMessage`].
//! - [`endpoint`]: a path's template (`/api/rest/products/{}`) for metrics, logs and
//!   cassette names, and the store's wire as the recorder sees it ([`endpoint::WIRE`]).
//! - [`OpenMageBackend`] (`records.rs`): the client behind the port, with the store views
//!   the operator named, a SKU-to-id map (the store addresses products by id), and the
//!   customers' store sessions it keeps; the port's areas one file each (`setup`,
//!   `catalog`, `media`, `stock`, `people`, `sales`, `links`), lists made into pages
//!   (`lists`), the list query in its syntax (`search`), customers' passwords checked on
//!   the store's own authorization page (`signin`).
//!
//! It knows the store's paths, signatures and error bodies, and nothing of the client-facing
//! protocol. Its decisions and their reasons: docs/decisions/openmage-client.md and
//! docs/decisions/openmage-adapter.md.

mod catalog;
pub mod client;
pub mod endpoint;
mod failures;
mod links;
pub mod lists;
mod media;
mod people;
mod records;
mod sales;
pub mod search;
mod setup;
pub mod signin;
mod signing;
mod stock;

pub use crate::backend::port::{BackendError, StoreMessage};
/// Path segments are encoded as every store's are (RFC 3986 unreserved kept).
pub use crate::backend::shell::paths::segment;
pub use client::{Credentials, OpenMage, Written, store_message};
pub use records::{OpenMageBackend, View};

use std::sync::Arc;

use crate::backend::kind::{Settings, Wiring};
use crate::backend::port::Backend;
use crate::backend::recording::Wires;

/// OpenMage's wire, for its recordings.
const OWN_WIRE: Wires = Wires(&[&endpoint::WIRE]);

/// The client for `settings` (OAuth 1.0a as the configured admin token; none when replaying
/// cassettes, whose signatures nothing checks), its calls through the recorder or the
/// cassettes when the settings ask for them, behind the port with the configured store
/// views (the default store as id 1 when none are named).
pub fn build(settings: &Settings, wiring: &Wiring) -> Result<Arc<dyn Backend>, String> {
    let credentials = match &settings.oauth {
        Some(keys) => Credentials {
            consumer_key: keys.consumer_key.clone(),
            consumer_secret: keys.consumer_secret.clone(),
            token: settings.token.clone(),
            token_secret: keys.token_secret.clone(),
        },
        None => Credentials::none(),
    };
    let client = OpenMage::new(
        &settings.url,
        credentials,
        settings.timeout,
        &settings.default_store,
    )?
    .with_resilience(&settings.resilience, wiring.metrics.clone());
    let transport = settings.recorded(client.transport(), OWN_WIRE)?;
    let views = if settings.store_views.is_empty() {
        vec![View {
            id: 1,
            code: settings.default_store.clone(),
            website_id: 1,
        }]
    } else {
        settings
            .store_views
            .iter()
            .map(|(code, id, website_id)| View {
                id: *id,
                code: code.clone(),
                website_id: *website_id,
            })
            .collect()
    };
    let mut backend = OpenMageBackend::new(client.with_transport(transport), &settings.url, views);
    if let Some(sessions) = &wiring.sessions {
        backend = backend.with_sessions(sessions.clone());
    }
    Ok(Arc::new(backend))
}
