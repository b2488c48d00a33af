"""The in-desktop server: the endpoints of OSWorld's in-VM server, for a desktop built by forge-eval.

OSWorld's own client code (`desktop_env`'s PythonController and SetupController, and the getters of its
checkers) talks HTTP to a Flask server inside the VM; that server is not in the PyPI wheel. This program
serves the same endpoints (files, commands, screenshots, accessibility tree, the `/setup/*` steps) so the
official client, setup steps, getters and metrics run unchanged. Like upstream's server it runs inside
the desktop as the desktop user, so it can do nothing the agent's own actions could not; the host
reaches it through a forwarded port. Written with Starlette + uvicorn (the project's web stack), run by
Debian's python3 (the desktop's site folder holds both); blocking work runs in Starlette's thread pool,
so one long command (an action, the accessibility tree) does not stall the other endpoints.

    python3 controller.py --port 5000 [--bind 127.0.0.1]
"""

from __future__ import annotations

import argparse
import io
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import uvicorn
from PIL import ImageGrab
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from Xlib import display  # python3-xlib and python3-pil: Debian's, inside the desktop

A11Y_SCRIPT = Path(__file__).with_name("atspi_tree.py")
#: Seconds `/setup/open_file` waits for the file's window (OSWorld's server: up to 1800 s).
OPEN_FILE_TIMEOUT = 90
#: Seconds a command may run (OSWorld's server: 120).
COMMAND_TIMEOUT = 120
HOME = os.path.expanduser("~")


def _argv(command: list[str] | str, shell: bool) -> list[str]:
    """The argv of a command payload: `~` is the desktop user's home; `python` is python3 (as in the VM)."""
    if shell:
        return ["/bin/bash", "-c", command if isinstance(command, str) else " ".join(command)]
    argv = shlex.split(command) if isinstance(command, str) else [str(c) for c in command]
    argv = [os.path.expanduser(a) if a.startswith("~") else a for a in argv]
    if argv and argv[0] == "python":
        argv[0] = sys.executable
    return argv


def run(
    command: list[str] | str, shell: bool = False, cwd: str | None = None, timeout: float = COMMAND_TIMEOUT
) -> dict[str, Any]:
    """Run a command and answer as OSWorld's server does; a timeout is return code 124."""
    try:
        proc = subprocess.run(
            _argv(command, shell),
            capture_output=True,
            timeout=timeout,
            cwd=cwd or HOME,
            stdin=subprocess.DEVNULL,
        )
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        code, out, err = 124, exc.stdout or b"", (exc.stderr or b"") + b"timed out"
    except OSError as exc:  # the program does not exist or cannot run
        code, out, err = 127, b"", str(exc).encode()
    return {
        "status": "success" if code == 0 else "error",
        "output": out.decode(errors="replace"),
        "error": err.decode(errors="replace"),
        "returncode": code,
    }


def launch(command: list[str] | str, shell: bool = False) -> None:
    """Start a command in the background, in its own session, output discarded."""
    subprocess.Popen(
        _argv(command, shell),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        cwd=HOME,
    )


def window_titles() -> list[str]:
    listing = run(["wmctrl", "-l"], timeout=10)["output"]
    return [line.split(None, 3)[3] for line in listing.splitlines() if len(line.split(None, 3)) == 4]


def screen_size() -> tuple[int, int]:
    screen = display.Display().screen()
    return screen.width_in_pixels, screen.height_in_pixels


def _payload_command(payload: dict[str, Any]) -> tuple[list[str] | str, bool]:
    return payload.get("command", ""), bool(payload.get("shell", False))


# -- routes --------------------------------------------------------------------------------------------
def screenshot(request: Request) -> Response:
    buffer = io.BytesIO()
    ImageGrab.grab(xdisplay=os.environ.get("DISPLAY")).save(buffer, format="PNG")
    return Response(buffer.getvalue(), media_type="image/png")


def accessibility(request: Request) -> Response:
    result = run([sys.executable, str(A11Y_SCRIPT)], timeout=60)
    return JSONResponse({"AT": result["output"] if result["returncode"] == 0 else ""})


def terminal(request: Request) -> Response:
    # OSWorld reads GNOME Terminal's text through AT-SPI; this desktop has no GNOME Terminal.
    return JSONResponse({"output": None})


def platform(request: Request) -> Response:
    return PlainTextResponse("Linux")


async def file(request: Request) -> Response:
    path = Path(str((await request.form()).get("file_path", ""))).expanduser()
    if not path.is_file():
        return PlainTextResponse(f"file not found: {path}", status_code=404)
    return Response(await run_in_threadpool(path.read_bytes), media_type="application/octet-stream")


async def execute(request: Request) -> Response:
    command, shell = _payload_command(await request.json())
    return JSONResponse(await run_in_threadpool(run, command, shell))


async def run_python(request: Request) -> Response:
    code = (await request.json()).get("code", "")
    return JSONResponse(await run_in_threadpool(run, [sys.executable, "-c", code]))


