//! The command line's wing: what `storegate oauth ...` does to the OAuth store ([`oauth`]),
//! and the cassettes served as a store (`storegate replay`, [`replay`]).

pub mod oauth;
pub mod replay;
