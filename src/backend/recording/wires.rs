//! The stores whose traffic a recording holds, as their wires describe them: which store a
//! path is of, the endpoint it names, the file its exchanges go in, which answers carry
//! credentials. The recorder knows no store: it is handed the wires of the back ends it
//! records (an adapter its own; the command line every kind's, `backend::registry::WIRES`).

use crate::backend::port::WireShape;

/// Some stores' wires.
#[derive(Clone, Copy)]
pub struct Wires(pub &'static [&'static dyn WireShape]);

impl std::fmt::Debug for Wires {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|w| w.kind()))
            .finish()
    }
}

impl Wires {
    /// The store a path is of.
    pub fn owner(&self, path: &str) -> Option<&'static dyn WireShape> {
        self.0.iter().copied().find(|shape| shape.owns(path))
    }

    /// The endpoint a path names, as the store that owns it says (a path no store owns:
    /// its every segment a value).
    pub fn template(&self, path: &str) -> String {
        match self.owner(path) {
            Some(shape) => shape.template(path),
            None => crate::backend::shell::paths::template(path, &[]),
        }
    }

    /// The method and endpoint of a call (`GET /api/rest/products/{}`).
    pub fn endpoint(&self, method: &str, path: &str) -> String {
        format!("{} {}", method.to_ascii_uppercase(), self.template(path))
    }

    /// The file an exchange belongs in: the method, then its endpoint's segments, as the
    /// store that owns the path names them (`get.api.rest.products.{}.json`; an API version
    /// the store leaves out, so two stores never share a file).
    pub fn file_name(&self, method: &str, path: &str) -> String {
        let unnamed = self.owner(path).map_or(&[][..], |s| s.unnamed_segments());
        let mut name = method.to_ascii_lowercase();
        for segment in self
            .template(path)
            .split('/')
            .filter(|s| !s.is_empty() && !unnamed.contains(s))
        {
            name.push('.');
            name.push_str(segment);
        }
        name.push_str(".json");
        name
    }

    /// Does a path end with one of the endpoints a store names as handing out a bare
    /// credential?
    pub fn hands_out_token(&self, path: &str) -> bool {
        self.0
            .iter()
            .any(|w| w.token_endpoints().iter().any(|e| path.ends_with(e)))
    }

    /// Does a path end with one of the endpoints a store names as answering a form that
    /// holds a token and its secret?
    pub fn hands_out_form_token(&self, path: &str) -> bool {
        self.0
            .iter()
            .any(|w| w.form_token_endpoints().iter().any(|e| path.ends_with(e)))
    }

    /// The part of a URL's path that is a call of one of these stores' APIs: what stands
    /// before it is a shop's own base path. Where two stores would take it, the one whose
    /// API starts first (a SKU in a path may look like another store's prefix).
    pub fn api_path<'a>(&self, path: &'a str) -> Option<&'a str> {
        self.0
            .iter()
            .filter_map(|w| w.api_path(path))
            .max_by_key(|api| api.len())
    }
}
