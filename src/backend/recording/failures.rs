//! The store's bad days, by name: what Magento 2 and OpenMage (and the nginx in front of
//! them) actually answer when they are in maintenance, when PHP dies, when the database is
//! gone. A fault rule names one (`GET /V1/products/{}=maintenance@0.3`) and replay answers
//! it as the store at hand would: Magento 2's form for `/rest/...` paths, OpenMage's for
//! `/api/rest/...`. docs/recording.md, "The failure catalog", gives each one's source.
//!
//! The pages are abridged: the status, content type, title, heading and message the store
//! sends, in shorter markup than its templates.

use std::time::Duration;

use rand::Rng;

/// Which store's form a failure takes: that of the path asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    Magento2,
    OpenMage,
}

impl Store {
    pub fn of(path: &str) -> Store {
        if crate::backend::openmage::endpoint::is_openmage(path) {
            Store::OpenMage
        } else {
            Store::Magento2
        }
    }
}

/// One named failure.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    Maintenance,
    PhpFatal,
    MemoryExhausted,
    DbGone,
    /// The real answer, after this long without a byte.
    SlowFirstByte(Duration),
    OAuthTimestampRefused,
    RateLimited,
    TokenThrottled,
    PhpFpmDown,
    PhpTimeout,
}

/// Every name, with what it is, for errors and the control API.
pub const CATALOG: &[(&str, &str)] = &[
    (
        "maintenance",
        "503 maintenance page (Magento 2 pub/errors/503.php, OpenMage errors/503.php)",
    ),
    (
        "php_fatal",
        "200 with PHP's HTML fatal error (display_errors on); Magento 2 appends its webapi report line",
    ),
    (
        "memory_exhausted",
        "200 with PHP's `Allowed memory size ... exhausted` fatal error",
    ),
    (
        "db_gone",
        "the database connection lost: Magento 2's masked webapi 500, OpenMage's 503 error report page",
    ),
    (
        "slow_first_byte[:DURATION]",
        "the recorded answer after DURATION (default 5s) without a byte",
    ),
    (
        "oauth_timestamp_refused",
        "401: OpenMage's oauth_problem=timestamp_refused; Magento 2's consumer-not-authorized",
    ),
    (
        "rate_limited",
        "429 from nginx's limit_req in front of the store (limit_req_status 429)",
    ),
    (
        "token_throttled",
        "401: Magento 2's sign-in throttle message; OpenMage's oauth_problem=token_rejected",
    ),
    (
        "php_fpm_down",
        "502 Bad Gateway from nginx, PHP-FPM not answering",
    ),
    (
        "php_timeout",
        "504 Gateway Time-out from nginx, PHP past fastcgi_read_timeout",
    ),
];

/// What a failure answers: status, headers, body.
#[derive(Debug, Clone, PartialEq)]
pub struct Canned {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

const HTML: &str = "text/html; charset=UTF-8";
const JSON: &str = "application/json; charset=utf-8";
const XML: &str = "application/xml; charset=utf-8";

impl Failure {
    /// `maintenance`, `slow_first_byte:3s`; `None` for a name not in the catalog.
    pub fn parse(text: &str) -> Result<Option<Failure>, String> {
        let (name, arg) = match text.split_once(':') {
            Some((name, arg)) => (name.trim(), Some(arg.trim())),
            None => (text.trim(), None),
        };
        let failure = match name.to_ascii_lowercase().as_str() {
            "maintenance" => Failure::Maintenance,
            "php_fatal" => Failure::PhpFatal,
            "memory_exhausted" => Failure::MemoryExhausted,
            "db_gone" => Failure::DbGone,
            "slow_first_byte" => Failure::SlowFirstByte(match arg {
                Some(arg) => super::spec::duration(arg, "slow_first_byte's wait")?,
                None => Duration::from_secs(5),
            }),
            "oauth_timestamp_refused" => Failure::OAuthTimestampRefused,
            "rate_limited" => Failure::RateLimited,
            "token_throttled" => Failure::TokenThrottled,
            "php_fpm_down" => Failure::PhpFpmDown,
            "php_timeout" => Failure::PhpTimeout,
            _ => return Ok(None),
        };
        if arg.is_some() && !matches!(failure, Failure::SlowFirstByte(_)) {
            return Err(format!("{name} takes no argument, got {text:?}"));
        }
        Ok(Some(failure))
    }

