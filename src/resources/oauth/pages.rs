//! The HTML of the authorize flow: sign-in, confirm, the verifier for `oob`, and the
//! messages. Plain forms that work without JavaScript, styled inline like a store's
//! account pages; the `simple` layout is the pop-up variant, without the store's frame.
//!
//! Every value shown is escaped; nothing here reads a request.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};

/// Who signs in on a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    Customer,
    Admin,
}

impl Audience {
    /// Where the flow's forms post to.
    pub fn base_path(self) -> &'static str {
        match self {
            Audience::Customer => "/oauth/authorize",
            Audience::Admin => "/admin/oauth_authorize",
        }
    }
}

/// What every form carries.
#[derive(Debug, Clone)]
pub struct FormContext<'a> {
    pub audience: Audience,
    pub simple: bool,
    pub oauth_token: &'a str,
    pub form_key: &'a str,
    pub consumer_name: &'a str,
}

pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The pages' style. Made for a phone's in-app browser first (the usual place of a mobile
/// app's sign-in): nothing wider than the screen, fields and buttons at least 44 CSS pixels
/// tall (the tap target Apple and Google ask for), 16 px text in fields (iOS zooms the
/// page into a field with less), long names wrapped; on a narrow screen the card fills it.
const STYLE: &str = "
body{margin:0;font-family:'Helvetica Neue',Helvetica,Arial,sans-serif;color:#333;background:#f4f4f4;-webkit-text-size-adjust:100%}
header{background:#1979c3;color:#fff;padding:14px 24px;font-size:22px;font-weight:bold;letter-spacing:.5px}
header small{font-weight:normal;font-size:13px;opacity:.85;margin-left:12px}
main{max-width:460px;margin:40px auto;background:#fff;border:1px solid #ddd;border-radius:3px;padding:28px 32px;overflow-wrap:anywhere}
.simple main{margin:16px auto}
h1{font-size:24px;font-weight:300;margin:0 0 18px}
p{line-height:1.5}
label{display:block;font-weight:600;margin:14px 0 6px}
input[type=email],input[type=password],input[type=text]{width:100%;box-sizing:border-box;min-height:44px;padding:10px;border:1px solid #c2c2c2;border-radius:1px;font-size:16px}
.actions{margin-top:22px;display:flex;flex-wrap:wrap;gap:12px}
.actions form{display:flex;flex:1 1 auto}
button{min-height:44px;padding:10px 22px;font-size:16px;border-radius:3px;cursor:pointer;border:1px solid #1979c3;background:#1979c3;color:#fff}
.actions form button{flex:1 1 auto}
button.secondary{background:#eee;color:#333;border-color:#cdcdcd}
.error{background:#fae5e5;color:#e02b27;padding:10px 14px;margin-bottom:16px}
.verifier{font-family:monospace;font-size:20px;background:#f0f7fc;padding:12px;text-align:center;word-break:break-all}
footer{text-align:center;color:#777;font-size:12px;margin:24px 16px}
@media (max-width:520px){header{padding:12px 16px;font-size:18px}main,.simple main{margin:0;border:0;border-radius:0;padding:20px 16px}.actions>button{flex:1 1 auto}}
";
fn layout(title: &str, simple: bool, content: &str) -> String {
    let frame_start = if simple {
        String::new()
    } else {
        "<header>Store<small>Customer account</small></header>".to_owned()
    };
    let footer = if simple {
        ""
    } else {
        "<footer>Your password is checked by the store and never shown to the application.</footer>"
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>{STYLE}</style></head>\
         <body class=\"{class}\">{frame_start}<main>{content}</main>{footer}</body></html>\n",
        title = escape(title),
        class = if simple { "simple" } else { "full" },
    )
}

fn hidden(context: &FormContext<'_>) -> String {
    format!(
        "<input type=\"hidden\" name=\"oauth_token\" value=\"{}\">\
         <input type=\"hidden\" name=\"form_key\" value=\"{}\">{}",
        escape(context.oauth_token),
        escape(context.form_key),
        if context.simple {
            "<input type=\"hidden\" name=\"simple\" value=\"1\">"
        } else {
            ""
        }
    )
}

fn action(context: &FormContext<'_>, step: &str) -> String {
    let base = context.audience.base_path();
    match (step, context.simple) {
        ("", false) => base.to_owned(),
        ("", true) => format!("{base}/simple"),
        (step, _) => format!("{base}/{step}"),
    }
}

/// The sign-in form, with the original's field names.
pub fn sign_in(context: &FormContext<'_>, error: Option<&str>) -> String {
    let error = error
        .map(|e| format!("<div class=\"error\" role=\"alert\">{}</div>", escape(e)))
        .unwrap_or_default();
    let fields = match context.audience {
        Audience::Customer => {
            "<label for=\"email\">Email</label>\
             <input type=\"email\" id=\"email\" name=\"login[username]\" autocomplete=\"email\" autocapitalize=\"none\" spellcheck=\"false\" required autofocus>\
             <label for=\"pass\">Password</label>\
             <input type=\"password\" id=\"pass\" name=\"login[password]\" autocomplete=\"current-password\" required>"
        }
        Audience::Admin => {
            "<label for=\"user\">User name (optional)</label>\
             <input type=\"text\" id=\"user\" name=\"login[username]\" autocomplete=\"username\" autocapitalize=\"none\" spellcheck=\"false\">\
             <label for=\"pass\">Admin API key</label>\
             <input type=\"password\" id=\"pass\" name=\"login[password]\" autocomplete=\"current-password\" required autofocus>"
        }
    };
    let (title, intro) = match context.audience {
        Audience::Customer => (
            "Customer Login",
            "Sign in with your store account to let <strong>{}</strong> use it.",
        ),
        Audience::Admin => (
            "Admin Login",
            "Sign in as the store's operator to let <strong>{}</strong> use the admin API.",
        ),
    };
    let intro = intro.replace("{}", &escape(context.consumer_name));
    layout(
        title,
        context.simple,
        &format!(
            "<h1>{title}</h1>{error}<p>{intro}</p>\
             <form method=\"post\" action=\"{action}\">{hidden}{fields}\
             <div class=\"actions\"><button type=\"submit\">Sign In</button></div></form>",
            action = action(context, ""),
            hidden = hidden(context),
        ),
    )
}

/// Authorize or reject, once signed in.
pub fn confirm(context: &FormContext<'_>, signed_in_as: &str) -> String {
    layout(
        "Authorize application",
        context.simple,
        &format!(
            "<h1>Authorize application</h1>\
             <p><strong>{name}</strong> asks to access the store's data on your behalf \
             (signed in as {who}).</p>\
             <div class=\"actions\">\
             <form method=\"post\" action=\"{confirm}\">{hidden}<button type=\"submit\">Authorize</button></form>\
             <form method=\"post\" action=\"{reject}\">{hidden}<button type=\"submit\" class=\"secondary\">Reject</button></form>\
             </div>",
            name = escape(context.consumer_name),
            who = escape(signed_in_as),
            confirm = action(context, "confirm"),
            reject = action(context, "reject"),
            hidden = hidden(context),
        ),
    )
}

/// `oauth_callback=oob`: the user types the verifier into the application.
pub fn verifier(simple: bool, consumer_name: &str, verifier: &str) -> String {
    layout(
        "Authorization complete",
        simple,
        &format!(
            "<h1>Authorization complete</h1>\
             <p>Enter this code in <strong>{}</strong> to finish signing in:</p>\
             <p class=\"verifier\" id=\"oauth_verifier\">{}</p>",
            escape(consumer_name),
            escape(verifier)
        ),
    )
}

/// A message page (expired link, rejected access, store unavailable).
pub fn message(simple: bool, title: &str, text: &str) -> String {
    layout(
        title,
        simple,
        &format!("<h1>{}</h1><p>{}</p>", escape(title), escape(text)),
    )
}

/// An HTML answer that no cache keeps and no other site frames.
pub fn respond(status: StatusCode, html: String) -> Response {
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
        ),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

pub fn method_not_allowed() -> Response {
    let mut response = (StatusCode::METHOD_NOT_ALLOWED, "").into_response();
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, POST"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_escape_and_carry_the_original_fields() {
        let context = FormContext {
            audience: Audience::Customer,
            simple: false,
            oauth_token: "abc",
            form_key: "k\"ey",
            consumer_name: "<script>x</script>",
        };
        let html = sign_in(&context, Some("Invalid login or password."));
        assert!(html.contains("name=\"login[username]\""));
        assert!(html.contains("name=\"login[password]\""));
        assert!(html.contains("name=\"form_key\" value=\"k&quot;ey\""));
        assert!(!html.contains("<script>"));
        assert!(html.contains("action=\"/oauth/authorize\""));
        let simple = FormContext {
            simple: true,
            audience: Audience::Admin,
            ..context
        };
        let html = confirm(&simple, "admin");
        assert!(html.contains("action=\"/admin/oauth_authorize/confirm\""));
        assert!(html.contains("name=\"simple\" value=\"1\""));
    }
}
