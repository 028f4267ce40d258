//! How OpenMage fails, for the replayer's named failures (docs/recording.md, "The failure
//! catalog", gives each one's source): its maintenance page (`errors/503.php`, seen on the
//! live store), a PHP fatal error, its error report page when the database is gone, and its
//! OAuth refusals in the API2 error tree.

use crate::backend::port::{Canned, Failure, FailureAt, escape_html};

/// OpenMage's form of `failure`, where it has one.
pub(super) fn answer(failure: &Failure, at: &FailureAt<'_>) -> Option<Canned> {
    let file = "/var/www/html/app/code/core/Mage/Api2/Model/Resource.php";
    let host = at.host;
    Some(match failure {
        Failure::Maintenance => Canned::page(
            503,
            "Error 503: Service Unavailable",
            &format!("http://{host}/errors/default/"),
            MAINTENANCE_BODY,
        ),
        Failure::PhpFatal => Canned::php_fatal(
            &format!(
                "Uncaught Error: Call to a member function getId() on null in {file}:{}\nStack trace:\n#0 {{main}}\n  thrown",
                at.line
            ),
            file,
            at.line,
        ),
        Failure::MemoryExhausted => Canned::php_fatal(
            "Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes)",
            file,
            at.line,
        ),
        Failure::DbGone => {
            let record = at.report;
            Canned::page(
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
        Failure::OAuthTimestampRefused => error(401, "oauth_problem=timestamp_refused", at.xml),
        Failure::TokenThrottled => error(401, "oauth_problem=token_rejected", at.xml),
        _ => return None,
    })
}

/// The heading and message of OpenMage's `503.phtml` (the same words as Magento 2's).
const MAINTENANCE_BODY: &str = "<div id=\"main\" class=\"col-main\">\n<div class=\"page-title\"><h1>Service Temporarily Unavailable</h1></div>\n\
<p>The server is temporarily unable to service your request due to maintenance downtime or capacity problems. Please try again later.</p>\n</div>";

/// OpenMage's API2 error tree, JSON or XML as the caller asked (seen on the live store).
fn error(status: u16, message: &str, xml: bool) -> Canned {
    if xml {
        return Canned {
            status,
            content_type: Canned::XML,
            body: format!(
                "<?xml version=\"1.0\"?>\n<magento_api>\n  <messages>\n    <error>\n      <data_item>\n        <code>{status}</code>\n        <message>{}</message>\n      </data_item>\n    </error>\n  </messages>\n</magento_api>\n",
                escape_html(message)
            ),
        };
    }
    Canned {
        status,
        content_type: Canned::JSON,
        body: serde_json::json!({"messages": {"error": [{"code": status, "message": message}]}})
            .to_string(),
    }
}
