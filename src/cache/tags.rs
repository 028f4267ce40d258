//! The cache's tags: what an entry shows, so that a write can forget every entry that shows
//! it. Plain names and strings, apart from `keys` (which reads callers and formats) so that
//! the cache's own parts (the SKU index) use them without the rest of `keys`.

/// Every product list: any product write changes some list.
pub const LISTS: &str = "pl";
/// The stock item index pages: creating or deleting a product adds or removes an item.
pub const STOCK_INDEX: &str = "sx";
/// Store views and their configuration.
pub const STORES: &str = "stores";
/// Countries and regions.
pub const DIRECTORY: &str = "directory";
/// Attribute set member lists.
pub const ATTRIBUTE_SETS: &str = "attrsets";

/// Everything about one product.
pub fn product(id: u64) -> String {
    format!("p:{id}")
}

/// Everything about one product, by SKU.
pub fn sku(sku: &str) -> String {
    format!("s:{sku}")
}

/// A category's product lists.
pub fn category(id: u64) -> String {
    format!("c:{id}")
}

/// Everything cached about a product's images (product deletes drop it too).
pub fn images(product_id: u64) -> String {
    format!("i:{product_id}")
}

/// A customer's group entry.
pub fn customer_group(customer_id: u64) -> String {
    format!("cg:{customer_id}")
}

/// The index entry of a product's stock item.
pub fn stock_index_of(product_id: u64) -> String {
    format!("sx:{product_id}")
}
