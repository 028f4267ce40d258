//! The command line's wing: what `storegate oauth ...` does to the OAuth store ([`oauth`]).

pub mod oauth;
