//! The stock item index: stock item id to product id. A store may read and write stock
//! items by SKU (Magento 2); the spec addresses them by item id, which only a scan of every
//! item answers. Pages of the scan and the answers are cached; ids never move for an item.

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::app::AppState;
use crate::backend::port::MAX_PAGE_SIZE;
use crate::backend::port::SearchResult;
use crate::cache::keys::{key, tag};
use crate::cache::{self, Fetched};
use crate::http::ApiError;
use crate::records::record;
use crate::rules::mapping::convert::as_i64;

/// Index pages are read with the largest page Magento gives.
const INDEX_PAGE_SIZE: u32 = MAX_PAGE_SIZE;
/// A bound on a scan (1.2 million stock items); the request deadline usually comes first.
const MAX_INDEX_PAGES: u32 = 4_000;

/// One page of the index: the `(item, product)` pairs of one low-stock page over every
/// item, and how many items there are in all.
#[derive(Debug, Serialize, Deserialize)]
struct IndexPage {
    pairs: Vec<(u64, u64)>,
    total: u64,
}

pub fn id_field(record: &Value, field: &str) -> Option<u64> {
    record
        .get(field)
        .and_then(as_i64)
        .filter(|&id| id > 0)
        .map(|id| id as u64)
}

/// A page of the index through the cache. Only the ids are kept: they never change for
/// an item, so a page's age does not matter to it, only products created or deleted.
async fn index_page(app: &AppState, page: u32) -> Result<IndexPage, ApiError> {
    let backend = app.backend.clone();
    let bytes = record(app, key::stock_index_page(page), move || async move {
        let result: SearchResult<Value> = backend
            .stock_items_page(None, page, INDEX_PAGE_SIZE)
            .await?
            .read()?;
        let compact = IndexPage {
            pairs: result
                .items
                .iter()
                .filter_map(|item| {
                    Some((id_field(item, "item_id")?, id_field(item, "product_id")?))
                })
                .collect(),
            total: result.total_count,
        };
        let bytes = serde_json::to_vec(&compact)
            .map_err(|e| crate::backend::port::BackendError::Protocol(e.to_string()))?;
        Ok((Bytes::from(bytes), vec![tag::STOCK_INDEX.to_owned()]))
    })
    .await?;
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::internal().with_cause(format!("stock index page: {e}")))
}

/// Walks the index pages until the item turns up. The pages are shared through the cache,
/// so a second item costs no upstream call once its page was read for the first.
async fn scan(app: &AppState, item_id: u64) -> Result<Option<u64>, ApiError> {
    for page in 1..=MAX_INDEX_PAGES {
        let index = index_page(app, page).await?;
        if let Some(&(_, product)) = index.pairs.iter().find(|(item, _)| *item == item_id) {
            return Ok(Some(product));
        }
        // Magento repeats the last page past the end: stop at the count.
        if index.pairs.is_empty() || u64::from(page) * u64::from(INDEX_PAGE_SIZE) >= index.total {
            return Ok(None);
        }
    }
    Ok(None)
}

/// The product of a stock item, through the index. 404 when there is no such item.
pub async fn product_of_item(app: &AppState, item_id: u64) -> Result<u64, ApiError> {
    let state = app.clone();
    let (entry, _) = app
        .cache
        .get_or_fetch(&key::stock_item(item_id), move || async move {
            let product = scan(&state, item_id)
                .await?
                .ok_or_else(ApiError::not_found)?;
            Ok::<_, ApiError>(Fetched::new(
                cache::Value::Text(product.to_string().into()),
                vec![tag::stock_index_of(product)],
            ))
        })
        .await?;
    match &entry.value {
        cache::Value::Text(text) => text
            .parse()
            .map_err(|_| ApiError::internal().with_cause("stock index entry is not an id")),
        _ => Err(ApiError::internal().with_cause("stock index entry holds no text")),
    }
}
