//! How Magento 2 fails, for the replayer's named failures (docs/recording.md, "The failure
//! catalog", gives each one's source): its maintenance page (`pub/errors/503.php`), a PHP
//! fatal error with the webapi's report line after it, the webapi's masked 500 when the
//! database is gone, and its refusals of a consumer or a throttled sign-in.

use crate::backend::port::{Canned, Failure, FailureAt, escape_html};

/// Magento 2's form of `failure`, where it has one.
pub(super) fn answer(failure: &Failure, at: &FailureAt<'_>) -> Option<Canned> {
    let file = "/var/www/html/vendor/magento/module-catalog/Model/ProductRepository.php";
    Some(match failure {
        Failure::Maintenance => Canned::page(
            503,
            "Error 503: Service Unavailable",
            &format!("http://{}/pub/errors/default/", at.host),
            MAINTENANCE_BODY,
        ),
        Failure::PhpFatal => with_report_line(
            Canned::php_fatal(
                &format!(
                    "Uncaught Error: Call to a member function getId() on null in {file}:{}\nStack trace:\n#0 {{main}}\n  thrown",
                    at.line
                ),
                file,
                at.line,
            ),
            at.report,
        ),
        Failure::MemoryExhausted => with_report_line(
            Canned::php_fatal(
                "Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes)",
                file,
                at.line,
            ),
            at.report,
        ),
        Failure::DbGone => error(
            500,
            &format!(
                "Internal Error. Details are available in Magento log file. Report ID: webapi-{:013x}",
                0x6000_0000_0000u64 + at.report % 0x1000_0000_0000
            ),
            None,
            at.xml,
        ),
        Failure::OAuthTimestampRefused => error(
            401,
            "The consumer isn't authorized to access %resources.",
            Some(("resources", acl_resource(at.path))),
            at.xml,
        ),
        Failure::TokenThrottled => error(
            401,
            "The account sign-in was incorrect or your account is disabled temporarily. Please wait and try again later.",
            None,
            at.xml,
        ),
        _ => return None,
    })
}

/// The heading and message of Magento's `503.phtml`.
pub(super) const MAINTENANCE_BODY: &str = "<div id=\"main\" class=\"col-main\">\n<div class=\"page-title\"><h1>Service Temporarily Unavailable</h1></div>\n\
<p>The server is temporarily unable to service your request due to maintenance downtime or capacity problems. Please try again later.</p>\n</div>";

/// Magento 2's webapi shutdown function appends its own line after PHP's fatal error; its
/// `header()` comes too late to change the status.
fn with_report_line(mut canned: Canned, report: u64) -> Canned {
    canned.body.push_str(&format!(
        "{{\"messages\":{{\"error\":[{{\"code\":500,\"message\":\"Server internal error. See details in report api\\/{report}\"}}]}}}}"
    ));
    canned
}

/// Magento 2's webapi error body (`Magento\Framework\Webapi\Rest\Response::setException`).
fn error(status: u16, message: &str, parameter: Option<(&str, &str)>, xml: bool) -> Canned {
    if xml {
        let parameters = parameter
            .map(|(name, value)| format!("<parameters><{name}>{value}</{name}></parameters>"))
            .unwrap_or_default();
        return Canned {
            status,
            content_type: Canned::XML,
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
        content_type: Canned::JSON,
        body: body.to_string(),
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
