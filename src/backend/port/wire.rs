//! What a back end's traffic looks like on the wire, for the recorder and the replayer,
//! which know no store: which paths are the store's, the endpoint a path names, and which
//! answers carry credentials to scrub. Each adapter describes its own store with a
//! [`WireShape`]; the registry (`backend::registry`) lists them.

/// Names the customer a call is made for (never a credential): a back end that calls the
/// store as a customer sets it. The store ignores it; the recorder keeps it, and replay
/// matches on it, so that a customer's answer is never replayed for the Guest's same URL,
/// or another customer's.
pub const ON_BEHALF_OF: http::HeaderName =
    http::HeaderName::from_static("x-storegate-on-behalf-of");

/// One store's wire, as the recorder reads it.
pub trait WireShape: Send + Sync + std::fmt::Debug {
    /// The back end's kind (`magento2`), for messages.
    fn kind(&self) -> &'static str;
    /// Is this path (as sent, without the query) one of this store's?
    fn owns(&self, path: &str) -> bool;
    /// The part of a URL's path (a browser's export, with whatever the shop puts before its
    /// API) that is a call of this store's API as the gateway would send it; `None`: not one.
    fn api_path<'a>(&self, path: &'a str) -> Option<&'a str> {
        self.owns(path).then_some(path)
    }
    /// The endpoint a path of this store names: its values (a SKU, an id, an e-mail)
    /// replaced by `{}`, any scope before the API's own path left out.
    fn template(&self, path: &str) -> String;
    /// Segments of a template left out of a cassette file's name (an API version).
    fn unnamed_segments(&self) -> &'static [&'static str] {
        &[]
    }
    /// How the paths of endpoints whose answer is a bare credential end.
    fn token_endpoints(&self) -> &'static [&'static str] {
        &[]
    }
    /// How the paths of endpoints whose answer is a form holding a token and its secret end.
    fn form_token_endpoints(&self) -> &'static [&'static str] {
        &[]
    }
}
