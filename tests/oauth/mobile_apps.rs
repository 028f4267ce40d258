//! Mobile apps sign in as mobile apps do: a callback of the app's own scheme
//! (`myapp://cb/done`), allowed by the callback the app was registered with (the CLI's
//! `--callback`, or the original's imported `callback_url`), matched as Maho's hardened rule
//! says (no string prefix: `legit.com.evil.com` and `legit.com@evil.com` are refused), and
//! the authorize page in a real browser at a phone's size.

use super::cli::{added, import_consumers, oauth_consumer};
use super::phone::{self, Phone};
use super::*;
use crate::common::http::sent;

fn add(stack: &Stack, name: &str, extra: &[&str]) -> Consumer {
    let mut args = vec!["add", "--name", name];
    args.extend_from_slice(extra);
    let (ok, out, err) = oauth_consumer(stack, &args);
    assert!(ok, "{err}");
    added(&out)
}

/// `page` (an authorize page) for the request `token` in `phone`.
async fn open(phone: &Phone, stack: &Stack, page: &str, token: &str) {
    phone
        .open(&format!("{}{page}?oauth_token={token}", stack.origin()))
        .await;
}

/// Sends the sign-in form `phone` shows with `password` and waits for the confirm page.
async fn submit_sign_in(phone: &Phone, password: &str) {
    phone.type_into("#pass", password).await;
    phone.click("button[type=submit]").await;
    phone
        .wait_for("document.title === 'Authorize application'")
        .await;
}

/// `POST /oauth/initiate` with `callback`: status, content type, body, Location.
async fn initiate(stack: &Stack, consumer: &Consumer, callback: &str) -> (u16, String, String) {
    let url = format!("{}/oauth/initiate", stack.origin());
    let header = Signer::new(consumer)
        .param("oauth_callback", callback)
        .header("POST", &url, &[]);
    let response = sent(stack.http.post(&url).header("Authorization", header)).await;
    let status = response.status().as_u16();
    assert!(
        response.headers().get("location").is_none(),
        "initiate never redirects"
    );
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, content_type, response.text().await.unwrap())
}

/// Signs in as the demo customer on the authorize page and presses `button` (`confirm` or
/// `reject`): the page's answer (a redirect, normally).
async fn decide(stack: &Stack, token: &str, button: &str) -> Page {
    let mut browser = Browser::default();
    let key = sign_in(
        &mut browser,
        stack,
        "/oauth/authorize",
        token,
        (EMAIL, PASSWORD),
    )
    .await;
    browser
        .send(
            stack,
            "POST",
            &format!("/oauth/authorize/{button}"),
            &[("oauth_token", token), ("form_key", &key)],
        )
        .await
}

/// The access token for a request token and the verifier the callback carried.
async fn exchange(
    stack: &Stack,
    consumer: &Consumer,
    request: &HashMap<String, String>,
    verifier: &str,
) -> (String, String) {
    let url = format!("{}/oauth/token", stack.origin());
    let header = Signer::new(consumer)
        .token(&request["oauth_token"], &request["oauth_token_secret"])
        .param("oauth_verifier", verifier)
        .header("POST", &url, &[]);
    let reply = stack
        .send("POST", &url, &[("Authorization", &header)], None)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let access = form_map(&reply.body);
    (
        access["oauth_token"].clone(),
        access["oauth_token_secret"].clone(),
    )
}

/// A signed read of the customer's own record with an access token.
async fn own_record(stack: &Stack, consumer: &Consumer, token: &(String, String)) -> u16 {
    let url = format!("{}/api/rest/customers/1", stack.origin());
    let header = Signer::new(consumer)
        .token(&token.0, &token.1)
        .header("GET", &url, &[]);
    stack.get_signed(&url, &header).await.status
}

/// A callback's query parameters.
fn query_of(location: &str) -> HashMap<String, String> {
    let query = location.split_once('?').map_or("", |(_, q)| q);
    form_map(query)
}

