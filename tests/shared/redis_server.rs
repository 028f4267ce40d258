//! A real `redis-server` (the Debian package `.ci/run` installs) on a free loopback port,
//! killed when dropped. Without the binary a test fails under CI and skips loudly outside.

use crate::common::process::{self, free_port};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
}

/// The server binary, or None (then the caller skips, or fails under CI).
fn binary() -> Option<&'static str> {
    let found = process::installed("redis-server");
    let install = "apt-get install -y redis-server";
    process::required(found, "redis-server", install, "the multi-instance tests")
        .then_some("redis-server")
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
        process::signal(self.child.as_ref(), libc::SIGSTOP);
    }

    /// Lets a paused server go on (SIGCONT).
    pub fn resume(&self) {
        process::signal(self.child.as_ref(), libc::SIGCONT);
    }

    /// Kills the server at once (SIGKILL: no goodbye to the clients).
    pub fn kill(&mut self) {
        process::kill(self.child.take());
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
