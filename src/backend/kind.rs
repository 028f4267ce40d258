//! What a kind of back end is to the registry (`backend::registry`), and what one is built
//! from: its settings (where its store is, its credentials, its resilience and recording)
//! and what the gateway hands it (its metrics, where it may keep customers' sessions). An
//! adapter's folder exports a [`Kind`]; the registry lists them.

use std::sync::Arc;
use std::time::Duration;

use crate::backend::port::{Backend, SessionKeeper};
use crate::backend::recording::Wires;
use crate::backend::shell::resilience;
use crate::backend::transport::Transport;
use crate::config::{Recording, Secret};
use crate::observe::metrics::BackendMetrics;

/// What a back end is built from: where its store is and how to reach it.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The kind's name (`magento2`).
    pub kind: String,
    /// The store's base URL, or `replay:DIR`.
    pub url: String,
    /// The credential the gateway's calls carry (an integration token, an access token).
    pub token: Secret,
    /// A store that signs with OAuth 1.0a: its consumer and the token's secret.
    pub oauth: Option<OAuthKeys>,
    /// The store views the operator named, as `(code, id, website id)`, for a store whose
    /// API lists none.
    pub store_views: Vec<(String, u64, u64)>,
    /// The store view reads default to.
    pub default_store: String,
    /// The deadline of one call.
    pub timeout: Duration,
    /// The breaker, the retry budget, the bound on calls in flight.
    pub resilience: resilience::Options,
    /// Recording and replay of its traffic.
    pub recording: Recording,
}

impl Settings {
    /// A client's `transport` as these settings want it: through the recorder, or
    /// replaced by the cassettes of a `replay:` URL ([`crate::backend::recording::wire`]);
    /// `wires`: the adapter's store.
    pub fn recorded(
        &self,
        transport: Arc<dyn Transport>,
        wires: Wires,
    ) -> Result<Arc<dyn Transport>, String> {
        crate::backend::recording::wire(
            transport,
            &self.recording,
            &self.url,
            self.token.expose(),
            self.timeout,
            wires,
        )
    }
}

/// An OAuth 1.0a consumer and the secret of the access token the calls are signed with.
#[derive(Debug, Clone)]
pub struct OAuthKeys {
    pub consumer_key: Secret,
    pub consumer_secret: Secret,
    pub token_secret: Secret,
}

/// What the gateway hands a back end it builds.
#[derive(Debug, Clone)]
pub struct Wiring {
    /// Where its calls are counted.
    pub metrics: BackendMetrics,
    /// Where it may keep customers' store sessions.
    pub sessions: Option<Arc<dyn SessionKeeper>>,
}

/// Builds a back end of one kind.
pub type Build = fn(&Settings, &Wiring) -> Result<Arc<dyn Backend>, String>;

/// One kind of back end.
#[derive(Clone, Copy)]
pub struct Kind {
    pub name: &'static str,
    pub build: Build,
    /// Its mapping files, built into the binary (`file name`, `text`).
    pub mappings: &'static [(&'static str, &'static str)],
}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kind").field("name", &self.name).finish()
    }
}
