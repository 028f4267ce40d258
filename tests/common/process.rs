//! The gateway's binary as a child process, and ports for the servers tests start.

use std::process::Command;

/// The `storegate` binary run from the checkout, with none of the variables whose names start
/// with one of `prefixes` (`STOREGATE_`) inherited: only what each test sets.
pub fn storegate(prefixes: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_storegate"));
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    for (key, _) in std::env::vars() {
        if prefixes.iter().any(|prefix| key.starts_with(prefix)) {
            command.env_remove(key);
        }
    }
    command
}

/// A loopback port free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
