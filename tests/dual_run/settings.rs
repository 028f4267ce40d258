//! A misconfigured shadow stops the binary's start with one line naming the setting.

use std::process::Command;

fn binary() -> Command {
    let mut command = crate::common::process::storegate(&["STOREGATE_"]);
    command
        .env(
            "STOREGATE_DATA_DIR",
            std::env::temp_dir().join(format!("storegate-dual-run-cli-{}", std::process::id())),
        )
        .env("STOREGATE_UPSTREAM_URL", "http://127.0.0.1:9")
        .env("STOREGATE_UPSTREAM_TOKEN", "serving-token");
    command
}

#[test]
fn a_misconfigured_shadow_refuses_to_start_and_names_the_setting() {
    let candidate = [
        ("STOREGATE_SHADOW_UPSTREAM_URL", "http://127.0.0.1:10"),
        ("STOREGATE_SHADOW_UPSTREAM_TOKEN", "candidate-token-secret"),
    ];
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[("STOREGATE_SHADOW_BACKEND", "magento3")],
            "STOREGATE_SHADOW_BACKEND",
        ),
        (
            &[("STOREGATE_SHADOW_BACKEND", "openmage")],
            "STOREGATE_SHADOW_UPSTREAM_CONSUMER_KEY",
        ),
        (
            &[("STOREGATE_SHADOW_SERVE", "widgets=10")],
            "STOREGATE_SHADOW_SERVE",
        ),
        (
            &[("STOREGATE_SHADOW_SERVE", "products=150")],
            "STOREGATE_SHADOW_SERVE",
        ),
        (
            &[("STOREGATE_SHADOW_SAMPLE", "2")],
            "STOREGATE_SHADOW_SAMPLE",
        ),
        (
            &[("STOREGATE_SHADOW_MAX_IN_FLIGHT", "0")],
            "STOREGATE_SHADOW_MAX_IN_FLIGHT",
        ),
    ];
    for (extra, key) in cases {
        let output = binary()
            .envs(candidate)
            .envs(extra.iter().copied())
            .output()
            .unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(key), "{extra:?}: {stderr}");
        assert!(!stderr.contains("candidate-token-secret"), "{stderr}");
    }
    // Missing credentials: a candidate URL without its token.
    let output = binary()
        .env("STOREGATE_SHADOW_UPSTREAM_URL", "http://127.0.0.1:10")
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("STOREGATE_SHADOW_UPSTREAM_TOKEN"),
        "{stderr}"
    );
    // A setting of the shadow without a candidate.
    let output = binary()
        .env("STOREGATE_SHADOW_SERVE", "products=100")
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("STOREGATE_SHADOW_SERVE")
            && stderr.contains("STOREGATE_SHADOW_UPSTREAM_URL"),
        "{stderr}"
    );
    // --help lists the settings.
    let output = binary().arg("--help").output().unwrap();
    let help = String::from_utf8(output.stdout).unwrap();
    for key in [
        "STOREGATE_SHADOW_BACKEND",
        "STOREGATE_SHADOW_UPSTREAM_URL",
        "STOREGATE_SHADOW_SAMPLE",
        "STOREGATE_SHADOW_MAX_IN_FLIGHT",
        "STOREGATE_SHADOW_RECHECK_SECS",
        "STOREGATE_SHADOW_MIN_COMPARED",
        "STOREGATE_SHADOW_SERVE",
        "STOREGATE_SHADOW_OPENMAGE_STORE_VIEWS",
    ] {
        assert!(help.contains(key), "{key} not in --help");
    }
}
