//! Build script: records the commit the binary is built from, for `storegate --version` and
//! the `storegate_build_info` metric.
//!
//! Order: `GIT_COMMIT` set by the builder (a container build has no `.git`), else
//! `git rev-parse`, else `unknown`. A build never fails for want of git.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=GIT_COMMIT");
    let from_env = std::env::var("GIT_COMMIT")
        .ok()
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty());
    let commit = from_env
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_owned());
    // Not `STOREGATE_*`: cargo also sets this variable when it runs the binary (cargo run,
    // cargo test), and the binary refuses unknown `STOREGATE_*` variables.
    println!("cargo:rustc-env=BUILD_GIT_COMMIT={commit}");
}

/// The short commit of HEAD; None without git or outside a repository.
fn git_commit() -> Option<String> {
    let run = |args: &[&str]| -> Option<String> {
        let output = Command::new("git").args(args).output().ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    // Rebuild when HEAD moves: HEAD itself, and the branch it points at (`--git-path` finds
    // both in a linked worktree too).
    let mut watched = vec!["HEAD".to_owned()];
    if let Some(branch) = run(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    watched.push("packed-refs".to_owned());
    for name in watched {
        // A missing file would make cargo rerun this script on every build.
        if let Some(path) =
            run(&["rev-parse", "--git-path", &name]).filter(|p| std::path::Path::new(p).exists())
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    run(&["rev-parse", "--short=12", "HEAD"]).filter(|c| !c.is_empty())
}
