//! Orders and their comments through the store's REST API.

use serde_json::Value;

use super::lists::{self, As};
use super::records::{OpenMageBackend, parse};
use crate::backend::port::{SearchCriteria, SearchResult, UpstreamError};

impl OpenMageBackend {
    pub(super) async fn search_orders(
        &self,
        criteria: &SearchCriteria,
    ) -> Result<SearchResult<Value>, UpstreamError> {
        let raw = self
            .client
            .page(As::Admin, "/orders", criteria, &[])
            .await?;
        lists::read_page(&raw).map(Self::with_ids)
    }

    pub(super) async fn order_comments(&self, order_id: u64) -> Result<Vec<Value>, UpstreamError> {
        lists::items(
            &self
                .client
                .get(&format!("/orders/{order_id}/comments"), &[])
                .await?,
        )
    }

    pub(super) async fn add_order_comment(
        &self,
        order_id: u64,
        comment: Value,
    ) -> Result<u64, UpstreamError> {
        let mut body = comment;
        if let Some(object) = body.as_object_mut() {
            // The order is the path's.
            object.remove("parent_id");
        }
        let id = self
            .client
            .create(&format!("/orders/{order_id}/comments"), &body)
            .await?;
        id.parse()
            .map_err(|_| UpstreamError::Protocol(format!("created comment id {id}")))
    }

    pub(super) async fn order_comment(
        &self,
        comment_id: u64,
    ) -> Result<Option<Value>, UpstreamError> {
        match self
            .client
            .get(&format!("/orders/comments/{comment_id}"), &[])
            .await
        {
            Ok(raw) => Ok(Some(parse(&raw)?)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }
}
