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

/// Reads `reader`'s lines until one holds `marker` (Ok, every line read, trimmed), or the
/// stream ends or a minute passes without it (Err, the lines read so far).
pub fn lines_until(
    reader: &mut impl std::io::BufRead,
    marker: &str,
) -> Result<Vec<String>, Vec<String>> {
    let started = std::time::Instant::now();
    let mut lines = Vec::new();
    while started.elapsed() < std::time::Duration::from_secs(60) {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let done = line.contains(marker);
        lines.push(line.trim_end().to_owned());
        if done {
            return Ok(lines);
        }
    }
    Err(lines)
}

/// The first line a child printed on its (piped) standard output.
pub fn first_line(child: &mut std::process::Child) -> String {
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).unwrap();
    line
}

/// The first `http://` URL in `line`.
pub fn url_in(line: &str) -> Option<String> {
    line.split_whitespace()
        .find(|w| w.starts_with("http://"))
        .map(str::to_owned)
}
