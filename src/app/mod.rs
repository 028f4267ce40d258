//! The state every request shares (configuration, upstream client, cache, mappings,
//! authenticator, locks, shared state, metrics), built once with the service in the `app` module.

pub mod warm_up;

use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::auth::Authenticator;
use crate::backend::port::Backend;
use crate::cache::Cache;
use crate::config::Config;
use crate::observe::metrics::Metrics;
use crate::rules::mapping::Mappings;
use crate::shared_state::SharedState;
use crate::shared_state::locks::Locks;

/// Everything a handler may need, shared by every request.
#[derive(Debug)]
pub struct App {
    pub config: Config,
    /// The store behind the gateway, through the back-end port.
    pub backend: Arc<dyn Backend>,
    pub cache: Arc<Cache>,
    pub mappings: Mappings,
    pub auth: Arc<Authenticator>,
    /// The OAuth 1.0a provider (its endpoints and token store).
    pub oauth: Arc<crate::auth::oauth::OAuth>,
    /// Turns for read-modify-write cycles on one SKU or customer (across instances when
    /// they share Redis).
    pub locks: Locks,
    /// What instances share through Redis (or keep in this process): revocations,
    /// invalidations, lock leases, one-time claims (`claim_once`), the second cache level.
    pub shared: Arc<SharedState>,
    /// What `/metrics` shows.
    pub metrics: Arc<Metrics>,
    /// One permit per API request being served (`STOREGATE_MAX_IN_FLIGHT`).
    pub in_flight: Arc<Semaphore>,
    /// Open connections, their cap, and whether the gateway is draining.
    pub connections: Arc<crate::server::Connections>,
    /// One permit per image upload whose body is being read or sent
    /// (`STOREGATE_MAX_UPLOADS_IN_FLIGHT`).
    pub uploads: Arc<Semaphore>,
    /// The upstream's state as `/readyz` last saw it (`storegate_upstream_up`).
    pub backend_up: crate::observe::process::BackendUp,
    /// The start's warm-up (lookups loaded, hot answers refilled): `/readyz` waits for it.
    pub warm_up: Arc<warm_up::WarmUp>,
    /// Per-client rate limits and the sign-in guard (`STOREGATE_RATE_LIMITS`,
    /// `STOREGATE_SIGNIN_LIMIT`).
    pub limits: Arc<crate::limits::Limits>,
    /// The dual run (`STOREGATE_SHADOW_*`): a candidate back end compared with this one;
    /// None without a candidate (and then it costs nothing).
    pub shadow: Option<Arc<crate::shadow::Shadow>>,
}

pub type AppState = Arc<App>;
