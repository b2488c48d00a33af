"""Start and stop an embedded model server as a child process.

A child process (rather than a thread) keeps llama.cpp's threads and memory out of the caller
(Inspect's event loop, a trainer) and makes stopping certain: the process is killed, whatever state
the model is in.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from forge_eval._errors import ForgeError
from forge_eval._status import status
from forge_eval.models._socket import HOST, bind_socket
from forge_eval.models._spec import EMBEDDED_MODELS, default_model
from forge_eval.models._threads import choose_threads

INSPECT_SERVICE = "forge"
LOCAL_API_KEY = "forge-eval-local"
_LOG_TAIL_LINES = 20


@dataclass(frozen=True)
class InspectModelRef:
    """How Inspect reaches a server (plain values: this package does not import Inspect, so that the
    server process starts without it).

    `inspect_ai.model.get_model(ref.model, base_url=ref.base_url, **ref.model_args)`, or in `eval()`:
    `model=ref.model, model_base_url=ref.base_url, model_args=ref.model_args` (Inspect's eval passes
    the base URL separately from the model args and records both in the log).
    """

    model: str
    base_url: str
    model_args: dict[str, Any] = field(default_factory=dict)


def inspect_model_string(model_name: str) -> str:
    """The Inspect model string that reaches an embedded model's server (with its base URL)."""
    return f"openai-api/{INSPECT_SERVICE}/{model_name}"


def _log_tail(path: Path) -> str:
    try:
        with path.open(errors="replace") as f:
            return "".join(deque(f, maxlen=_LOG_TAIL_LINES)).rstrip()
    except OSError:
        return "(no log)"


class EmbeddedModelServer:
    """An embedded model served on 127.0.0.1 by a child process, as a context manager.

    Args:
        model: A name in `EMBEDDED_MODELS`; None picks `default_model()`.
        port: Port on 127.0.0.1; None picks a free one.
        threads: CPU threads for llama.cpp (None: the cores idle at start, see `choose_threads`).
        request_log: The child appends one JSON line per chat request here.
        log_file: The child's stdout/stderr (default: a temporary file, deleted by `stop()` unless
            the start failed, whose error message names it).
        model_path: Serve this GGUF file instead of the model's packaged weights.
        startup_timeout: Seconds to wait for `/health`.
        deterministic: Same seed, same text regardless of cache and concurrent requests; turns off
            prompt caching and parallel decoding (slower).
        token_ids: Answer `return_token_ids` requests with engine token ids, as vLLM does (a trainer's
            upstream; needs transformers and gguf, and loading the tokenizer slows the start).
    """

    def __init__(
        self,
        model: str | None = None,
        port: int | None = None,
        threads: int | None = None,
        request_log: Path | None = None,
        log_file: Path | None = None,
        model_path: Path | None = None,
        startup_timeout: float = 180.0,
        deterministic: bool = False,
        token_ids: bool = False,
    ) -> None:
        self.spec = EMBEDDED_MODELS.get(model) if model else default_model()
        self._port = port
        self.threads = threads
        self.request_log = request_log
        self.log_file = log_file
        self.model_path = model_path
        self.startup_timeout = startup_timeout
        self.deterministic = deterministic
        self.token_ids = token_ids
        self._proc: subprocess.Popen[bytes] | None = None
        self._temp_log_dir: Path | None = None
        self._bound_port: int | None = None

    @property
    def model_name(self) -> str:
        return self.spec.name

    @property
    def port(self) -> int:
        if self._bound_port is None:
            raise ForgeError("the embedded model server is not started", hint="call start() or use `with`")
        return self._bound_port

    @property
    def pid(self) -> int | None:
        """The server process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, ending in /v1."""
        return f"http://{HOST}:{self.port}/v1"

    def inspect_model(self) -> InspectModelRef:
        """The Inspect model string and arguments that reach this server."""
        return InspectModelRef(
            model=inspect_model_string(self.model_name),
            base_url=self.base_url,
            model_args={"api_key": LOCAL_API_KEY},
        )

    def start(self) -> EmbeddedModelServer:
        """Start the child and wait until it answers `/health`; raises ForgeError on failure."""
        if self._proc is not None and self._proc.poll() is None:
            return self
        if self.model_path is None:
            self.spec.weights_path()  # missing packages or a bad hash fail here, with their own message
        sock = bind_socket(self._port)  # first: a busy port fails before anything is created
        threads, why = (self.threads, "as asked") if self.threads else choose_threads()
        status(f"starting the embedded model {self.model_name} with {threads} llama.cpp thread(s) ({why})")
        try:
            self._bound_port = sock.getsockname()[1]
            self._spawn(sock, threads)
        finally:
            sock.close()
        atexit.register(self.stop)
        try:
            self._wait_healthy()
        except BaseException:
            self._temp_log_dir = None  # keep the log the error points to
            self.stop()
            raise
        return self

    def _spawn(self, sock: socket.socket, threads: int) -> None:
        if self.log_file is None:
            self._temp_log_dir = Path(tempfile.mkdtemp(prefix="forge-model-"))
            self.log_file = self._temp_log_dir / "server.log"
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable,
            "-m",
            "forge_eval.models",
            "serve",
            "--model",
            self.spec.name,
            "--fd",
            str(sock.fileno()),
            "--parent-pid",
            str(os.getpid()),
            "--verbose",  # the log file is where a failed start is diagnosed
            "--threads",
            str(threads),
        ]
        if self.request_log is not None:
            command += ["--request-log", str(self.request_log)]
        if self.model_path is not None:
            command += ["--model-path", str(self.model_path)]
        if self.deterministic:
            command.append("--deterministic")
        if self.token_ids:
            command.append("--token-ids")
        with self.log_file.open("ab") as log:
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=[sock.fileno()],
            )

    def _wait_healthy(self) -> None:
        assert self._proc is not None and self.log_file is not None
        deadline = time.monotonic() + self.startup_timeout
        url = f"http://{HOST}:{self.port}/health"
        while True:
            code = self._proc.poll()
            if code is not None:
                raise ForgeError(
                    f"the {self.model_name} server exited with status {code} while starting; "
                    f"last lines of {self.log_file}:\n{_log_tail(self.log_file)}",
                    hint="fix the cause above; the full log is in the file named above",
                )
            remaining = deadline - time.monotonic()
            try:
                if httpx.get(url, timeout=max(0.1, min(2.0, remaining)), trust_env=False).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise ForgeError(
                    f"the {self.model_name} server did not answer {url} within {self.startup_timeout:.0f} s; "
                    f"last lines of {self.log_file}:\n{_log_tail(self.log_file)}",
                    hint="the machine may be overloaded: raise startup_timeout, or use fewer threads",
                )
            time.sleep(0.25)

    def stop(self) -> None:
        """Stop the child (SIGTERM, then SIGKILL after 10 s). Safe to call more than once."""
        proc, self._proc = self._proc, None
        atexit.unregister(self.stop)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc is not None and self._temp_log_dir is not None:
            shutil.rmtree(self._temp_log_dir, ignore_errors=True)
            self._temp_log_dir = self.log_file = None  # a restart makes a fresh one

    def __enter__(self) -> EmbeddedModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
