//! Reference data the resources look up, cached: store views and their configuration, and
//! the directory's countries and regions (the same for every caller), and a customer's
//! group (which decides their prices; never served). The ones every request reads are
//! loaded at start and kept fresh in the background ([`keeper`]).

pub mod customer_group;
pub mod directory;
pub mod keeper;
pub mod stores;
