//! The cache's seam for a second level shared by instances (`shared_state::l2` implements
//! it): what this level asks on a miss and hands over after a fetch. Apart from `mod.rs`,
//! which holds the level itself.

use std::time::Duration;

use super::Fetched;

/// A second cache level shared by instances (`shared_state::l2`), behind this one: asked
/// on a miss of a key read with [`Cache::get_or_fetch_shared`], before fetching, and given
/// what the fetch produced. It never sees a hit of this level.
pub trait SecondLevel: Send + Sync {
    fn lookup<'a>(&'a self, key: &'a str)
    -> futures_util::future::BoxFuture<'a, SecondLevelLookup>;
    /// Keeps what a fetch after a [`SecondLevelLookup::Miss`] produced.
    fn store<'a>(
        &'a self,
        key: &'a str,
        ticket: FillTicket,
        fetched: &'a Fetched,
    ) -> futures_util::future::BoxFuture<'a, ()>;
    /// The fetch after a miss failed: lets other instances waiting for it go ahead.
    fn abandon<'a>(
        &'a self,
        key: &'a str,
        ticket: FillTicket,
    ) -> futures_util::future::BoxFuture<'a, ()>;
}

/// What the second level had.
#[derive(Debug)]
pub enum SecondLevelLookup {
    /// A valid record, fetched `age` ago by some instance.
    Hit { fetched: Fetched, age: Duration },
    /// Nothing usable: fetch, then [`SecondLevel::store`] with this ticket.
    Miss(FillTicket),
}

/// What a second-level miss hands to the store that follows the fetch.
#[derive(Debug, Default)]
pub struct FillTicket {
    /// The shared invalidation sequence read before the fetch; None when the second level
    /// could not be asked (nothing is stored then).
    pub seq: Option<u64>,
    /// Set when this instance claimed the fill of the key (others wait for it).
    pub claim: Option<String>,
}
