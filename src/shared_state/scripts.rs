//! Redis for another module's own keys and Lua scripts (the rate limiter's windows,
//! `crate::limits`), through this instance's one connection: the same deadline per call
//! (`STOREGATE_REDIS_TIMEOUT_MS`), the same verdict on whether Redis is up, the same
//! error counts in `/metrics`.
//!
//! Why a handle rather than a second client: a second connection would need its own
//! health loop, and would disagree with this one about whether Redis is down.

use std::sync::Arc;

use super::SharedError;
use super::link::Link;

/// A borrowed view of the shared state's Redis. Cheap to clone.
#[derive(Clone)]
pub struct Scripts {
    link: Arc<Link>,
}

impl std::fmt::Debug for Scripts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scripts").field("link", &self.link).finish()
    }
}

impl Scripts {
    pub(super) fn new(link: Arc<Link>) -> Scripts {
        Scripts { link }
    }

    /// `name` under storegate's prefix, so every key storegate keeps is found together.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", super::link::PREFIX)
    }

    /// True once a call failed or passed its deadline, until an answered call (the
    /// health loop pings every second). Before the first verdict Redis is not down:
    /// the first calls find out.
    pub fn is_down(&self) -> bool {
        self.link.is_down()
    }

    /// Where Redis is, for logs (never the password).
    pub fn place(&self) -> &str {
        &self.link.place
    }

    /// Runs `script` on `keys` with integer `args`; its integer answers. A failure or a
    /// late answer marks Redis down, as every other call does.
    pub async fn run(
        &self,
        what: &'static str,
        script: &redis::Script,
        keys: &[&str],
        args: &[i64],
    ) -> Result<Vec<i64>, SharedError> {
        let mut invocation = script.prepare_invoke();
        for key in keys {
            invocation.key(*key);
        }
        for arg in args {
            invocation.arg(*arg);
        }
        let mut conn = self.link.connection();
        self.link
            .run(what, invocation.invoke_async::<Vec<i64>>(&mut conn))
            .await
    }
}
