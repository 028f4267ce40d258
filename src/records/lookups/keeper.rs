//! The lookups every request reads, loaded before the first request and kept fresh in the
//! background, so that no request waits for one (issue 33):
//!
//! - the store views and their configuration (every catalog read: the media URL, the
//!   currency, the store view's website);
//! - the directory's countries and regions (every address write checks against them; a
//!   store without a directory the gateway reads, OpenMage, has none to load);
//! - the product index, id to SKU (every product read by id: `cache::sku_index`), from the
//!   store's cheapest list of them (`Catalog::product_ids`), at most [`INDEX_PAGES`] pages.
//!
//! They stay ordinary cache entries (their tags, purges and the second level apply as
//! before); what changes is who fetches them. [`load`] fills them when the gateway starts,
//! before `/readyz` says ready (`front::warm_start`). [`keep_fresh`] then looks at each a
//! few times per TTL and fetches it again, in the background, once half its freshness is
//! gone; so a request finds it fresh. One missing (the store was down at start, a purge
//! dropped it) is fetched by the first request that needs it, on demand, as it always
//! was, and kept fresh from then on. Attribute sets, customer groups and tax
//! classes are not loaded: no read path of the gateway asks for them (an image upload asks
//! for its product's attribute set, through the cache).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{BoxFuture, join_all};
use tokio::time::Instant;

use crate::app::AppState;
use crate::cache::keys::key;
use crate::http::ApiError;
use crate::records::lookups::{directory, stores};

/// At most this many pages of the product index are loaded at start (about 100,000
/// products from Magento 2, 300 a page; a back end without `Catalog::product_ids`, as
/// OpenMage's, loads none): a larger catalog's other ids are looked up when they are first
/// asked for.
pub const INDEX_PAGES: u32 = 340;
/// Pages of the index asked for at once after the first.
const INDEX_PAGES_AT_ONCE: u32 = 4;

type Step<'a> = BoxFuture<'a, Result<(), ApiError>>;

/// One lookup: its cache key, a read through the cache (fetched when missing), and a
/// renewal (fetched now, replacing the entry).
struct Lookup {
    name: &'static str,
    key: fn(&AppState) -> String,
    read: for<'a> fn(&'a AppState) -> Step<'a>,
    renew: for<'a> fn(&'a AppState) -> Step<'a>,
}

const LOOKUPS: [Lookup; 3] = [
    Lookup {
        name: "store views",
        key: |_| key::store_views(),
        read: |app| Box::pin(async move { stores::views(app).await.map(|_| ()) }),
        renew: |app| Box::pin(stores::renew_views(app)),
    },
    Lookup {
        name: "store configs",
        key: |_| key::store_configs(),
        read: |app| Box::pin(async move { stores::configs(app).await.map(|_| ()) }),
        renew: |app| Box::pin(stores::renew_configs(app)),
    },
    Lookup {
        name: "countries",
        key: |app| key::countries(app.backend.default_store()),
        read: |app| Box::pin(async move { directory::countries(app).await.map(|_| ()) }),
        renew: |app| Box::pin(directory::renew_countries(app)),
    },
];

/// A lookup the store does not offer (a 501 from the port's default): nothing to keep.
fn not_offered(error: &ApiError) -> bool {
    error.status() == http::StatusCode::NOT_IMPLEMENTED
}

/// What [`load`] did.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The lookups now in the cache.
    pub loaded: Vec<&'static str>,
    /// Those the store failed to give, and why (they are fetched on demand).
    pub failed: Vec<(&'static str, String)>,
    /// Pairs the product index holds.
    pub product_ids: usize,
    /// Why the index is not whole, when it is not (the store failed, time ran out).
    pub index_short: Option<String>,
}

/// Loads every lookup and the product index, side by side, until `until` at the latest.
/// Nothing without a cache (every read goes to the store then).
pub async fn load(app: &AppState, until: Instant) -> Loaded {
    let mut out = Loaded::default();
    if !app.cache.enabled() {
        return out;
    }
    let lookups = tokio::time::timeout_at(
        until,
        join_all(LOOKUPS.iter().map(|lookup| (lookup.read)(app))),
    );
    let (results, index) = tokio::join!(lookups, load_index(app, until));
    match results {
        Ok(results) => {
            for (lookup, result) in LOOKUPS.iter().zip(results) {
                match result {
                    Ok(()) => out.loaded.push(lookup.name),
                    Err(error) if not_offered(&error) => {}
                    Err(error) => out.failed.push((lookup.name, describe(&error))),
                }
            }
        }
        Err(_) => {
            for lookup in &LOOKUPS {
                match app.cache.freshness_left(&(lookup.key)(app)).await {
                    Some(_) => out.loaded.push(lookup.name),
                    None => out.failed.push((lookup.name, "time ran out".to_owned())),
                }
            }
        }
    }
    out.index_short = index.err();
    out.product_ids = app.cache.indexed_skus();
    out
}

