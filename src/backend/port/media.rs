//! A product's images: its gallery as a store view shows it, and image writes.

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::Value;

use super::error::BackendError;
use super::records::Scope;

/// An image of a product's gallery, as one store view (or the default values) holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub id: u64,
    /// The file's path in the store's media folder; its name tells the next default name.
    pub file: String,
    /// A string, or null when the image has none.
    pub label: Value,
    pub position: Option<i64>,
    /// Hidden from shoppers.
    pub exclude: bool,
    /// The roles it has (`image`, `small_image`, `thumbnail`).
    pub types: Vec<String>,
    /// The store's entry, which the image mapping files read.
    pub record: Value,
}

/// An image file checked by the gateway, its bytes in base64.
#[derive(Debug, Clone)]
pub struct ImageFile {
    pub base64: String,
    pub mime: &'static str,
    /// The file name the store should keep it under (`image_2.png`).
    pub name: String,
}

/// A new image: its file and values.
#[derive(Debug, Clone)]
pub struct NewImage {
    pub file: ImageFile,
    pub label: Option<Value>,
    pub position: i64,
    pub exclude: bool,
    pub types: Vec<String>,
}

/// What an image update sets; `None` keeps the image's value.
#[derive(Debug, Clone, Default)]
pub struct ImageChange {
    pub file: Option<ImageFile>,
    pub label: Option<Value>,
    pub position: Option<i64>,
    pub exclude: Option<bool>,
    pub types: Option<Vec<String>>,
}

/// A store's refusal of an image write that is the request's fault, in the gateway's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageRefusal {
    NotFound,
    BadBase64,
    BadMime,
}

/// Product images.
#[async_trait]
pub trait Media: Send + Sync {
    /// A product with its media gallery as a store view sees it (the store's shape, cached
    /// as it came).
    async fn product_gallery(
        &self,
        scope: Scope<'_>,
        sku: &str,
        store_id: Option<u64>,
    ) -> Result<Bytes, BackendError>;
    /// The images of a product record (as [`Media::product_gallery`] gave it), videos left
    /// out.
    fn images(&self, product: &Value) -> Vec<Image>;
    /// Adds an image; its id. Through a store view the values are that view's. (The
    /// defaults: a store the gateway only reads.)
    async fn add_image(
        &self,
        _scope: Scope<'_>,
        _sku: &str,
        _image: NewImage,
    ) -> Result<u64, BackendError> {
        Err(BackendError::Unsupported("adding an image".into()))
    }
    /// Changes an image (`existing`, as [`Media::images`] gave it in that scope).
    async fn update_image(
        &self,
        _scope: Scope<'_>,
        _sku: &str,
        _existing: &Image,
        _change: ImageChange,
    ) -> Result<(), BackendError> {
        Err(BackendError::Unsupported("changing an image".into()))
    }
    /// Removes an image: from the product through [`Scope::All`], from one store view's
    /// showing through [`Scope::Store`] (excluded there, in no role).
    async fn remove_image(
        &self,
        _scope: Scope<'_>,
        _sku: &str,
        _existing: &Image,
    ) -> Result<(), BackendError> {
        Err(BackendError::Unsupported("removing an image".into()))
    }
    /// When a failed image write was the request's fault, which fault (by default: none
    /// the gateway can name).
    fn image_refusal(&self, _error: &BackendError) -> Option<ImageRefusal> {
        None
    }
}
