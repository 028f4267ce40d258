pub mod api_reference;
pub mod openapi;
