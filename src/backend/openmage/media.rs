//! A product's images through the store's own image routes, globally or in a store view:
//! the gallery is part of the product record the adapter composes (`images`).

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::{Value, json};

use super::records::{OpenMageBackend, bytes_of, file_fields, image};
use super::segment;
use crate::backend::port::{
    BackendError, Image, ImageChange, ImageRefusal, Media, NewImage, Scope,
};

#[async_trait]
impl Media for OpenMageBackend {
    /// The admin record with the gallery (`images`) as the store view (or, `Some(0)`, the
    /// default values) has it.
    async fn product_gallery(
        &self,
        scope: Scope<'_>,
        sku: &str,
        store_id: Option<u64>,
    ) -> Result<Bytes, BackendError> {
        let id = self.id_of_sku(sku).await?;
        // `Some(0)`: the default values; another id: that store view's.
        let store = store_id.map(|id| id.to_string());
        let scope = match (store.as_deref(), scope) {
            (Some("0"), _) | (_, Scope::All) => Scope::All,
            (Some(store), _) => Scope::Store(store),
            (None, scope) => scope,
        };
        let product = self.product_record(scope, id).await?;
        Ok(bytes_of(&product))
    }

    fn images(&self, product: &Value) -> Vec<Image> {
        product
            .get("images")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(image)
            .collect()
    }

    async fn add_image(
        &self,
        scope: Scope<'_>,
        sku: &str,
        new: NewImage,
    ) -> Result<u64, BackendError> {
        let id = self.id_of_sku(sku).await?;
        let mut body = json!({"position": new.position, "exclude": u8::from(new.exclude),
                "types": new.types});
        if let Some(label) = new.label {
            body["label"] = label;
        }
        file_fields(&mut body, new.file);
        let path = match scope {
            Scope::Store(code) => format!("/products/{id}/images/store/{}", segment(code)),
            Scope::Default | Scope::All => format!("/products/{id}/images"),
        };
        self.create(&path, &body, "created image id").await
    }

    async fn update_image(
        &self,
        scope: Scope<'_>,
        sku: &str,
        existing: &Image,
        change: ImageChange,
    ) -> Result<(), BackendError> {
        let id = self.id_of_sku(sku).await?;
        let mut body = json!({});
        if let Some(label) = change.label {
            body["label"] = label;
        }
        if let Some(position) = change.position {
            body["position"] = json!(position);
        }
        if let Some(exclude) = change.exclude {
            body["exclude"] = json!(u8::from(exclude));
        }
        if let Some(types) = change.types {
            body["types"] = json!(types);
        }
        if let Some(file) = change.file {
            file_fields(&mut body, file);
        }
        let image = existing.id;
        let path = match scope {
            Scope::Store(code) => {
                format!("/products/{id}/images/{image}/store/{}", segment(code))
            }
            Scope::Default | Scope::All => format!("/products/{id}/images/{image}"),
        };
        self.client.put(&path, &body).await.map(|_| ())
    }

    /// The store itself keeps a store view's removal as "no image" there.
    async fn remove_image(
        &self,
        scope: Scope<'_>,
        sku: &str,
        existing: &Image,
    ) -> Result<(), BackendError> {
        let id = self.id_of_sku(sku).await?;
        let image = existing.id;
        let path = match scope {
            Scope::Store(code) => {
                format!("/products/{id}/images/{image}/store/{}", segment(code))
            }
            Scope::Default | Scope::All => format!("/products/{id}/images/{image}"),
        };
        self.client.delete(&path, None).await.map(|_| ())
    }

    fn image_refusal(&self, error: &BackendError) -> Option<ImageRefusal> {
        match error {
            BackendError::Status { status: 404, error } if error.text().contains("image") => {
                Some(ImageRefusal::NotFound)
            }
            _ => None,
        }
    }
}
