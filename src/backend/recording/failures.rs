//! The store's bad days, by name: what a store (and the nginx in front of it) answers when
//! it is in maintenance, when PHP dies, when the database is gone. A fault rule names one
//! (`GET /api/rest/products/{}=maintenance@0.3`) and replay answers it as the store at hand
//! would: each store's wire gives its own form (`WireShape::failure`: Magento 2's and
//! OpenMage's are in their adapters' folders), and what is the proxy's (a 429, a 502, a
//! 504) or no store's is answered here. docs/recording.md, "The failure catalog", gives
//! each one's source.

use std::time::Duration;

use rand::Rng;

use crate::backend::port::FailureAt;
pub use crate::backend::port::{Canned, Failure};

use super::wires::Wires;

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

/// A named failure, read.
pub trait Named: Sized {
    /// `maintenance`, `slow_first_byte:3s`; `None` for a name not in the catalog.
    fn parse(text: &str) -> Result<Option<Self>, String>;
    /// How long before the first byte (only `slow_first_byte`).
    fn first_byte_delay(&self) -> Duration;
}

impl Named for Failure {
    /// `maintenance`, `slow_first_byte:3s`; `None` for a name not in the catalog.
    fn parse(text: &str) -> Result<Option<Failure>, String> {
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
    fn first_byte_delay(&self) -> Duration {
        match self {
            Failure::SlowFirstByte(d) => *d,
            _ => Duration::ZERO,
        }
    }
}

/// The answer in place of the recorded one; `None`: the recorded answer is still given
/// (late). `host` goes where the store writes its own URL; `accept` chooses JSON or XML
/// where the store does; `rng` draws the report numbers.
pub fn answer(
    failure: &Failure,
    wires: Wires,
    path: &str,
    host: &str,
    accept: &str,
    rng: &mut impl Rng,
) -> Option<Canned> {
    let at = FailureAt {
        path,
        host,
        xml: accept.contains("xml"),
        report: rng.gen_range(100_000_000_000..999_999_999_999),
        line: rng.gen_range(40..900),
    };
    match failure {
        Failure::SlowFirstByte(_) => None,
        // The proxy's, whichever store is behind it.
        Failure::RateLimited => Some(Canned::nginx(429, "429 Too Many Requests")),
        Failure::PhpFpmDown => Some(Canned::nginx(502, "502 Bad Gateway")),
        Failure::PhpTimeout => Some(Canned::nginx(504, "504 Gateway Time-out")),
        _ => Some(
            wires
                .owner(path)
                .and_then(|store| store.failure(failure, &at))
                .unwrap_or_else(|| plain(failure, &at)),
        ),
    }
}

/// A failure of a store whose wire has no form of its own for it.
fn plain(failure: &Failure, at: &FailureAt<'_>) -> Canned {
    match failure {
        Failure::Maintenance => Canned::page(
            503,
            "Error 503: Service Unavailable",
            &format!("http://{}/", at.host),
            "<h1>Service Temporarily Unavailable</h1>",
        ),
        Failure::PhpFatal => Canned::php_fatal(
            "Uncaught Error: Call to a member function getId() on null",
            "index.php",
            at.line,
        ),
        Failure::MemoryExhausted => Canned::php_fatal(
            "Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes)",
            "index.php",
            at.line,
        ),
        Failure::DbGone => Canned::page(
            503,
            "There has been an error processing your request",
            &format!("http://{}/", at.host),
            "<h1>There has been an error processing your request</h1>",
        ),
        _ => Canned {
            status: 401,
            content_type: "text/plain",
            body: "Unauthorized".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    const WIRES: Wires = crate::backend::recording::cassette::tests::WIRES;

    fn answer_for(name: &str, path: &str) -> Canned {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let failure = Failure::parse(name).unwrap().unwrap();
        answer(&failure, WIRES, path, "127.0.0.1:8081", "", &mut rng).unwrap()
    }

    #[test]
    fn the_proxys_failures_and_a_plain_store_s() {
        assert_eq!(answer_for("rate_limited", "/shop/api/x").status, 429);
        assert_eq!(answer_for("php_fpm_down", "/shop/api/x").status, 502);
        assert_eq!(answer_for("php_timeout", "/shop/api/x").status, 504);
        // The test store has no forms of its own: the plain ones.
        let maintenance = answer_for("maintenance", "/shop/api/products/1");
        assert_eq!(
            (maintenance.status, maintenance.content_type),
            (503, Canned::HTML)
        );
        let fatal = answer_for("php_fatal", "/shop/api/products/1");
        assert_eq!(fatal.status, 200);
        assert!(fatal.body.starts_with("<br />\n<b>Fatal error</b>"));
        assert_eq!(
            Failure::parse("slow_first_byte:2s").unwrap(),
            Some(Failure::SlowFirstByte(Duration::from_secs(2)))
        );
        assert_eq!(Failure::parse("gremlins").unwrap(), None);
        assert!(Failure::parse("maintenance:3s").is_err());
        assert!(Failure::parse("slow_first_byte:later").is_err());
    }
}
