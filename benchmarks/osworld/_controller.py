"""The controller: OSWorld's in-VM HTTP server, re-implemented for a desktop on this host.

OSWorld's own client code (`desktop_env`'s PythonController and SetupController, and the getters of its
checkers) talks HTTP to a Flask server inside the VM; that server is not in the PyPI wheel. This module
serves the same endpoints (files, commands, screenshots, accessibility tree, the `/setup/*` steps) against
a `LocalDesktop`, so the official client, setup steps, getters and metrics run unchanged. Written with
Starlette + uvicorn (the project's web stack); every command runs as the desktop user.
"""

from __future__ import annotations

import io
import os
import shlex
import socket
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from forge_eval.benchmarks.osworld._desktop import HOME, SYSTEM_PYTHON, LocalDesktop

A11Y_SCRIPT = Path(__file__).with_name("_atspi_tree.py")
#: Seconds `/setup/open_file` waits for the file's window (OSWorld's server: up to 1800 s).
OPEN_FILE_TIMEOUT = 90


def _result(proc: Any) -> dict[str, Any]:
    return {
        "status": "success" if proc.returncode == 0 else "error",
        "output": proc.stdout.decode(errors="replace"),
        "error": proc.stderr.decode(errors="replace"),
        "returncode": proc.returncode,
    }


def _home_path(text: str) -> str:
    """`~` is the desktop user's home (/home/user), not the home of whoever runs the controller."""
    return HOME + text[1:] if text == "~" or text.startswith("~/") else text


def _command(payload: dict[str, Any]) -> tuple[list[str] | str, bool]:
    command = payload.get("command", "")
    shell = bool(payload.get("shell", False))
    if isinstance(command, str) and not shell:
        command = shlex.split(command)
    if isinstance(command, list):
        command = [_home_path(c) for c in command]
    return command, shell


