//! The entities the sandbox keeps, in Magento's shapes, with Magento's rules for saving
//! them: products, customers, categories, stock items, media, stores, attributes, the
//! directory. No HTTP here.

pub(crate) mod attributes;
pub(crate) mod category;
pub(crate) mod customer;
pub(crate) mod directory;
pub(crate) mod image;
pub(crate) mod media;
pub(crate) mod product;
pub(crate) mod product_save;
pub(crate) mod stock;
pub(crate) mod store;