fn describe(error: &ApiError) -> String {
    match error.cause() {
        Some(cause) => format!("{} ({cause})", error.status()),
        None => error.status().to_string(),
    }
}

/// Pages through the store's list of product ids and SKUs into the index: the first page,
/// then [`INDEX_PAGES_AT_ONCE`] at a time, until the list ends (a short page, or a page
/// that repeats an earlier one, as stores do past the end), [`INDEX_PAGES`] pages, the
/// index is full, or `until`.
async fn load_index(app: &AppState, until: Instant) -> Result<(), String> {
    let mut next = 1u32;
    let mut highest = 0u64;
    loop {
        if Instant::now() >= until {
            return Err(format!("time ran out after {} pages", next - 1));
        }
        let count = if next == 1 { 1 } else { INDEX_PAGES_AT_ONCE };
        let pages: Vec<u32> = (next..next + count).filter(|&p| p <= INDEX_PAGES).collect();
        if pages.is_empty() {
            return Err(format!("{INDEX_PAGES} pages loaded; the rest on demand"));
        }
        let reading = app.cache.clock_reading();
        let answers = tokio::time::timeout_at(
            until,
            join_all(pages.iter().map(|&page| app.backend.product_ids(page))),
        )
        .await
        .map_err(|_| format!("time ran out after {} pages", next - 1))?;
        for answer in answers {
            let page = match answer {
                Ok(Some(page)) => page,
                // The store has no such list: ids are looked up when asked for.
                Ok(None) => return Ok(()),
                Err(error) => return Err(error.to_string()),
            };
            if page.items.first().is_some_and(|first| first.id <= highest) {
                return Ok(());
            }
            app.cache
                .index_skus(reading, page.items.iter().map(|p| (p.id, p.sku.as_str())));
            highest = page.items.iter().map(|p| p.id).max().unwrap_or(highest);
            if !page.more || app.cache.indexed_skus() >= crate::cache::SKU_INDEX_MAX {
                return Ok(());
            }
        }
        next += count;
    }
}

/// Looks at every lookup a few times per TTL (every quarter, at least every second, at
/// most every minute) for as long as the gateway lives, and renews one past half its
/// freshness. (The product index needs no renewing: its pairs stay until their product's
/// invalidation; after a purge of everything they are learned again as products are
/// listed and read.)
pub fn keep_fresh(app: &AppState) {
    if !app.cache.enabled() {
        return;
    }
    let ttl = app.cache.ttl();
    let every = (ttl / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
    let weak = Arc::downgrade(app);
    tokio::spawn(async move {
        let mut offered = [true; LOOKUPS.len()];
        loop {
            tokio::time::sleep(every).await;
            // The gateway is gone (a test's, an embedder's): so is the keeper.
            let Some(app) = weak.upgrade() else {
                return;
            };
            if app.connections.draining() {
                return;
            }
            for (lookup, offered) in LOOKUPS.iter().zip(offered.iter_mut()) {
                if !*offered {
                    continue;
                }
                // Only one that is there is renewed: one missing (the store was down at
                // start, a purge dropped it) is fetched by the next request that needs it,
                // as before, and kept fresh from then on.
                let result = match app.cache.freshness_left(&(lookup.key)(&app)).await {
                    Some(left) if left <= ttl / 2 => (lookup.renew)(&app).await,
                    _ => continue,
                };
                match result {
                    Ok(()) => {}
                    Err(error) if not_offered(&error) => *offered = false,
                    Err(error) => crate::observe::log_limit::warn(
                        "lookup refresh failed",
                        format_args!(
                            "could not refresh the {} (requests fetch it when they need it): {}",
                            lookup.name,
                            describe(&error)
                        ),
                    ),
                }
            }
        }
    });
}
