//! The directory: the store's allowed countries and their predefined regions.

use bytes::Bytes;

use super::{Magento, Scope, UpstreamError};

impl Magento {
    /// `GET /V1/directory/countries` (anonymous), as it came: the caller caches the bytes.
    pub async fn countries(&self) -> Result<Bytes, UpstreamError> {
        self.get(Scope::Default, "/V1/directory/countries", &[])
            .await
    }
}
