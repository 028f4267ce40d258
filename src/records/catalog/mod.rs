//! What the catalog resources (products, stock items, images) share: the indexes that
//! turn the spec's ids into the keys a store reads them by, and the product record reads.

pub mod product_index;
pub mod product_records;
pub mod stock_index;
