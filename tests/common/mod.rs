pub mod api_reference;
pub mod oauth_sign;
pub mod openapi;