#[tokio::test]
async fn an_app_registered_with_its_own_scheme_completes_the_dance() {
    let stack = Stack::start().await;
    let app = add(&stack, "Phone app", &["--callback", "myapp://cb"]);
    let (status, content_type, body) = initiate(&stack, &app, "myapp://cb/done").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(content_type, "application/x-www-form-urlencoded");
    let request = form_map(&body);
    assert_eq!(request["oauth_callback_confirmed"], "true");

    let page = decide(&stack, &request["oauth_token"], "confirm").await;
    assert_eq!(page.status, 302, "{}", page.body);
    let location = page.location();
    assert!(
        location.starts_with("myapp://cb/done?oauth_token="),
        "{location}"
    );
    let back = query_of(&location);
    assert_eq!(back["oauth_token"], request["oauth_token"]);
    let access = exchange(&stack, &app, &request, &back["oauth_verifier"]).await;
    assert_eq!(own_record(&stack, &app, &access).await, 200);

    // The registered callback itself, and oob, are accepted too.
    for callback in ["myapp://cb", "oob"] {
        assert_eq!(initiate(&stack, &app, callback).await.0, 200, "{callback}");
    }
}

#[tokio::test]
async fn callbacks_that_do_not_match_the_registered_one_are_refused_without_a_redirect() {
    let stack = Stack::start().await;
    let app = add(&stack, "Phone app", &["--callback", "myapp://cb"]);
    let web = add(&stack, "Web app", &["--callback", "https://legit.com"]);
    let tagged = add(
        &stack,
        "Tagged app",
        &["--callback", "https://legit.com/cb?app=shop"],
    );
    let unregistered = add(&stack, "Old app", &[]);
    let cases: [(&Consumer, &str, bool); 20] = [
        (&app, "myapp://cb.evil", false),
        (&app, "myapp://cb.evil/done", false),
        (&app, "myapp://evil/cb", false),
        (&app, "otherapp://cb/done", false),
        (&app, "myapp://cb/%2e%2e/elsewhere", false),
        (&app, "myapp://cb/a\\b", false),
        (&app, "myapp://attacker@cb/done", false),
        (&app, "https://cb/done", false),
        (&web, "https://legit.com.evil.com", false),
        (&web, "https://legit.com.evil.com/cb", false),
        (&web, "https://legit.com@evil.com", false),
        (&web, "https://legit.com:8443/cb", false),
        (&web, "http://legit.com/cb", false),
        (&web, "https://legit.com/any/path", true),
        (&tagged, "https://legit.com/cb/done?app=shop&state=1", true),
        (&tagged, "https://legit.com/cb/done?state=1", false),
        (&tagged, "https://legit.com/cbx?app=shop", false),
        // Without a registered callback: http(s) only, as before, and never userinfo.
        (&unregistered, "myapp://cb", false),
        (&unregistered, "https://user@app.example/cb", false),
        (&unregistered, "https://app.example/cb", true),
    ];
    for (consumer, callback, accepted) in cases {
        let (status, content_type, body) = initiate(&stack, consumer, callback).await;
        if accepted {
            assert_eq!(status, 200, "{callback}: {body}");
        } else {
            assert_eq!(
                (status, body.as_str()),
                (400, "oauth_problem=parameter_rejected"),
                "{callback}"
            );
            assert_eq!(content_type, "application/x-www-form-urlencoded");
        }
    }
}

#[tokio::test]
async fn refusing_sends_the_user_back_to_the_app() {
    let stack = Stack::start().await;
    let with_rejected = add(
        &stack,
        "Phone app",
        &[
            "--callback",
            "myapp://cb",
            "--rejected-callback",
            "myapp://cb/rejected",
        ],
    );
    let plain = add(&stack, "Other phone app", &["--callback", "otherapp://cb"]);
    for (consumer, callback, target) in [
        (&with_rejected, "myapp://cb/done", "myapp://cb/rejected"),
        (&plain, "otherapp://cb/done", "otherapp://cb/done"),
    ] {
        let (status, _, body) = initiate(&stack, consumer, callback).await;
        assert_eq!(status, 200, "{body}");
        let token = form_map(&body)["oauth_token"].clone();
        let page = decide(&stack, &token, "reject").await;
        assert_eq!(page.status, 302, "{}", page.body);
        assert_eq!(
            page.location(),
            format!("{target}?oauth_token={token}&rejected=1")
        );
    }
}

