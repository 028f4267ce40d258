//! Magento 2.4 error message templates, in one place.
//!
//! Magento returns the *untranslated template* (`%1`, `%fieldName`) plus a separate
//! `parameters` value, and clients match on these exact strings. Keeping them together makes
//! it easy to check them against Magento's sources and to list them for the gateway engineers.

// Web API framework (routing, ACL, input processing).
pub(crate) const NO_ROUTE: &str = "Request does not match any route.";
pub(crate) const NOT_AUTHORIZED: &str = "The consumer isn't authorized to access %resources.";
pub(crate) const GET_ON_ALL: &str = "Cannot perform GET operation with store code 'all'";
pub(crate) const DECODING_ERROR: &str = "Decoding error.";
pub(crate) const CONTENT_TYPE_EMPTY: &str = "Content-Type header is empty.";
pub(crate) const CONTENT_TYPE_INVALID: &str = "Content-Type header is invalid.";
pub(crate) const CONTENT_TYPE_UNSUPPORTED: &str =
    "Server cannot understand Content-Type HTTP header media type %1";
pub(crate) const REQUIRED_FIELD: &str = "\"%fieldName\" is required. Enter and try again.";
pub(crate) const INPUT_EXCEPTIONS: &str = "One or more input exceptions have occurred.";
pub(crate) const TYPE_MISMATCH: &str = "The \"%value\" value's type is invalid. The \"%type\" type was expected. Verify and try again.";
pub(crate) const INVALID_FIELD_VALUE: &str =
    "Invalid value of \"%value\" provided for the %fieldName field.";
pub(crate) const NO_SUCH_ENTITY: &str = "No such entity with %fieldName = %fieldValue";
pub(crate) const MAX_PAGE_SIZE: &str = "Maximum SearchCriteria pageSize is %max";
pub(crate) const SORT_DIRECTION: &str =
    "The sort order has to be specified as %1 for ascending order or %2 for descending order.";
pub(crate) const SORT_FIELD_SYMBOLS: &str = "Sort order field %1 contains restricted symbols";
pub(crate) const INVALID_ATTRIBUTE_NAME: &str = "Invalid attribute name: %1";
pub(crate) const STORE_NOT_FOUND: &str =
    "The store that was requested wasn't found. Verify the store and try again.";

// Catalog.
pub(crate) const PRODUCT_NOT_FOUND: &str =
    "The product that was requested doesn't exist. Verify the product and try again.";
pub(crate) const PRODUCT_SKU_NOT_FOUND: &str = "The Product with the \"%1\" SKU doesn't exist.";
pub(crate) const INVALID_PRODUCT_DATA: &str = "Invalid product data: %1";
pub(crate) const INVALID_ATTRIBUTE_SET: &str = "Invalid attribute set entity type";
pub(crate) const ATTRIBUTE_VALUE_EMPTY: &str =
    "The \"%1\" attribute value is empty. Set the attribute and try again.";
pub(crate) const SKU_TOO_LONG: &str = "SKU length should be %1 characters maximum.";
pub(crate) const URL_KEY_EXISTS: &str = "URL key for specified store already exists.";
pub(crate) const PRODUCT_UNABLE_TO_SAVE: &str =
    "The product was unable to be saved. Please try again.";

// Media gallery (GalleryManagement, ImageContentValidator, ImageProcessor).
pub(crate) const IMAGE_NOT_BASE64: &str = "The image content must be valid base64 encoded data.";
pub(crate) const IMAGE_BAD_MIME: &str = "The image MIME type is not valid or not supported.";
pub(crate) const IMAGE_BAD_NAME: &str = "Provided image name contains forbidden characters.";
pub(crate) const IMAGE_NO_EXTENSION: &str = "Cannot recognize image extension.";
pub(crate) const PRODUCT_CANT_BE_SAVED: &str = "The product can't be saved.";
pub(crate) const PRODUCT_NO_IMAGES: &str = "Requested product does not support images.";
pub(crate) const MEDIA_ENTRY_NOT_FOUND: &str =
    "No image with the provided ID was found. Verify the ID and try again.";
pub(crate) const MEDIA_GET_PRODUCT_MISSING: &str =
    "The product doesn't exist. Verify and try again.";
pub(crate) const MEDIA_GET_IMAGE_MISSING: &str = "The image doesn't exist. Verify and try again.";

// Customers and addresses.
pub(crate) const PASSWORD_TOO_LONG: &str = "Please enter a password with at most %1 characters.";
pub(crate) const PASSWORD_TOO_SHORT: &str =
    "The password needs at least %1 characters. Create a new password and try again.";
pub(crate) const PASSWORD_SPACES: &str =
    "The password can't begin or end with a space. Verify the password and try again.";
pub(crate) const PASSWORD_CLASSES: &str = "Minimum of different classes of characters in password is %1. Classes of characters: Lower Case, Upper Case, Digits, Special Characters.";
pub(crate) const PASSWORD_IS_EMAIL: &str =
    "The password can't be the same as the email address. Create a new password and try again.";
pub(crate) const DUPLICATE_EMAIL: &str =
    "A customer with the same email address already exists in an associated website.";
pub(crate) const EMAIL_MISSING: &str = "The customer email is missing. Enter and try again.";
pub(crate) const EMAIL_INVALID: &str = "\"Email\" is not a valid email address.";
pub(crate) const ATTRIBUTE_REQUIRED_VALUE: &str = "\"%1\" is a required value.";
pub(crate) const STORE_NOT_IN_WEBSITE: &str = "The store view is not in the associated website.";
pub(crate) const SIGN_IN_FAILED: &str = "The account sign-in was incorrect or your account is disabled temporarily. Please wait and try again later.";

// Directory and sales.
pub(crate) const COUNTRY_NOT_AVAILABLE: &str = "The country isn't available.";
pub(crate) const ORDER_NOT_FOUND: &str =
    "The entity that was requested doesn't exist. Verify the entity and try again.";

// Category and website assignments (CategoryLinkRepository, ProductWebsiteLinkRepository).
pub(crate) const CATEGORY_LACKS_PRODUCT: &str =
    "The category doesn't contain the specified product.";
pub(crate) const WEBSITE_ASSIGN_FAILED: &str = "Could not assign product \"%1\" to websites %2";
