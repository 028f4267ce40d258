//! Which callbacks a consumer accepts: the app's registered callback as an allow-list.
//!
//! A mobile app returns from the browser to itself through a URL of its own scheme
//! (`myapp://oauth-callback`); OpenMage took such callbacks in 2024 (#3774), with the
//! consumer's registered callback URL as the allow-list, and Maho hardened the match in 2026
//! (#1376) after a string-prefix check let `legit.com.evil.com` and `legit.com@evil.com`
//! through. The rule here is that hardened one:
//!
//! - `oob` is always accepted (the verifier is shown to the user);
//! - a consumer with a registered callback accepts a callback of the same scheme, host and
//!   port, whose path is the registered one or continues it at a `/` (checked on the
//!   decoded path, which may hold no `.` or `..` segment and no backslash), which carries
//!   every query parameter of the registered one with its value, and no userinfo;
//! - a consumer without one accepts any `http(s)` URL with a host and no userinfo, as
//!   before.
//!
//! A registered callback itself ([`registrable`]) must be an absolute URL with a scheme and
//! no userinfo or fragment; the CLI refuses anything else, saying why.

use percent_encoding::percent_decode_str;
use url::Url;

/// The callback an app asks for to receive the verifier out of band.
pub const OUT_OF_BAND: &str = "oob";

/// Schemes a browser would run rather than hand to an app: never a callback.
const SCRIPT_SCHEMES: [&str; 3] = ["javascript", "data", "vbscript"];

/// Whether `url` may be registered as a consumer's callback (or rejected callback); why
/// not, in words for the operator.
pub fn registrable(url: &str) -> Result<(), String> {
    let parsed = Url::parse(url).map_err(|e| match e {
        url::ParseError::RelativeUrlWithoutBase => {
            "it has no scheme (write it whole: https://app.example/cb or myapp://cb)".to_owned()
        }
        other => format!("it is not a URL ({other})"),
    })?;
    if has_userinfo(&parsed) {
        return Err("it carries a user name or password (user@host), which no callback may".into());
    }
    if parsed.fragment().is_some() {
        return Err(
            "it has a fragment (#...); the verifier is sent in the query, leave the fragment out"
                .into(),
        );
    }
    if SCRIPT_SCHEMES.contains(&parsed.scheme()) {
        return Err(format!(
            "a {}: URL is run by the browser, not handed to an app",
            parsed.scheme()
        ));
    }
    if matches!(parsed.scheme(), "http" | "https") && parsed.host().is_none() {
        return Err("an http(s) URL needs a host".into());
    }
    if path_is_unsafe(url) {
        return Err("its path has a . or .. segment or a backslash".into());
    }
    Ok(())
}

/// Whether a consumer whose registered callback is `registered` accepts `callback`.
pub fn accepts(registered: Option<&str>, callback: &str) -> bool {
    if callback == OUT_OF_BAND {
        return true;
    }
    let Ok(url) = Url::parse(callback) else {
        return false;
    };
    if has_userinfo(&url) || path_is_unsafe(callback) {
        return false;
    }
    match registered.filter(|r| !r.trim().is_empty()) {
        None => matches!(url.scheme(), "http" | "https") && url.host().is_some(),
        Some(registered) => match Url::parse(registered) {
            Ok(allowed) if registrable(registered).is_ok() => matches(&allowed, &url),
            // A registered value the gateway cannot read (an imported row, say) allows
            // nothing but `oob`: the consumer's list says what it holds.
            _ => false,
        },
    }
}

/// Whether `url` may be where a user is sent back after refusing (a registered rejected
/// callback): readable, and nothing a browser would run.
pub fn usable_redirect(url: &str) -> bool {
    registrable(url).is_ok()
}

fn has_userinfo(url: &Url) -> bool {
    !url.username().is_empty() || url.password().is_some()
}

/// The raw path (before `?` and `#`), decoded: a `.` or `..` segment, or a backslash raw or
/// encoded. Checked on what the client sent, before any URL parser normalises it away.
fn path_is_unsafe(raw: &str) -> bool {
    let before_query = raw.split(['?', '#']).next().unwrap_or("");
    // The path starts after `scheme:` and, when present, `//authority`.
    let after_scheme = before_query
        .split_once(':')
        .map_or(before_query, |(_, rest)| rest);
    let path = match after_scheme.strip_prefix("//") {
        Some(rest) => rest.find('/').map_or("", |i| &rest[i..]),
        None => after_scheme,
    };
    let decoded = percent_decode_str(path).decode_utf8_lossy();
    decoded.contains('\\')
        || raw.contains('\\')
        || decoded
            .split('/')
            .any(|segment| segment == "." || segment == "..")
}

