//! A router that remembers the path templates it serves.
//!
//! axum cannot list a router's routes, and the OpenAPI document must list exactly the routes
//! the gateway serves (a test compares the two: `tests/api/openapi.rs`). Routes are added
//! through [`Listed::route`], which has `Router::route`'s signature, so the route tables read
//! as before and cannot forget to record a route.

use axum::Router;
use axum::routing::MethodRouter;

/// A router and the templates of its routes (`/products/{id}`).
pub struct Listed<S = ()> {
    router: Router<S>,
    templates: Vec<String>,
}

impl<S: Clone + Send + Sync + 'static> Default for Listed<S> {
    fn default() -> Self {
        Listed::new()
    }
}

impl<S: Clone + Send + Sync + 'static> Listed<S> {
    pub fn new() -> Self {
        Listed {
            router: Router::new(),
            templates: Vec::new(),
        }
    }

    pub fn route(mut self, path: &str, method_router: MethodRouter<S>) -> Self {
        self.router = self.router.route(path, method_router);
        self.templates.push(path.to_owned());
        self
    }

    pub fn merge(mut self, other: Listed<S>) -> Self {
        self.router = self.router.merge(other.router);
        self.templates.extend(other.templates);
        self
    }

    /// `Router::with_state`, keeping the templates.
    pub fn with_state<S2>(self, state: S) -> Listed<S2> {
        Listed {
            router: self.router.with_state(state),
            templates: self.templates,
        }
    }

    /// The templates, in the order they were added.
    pub fn templates(&self) -> &[String] {
        &self.templates
    }

    pub fn into_parts(self) -> (Router<S>, Vec<String>) {
        (self.router, self.templates)
    }
}
