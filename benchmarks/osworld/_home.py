"""First-run state of the desktop user's home, as in OSWorld's VM image.

OSWorld's Ubuntu image has each app started once before: VLC's privacy question is answered (and its
`vlcrc` exists, which the VLC checkers read), LibreOffice shows no first-start wizard, tip of the day or
Impress template picker. A fresh user on this host would meet those dialogs instead, so the apps a task
uses are brought to that state before its `config` steps run, through the in-desktop server (as the
desktop user, whatever the provider).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from forge_eval._registry import Registry
from forge_eval.benchmarks.osworld._client import HOME, DesktopClient

_LIBREOFFICE_SETTINGS = {
    ("/org.openoffice.Setup/Office", "ooSetupInstCompleted"): "true",
    ("/org.openoffice.Office.Common/Misc", "FirstRun"): "false",
    ("/org.openoffice.Office.Common/Misc", "ShowTipOfTheDay"): "false",
    ("/org.openoffice.Office.Impress/Misc", "StartWithTemplate"): "false",
}

Provisioner = Callable[[DesktopClient], None]
PROVISIONERS: Registry[Provisioner] = Registry("provisioned app")


def _vlc(desktop: DesktopClient) -> None:
    desktop.execute(["vlc", "-I", "dummy", "--reset-config", "--no-audio", "vlc://quit"])
    rc = f"{HOME}/.config/vlc/vlcrc"
    if (text := desktop.read(rc)) is not None:
        answered = re.sub(r"(?m)^#?qt-privacy-ask=.*$", "qt-privacy-ask=0", text.decode(errors="replace"))
        desktop.upload(rc, answered.encode())


def _libreoffice(desktop: DesktopClient) -> None:
    items = "".join(
        f'<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse">'
        f"<value>{value}</value></prop></item>\n"
        for (path, name), value in _LIBREOFFICE_SETTINGS.items()
    )
    xcu = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<oor:items xmlns:oor="http://openoffice.org/2001/registry" '
        'xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
        f"{items}</oor:items>\n"
    )
    desktop.upload(f"{HOME}/.config/libreoffice/4/user/registrymodifications.xcu", xcu.encode())


PROVISIONERS.register("vlc", _vlc)
PROVISIONERS.register("libreoffice", _libreoffice)


def provision(desktop: DesktopClient, apps: set[str]) -> None:
    """Bring the apps in `apps` (PROVISIONERS names) to their first-run-done state."""
    for name, provisioner in PROVISIONERS.items():
        if name in apps:
            provisioner(desktop)
