//! A real `redis-server` (the Debian package `.ci/run` installs) on a free loopback port,
//! killed when dropped. Without the binary a test fails under CI and skips loudly outside.

use crate::common::process::free_port;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
}

/// The server binary, or None (then the caller skips, or fails under CI).
fn binary() -> Option<&'static str> {
    let found = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if found {
        return Some("redis-server");
    }
    if std::env::var_os("CI").is_some() {
        panic!("redis-server is missing: .ci/run installs it (apt-get install redis-server)");
    }
    eprintln!(
        "\n*** SKIPPED: redis-server is not installed (apt-get install -y redis-server); \
         the multi-instance tests did not run ***\n"
    );
    None
}

impl RedisServer {
    /// None when redis-server is not installed and CI is not set.
    pub async fn start() -> Option<RedisServer> {
        binary()?;
        let mut server = RedisServer {
            port: free_port(),
            child: None,
        };
        server.restart().await;
        Some(server)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Stops the server where it is (SIGSTOP): a hung Redis, its connections open and
    /// silent.
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
    }

    /// Lets a paused server go on (SIGCONT).
    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    fn signal(&self, signal: libc::c_int) {
        let child = self.child.as_ref().expect("the server runs");
        // SAFETY: kill only sends a signal to our own child process.
        let done = unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        assert_eq!(done, 0, "signal {signal} not sent");
    }

    /// Kills the server at once (SIGKILL: no goodbye to the clients).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts (again) on the same port, empty, and waits until it answers.
    pub async fn restart(&mut self) {
        self.kill();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let client = redis::Client::open(self.url()).unwrap();
        let give_up = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut conn) = client.get_multiplexed_async_connection().await
                && redis::cmd("PING")
                    .query_async::<String>(&mut conn)
                    .await
                    .is_ok()
            {
                return;
            }
            assert!(Instant::now() < give_up, "redis-server did not come up");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}
