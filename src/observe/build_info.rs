//! What this binary was built from: the package version and the commit (recorded by
//! `build.rs`: `GIT_COMMIT` at build time, else `git rev-parse`, else `unknown`). Shown by
//! `storegate --version` and by the `storegate_build_info` metric.

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
pub const COMMIT: &str = env!("BUILD_GIT_COMMIT");
/// `0.1.0 (commit 0123456789ab)`.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("BUILD_GIT_COMMIT"),
    ")"
);
