"""The processes a benchmark script runs (sandboxes, gateways, nginx, redis-server), shared by
bench/bench.py and bench/instructions.py so that both start and stop them the same way:

- every process gets the caller's environment without any STOREGATE_* variable or RUST_LOG
  (the gateway's defaults, as in production), plus what the script sets;
- its output goes to a log file named after it in the script's output folder;
- a gateway runs in an empty working directory of its own: it then reads no mappings/
  folder and uses the mappings built into it, so a build of an earlier commit (a
  before/after) runs with its own;
- every process is stopped by its PID (SIGTERM, then SIGKILL after a grace period), and
  every wait is bounded.
"""

import os
import shutil
import signal
import subprocess
import time
import urllib.request


class Processes:
    def __init__(self, out, root, log_suffix=".out"):
        self.out = out
        self.root = root
        self.log_suffix = log_suffix
        self.running = {}  # name -> Popen

    def __getitem__(self, name):
        return self.running[name]

    def start(self, name, argv, env=None, cwd=None):
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("STOREGATE_")}
        full_env.pop("RUST_LOG", None)
        full_env.update(env or {})
        log = open(self.out / f"{name}{self.log_suffix}", "w")
        self.running[name] = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, env=full_env, cwd=cwd or self.root
        )
        return self.running[name]

    def start_gateway(self, name, binary, env, wrapper=()):
        """`binary` (as the gateway, no subcommand) in an empty working directory; `wrapper`
        goes before it on the command line (valgrind, for instance)."""
        workdir = self.out / f"{name}-workdir"
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
        return self.start(name, [*wrapper, str(binary)], env=env, cwd=workdir)

    def stop(self, name, grace=15):
        process = self.running.pop(name, None)
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def stop_all(self, grace=15):
        for name in list(self.running):
            self.stop(name, grace)


def wait_http(url, timeout, process=None, headers=None):
    """Until `url` answers below 500, for at most `timeout` seconds; fails at once if
    `process` exits meanwhile."""
    until = time.time() + timeout
    while time.time() < until:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited ({process.returncode}) before {url} answered")
        try:
            request = urllib.request.Request(url, headers=headers or {})
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status < 500:
                    return
        except Exception:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout}s")


def write_between_markers(path, start, end, section):
    """Puts `section` between the markers `start` and `end` of the file at `path`, keeping
    everything else; appends it with its markers when they are not there yet."""
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    block = f"{start}\n{section.rstrip()}\n{end}"
    if start in text and end in text:
        before, rest = text.split(start, 1)
        _, after = rest.split(end, 1)
        text = before + block + after
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)
