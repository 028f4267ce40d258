//! Starting an embedded gateway (and the sandbox store) on free loopback ports: the one
//! start-up sequence every test binary needs.

use storegate::config::Config;
use storegate::{Parts, Running};
use storegate_sandbox::{Sandbox, SandboxOptions};

/// What a gateway is started with besides its configuration: the store it fronts and the
/// secrets it keeps.
pub struct Setup<'a> {
    pub upstream_url: &'a str,
    pub upstream_token: &'a str,
    /// The admin key whose digest the gateway accepts.
    pub admin_key: &'a str,
    pub token_secret: &'a [u8],
}

/// The parts for `config` (its mappings loaded) from `setup`.
pub fn parts(config: &Config, setup: &Setup) -> Parts {
    Parts {
        upstream_url: setup.upstream_url.to_owned(),
        upstream_token: setup.upstream_token.to_owned(),
        admin_digests: vec![storegate::auth::admin_key_digest(setup.admin_key)],
        token_secret: setup.token_secret.to_vec(),
        mappings: storegate::load_mappings(config).expect("mappings load"),
    }
}

/// A gateway with `config` and `parts` on a free loopback port.
pub async fn start_parts(config: Config, parts: Parts) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    storegate::start(config, parts, listener, None)
        .await
        .unwrap()
}

/// A gateway with `config` in front of the store `setup` names, on a free loopback port.
pub async fn start_gateway(config: Config, setup: Setup<'_>) -> Running {
    let parts = parts(&config, &setup);
    start_parts(config, parts).await
}

/// A gateway with `config` in front of `sandbox`, with the mappings built into the binary.
pub async fn start_on_sandbox(
    config: Config,
    sandbox: &Sandbox,
    admin_key: &str,
    token_secret: &[u8],
) -> Running {
    let parts = Parts {
        upstream_url: sandbox.base_url(),
        upstream_token: sandbox.token().to_owned(),
        admin_digests: vec![storegate::auth::admin_key_digest(admin_key)],
        token_secret: token_secret.to_vec(),
        mappings: storegate::rules::mapping::Mappings::embedded(),
    };
    start_parts(config, parts).await
}

/// The embedded Magento 2 sandbox on a free loopback port.
pub async fn start_sandbox(options: SandboxOptions) -> Sandbox {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    Sandbox::start(listener, options).await.unwrap()
}