async def run_bash_script(request: Request) -> Response:
    payload = await request.json()
    script, cwd = payload.get("script", ""), payload.get("working_dir") or None
    timeout = float(payload.get("timeout", 30))
    return JSONResponse(await run_in_threadpool(run, script, True, cwd, timeout))


async def setup_launch(request: Request) -> Response:
    command, shell = _payload_command(await request.json())
    launch(command, shell)
    return PlainTextResponse("launched")


def _wait_for_window(name: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(name in title for title in window_titles()):
            return True
        time.sleep(0.5)
    return False


async def open_file(request: Request) -> Response:
    path = os.path.expanduser(str((await request.json()).get("path", "")))
    if not os.path.exists(path):
        return PlainTextResponse(f"file not found: {path}", status_code=404)
    launch(["xdg-open", path])
    if await run_in_threadpool(_wait_for_window, Path(path).name, OPEN_FILE_TIMEOUT):
        return PlainTextResponse("opened")
    return PlainTextResponse(f"no window for {path} within {OPEN_FILE_TIMEOUT} s", status_code=500)


async def upload(request: Request) -> Response:
    form = await request.form()
    path = str(form.get("file_path", ""))
    data = form.get("file_data")
    if not path or data is None or isinstance(data, str):
        return PlainTextResponse("file_path and file_data are required", status_code=400)
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    content = await data.read()
    await run_in_threadpool(target.write_bytes, content)
    return PlainTextResponse("uploaded")


def _window_flags(payload: dict[str, Any]) -> list[str]:
    return (["-x"] if payload.get("by_class") else []) + (["-F"] if payload.get("strict") else [])


async def activate_window(request: Request) -> Response:
    payload = await request.json()
    argv = ["wmctrl", *_window_flags(payload), "-a", payload.get("window_name", "")]
    done = await run_in_threadpool(run, argv, False, None, 10)
    return PlainTextResponse("activated", status_code=200 if done["returncode"] == 0 else 404)


async def close_window(request: Request) -> Response:
    payload = await request.json()
    argv = ["wmctrl", *_window_flags(payload), "-c", payload.get("window_name", "")]
    done = await run_in_threadpool(run, argv, False, None, 10)
    return PlainTextResponse("closed", status_code=200 if done["returncode"] == 0 else 404)


def get_screen_size(request: Request) -> Response:
    width, height = screen_size()
    return JSONResponse({"width": width, "height": height})


def _window_size(name: str) -> dict[str, int] | None:
    found = run(["xdotool", "search", "--class", name], timeout=10)["output"].split()
    if not found:
        return None
    geometry = run(["xdotool", "getwindowgeometry", "--shell", found[0]], timeout=10)["output"]
    values = dict(line.split("=", 1) for line in geometry.split() if "=" in line)
    return {"width": int(values.get("WIDTH", 0)), "height": int(values.get("HEIGHT", 0))}


async def window_size(request: Request) -> Response:
    name = str((await request.form()).get("app_class_name", ""))
    size = await run_in_threadpool(_window_size, name)
    if size is None:
        return PlainTextResponse(f"no window of class {name}", status_code=404)
    return JSONResponse(size)


def desktop_path(request: Request) -> Response:
    return JSONResponse({"desktop_path": f"{HOME}/Desktop"})


async def list_directory(request: Request) -> Response:
    root = Path(str((await request.json()).get("path", ""))).expanduser()
    if not root.is_dir():
        return PlainTextResponse(f"not a directory: {root}", status_code=404)
    return JSONResponse({"directory_tree": await run_in_threadpool(_tree, root)})


def _tree(path: Path) -> dict[str, Any]:
    if not path.is_dir():
        return {"type": "file", "name": path.name}
    return {"type": "directory", "name": path.name, "children": [_tree(p) for p in sorted(path.iterdir())]}


def app() -> Starlette:
    return Starlette(
        routes=[
            Route("/screenshot", screenshot, methods=["GET"]),
            Route("/accessibility", accessibility, methods=["GET"]),
            Route("/terminal", terminal, methods=["GET"]),
            Route("/platform", platform, methods=["GET"]),
            Route("/file", file, methods=["POST"]),
            Route("/execute", execute, methods=["POST"]),
            Route("/setup/execute", execute, methods=["POST"]),
            Route("/setup/execute_with_verification", execute, methods=["POST"]),
            Route("/run_python", run_python, methods=["POST"]),
            Route("/run_bash_script", run_bash_script, methods=["POST"]),
            Route("/setup/launch", setup_launch, methods=["POST"]),
            Route("/setup/open_file", open_file, methods=["POST"]),
            Route("/setup/upload", upload, methods=["POST"]),
            Route("/setup/activate_window", activate_window, methods=["POST"]),
            Route("/setup/close_window", close_window, methods=["POST"]),
            Route("/screen_size", get_screen_size, methods=["POST"]),
            Route("/window_size", window_size, methods=["POST"]),
            Route("/desktop_path", desktop_path, methods=["POST"]),
            Route("/list_directory", list_directory, methods=["POST"]),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="serve OSWorld's in-desktop endpoints")
    parser.add_argument("--bind", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    args = parser.parse_args()
    uvicorn.run(app(), host=args.bind, port=args.port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main()