    /// How long before the first byte (only `slow_first_byte`).
    pub fn first_byte_delay(&self) -> Duration {
        match self {
            Failure::SlowFirstByte(d) => *d,
            _ => Duration::ZERO,
        }
    }

    /// The store's answer in place of the recorded one; `None`: the recorded answer is
    /// still given (late). `host` goes where the store writes its own URL; `accept` chooses
    /// JSON or XML where the store does; `rng` draws the report numbers.
    pub fn answer(
        &self,
        store: Store,
        path: &str,
        host: &str,
        accept: &str,
        rng: &mut impl Rng,
    ) -> Option<Canned> {
        let xml = accept.contains("xml");
        let canned = match (self, store) {
            (Failure::SlowFirstByte(_), _) => return None,
            (Failure::Maintenance, Store::Magento2) => html(
                503,
                "Error 503: Service Unavailable",
                &format!("http://{host}/pub/errors/default/"),
                MAINTENANCE_BODY,
            ),
            (Failure::Maintenance, Store::OpenMage) => html(
                503,
                "Error 503: Service Unavailable",
                &format!("http://{host}/errors/default/"),
                MAINTENANCE_BODY,
            ),
            (Failure::PhpFatal, store) => {
                let file = php_file(store);
                let line = rng.gen_range(40..900);
                php_error(
                    store,
                    &format!(
                        "Uncaught Error: Call to a member function getId() on null in {file}:{line}\nStack trace:\n#0 {{main}}\n  thrown"
                    ),
                    file,
                    line,
                    rng,
                )
            }
            (Failure::MemoryExhausted, store) => {
                let file = php_file(store);
                let line = rng.gen_range(40..900);
                php_error(
                    store,
                    "Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes)",
                    file,
                    line,
                    rng,
                )
            }
            (Failure::DbGone, Store::Magento2) => {
                let report = format!(
                    "webapi-{:013x}",
                    rng.gen_range(0x6000_0000_0000u64..0x7000_0000_0000)
                );
                let message = format!(
                    "Internal Error. Details are available in Magento log file. Report ID: {report}"
                );
                magento2_error(500, &message, None, xml)
            }
            (Failure::DbGone, Store::OpenMage) => {
                let record: u64 = rng.gen_range(100_000_000_000..999_999_999_999);
                html(
                    503,
                    "There has been an error processing your request",
                    &format!("http://{host}/errors/default/"),
                    &format!(
                        "<div class=\"col-main\">\n<div class=\"page-title\"><h1>There has been an error processing your request</h1></div>\n\
                         <p><em>Exception printing is disabled by default for security reasons.</em></p>\n\
                         <p>Error log record number: <a href=\"http://{host}/errors/report.php?id={record}&amp;skin=default\">{record}</a></p>\n</div>"
                    ),
                )
            }
            (Failure::OAuthTimestampRefused, Store::OpenMage) => {
                openmage_error(401, "oauth_problem=timestamp_refused", xml)
            }
            (Failure::TokenThrottled, Store::OpenMage) => {
                openmage_error(401, "oauth_problem=token_rejected", xml)
            }
            (Failure::OAuthTimestampRefused, Store::Magento2) => magento2_error(
                401,
                "The consumer isn't authorized to access %resources.",
                Some(("resources", acl_resource(path))),
                xml,
            ),
            (Failure::TokenThrottled, Store::Magento2) => magento2_error(
                401,
                "The account sign-in was incorrect or your account is disabled temporarily. Please wait and try again later.",
                None,
                xml,
            ),
            (Failure::RateLimited, _) => nginx(429, "429 Too Many Requests"),
            (Failure::PhpFpmDown, _) => nginx(502, "502 Bad Gateway"),
            (Failure::PhpTimeout, _) => nginx(504, "504 Gateway Time-out"),
        };
        Some(canned)
    }
}

/// The heading and message of both stores' `503.phtml`.
const MAINTENANCE_BODY: &str = "<div id=\"main\" class=\"col-main\">\n<div class=\"page-title\"><h1>Service Temporarily Unavailable</h1></div>\n\
<p>The server is temporarily unable to service your request due to maintenance downtime or capacity problems. Please try again later.</p>\n</div>";

fn html(status: u16, title: &str, base: &str, main: &str) -> Canned {
    Canned {
        status,
        content_type: HTML,
        body: format!(
            "<!doctype html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\">\n<head>\n<title>{title}</title>\n\
             <base href=\"{base}\" />\n<meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\" />\n\
             <meta name=\"robots\" content=\"*\" />\n</head>\n<body>\n{main}\n</body>\n</html>\n"
        ),
    }
}

/// nginx's own error page (`ngx_http_special_response.c`), as it is with `server_tokens off`.
fn nginx(status: u16, title: &str) -> Canned {
    Canned {
        status,
        content_type: "text/html",
        body: format!(
            "<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
        ),
    }
}

fn php_file(store: Store) -> &'static str {
    match store {
        Store::Magento2 => {
            "/var/www/html/vendor/magento/module-catalog/Model/ProductRepository.php"
        }
        Store::OpenMage => "/var/www/html/app/code/core/Mage/Api2/Model/Resource.php",
    }
}

