//! The command line's wing: what `storegate oauth ...` does to the OAuth store ([`oauth`]),
//! the cassettes served as a store (`storegate replay`, [`replay`]), and a store copied into
//! a sandbox (`storegate sandbox --seed-from URL`, [`seed`]).

pub mod oauth;
pub mod replay;
pub mod seed;
