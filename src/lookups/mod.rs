//! Reference data the resources look up, cached and the same for every caller: store
//! views and their configuration, and the directory's countries and regions.

pub mod directory;
pub mod stores;