#[tokio::test]
async fn the_cli_refuses_callbacks_it_cannot_use_and_updates_them() {
    let stack = Stack::start().await;
    for (callback, why) in [
        ("app.example/cb", "no scheme"),
        ("myapp://user@cb", "user name or password"),
        ("https://user:pw@legit.com/cb", "user name or password"),
        ("myapp://cb#done", "fragment"),
    ] {
        for option in ["--callback", "--rejected-callback"] {
            let (ok, out, err) =
                oauth_consumer(&stack, &["add", "--name", "Bad", option, callback]);
            assert!(!ok, "{callback}: {out}");
            assert!(
                err.contains(option) && err.contains(why),
                "{option} {callback}: {err}"
            );
        }
    }
    let (ok, out, _) = oauth_consumer(&stack, &["list"]);
    assert!(ok && out.starts_with("0 consumer(s)"), "{out}");

    // Registered without a callback: http(s) only. Then given one, then without it again.
    let app = add(&stack, "Phone app", &[]);
    assert_eq!(initiate(&stack, &app, "myapp://cb/done").await.0, 400);
    let update = |callback: &str| {
        oauth_consumer(
            &stack,
            &["update", "--key", &app.key, "--callback", callback],
        )
    };
    // A running gateway reads a changed consumer within its credentials' freshness (a
    // second by default): what it answers within a few.
    let settles = |callback: &'static str, status: u16| {
        let (stack, app) = (&stack, &app);
        async move {
            for _ in 0..40 {
                if initiate(stack, app, callback).await.0 == status {
                    return true;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            false
        }
    };
    let (ok, out, err) = update("myapp://cb");
    assert!(ok, "{err}");
    assert!(out.contains("callback: myapp://cb"), "{out}");
    assert!(settles("myapp://cb/done", 200).await);
    assert_eq!(
        initiate(&stack, &app, "https://app.example/cb").await.0,
        400
    );
    let (ok, _, err) = update("myapp://cb#x");
    assert!(!ok && err.contains("fragment"), "{err}");
    let (ok, _, err) = update("");
    assert!(ok, "{err}");
    assert!(settles("myapp://cb/done", 400).await);
    assert_eq!(
        initiate(&stack, &app, "https://app.example/cb").await.0,
        200
    );
    let (ok, _, err) = oauth_consumer(&stack, &["update", "--key", "no-such-key", "--name", "x"]);
    assert!(
        !ok && err.contains("no consumer with key no-such-key"),
        "{err}"
    );
}

#[tokio::test]
async fn imported_consumers_keep_their_callbacks_as_the_allow_list() {
    let stack = Stack::start().await;
    let dir = temp_dir("import-callbacks");
    let consumers = dir.join("oauth_consumer.tsv");
    std::fs::write(
        &consumers,
        "entity_id\tname\tkey\tsecret\tcallback_url\trejected_callback_url\n\
         4\tShop app\tmobileconsumerkey000000000000001\tmobileconsumersecret000000000001\tmyapp://cb\tmyapp://cb/rejected\n\
         5\tBroken app\tmobileconsumerkey000000000000002\tmobileconsumersecret000000000002\tshop.example/cb\tNULL\n",
    )
    .unwrap();
    let (ok, out, err) = import_consumers(&stack, &consumers);
    assert!(ok, "{err}");
    assert!(out.contains("imported 2 consumer(s)"), "{out}");
    // The callback the gateway cannot use is kept, and named with what to do.
    assert!(
        out.contains("warning: consumer \"Broken app\"")
            && out.contains("no scheme")
            && out.contains("consumer update --key mobileconsumerkey000000000000002"),
        "{out}"
    );
    let (_, list, _) = oauth_consumer(&stack, &["list"]);
    assert!(list.contains("\tShop app\tmyapp://cb\t"), "{list}");

    let app = Consumer {
        key: "mobileconsumerkey000000000000001".into(),
        secret: "mobileconsumersecret000000000001".into(),
    };
    assert_eq!(initiate(&stack, &app, "myapp://cb.evil").await.0, 400);
    let (status, _, body) = initiate(&stack, &app, "myapp://cb/done").await;
    assert_eq!(status, 200, "{body}");
    let token = form_map(&body)["oauth_token"].clone();
    let page = decide(&stack, &token, "reject").await;
    assert_eq!(
        page.location(),
        format!("myapp://cb/rejected?oauth_token={token}&rejected=1")
    );
    let broken = Consumer {
        key: "mobileconsumerkey000000000000002".into(),
        secret: "mobileconsumersecret000000000002".into(),
    };
    assert_eq!(
        initiate(&stack, &broken, "https://shop.example/cb").await.0,
        400
    );
    assert_eq!(initiate(&stack, &broken, "oob").await.0, 200);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The authorize page in a phone's browser (chromium at 375 x 667, an iPhone's user agent):
/// nothing to scroll sideways, nothing cut off, tap targets and text sizes a phone needs, on
/// every page of the flow; a user signs in and authorizes with taps and typing, and the
/// browser is sent to the app's own scheme with the verifier, which the app exchanges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_authorize_page_works_in_a_phones_browser() {
    if !phone::available() {
        return;
    }
    let stack = Stack::start().await;
    let app = add(
        &stack,
        "Phone app with a rather long name, as store apps have",
        &["--callback", "myapp://cb"],
    );
    let phone = Phone::start().await;
    let check = |page: &'static str, problems: Vec<String>| {
        assert!(problems.is_empty(), "{page} on a phone: {problems:#?}");
    };

    let (_, _, body) = initiate(&stack, &app, "myapp://cb/done").await;
    let request = form_map(&body);
    let token = &request["oauth_token"];
    open(&phone, &stack, "/oauth/authorize", token).await;
    check("the sign-in page", phone.phone_problems().await);
    phone.type_into("#email", EMAIL).await;
    phone.type_into("#pass", "not the password").await;
    phone.click("button[type=submit]").await;
    let error = phone
        .wait_for(
            "document.querySelector('.error') && document.querySelector('.error').textContent",
        )
        .await;
    assert_eq!(error, "Invalid login or password.");
    check(
        "the sign-in page with its error",
        phone.phone_problems().await,
    );
    phone.type_into("#email", EMAIL).await;
    submit_sign_in(&phone, PASSWORD).await;
    check("the confirm page", phone.phone_problems().await);
    phone.navigations().await;
    phone.click("form[action$='/confirm'] button").await;
    let sent_to = phone.sent_to("myapp:").await;
    let callback = sent_to
        .iter()
        .find(|u| u.starts_with("myapp://cb/done?"))
        .unwrap_or_else(|| panic!("the browser was not sent to the app: {sent_to:?}"));
    let back = query_of(callback);
    assert_eq!(&back["oauth_token"], token);
    let access = exchange(&stack, &app, &request, &back["oauth_verifier"]).await;
    assert_eq!(own_record(&stack, &app, &access).await, 200);

    // An out-of-band app's verifier page, and the operator's page. Each flow in a browser
    // of its own: after a redirect to an app's scheme, which no app here takes, chromium
    // holds the next form's navigation back.
    phone.stop().await;
    let phone = Phone::start().await;
    let (_, _, body) = initiate(&stack, &app, "oob").await;
    let token = form_map(&body)["oauth_token"].clone();
    open(&phone, &stack, "/oauth/authorize", &token).await;
    phone.type_into("#email", EMAIL).await;
    submit_sign_in(&phone, PASSWORD).await;
    phone.click("form[action$='/confirm'] button").await;
    let verifier = phone
        .wait_for("document.getElementById('oauth_verifier') && document.getElementById('oauth_verifier').textContent")
        .await;
    assert_eq!(verifier.as_str().map(str::len), Some(32), "{verifier}");
    check("the verifier page", phone.phone_problems().await);

    let (_, _, body) = initiate(&stack, &app, "myapp://cb/admin").await;
    let token = form_map(&body)["oauth_token"].clone();
    open(&phone, &stack, "/admin/oauth_authorize", &token).await;
    check("the operator's sign-in page", phone.phone_problems().await);
    submit_sign_in(&phone, ADMIN_KEY).await;
    check("the operator's confirm page", phone.phone_problems().await);
    phone.navigations().await;
    phone.click("form[action$='/reject'] button").await;
    let sent_to = phone.sent_to("myapp:").await;
    assert!(
        sent_to
            .iter()
            .any(|u| *u == format!("myapp://cb/admin?oauth_token={token}&rejected=1")),
        "{sent_to:?}"
    );
    // An expired link's page.
    open(&phone, &stack, "/oauth/authorize", "gone").await;
    check("the expired link's page", phone.phone_problems().await);
    phone.stop().await;
}
