//! The `storegate` binary as a test runs it: a clean environment, a free port, its output
//! read line by line on a thread, stopped however the test ends. For test binaries that
//! drive the binary itself (`tests/warm_start.rs`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// The binary, with no `STOREGATE_*` variable but those the test sets.
pub fn binary() -> Command {
    super::process::storegate(&["STOREGATE_"])
}

/// A child stopped however the test ends, its output's lines on a channel.
pub struct Process {
    pub child: Child,
    pub lines: Receiver<String>,
}

impl Process {
    /// `command` started with stdout and stderr read (stderr's lines, then stdout's, on one
    /// channel each read by a thread of its own, so no pipe fills).
    pub fn start(mut command: Command) -> Process {
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().expect("the binary starts");
        let (tx, lines) = std::sync::mpsc::channel();
        for stream in [
            Box::new(child.stderr.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stdout.take().unwrap()),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        Process { child, lines }
    }

    /// SIGTERM, then waits (at most 30 s) for the exit.
    pub fn terminate(&mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let until = Instant::now() + Duration::from_secs(30);
        while Instant::now() < until {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the process did not stop within 30 s of SIGTERM");
    }

    /// The lines printed so far.
    pub fn drain(&self) -> Vec<String> {
        self.lines.try_iter().collect()
    }

    /// The lines printed so far that hold `text`.
    pub fn lines_with(&self, text: &str) -> Vec<String> {
        self.drain()
            .into_iter()
            .filter(|l| l.contains(text))
            .collect()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
