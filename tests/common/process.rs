//! The gateway's binary as a child process, and ports for the servers tests start.

use std::process::{Child, Command, Stdio};

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

/// Whether `program --version` runs and succeeds: the program is installed.
pub fn installed(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `found`: whether what a test needs (`what`) is installed. Without it the test fails under
/// CI, whose `.ci/run` installs it (`install`), and skips loudly elsewhere, naming the tests
/// (`skipped`) that did not run.
pub fn required(found: bool, what: &str, install: &str, skipped: &str) -> bool {
    if !found {
        if std::env::var_os("CI").is_some() {
            panic!("{what} is missing: .ci/run installs it ({install})");
        }
        eprintln!("\n*** SKIPPED: {what} is missing ({install}); {skipped} did not run ***\n");
    }
    found
}

/// Sends `signal` to a server the test started: SIGSTOP hangs it (its connections open and
/// silent), SIGCONT lets it go on.
pub fn signal(child: Option<&Child>, signal: libc::c_int) {
    let child = child.expect("the server runs");
    // SAFETY: kill only sends a signal to our own child process.
    let done = unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    assert_eq!(done, 0, "signal {signal} not sent");
}

/// Kills `child` at once (SIGKILL: no goodbye to its clients) and reaps it, if it runs.
pub fn kill(child: Option<Child>) {
    if let Some(mut child) = child {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The standard output of a child that ran to success (else a panic naming `what`, with
/// both of its outputs).
pub fn stdout_of(output: &std::process::Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Runs `program args` off the runtime's threads (a gateway of the test serves on them
/// meanwhile): its standard output, once it ran to success.
pub async fn run_blocking(program: &'static str, args: Vec<String>) -> String {
    let output = tokio::task::spawn_blocking(move || {
        Command::new(program)
            .args(&args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
    })
    .await
    .unwrap();
    stdout_of(&output, program)
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
