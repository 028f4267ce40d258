//! The gateway over Magento 2 for the walk: in front of a fresh sandbox, in the original
//! profile, with the seeded store's OAuth tables imported (the same consumer and tokens an
//! app of the original signs with; over Magento 2 the customer token is customer 1's).

use crate::{import_oauth_tables, temp_dir};

pub struct OnSandbox {
    pub gateway: storegate::Running,
    pub http: reqwest::Client,
    _sandbox: storegate_sandbox::Sandbox,
    data_dir: std::path::PathBuf,
}

impl OnSandbox {
    pub async fn start() -> OnSandbox {
        storegate::backend::transport::install_crypto();
        let sandbox =
            crate::common::gateway::start_sandbox(storegate_sandbox::SandboxOptions::default())
                .await;
        let data_dir = temp_dir("walk-sandbox");
        import_oauth_tables(&data_dir);
        let vars: Vec<(String, String)> = vec![
            ("STOREGATE_LISTEN".into(), "127.0.0.1:0".into()),
            ("STOREGATE_DATA_DIR".into(), data_dir.display().to_string()),
            ("STOREGATE_PROFILE".into(), "original".into()),
            ("STOREGATE_UPSTREAM_URL".into(), sandbox.base_url()),
            (
                "STOREGATE_UPSTREAM_TOKEN".into(),
                sandbox.token().to_owned(),
            ),
        ];
        let lookup = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let config = storegate::Config::from_sources(None, &lookup).expect("a valid configuration");
        let setup = crate::common::gateway::Setup {
            upstream_url: &sandbox.base_url(),
            upstream_token: sandbox.token(),
            admin_key: "walk-test-admin-key-0123456789",
            token_secret: b"walk-test-token-secret",
        };
        let gateway = crate::common::gateway::start_gateway(config, setup).await;
        OnSandbox {
            gateway,
            http: crate::common::http::client_without_redirects(),
            _sandbox: sandbox,
            data_dir,
        }
    }

    pub async fn stop(self) {
        self.gateway.stop().await;
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}