/// Scheme, host and port equal; the path the registered one or below it at a `/`; every
/// registered query parameter present with its value.
fn matches(allowed: &Url, url: &Url) -> bool {
    if allowed.scheme() != url.scheme() {
        return false;
    }
    let host = |u: &Url| u.host_str().map(str::to_ascii_lowercase);
    if host(allowed) != host(url) || allowed.port_or_known_default() != url.port_or_known_default()
    {
        return false;
    }
    let (base, path) = (allowed.path(), url.path());
    let below = path == base
        || (path.starts_with(base)
            && (base.ends_with('/') || path.as_bytes().get(base.len()) == Some(&b'/')));
    if !below {
        return false;
    }
    let sent: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    allowed
        .query_pairs()
        .all(|(k, v)| sent.iter().any(|(sk, sv)| *sk == k && *sv == v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With `registered`, each of `accepted` is accepted and each of `refused` is not.
    fn judged(registered: Option<&str>, accepted: &[&str], refused: &[&str]) {
        for ok in accepted {
            assert!(accepts(registered, ok), "{ok}");
        }
        for bad in refused {
            assert!(!accepts(registered, bad), "{bad}");
        }
    }

    #[test]
    fn a_custom_scheme_and_what_continues_it() {
        let accepted = [
            "myapp://cb",
            "myapp://cb/done",
            "myapp://cb/done/deeper?x=1",
            "myapp://CB/done",
            "oob",
        ];
        let refused = [
            "myapp://cb.evil",
            "myapp://cb.evil/done",
            "myapp://evil/cb",
            "otherapp://cb/done",
            "myapp://user@cb/done",
            "myapp://cb:8080/done",
            "myapp://cb/../x",
            "myapp://cb/%2e%2e/x",
            "myapp://cb/a\\b",
            "myapp://cb/a%5Cb",
            "https://cb/done",
            "not a url",
        ];
        judged(Some("myapp://cb"), &accepted, &refused);
    }

    #[test]
    fn https_registered_is_matched_on_the_host_not_a_prefix() {
        let accepted = [
            "https://legit.com/",
            "https://legit.com/cb?state=1",
            "https://LEGIT.com:443/cb",
        ];
        let refused = [
            "https://legit.com.evil.com",
            "https://legit.com.evil.com/cb",
            "https://legit.com@evil.com",
            "https://legit.com:pw@evil.com/",
            "https://legit.com:8443/",
            "http://legit.com/",
            "https://evil.com/legit.com",
            "https://legit.com/cb/..%2f..%2fevil",
        ];
        judged(Some("https://legit.com"), &accepted, &refused);
    }

    #[test]
    fn the_path_continues_at_a_segment_boundary() {
        let accepted = [
            "https://app.example/cb",
            "https://app.example/cb/",
            "https://app.example/cb/done",
        ];
        let refused = [
            "https://app.example/cbx",
            "https://app.example/",
            "https://app.example/CB",
        ];
        judged(Some("https://app.example/cb"), &accepted, &refused);
        let with_slash = Some("https://app.example/cb/");
        judged(
            with_slash,
            &["https://app.example/cb/done"],
            &["https://app.example/cb"],
        );
    }

    #[test]
    fn registered_query_parameters_must_be_there() {
        let registered = Some("myapp://cb/done?app=shop&v=2");
        assert!(accepts(registered, "myapp://cb/done?v=2&app=shop"));
        assert!(accepts(registered, "myapp://cb/done?app=shop&v=2&state=x"));
        assert!(!accepts(registered, "myapp://cb/done?app=shop"));
        assert!(!accepts(registered, "myapp://cb/done?app=shop&v=3"));
    }

    #[test]
    fn without_a_registered_callback_only_http() {
        for ok in [
            "https://app.example/cb",
            "http://127.0.0.1:9/app/callback",
            "oob",
        ] {
            assert!(accepts(None, ok), "{ok}");
            assert!(accepts(Some(""), ok), "{ok}");
        }
        for refused in [
            "myapp://cb",
            "javascript:alert(1)",
            "https://user@app.example/cb",
            "mailto:a@b",
            "/relative",
        ] {
            assert!(!accepts(None, refused), "{refused}");
        }
    }

    #[test]
    fn what_may_be_registered() {
        for ok in [
            "myapp://cb",
            "myapp://oauth-callback/done",
            "com.example.app:/oauth",
            "https://legit.com",
            "https://app.example/cb?app=shop",
        ] {
            assert_eq!(registrable(ok), Ok(()), "{ok}");
        }
        let why = |url: &str| registrable(url).unwrap_err();
        assert!(why("app.example/cb").contains("no scheme"));
        assert!(why("https://user:pw@app.example/cb").contains("user name or password"));
        assert!(why("myapp://user@cb").contains("user name or password"));
        assert!(why("myapp://cb#done").contains("fragment"));
        assert!(why("javascript:alert(1)").contains("run by the browser"));
        assert!(why("myapp://cb/../x").contains(".."));
        // A registered value that cannot be read allows nothing but oob.
        assert!(!accepts(Some("app.example/cb"), "https://app.example/cb"));
        assert!(accepts(Some("app.example/cb"), "oob"));
    }
}
