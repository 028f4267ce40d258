//! The gateway's rules, applied without I/O: who may call what ([`policy`]), who may see
//! whose customer data ([`privacy`]), which tier prices a customer group sees ([`pricing`]),
//! which spec field comes from which back-end field per user type and view ([`mapping`]),
//! what an image upload must be ([`image_upload`], [`image_bytes`]), and what a client is
//! told of a back end's failure ([`backend_errors`], [`write_outcome`]).

pub mod backend_errors;
pub mod image_bytes;
pub mod image_upload;
pub mod mapping;
pub mod policy;
pub mod pricing;
pub mod privacy;
pub mod write_outcome;
