//! A product's images through the store's own image routes, globally or in a store view.

use serde_json::json;

use super::records::{OpenMageBackend, file_fields};
use super::segment;
use crate::backend::port::{Image, ImageChange, NewImage, Scope, UpstreamError};

impl OpenMageBackend {
    pub(super) async fn add_image(
        &self,
        scope: Scope<'_>,
        sku: &str,
        new: NewImage,
    ) -> Result<u64, UpstreamError> {
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
        let created = self.client.create(&path, &body).await?;
        created
            .parse()
            .map_err(|_| UpstreamError::Protocol(format!("created image id {created}")))
    }

    pub(super) async fn update_image(
        &self,
        scope: Scope<'_>,
        sku: &str,
        existing: &Image,
        change: ImageChange,
    ) -> Result<(), UpstreamError> {
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
}
