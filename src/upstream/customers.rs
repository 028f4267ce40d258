//! Customer calls: credentials checks for the gateway's own customer tokens.

use http::{HeaderValue, Method};
use serde_json::{Value, json};

use super::{Magento, Scope, UpstreamError, parse};

impl Magento {
    /// Checks a customer's e-mail and password: Magento answers with a customer token.
    pub async fn customer_token(
        &self,
        username: &str,
        password: &str,
    ) -> Result<String, UpstreamError> {
        let body = json!({"username": username, "password": password});
        self.send_json(
            Method::POST,
            Scope::Default,
            "/V1/integration/customer/token",
            Some(&body),
        )
        .await
    }

    /// The customer a Magento customer token belongs to (`GET /V1/customers/me`).
    pub async fn customer_me(&self, customer_token: &str) -> Result<Value, UpstreamError> {
        let mut authorization = HeaderValue::from_str(&format!("Bearer {customer_token}"))
            .map_err(|_| UpstreamError::Protocol("customer token is not a header value".into()))?;
        authorization.set_sensitive(true);
        let bytes = self
            .call_as(
                Method::GET,
                Scope::Default,
                "/V1/customers/me",
                authorization,
            )
            .await?;
        parse(&bytes)
    }
}
