//! Store setup in Magento 2: store views and configs, the directory, websites, categories,
//! attribute sets; whether the store answers and takes the gateway's token.

use async_trait::async_trait;
use serde_json::Value;

use super::{Magento, Scope, parse};
use crate::backend::port::{
    BackendError, Category, CircuitProbe, Country, StoreConfig, StoreSetup, StoreView,
};

#[async_trait]
impl StoreSetup for Magento {
    fn default_store(&self) -> &str {
        &self.default_store
    }

    fn circuit(&self) -> CircuitProbe {
        self.shell.circuit()
    }

    /// An anonymous, cheap call.
    async fn ping(&self) -> Result<(), BackendError> {
        self.get(Scope::Default, "/V1/store/storeViews", &[])
            .await
            .map(|_| ())
    }

    /// `ping`'s call is anonymous in Magento 2, so a wrong or under-privileged integration
    /// token passes it while every API call fails; this one needs the token and the catalog
    /// permission every product read needs (one product, the smallest page). A failure that
    /// says nothing of the credentials is `ping`'s and the circuit's to report.
    async fn credentials_refused(&self) -> Option<String> {
        let query = [
            ("searchCriteria[pageSize]".to_owned(), "1".to_owned()),
            ("searchCriteria[currentPage]".to_owned(), "1".to_owned()),
        ];
        match self.get(Scope::Default, "/V1/products", &query).await {
            Err(BackendError::Status { status, error }) if status == 401 || status == 403 => {
                Some(format!(
                    "the back end refuses the gateway's credentials ({status}: {}); check \
                     STOREGATE_UPSTREAM_TOKEN and the integration's resources",
                    error.text()
                ))
            }
            _ => None,
        }
    }

    async fn store_views(&self) -> Result<Vec<StoreView>, BackendError> {
        self.get_json(Scope::Default, "/V1/store/storeViews", &[])
            .await
    }

    async fn store_configs(&self) -> Result<Vec<StoreConfig>, BackendError> {
        self.get_json(Scope::Default, "/V1/store/storeConfigs", &[])
            .await
    }

    /// `GET /V1/directory/countries` (anonymous).
    async fn countries(&self) -> Result<Vec<Country>, BackendError> {
        self.get_json(Scope::Default, "/V1/directory/countries", &[])
            .await
    }

    async fn websites(&self) -> Result<Vec<u64>, BackendError> {
        let raw = self.get(Scope::Default, "/V1/store/websites", &[]).await?;
        read_websites(&raw)
    }

    async fn category(&self, id: u64) -> Result<Category, BackendError> {
        let raw = self
            .get(Scope::Default, &format!("/V1/categories/{id}"), &[])
            .await?;
        read_category(&raw)
    }

    /// Does the attribute set hold `media_gallery`?
    async fn takes_images(&self, attribute_set: u64) -> Result<bool, BackendError> {
        let raw = self
            .get(
                Scope::Default,
                &format!("/V1/products/attribute-sets/{attribute_set}/attributes"),
                &[],
            )
            .await?;
        has_attribute(&raw, "media_gallery")
    }
}

fn id_of(value: &Value) -> Option<u64> {
    value
        .as_u64()
        .or_else(|| value.as_str()?.trim().parse().ok())
        .filter(|&id| id > 0)
}

/// A category's id and whether it is active (`is_active` a boolean or a number).
fn read_category(raw: &[u8]) -> Result<Category, BackendError> {
    let category: Value = parse(raw)?;
    let id = category
        .get("id")
        .and_then(id_of)
        .ok_or_else(|| BackendError::Protocol("a category without an id".into()))?;
    let is_active = match category.get("is_active") {
        Some(Value::Bool(b)) => *b,
        Some(other) => id_of(other).is_some(),
        None => true,
    };
    Ok(Category { id, is_active })
}

/// The websites' ids, the admin website (0) left out.
fn read_websites(raw: &[u8]) -> Result<Vec<u64>, BackendError> {
    let websites: Vec<Value> = parse(raw)?;
    Ok(websites
        .iter()
        .filter_map(|w| w.get("id").and_then(id_of))
        .collect())
}

/// Does an attribute set's attribute list hold the attribute `code`?
fn has_attribute(attributes: &[u8], code: &str) -> Result<bool, BackendError> {
    let list: Vec<Value> = parse(attributes)?;
    Ok(list
        .iter()
        .any(|a| a.get("attribute_code").and_then(Value::as_str) == Some(code)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_websites_and_attribute_sets_are_read() {
        let category = read_category(br#"{"id": 8, "is_active": false}"#).unwrap();
        assert_eq!((category.id, category.is_active), (8, false));
        assert_eq!(
            read_websites(br#"[{"id": 0, "code": "admin"}, {"id": 1}]"#).unwrap(),
            vec![1]
        );
        let list = br#"[{"attribute_code":"sku"},{"attribute_code":"media_gallery"}]"#;
        assert!(has_attribute(list, "media_gallery").unwrap());
        assert!(!has_attribute(list, "image").unwrap());
        assert!(has_attribute(b"{}", "x").is_err());
    }
}
