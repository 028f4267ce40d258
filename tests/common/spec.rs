//! What SPEC.md fixes about answers, as several test binaries check it.

/// The fields of a product in a category's list (SPEC 2.2), in order.
pub const CATEGORY_LIST_FIELDS: [&str; 6] = [
    "entity_id",
    "attribute_set_id",
    "type_id",
    "tax_class_id",
    "weight",
    "price",
];
