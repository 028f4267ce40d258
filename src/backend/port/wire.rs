//! What a back end's traffic looks like on the wire, for the recorder and the replayer,
//! which know no store: which paths are the store's, the endpoint a path names, which
//! answers carry credentials to scrub, how the store fails ([`Failure`]) and how a live call
//! of it is signed. Each adapter describes its own store with a [`WireShape`]; the registry
//! (`backend::registry`) lists them.

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
    /// This store's own form of a failure (its maintenance page, its error body), or `None`
    /// to leave it to the replayer's plain one.
    fn failure(&self, _failure: &Failure, _at: &FailureAt<'_>) -> Option<Canned> {
        None
    }
    /// The `Authorization` a call of this store's carries, made anew for a live call
    /// (`None`: none). By default a Bearer token.
    fn authorize(
        &self,
        _method: &http::Method,
        _path: &str,
        _query: &[(String, String)],
        credentials: &LiveCredentials<'_>,
    ) -> Result<Option<String>, String> {
        Ok((!credentials.token.is_empty()).then(|| format!("Bearer {}", credentials.token)))
    }
}

/// A store's bad day, by name (`storegate replay`'s faults): what the store answers when it
/// is in maintenance, when PHP dies, when its database is gone.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    Maintenance,
    PhpFatal,
    MemoryExhausted,
    DbGone,
    /// The real answer, after this long without a byte.
    SlowFirstByte(std::time::Duration),
    OAuthTimestampRefused,
    RateLimited,
    TokenThrottled,
    PhpFpmDown,
    PhpTimeout,
}

/// Where a failure is answered: the call, and the numbers a store writes into its pages
/// (drawn by the replayer, so that a seed repeats them).
#[derive(Debug, Clone, Copy)]
pub struct FailureAt<'a> {
    /// The path asked for.
    pub path: &'a str,
    /// The `Host` the call named (a store writes its own URL into its error pages).
    pub host: &'a str,
    /// The caller asked for XML.
    pub xml: bool,
    /// A report or log record number.
    pub report: u64,
    /// A line of a PHP file.
    pub line: u32,
}

/// An answer made up for a failure: status, content type, body.
#[derive(Debug, Clone, PartialEq)]
pub struct Canned {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

impl Canned {
    pub const HTML: &'static str = "text/html; charset=UTF-8";
    pub const JSON: &'static str = "application/json; charset=utf-8";
    pub const XML: &'static str = "application/xml; charset=utf-8";

    /// A PHP store's error page (the skeleton of Magento's and OpenMage's `errors/`
    /// templates): `base` is where its assets are, `main` its content.
    pub fn page(status: u16, title: &str, base: &str, main: &str) -> Canned {
        Canned {
            status,
            content_type: Canned::HTML,
            body: format!(
                "<!doctype html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\">\n<head>\n<title>{title}</title>\n\
                 <base href=\"{base}\" />\n<meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\" />\n\
                 <meta name=\"robots\" content=\"*\" />\n</head>\n<body>\n{main}\n</body>\n</html>\n"
            ),
        }
    }

    /// PHP's fatal error as `display_errors=On` with `html_errors` prints it (php-src
    /// `main/main.c`): the status stays 200, the page is text/html.
    pub fn php_fatal(message: &str, file: &str, line: u32) -> Canned {
        Canned {
            status: 200,
            content_type: Canned::HTML,
            body: format!(
                "<br />\n<b>Fatal error</b>:  {} in <b>{file}</b> on line <b>{line}</b><br />\n",
                escape_html(message)
            ),
        }
    }

    /// nginx's own error page (`ngx_http_special_response.c`), as it is with
    /// `server_tokens off`: what the proxy in front of any store answers.
    pub fn nginx(status: u16, title: &str) -> Canned {
        Canned {
            status,
            content_type: "text/html",
            body: format!(
                "<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
            ),
        }
    }
}

/// Text for HTML.
pub fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// What a call to a live store is signed with (`storegate cassette drift`, a stale answer
/// recorded again).
#[derive(Debug, Clone, Copy)]
pub struct LiveCredentials<'a> {
    /// The store's base URL.
    pub url: &'a str,
    /// `STOREGATE_UPSTREAM_TOKEN`.
    pub token: &'a str,
    /// An OAuth 1.0a consumer's key and secret and the token's secret, where the store signs.
    pub oauth: Option<(&'a str, &'a str, &'a str)>,
}
