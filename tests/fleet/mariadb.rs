//! A real MariaDB server (the Debian package `mariadb-server`, which `.ci/run` installs) on
//! a free loopback port, with its own data folder under the temp folder, killed and removed
//! when dropped (and killed with the test process if that dies first). Without the binaries
//! a test fails under CI and skips loudly outside.

use crate::common::process::{self, free_port};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct MariaDb {
    pub port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

fn installed() -> bool {
    let found = ["mariadb-install-db", "mariadb"]
        .iter()
        .all(|tool| process::installed(tool))
        && server_binary().is_some();
    let install = "apt-get install -y mariadb-server";
    process::required(found, "MariaDB", install, "the fleet tests")
}

/// `mariadbd` lives in /usr/sbin, which is not on every PATH.
fn server_binary() -> Option<PathBuf> {
    [
        "/usr/sbin/mariadbd",
        "/usr/sbin/mysqld",
        "/usr/bin/mariadbd",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

impl MariaDb {
    /// A fresh server with a database `storegate` and a user `storegate` / `storegate-pw`
    /// allowed on it from 127.0.0.1. None when MariaDB is missing outside CI.
    pub async fn start() -> Option<MariaDb> {
        if !installed() {
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "storegate-mariadb-{}-{}",
            std::process::id(),
            storegate::auth::oauth::store::random_hex32()
        ));
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        let mut install = Command::new("mariadb-install-db");
        // Each server's temporary tables in a folder of its own: the tests start servers side
        // by side, and a bootstrap sharing /tmp with another failed with "Could not remove
        // temporary table '/tmp/#sql-temptable-...'" (MariaDB's tmpdir defaults to $TMPDIR).
        install.env("TMPDIR", dir.join("tmp"));
        install.args([
            "--no-defaults",
            &format!("--datadir={}", dir.join("data").display()),
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ]);
        if is_root() {
            install.arg("--user=root");
        }
        let output = tokio::task::spawn_blocking(move || install.output())
            .await
            .unwrap()
            .unwrap();
        process::stdout_of(&output, "mariadb-install-db");
        let mut server = MariaDb {
            port: free_port(),
            dir,
            child: None,
        };
        server.restart().await;
        server.sql(
            "CREATE DATABASE storegate; \
             CREATE USER 'storegate'@'127.0.0.1' IDENTIFIED BY 'storegate-pw'; \
             GRANT ALL ON storegate.* TO 'storegate'@'127.0.0.1';",
        );
        Some(server)
    }

    pub fn url(&self) -> String {
        format!(
            "mysql://storegate:storegate-pw@127.0.0.1:{}/storegate",
            self.port
        )
    }

    fn socket(&self) -> PathBuf {
        self.dir.join("mysqld.sock")
    }

    /// The `mariadb` client, as root over the socket.
    fn client(&self) -> Command {
        let mut command = Command::new("mariadb");
        command.args([
            "--no-defaults",
            &format!("--socket={}", self.socket().display()),
            "-u",
            "root",
        ]);
        command
    }

    /// Runs SQL as root over the socket; its output.
    pub fn sql(&self, statements: &str) -> String {
        let output = self
            .client()
            .args(["--batch", "--skip-column-names", "-e", statements])
            .output()
            .unwrap();
        process::stdout_of(&output, statements)
    }

    /// Stops the server where it is (SIGSTOP): a hung database, its connections open and
    /// silent.
    pub fn pause(&self) {
        process::signal(self.child.as_ref(), libc::SIGSTOP);
    }

    /// Lets a paused server go on (SIGCONT).
    pub fn resume(&self) {
        process::signal(self.child.as_ref(), libc::SIGCONT);
    }

    /// Locks `tables` (`LOCK TABLES t WRITE, ...`) from another session for `seconds`, as
    /// an operator's maintenance would; returns once the lock is held. The session ends by
    /// itself after that time (or when the returned child is killed).
    pub fn lock_tables(&self, tables: &[&str], seconds: u64) -> TableLock {
        use std::io::BufRead;
        let locks: Vec<String> = tables.iter().map(|t| format!("{t} WRITE")).collect();
        let sql = format!(
            "LOCK TABLES {}; SELECT 'locked'; SELECT SLEEP({seconds}); UNLOCK TABLES;",
            locks.join(", ")
        );
        let mut child = self
            .client()
            .args([
                "--batch",
                "--skip-column-names",
                "--unbuffered",
                "storegate",
                "-e",
                &sql,
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut output = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        output.read_line(&mut first).unwrap();
        assert_eq!(first.trim(), "locked", "the lock was not taken");
        TableLock {
            child,
            _output: output,
        }
    }

    /// Kills the server at once (SIGKILL), as a crash or a lost network would.
    pub fn kill(&mut self) {
        process::kill(self.child.take());
    }

    /// Starts (again) on the same port and data, and waits until it answers.
    pub async fn restart(&mut self) {
        self.kill();
        let mut command = Command::new(server_binary().unwrap());
        command.args([
            "--no-defaults",
            &format!("--datadir={}", self.dir.join("data").display()),
            &format!("--port={}", self.port),
            "--bind-address=127.0.0.1",
            &format!("--socket={}", self.socket().display()),
            &format!("--pid-file={}", self.dir.join("mysqld.pid").display()),
            "--skip-name-resolve",
            "--skip-log-bin",
            "--innodb-buffer-pool-size=16M",
            &format!("--tmpdir={}", self.dir.join("tmp").display()),
        ]);
        if is_root() {
            command.arg("--user=root");
        }
        // SAFETY: prctl only asks the kernel to signal the child when this process dies;
        // it touches no memory of the parent.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(self.dir.join("server.log")).unwrap(),
            ))
            .spawn()
            .unwrap();
        self.child = Some(child);
        let started = Instant::now();
        loop {
            let ok = self
                .client()
                .args(["-e", "SELECT 1"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok && std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "MariaDB did not start: {}",
                std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// A session holding a table lock; dropping it ends the session (and the lock) if it is
/// still there. Its output is kept open: a closed pipe would end the client early.
pub struct TableLock {
    child: Child,
    _output: std::io::BufReader<std::process::ChildStdout>,
}

impl TableLock {
    /// Waits for the session to end by itself (its sleep over, the lock released).
    pub fn wait(mut self) {
        let _ = self.child.wait();
    }
}

impl Drop for TableLock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
