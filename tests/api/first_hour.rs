//! `docs/first-hour.md`, run: every `curl` of its `sh` blocks is sent to a gateway in front
//! of the sandbox (as `cargo run` sets it up, media under `http://127.0.0.1:8080`), and its
//! answer compared with the `json` or `text` block that follows, in order. A block that is
//! whole JSON must equal the answer; otherwise its pieces between `...` must appear in the
//! answer in order. The `STOREGATE_*` settings its commands use must be the gateway's. So
//! the page cannot drift from what the gateway does.

use std::collections::HashMap;

use serde_json::Value;
use storegate::config::keys::KEYS;

use crate::helpers::{ADMIN_KEY, root};
use crate::sandboxed::OnSandbox;

const PUBLIC: &str = "http://127.0.0.1:8080";

struct Block {
    lang: String,
    text: String,
}

fn blocks(doc: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    for line in doc.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (fence, current.take()) {
            (Some(lang), None) => {
                current = Some(Block {
                    lang: lang.trim().to_owned(),
                    text: String::new(),
                })
            }
            (Some(_), Some(block)) => out.push(block),
            (None, Some(mut block)) => {
                block.text.push_str(line);
                block.text.push('\n');
                current = Some(block);
            }
            (None, None) => {}
        }
    }
    out
}

/// The logical lines of a shell block: continuations joined.
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(head) = trimmed.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
        } else {
            pending.push_str(trimmed);
            if !pending.trim().is_empty() {
                out.push(std::mem::take(&mut pending));
            }
            pending.clear();
        }
    }
    out
}

/// Shell words with quotes, `$VAR` expanded outside single quotes, and an unquoted `#`
/// starting a comment.
fn words(command: &str, vars: &HashMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    let expand = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, word: &mut String| {
        let mut name = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                name.push(c);
                chars.next();
            } else {
                break;
            }
        }
        let value = vars
            .get(&name)
            .unwrap_or_else(|| panic!("the page uses ${name}, which the test does not know"));
        word.push_str(value);
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '$' => expand(&mut chars, &mut word),
                        _ => word.push(c),
                    }
                }
            }
            '$' => {
                in_word = true;
                expand(&mut chars, &mut word);
            }
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

struct Answer {
    status: u16,
    shown: String,
    body: String,
}

/// Runs one `curl` as curl would send it (an `Accept: */*` unless one is given).
async fn curl(http: &reqwest::Client, args: &[String]) -> Answer {
    let mut url = None;
    let mut headers = Vec::new();
    let mut data = None;
    let mut method = None;
    let mut include = false;
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "-H" => headers.push(rest.next().expect("-H takes a header").clone()),
            "-d" => data = Some(rest.next().expect("-d takes data").clone()),
            "-X" => method = Some(rest.next().expect("-X takes a method").clone()),
            "-i" => include = true,
            "-g" => {}
            flag if flag.starts_with('-') => panic!("the test does not know curl's {flag}"),
            other => url = Some(other.to_owned()),
        }
    }
    let method = method.unwrap_or_else(|| if data.is_some() { "POST" } else { "GET" }.into());
    let url = url.expect("curl names a URL");
    let mut request = http.request(method.parse().unwrap(), &url);
    let mut has_accept = false;
    for header in &headers {
        let (name, value) = header.split_once(':').expect("Name: value");
        has_accept |= name.trim().eq_ignore_ascii_case("accept");
        request = request.header(name.trim(), value.trim());
    }
    if !has_accept {
        request = request.header("Accept", "*/*");
    }
    if let Some(data) = data {
        request = request.body(data);
    }
    let response = request.send().await.expect("the gateway answers");
    let status = response.status();
    let mut shown = String::new();
    if include {
        shown.push_str(&format!(
            "HTTP/1.1 {} {}\n",
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        ));
        for (name, value) in response.headers() {
            shown.push_str(&format!("{name}: {}\n", value.to_str().unwrap_or("")));
        }
        shown.push('\n');
    }
    let body = response.text().await.unwrap();
    shown.push_str(&body);
    Answer {
        status: status.as_u16(),
        shown,
        body,
    }
}