/// PHP's fatal error as `display_errors=On` with `html_errors` prints it (php-src
/// `main/main.c`): the status stays 200, the page is text/html. Magento 2's webapi shutdown
/// function then appends its own line; its `header()` comes too late to change the status.
fn php_error(store: Store, message: &str, file: &str, line: u32, rng: &mut impl Rng) -> Canned {
    let mut body = format!(
        "<br />\n<b>Fatal error</b>:  {} in <b>{file}</b> on line <b>{line}</b><br />\n",
        escape_html(message)
    );
    if store == Store::Magento2 {
        let report: u64 = rng.gen_range(100_000_000_000..999_999_999_999);
        body.push_str(&format!(
            "{{\"messages\":{{\"error\":[{{\"code\":500,\"message\":\"Server internal error. See details in report api\\/{report}\"}}]}}}}"
        ));
    }
    Canned {
        status: 200,
        content_type: HTML,
        body,
    }
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Magento 2's webapi error body (`Magento\Framework\Webapi\Rest\Response::setException`).
fn magento2_error(
    status: u16,
    message: &str,
    parameter: Option<(&str, &str)>,
    xml: bool,
) -> Canned {
    if xml {
        let parameters = parameter
            .map(|(name, value)| format!("<parameters><{name}>{value}</{name}></parameters>"))
            .unwrap_or_default();
        return Canned {
            status,
            content_type: XML,
            body: format!(
                "<?xml version=\"1.0\"?>\n<response><message>{}</message>{parameters}</response>\n",
                escape_html(message)
            ),
        };
    }
    let mut body = serde_json::json!({ "message": message });
    if let Some((name, value)) = parameter {
        body["parameters"] = serde_json::json!({ name: value });
    }
    Canned {
        status,
        content_type: JSON,
        body: body.to_string(),
    }
}

/// OpenMage's API2 error tree, JSON or XML as the caller asked (seen on the live store).
fn openmage_error(status: u16, message: &str, xml: bool) -> Canned {
    if xml {
        return Canned {
            status,
            content_type: XML,
            body: format!(
                "<?xml version=\"1.0\"?>\n<magento_api>\n  <messages>\n    <error>\n      <data_item>\n        <code>{status}</code>\n        <message>{}</message>\n      </data_item>\n    </error>\n  </messages>\n</magento_api>\n",
                escape_html(message)
            ),
        };
    }
    Canned {
        status,
        content_type: JSON,
        body: serde_json::json!({"messages": {"error": [{"code": status, "message": message}]}})
            .to_string(),
    }
}

/// The ACL resource Magento 2 names when it refuses a consumer on this path.
fn acl_resource(path: &str) -> &'static str {
    let service = path.find("/V1/").map_or(path, |at| &path[at + 4..]);
    let first = service.split('/').next().unwrap_or_default();
    match first {
        "products" | "categories" => "Magento_Catalog::products",
        "customers" => "Magento_Customer::customer",
        "orders" => "Magento_Sales::actions_view",
        "stockItems" | "stockStatuses" => "Magento_CatalogInventory::cataloginventory",
        "store" => "Magento_Backend::store",
        _ => "Magento_Backend::admin",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn answer(name: &str, path: &str, accept: &str) -> Canned {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        Failure::parse(name)
            .unwrap()
            .unwrap()
            .answer(Store::of(path), path, "127.0.0.1:8081", accept, &mut rng)
            .unwrap()
    }

    #[test]
    fn each_store_fails_in_its_own_form() {
        let m2 = answer(
            "maintenance",
            "/rest/default/V1/products/A",
            "application/json",
        );
        assert_eq!((m2.status, m2.content_type), (503, HTML));
        assert!(
            m2.body
                .contains("<title>Error 503: Service Unavailable</title>")
        );
        assert!(m2.body.contains("/pub/errors/default/"));
        let om = answer("maintenance", "/api/rest/products/1", "application/json");
        assert!(om.body.contains("http://127.0.0.1:8081/errors/default/"));

        let fatal = answer(
            "php_fatal",
            "/rest/default/V1/products/A",
            "application/json",
        );
        assert_eq!(fatal.status, 200);
        assert!(
            fatal
                .body
                .starts_with("<br />\n<b>Fatal error</b>:  Uncaught Error")
        );
        assert!(
            fatal
                .body
                .contains("Server internal error. See details in report api\\/")
        );
        let fatal = answer("php_fatal", "/api/rest/products/1", "application/json");
        assert!(!fatal.body.contains("messages"));

        let db = answer("db_gone", "/rest/default/V1/products/A", "application/json");
        assert_eq!(db.status, 500);
        let body: serde_json::Value = serde_json::from_str(&db.body).unwrap();
        assert!(body["message"].as_str().unwrap().starts_with(
            "Internal Error. Details are available in Magento log file. Report ID: webapi-"
        ));
        let db = answer("db_gone", "/api/rest/products/1", "*/*");
        assert_eq!((db.status, db.content_type), (503, HTML));
        assert!(
            db.body
                .contains("Exception printing is disabled by default for security reasons.")
        );

        let oauth = answer(
            "oauth_timestamp_refused",
            "/api/rest/products/1",
            "application/json",
        );
        assert_eq!(oauth.status, 401);
        assert_eq!(
            oauth.body,
            r#"{"messages":{"error":[{"code":401,"message":"oauth_problem=timestamp_refused"}]}}"#
        );
        let oauth = answer(
            "oauth_timestamp_refused",
            "/api/rest/products/1",
            "application/xml",
        );
        assert!(
            oauth
                .body
                .contains("<message>oauth_problem=timestamp_refused</message>")
        );
        let oauth = answer(
            "oauth_timestamp_refused",
            "/rest/all/V1/customers/1",
            "application/json",
        );
        assert!(
            oauth.body.contains("Magento_Customer::customer"),
            "{}",
            oauth.body
        );

        assert_eq!(answer("rate_limited", "/rest/V1/x", "").status, 429);
        assert_eq!(answer("php_fpm_down", "/rest/V1/x", "").status, 502);
        assert_eq!(answer("php_timeout", "/api/rest/x", "").status, 504);
        assert_eq!(
            Failure::parse("slow_first_byte:2s").unwrap(),
            Some(Failure::SlowFirstByte(Duration::from_secs(2)))
        );
        assert_eq!(Failure::parse("gremlins").unwrap(), None);
        assert!(Failure::parse("maintenance:3s").is_err());
        assert!(Failure::parse("slow_first_byte:later").is_err());
    }
}
