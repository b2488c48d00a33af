"""Replay scripts (oracles) for OSWorld-Verified tasks the local desktop can run without task files.

Each is one action in OSWorld's `pyautogui` action space: Python run on the desktop as the user, as an
agent's answer would be. They change the app's real settings the way the app stores them (VLC's vlcrc,
GIMP's gimprc/sessionrc, LibreOffice's registrymodifications.xcu) after stopping
the app so that it cannot overwrite them; the official getters and metrics then judge the result.
"""

from __future__ import annotations

_VLC = """\
import pathlib, re, subprocess, time
subprocess.run(['pkill', '-9', '-x', 'vlc']); time.sleep(0.3)
rc = pathlib.Path.home() / '.config/vlc/vlcrc'
text = rc.read_text() if rc.exists() else ''
for key, value in {settings!r}.items():
    line = key + '=' + value
    pattern = r'(?m)^#?' + re.escape(key) + r'=.*$'
    text = re.sub(pattern, line, text) if re.search(pattern, text) else text + line + '\\n'
rc.parent.mkdir(parents=True, exist_ok=True)
rc.write_text(text)
"""

_GIMP = """\
import pathlib, subprocess, time
# launched as `gimp`, a link to gimp-2.10: its process name is either
subprocess.run(['pkill', '-9', '-x', 'gimp|gimp-2.10']); time.sleep(0.3)
rc = pathlib.Path.home() / '.config/GIMP/2.10' / {file!r}
rc.parent.mkdir(parents=True, exist_ok=True)
rc.write_text((rc.read_text() if rc.exists() else '') + {line!r} + '\\n')
"""

_AUTOSAVE = """\
import pathlib, subprocess, time
def running():
    return subprocess.run(['pgrep', '-x', 'soffice.bin'], capture_output=True).returncode == 0
xcu = pathlib.Path.home() / '.config/libreoffice/4/user/registrymodifications.xcu'
for _ in range(240):  # on a loaded machine the setup's Impress may still be starting: it writes the file
    if running() and xcu.exists():
        break
    time.sleep(0.25)
time.sleep(2)
subprocess.run(['pkill', '-9', '-x', 'soffice.bin'])
for _ in range(80):  # killed, not closed: it cannot write its settings back over the edit below
    if not running():
        break
    time.sleep(0.25)
item = ('<item oor:path="/org.openoffice.Office.Common/Save/Document">'
        '<prop oor:name="AutoSaveTimeIntervall" oor:op="fuse"><value>3</value></prop></item>'
        '<item oor:path="/org.openoffice.Office.Recovery/AutoSave">'
        '<prop oor:name="Enabled" oor:op="fuse"><value>true</value></prop></item>\\n')
xcu.write_text(xcu.read_text().replace('</oor:items>', item + '</oor:items>'))
"""


# gnome-terminal keeps its default size in its default profile, in dconf (GSettings' relocatable schema)
_TERMINAL_SIZE = """\
import subprocess
def gsettings(*args):
    return subprocess.run(['gsettings', *args], capture_output=True, text=True, check=True).stdout.strip()
profile = gsettings('get', 'org.gnome.Terminal.ProfilesList', 'default').strip("'")
path = f'org.gnome.Terminal.Legacy.Profile:/org/gnome/terminal/legacy/profiles:/:{profile}/'
gsettings('set', path, 'default-size-columns', '132')
gsettings('set', path, 'default-size-rows', '43')
"""

# the setup made the folder with `sudo mkdir` (root of the box); os.rename fails if it is not there
_RENAME = """\
import os
os.rename('/home/user/Desktop/todo_list_Jan_1', '/home/user/Desktop/todo_list_Jan_2')
"""


def _gsettings(schema: str, key: str, value: str) -> str:
    command = ["gsettings", "set", schema, key, value]
    return f"import subprocess\nsubprocess.run({command!r}, check=True)\n"


def _vlc(**settings: str) -> str:
    return _VLC.format(settings=settings)


def _gimp(file: str, line: str) -> str:
    return _GIMP.format(file=file, line=line)


#: task id -> (domain, oracle action)
ORACLES: dict[str, tuple[str, str]] = {
    "8ba5ae7a-5ae5-4eab-9fcc-5dd4fe3abf89": ("vlc", _vlc(**{"input-record-path": "/home/user/Desktop"})),
    "9195653c-f4aa-453d-aa95-787f6ccfaae9": ("vlc", _vlc(**{"qt-max-volume": "200"})),
    "d06f0d4d-2cd5-4ede-8de9-598629438c6e": (
        "vlc",
        _vlc(**{"qt-slider-colours": "20;20;20;30;30;30;10;10;10;40;40;40"}),
    ),
    "a5bbbcd5-b398-4c91-83d4-55e1e31bbb81": ("vlc", _vlc(**{"qt-minimal-view": "1"})),
    "f3977615-2b45-4ac5-8bba-80c17dbe2a37": ("vlc", _vlc(**{"one-instance-when-started-from-file": "0"})),
    "215dfd39-f493-4bc3-a027-8a97d72c61bf": ("vlc", _vlc(**{"qt-bgcone": "0"})),
    # check_play_and_exit: in the tree, not in PyPI's desktop-env 1.0.2 (the task was skipped with it)
    "5ac2891a-eacd-4954-b339-98abba077adb": ("vlc", _vlc(**{"play-and-exit": "0"})),
    "7b7617bd-57cc-468e-9c91-40c4ec2bcb3d": ("gimp", _gimp("gimprc", "(undo-levels 100)")),
    "7767eef2-56a3-4cea-8c9f-48c070c7d65b": ("gimp", _gimp("gimprc", '(theme "Light")')),
    "d52d6308-ec58-42b7-a2c9-de80e4837b2b": ("gimp", _gimp("sessionrc", "(hide-docks yes)")),
    "2cd43775-7085-45d8-89fa-9e35c0a915cf": ("libreoffice_impress", _AUTOSAVE),
    # GNOME's pieces without gnome-shell: GSettings on dconf, gnome-terminal's text through AT-SPI
    "f9be0997-4b7c-45c5-b05c-4612b44a6118": (
        "os",
        _gsettings("org.gnome.desktop.notifications", "show-banners", "false"),
    ),
    "a4d98375-215b-4a4d-aee9-3d4370fccc41": (
        "os",
        _gsettings("org.gnome.desktop.screensaver", "lock-enabled", "true"),
    ),
    "13584542-872b-42d8-b299-866967b5c3ef": ("os", _TERMINAL_SIZE),
    # sudo as root inside the box: the setup's `echo {CLIENT_PASSWORD} | sudo -S mkdir ...`
    "e0df059f-28a6-4169-924f-b9623e7184cc": ("os", _RENAME),
}

#: Infeasible tasks the local desktop runs: the right answer is FAIL.
INFEASIBLE = (
    "fbb548ca-c2a6-4601-9204-e39a2efc507b",  # gimp: a "Blue" colour theme
    "b3d4a89c-53f2-4d6b-8b6a-541fb5d205fa",  # os: switch on Bluetooth
    "cb130f0d-d36f-4302-9838-b3baf46139b6",  # vlc
    "a462a795-fdc7-4b23-b689-e8b6df786b78",  # os: switch to a user that does not exist (setup: sudo su)
)