/// Does the answer show what the page says it shows?
fn check(expected: &str, answer: &Answer, command: &str) {
    let expected = expected.trim();
    if !expected.contains("...")
        && let Ok(whole) = serde_json::from_str::<Value>(expected)
    {
        let actual: Value = serde_json::from_str(&answer.body)
            .unwrap_or_else(|e| panic!("{command}: not JSON ({e}): {}", answer.body));
        assert_eq!(actual, whole, "{command}: the page shows another answer");
        let status = whole
            .pointer("/messages/error/0/code")
            .and_then(Value::as_u64)
            .unwrap_or(200);
        assert_eq!(u64::from(answer.status), status, "{command}");
        return;
    }
    assert!(
        answer.status < 300,
        "{command}: {} {}",
        answer.status,
        answer.body
    );
    let mut from = 0;
    for piece in expected
        .split("...")
        .flat_map(str::lines)
        .map(|p| p.trim().trim_end_matches(',').trim())
        .filter(|p| !p.is_empty())
    {
        match answer.shown[from..].find(piece) {
            Some(at) => from += at + piece.len(),
            None => panic!(
                "{command}: the page shows {piece:?}, the answer does not (after byte {from}):\n{}",
                answer.shown
            ),
        }
    }
}

#[tokio::test]
async fn every_example_of_the_first_hour_page_answers_as_the_page_says() {
    let doc = std::fs::read_to_string(root().join("docs/first-hour.md")).unwrap();
    let gw = OnSandbox::start_public(Some(PUBLIC), |_| {}).await;
    let http = crate::common::http::client_without_redirects();
    let known: Vec<String> = KEYS
        .iter()
        .map(|k| format!("STOREGATE_{}", k.name.to_ascii_uppercase()))
        .collect();
    let mut vars: HashMap<String, String> = HashMap::new();
    let mut last: Option<Value> = None;
    let mut pending: Vec<(String, Answer)> = Vec::new();
    let mut gateway_started = false;
    let (mut ran, mut compared) = (0, 0);
    for block in blocks(&doc) {
        match block.lang.as_str() {
            "sh" => {
                pending.clear();
                gateway_started = false;
                for command in commands(&block.text) {
                    for setting in command
                        .split_whitespace()
                        .take_while(|w| w.contains('='))
                        .filter_map(|w| w.split_once('=').map(|(name, _)| name))
                        .filter(|name| name.starts_with("STOREGATE_"))
                    {
                        assert!(
                            known.iter().any(|k| k == setting),
                            "the page sets {setting}, which is no setting of the gateway"
                        );
                    }
                    if command.contains("cargo run") {
                        gateway_started = true;
                        continue;
                    }
                    if let Some(assignment) = command.strip_prefix("export ") {
                        let name = assignment.split('=').next().unwrap().trim().to_owned();
                        let value = match name.as_str() {
                            "BASE" => gw.running.base_url(),
                            "ADMIN_KEY" => ADMIN_KEY.to_owned(),
                            // "the access_token above": the last answer's.
                            "TOKEN" => last
                                .as_ref()
                                .and_then(|v| v["access_token"].as_str())
                                .expect("a token was issued before `export TOKEN`")
                                .to_owned(),
                            other => {
                                panic!("the page exports {other}, which the test does not know")
                            }
                        };
                        vars.insert(name, value);
                        continue;
                    }
                    let args = words(&command, &vars);
                    assert_eq!(args.first().map(String::as_str), Some("curl"), "{command}");
                    let answer = curl(&http, &args).await;
                    assert!(
                        answer.status < 500,
                        "{command}: {} {}",
                        answer.status,
                        answer.body
                    );
                    last = serde_json::from_str(&answer.body).ok();
                    ran += 1;
                    pending.push((command, answer));
                }
                pending.reverse();
            }
            "json" | "text" => {
                if let Some((command, answer)) = pending.pop() {
                    check(&block.text, &answer, &command);
                    compared += 1;
                } else {
                    assert!(
                        gateway_started,
                        "a {} block follows no command the test can run:\n{}",
                        block.lang, block.text
                    );
                }
            }
            _ => {}
        }
    }
    assert!(
        ran >= 11,
        "only {ran} commands found: did the page's format change?"
    );
    assert!(compared >= 6, "only {compared} answers compared");
}

#[test]
fn shell_words_are_read_as_a_shell_reads_them() {
    let vars = HashMap::from([("BASE".to_owned(), "http://h/api".to_owned())]);
    assert_eq!(
        words("curl -H 'Accept: a/b' \"$BASE/x?y=1\"   # a comment", &vars),
        ["curl", "-H", "Accept: a/b", "http://h/api/x?y=1"]
    );
    assert_eq!(words("curl '$BASE'", &vars), ["curl", "$BASE"]);
    assert_eq!(
        commands("curl -a \\\n   -b x\n\nexport A=1\n"),
        ["curl -a  -b x", "export A=1"]
    );
}
