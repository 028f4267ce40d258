//! `/products/:id/store/:store`: one product in a store view. Everyone reads it (the
//! view's values, `products::get_one`); the Admin's `PUT` writes the view's own values
//! (its name, descriptions, status...), as the original's store-view update did: through
//! the back end's store scope (`Scope::Store`: each store's own store-view write), store 0
//! being the admin values.

use axum::extract::Path;
use axum::response::Response;
use http::Method;

use super::call::ApiCall;
use super::product_writes::update;
use super::products::{ReadStore, get_one};
use crate::backend::port::Scope;
use crate::http::ApiError;
use crate::records::lookups::stores;
use crate::rules::policy::Route;

pub async fn entity(
    Path((id, store)): Path<(String, String)>,
    call: ApiCall,
) -> Result<Response, ApiError> {
    call.authorize(Route::StoreProduct)?;
    if call.method == Method::PUT {
        // Any store view by id or code, the default one included (its own values, as the
        // original wrote them); an unknown one is the 400 of every store route.
        let view = stores::view_by_id_or_code(&call.app, &store).await?;
        let scope = if view.id == 0 {
            Scope::All
        } else {
            Scope::Store(&view.code)
        };
        return update(call, &id, scope).await;
    }
    let store = ReadStore::resolve(&call.app, &store).await?;
    get_one(call, &id, store).await
}
