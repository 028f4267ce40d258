//! The committed cassettes hold no secret: no token or secret of the store's OAuth tables,
//! no consumer secret, no `Authorization`, `Cookie` or `Set-Cookie` value, no signature.

use super::*;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "cookie",
    "set-cookie",
    "proxy-authorization",
];

#[test]
fn no_secret_in_the_cassettes() {
    if matches!(mode(), Mode::Record { .. }) {
        // The other tests are writing them now: run the suite again in replay to check.
        return;
    }
    let mut all = Vec::new();
    for dir in ["tests/cassettes/openmage", "tests/cassettes/openmage-store"] {
        files(&root().join(dir), &mut all);
    }
    assert!(all.len() > 50, "the cassettes are committed: {all:?}");
    let mut forbidden = secrets();
    forbidden.extend(
        [
            "admintoken",
            "custtoken",
            "cust2token",
            "adminsecret",
            "custsecret",
            "cust2secret",
            "ssssssss",
            "oauth_signature",
            "oauth_nonce",
            "OAuth oauth_",
            "PHPSESSID",
        ]
        .map(str::to_owned),
    );
    let mut text_seen = String::new();
    for file in &all {
        let text = std::fs::read_to_string(file).unwrap();
        for secret in &forbidden {
            assert!(
                !text.contains(secret.as_str()),
                "{secret:?} is in {}",
                file.display()
            );
        }
        if file.extension().is_none_or(|e| e != "json") {
            text_seen.push_str(&text);
            continue;
        }
        let cassette = storegate::backend::recording::cassette::read(file)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for interaction in &cassette.interactions {
            for headers in [&interaction.request.headers, &interaction.response.headers] {
                for (name, value) in headers {
                    if SECRET_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
                        assert_eq!(value, "[scrubbed]", "{name} in {}", file.display());
                    }
                }
            }
        }
        text_seen.push_str(&text);
    }
    // Not vacuous: the answers are there, and what they were sent with was scrubbed.
    assert!(text_seen.contains("\"TP-1\"") && text_seen.contains("john@example.com"));
    assert!(text_seen.contains("\"authorization\": \"[scrubbed]\""));
}
