//! `/products/:id/store/:store`: one product in a store view. Everyone reads it (the
//! view's values, `products::get_one`); the Admin's `PUT` writes the view's own values
//! (its name, descriptions, status...), as the original's store-view update did: through
//! the back end's store scope (`Scope::Store`: each store's own store-view write), store 0
//! being the admin values.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::response::Response;
use http::{HeaderMap, Method};

use super::product_writes::update;
use super::products::{ReadStore, get_one};
use crate::app::AppState;
use crate::auth::caller::Caller;
use crate::backend::port::Scope;
use crate::http::ApiError;
use crate::records::lookups::stores;
use crate::rules::policy::{Route, authorize};

pub async fn entity(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path((id, store)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    authorize(Route::StoreProduct, &method, caller.principal)?;
    if method == Method::PUT {
        // Any store view by id or code, the default one included (its own values, as the
        // original wrote them); an unknown one is the 400 of every store route.
        let view = stores::view_by_id_or_code(&app, &store).await?;
        let scope = if view.id == 0 {
            Scope::All
        } else {
            Scope::Store(&view.code)
        };
        return update(app, &headers, &id, body, scope).await;
    }
    let store = ReadStore::resolve(&app, &store).await?;
    get_one(app, caller, &headers, &id, store).await
}
