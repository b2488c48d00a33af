#!/usr/bin/python3 -s
"""`sudo` of the local desktop: root inside the desktop's sandbox, never on the host.

OSWorld's image gives its user sudo with the password the tasks know (`echo {CLIENT_PASSWORD} | sudo -S
...`). The local desktop runs as an unprivileged host uid under no_new_privs on nosuid mounts, so no
setuid program can raise it; this command instead checks that password and runs the command as uid 0 of
a new user namespace that maps root to the desktop's own uid (`unshare --map-root-user`). Root there
holds every capability over what the desktop's uid owns and nothing more: files of the host (its /root,
its account files) keep their owners, the sandbox's mounts stay locked, its network stays its own.

Reads the password as sudo does: a line of standard input with -S, else the terminal. Options real sudo
takes that change nothing here (-E, -H, -k, -K) are accepted; a user other than root is refused.
"""

import os
import sys

PASSWORD_FILE = os.path.join(os.path.dirname(os.path.realpath(__file__)), "password")
TRIES = 3
USAGE = "usage: sudo [-SEHknis] [-p prompt] [-u root] [--] command [arg ...]"


def _fail(message: str, code: int = 1) -> None:
    print(f"sudo: {message}", file=sys.stderr, flush=True)
    raise SystemExit(code)


def _parse(argv: list[str]) -> tuple[dict[str, str | bool], list[str]]:
    """Options (as sudo spells them) and the command; a usage error for anything else."""
    options: dict[str, str | bool] = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        arg = argv[i]
        i += 1
        if arg == "--":
            break
        if arg.startswith("--"):
            _fail(f"unrecognized option '{arg}'\n{USAGE}")
        letters = arg[1:]
        for at, letter in enumerate(letters):
            if letter in "pu":
                value = letters[at + 1 :] or (argv[i] if i < len(argv) else None)
                if value is None:
                    _fail(f"option requires an argument -- '{letter}'\n{USAGE}")
                if not letters[at + 1 :]:
                    i += 1
                options[letter] = value
                break
            if letter not in "SEHkKnis":
                _fail(f"invalid option -- '{letter}'\n{USAGE}")
            options[letter] = True
    return options, argv[i:]


def _read_line(fd: int) -> str | None:
    """One line from `fd`, byte by byte: what follows it stays for the command."""
    line = b""
    while (byte := os.read(fd, 1)) not in (b"", b"\n"):
        line += byte
    return None if byte == b"" and not line else line.decode(errors="replace")


def _ask(options: dict[str, str | bool], user: str) -> str | None:
    prompt = options.get("p", f"[sudo] password for {user}: ")
    if options.get("S"):
        print(prompt, end="", file=sys.stderr, flush=True)
        return _read_line(0)
    try:
        tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        _fail(
            "a terminal is required to read the password; either use the -S option to read from "
            "standard input or configure an askpass helper"
        )
    with os.fdopen(tty, "r+b", buffering=0) as terminal:
        terminal.write(str(prompt).encode())
        answer = _read_line(terminal.fileno())
        terminal.write(b"\n")
    return answer


def main() -> None:
    options, command = _parse(sys.argv[1:])
    if options.get("u", "root") not in ("root", "0", "#0"):
        _fail(f"only root is available in this desktop, not {options['u']!r}")
    if options.get("K") or options.get("k") and not command:
        return
    if not command and not (options.get("i") or options.get("s")):
        _fail(USAGE)
    user = os.environ.get("USER", "user")
    with open(PASSWORD_FILE, encoding="utf-8") as source:
        password = source.read().strip()
    if os.getuid() != 0:  # root in this box (a nested sudo) is not asked again
        for attempt in range(TRIES):
            if options.get("n"):
                _fail("a password is required")
            answer = _ask(options, user)
            if answer == password:
                break
            if answer is None or attempt == TRIES - 1:
                wrong = attempt + (answer is not None)  # as sudo counts: the end of input is no attempt
                _fail(f"{wrong} incorrect password attempt{'s' * (wrong != 1)}")
            print("Sorry, try again.", file=sys.stderr, flush=True)
    shell = os.environ.get("SHELL", "/bin/sh")
    if options.get("i") or options.get("s"):
        login = ["-l"] if options.get("i") else []
        command = [shell, *login, *(["-c", " ".join(command)] if command else [])]
    root = [] if os.getuid() == 0 else ["unshare", "--map-root-user", "--"]
    argv = [*root, *command]
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        _fail(f"{argv[0]}: {exc.strerror}", 1)


if __name__ == "__main__":
    main()