class Controller:
    """The HTTP face of one desktop: `url` is what OSWorld's clients get as `http://vm_ip:server_port`."""

    def __init__(self, desktop: LocalDesktop, bind: str = "127.0.0.1", port: int = 0) -> None:
        self.desktop = desktop
        self.bind = bind
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = port

    # -- lifecycle -------------------------------------------------------------------------------------
    def start(self) -> Controller:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.bind, self.port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app(), log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self._server = self._thread = None

    @property
    def host(self) -> str:
        return "127.0.0.1"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- observations ----------------------------------------------------------------------------------
    def screenshot(self) -> bytes:
        from PIL import ImageGrab

        image = ImageGrab.grab(xdisplay=self.desktop.display)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return buffer.getvalue()

    def accessibility_tree(self) -> str:
        proc = self.desktop.run([SYSTEM_PYTHON, str(A11Y_SCRIPT)], timeout=60)
        return proc.stdout.decode(errors="replace") if proc.returncode == 0 else ""

    # -- routes ----------------------------------------------------------------------------------------
    def app(self) -> Starlette:
        routes = [
            Route("/screenshot", self._screenshot, methods=["GET"]),
            Route("/accessibility", self._accessibility, methods=["GET"]),
            Route("/terminal", self._terminal, methods=["GET"]),
            Route("/platform", self._platform, methods=["GET"]),
            Route("/file", self._file, methods=["POST"]),
            Route("/execute", self._execute, methods=["POST"]),
            Route("/setup/execute", self._execute, methods=["POST"]),
            Route("/setup/execute_with_verification", self._execute, methods=["POST"]),
            Route("/run_python", self._run_python, methods=["POST"]),
            Route("/run_bash_script", self._run_bash, methods=["POST"]),
            Route("/setup/launch", self._launch, methods=["POST"]),
            Route("/setup/open_file", self._open_file, methods=["POST"]),
            Route("/setup/upload", self._upload, methods=["POST"]),
            Route("/setup/activate_window", self._activate_window, methods=["POST"]),
            Route("/setup/close_window", self._close_window, methods=["POST"]),
            Route("/screen_size", self._screen_size, methods=["POST"]),
            Route("/window_size", self._window_size, methods=["POST"]),
            Route("/desktop_path", self._desktop_path, methods=["POST"]),
            Route("/list_directory", self._list_directory, methods=["POST"]),
        ]
        return Starlette(routes=routes)

    def _screenshot(self, request: Request) -> Response:
        return Response(self.screenshot(), media_type="image/png")

    def _accessibility(self, request: Request) -> Response:
        return JSONResponse({"AT": self.accessibility_tree()})

    def _terminal(self, request: Request) -> Response:
        # OSWorld reads GNOME Terminal's text through AT-SPI; this desktop has no GNOME Terminal.
        return JSONResponse({"output": None})

    def _platform(self, request: Request) -> Response:
        return PlainTextResponse("Linux")

    async def _file(self, request: Request) -> Response:
        form = await request.form()
        path = Path(str(form.get("file_path", "")))
        if not path.is_file():
            return PlainTextResponse(f"file not found: {path}", status_code=404)
        return Response(path.read_bytes(), media_type="application/octet-stream")

    async def _execute(self, request: Request) -> Response:
        command, shell = _command(await request.json())
        proc = self.desktop.run(command, shell=shell, timeout=120)
        return JSONResponse(_result(proc))

    async def _run_python(self, request: Request) -> Response:
        code = (await request.json()).get("code", "")
        proc = self.desktop.run([SYSTEM_PYTHON, "-c", code], timeout=120)
        return JSONResponse(_result(proc))

    async def _run_bash(self, request: Request) -> Response:
        payload = await request.json()
        proc = self.desktop.run(
            payload.get("script", ""),
            shell=True,
            cwd=payload.get("working_dir") or None,
            timeout=float(payload.get("timeout", 30)),
        )
        return JSONResponse(_result(proc))

    async def _launch(self, request: Request) -> Response:
        command, shell = _command(await request.json())
        self.desktop.popen(command, shell=shell)
        return PlainTextResponse("launched")

    async def _open_file(self, request: Request) -> Response:
        path = _home_path(str((await request.json()).get("path", "")))
        if not os.path.exists(path):
            return PlainTextResponse(f"file not found: {path}", status_code=404)
        self.desktop.popen(["xdg-open", path])
        if self.desktop.wait_for_window(Path(path).name, OPEN_FILE_TIMEOUT):
            return PlainTextResponse("opened")
        return PlainTextResponse(f"no window for {path} within {OPEN_FILE_TIMEOUT} s", status_code=500)

    async def _upload(self, request: Request) -> Response:
        form = await request.form()
        path = str(form.get("file_path", ""))
        upload = form.get("file_data")
        if not path or upload is None or isinstance(upload, str):
            return PlainTextResponse("file_path and file_data are required", status_code=400)
        self.desktop.write_file(path, await upload.read())
        return PlainTextResponse("uploaded")

    async def _activate_window(self, request: Request) -> Response:
        payload = await request.json()
        name = payload.get("window_name", "")
        flags = ["-x"] if payload.get("by_class") else []
        flags += ["-F"] if payload.get("strict") else []
        proc = self.desktop.run(["wmctrl", *flags, "-a", name], timeout=10)
        return PlainTextResponse("activated", status_code=200 if proc.returncode == 0 else 404)

    async def _close_window(self, request: Request) -> Response:
        payload = await request.json()
        flags = ["-x"] if payload.get("by_class") else []
        flags += ["-F"] if payload.get("strict") else []
        proc = self.desktop.run(["wmctrl", *flags, "-c", payload.get("window_name", "")], timeout=10)
        return PlainTextResponse("closed", status_code=200 if proc.returncode == 0 else 404)

    def _screen_size(self, request: Request) -> Response:
        return JSONResponse({"width": self.desktop.width, "height": self.desktop.height})

    async def _window_size(self, request: Request) -> Response:
        name = str((await request.form()).get("app_class_name", ""))
        found = self.desktop.run(["xdotool", "search", "--class", name], timeout=10).stdout.split()
        if not found:
            return PlainTextResponse(f"no window of class {name}", status_code=404)
        geometry = self.desktop.run(["xdotool", "getwindowgeometry", "--shell", found[0]], timeout=10)
        values = dict(line.split("=", 1) for line in geometry.stdout.decode().split() if "=" in line)
        return JSONResponse({"width": int(values.get("WIDTH", 0)), "height": int(values.get("HEIGHT", 0))})

    def _desktop_path(self, request: Request) -> Response:
        return JSONResponse({"desktop_path": f"{HOME}/Desktop"})

    async def _list_directory(self, request: Request) -> Response:
        root = Path(str((await request.json()).get("path", "")))
        if not root.is_dir():
            return PlainTextResponse(f"not a directory: {root}", status_code=404)
        return JSONResponse({"directory_tree": _tree(root)})


def _tree(path: Path) -> dict[str, Any]:
    if not path.is_dir():
        return {"type": "file", "name": path.name}
    return {"type": "directory", "name": path.name, "children": [_tree(p) for p in sorted(path.iterdir())]}
