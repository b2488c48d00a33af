"""Upstream code and data at run time: the one place a benchmark or harness reaches upstream's code.

- The pinned trees a run reads (`forge_eval.benchmarks._acquire.locate_data`) are checked file by file
  against the manifest of their pinned commit; the runner refuses a tree whose files differ where the run
  reads them, or records the difference (`--allow-modified-tree`) so that the run is not marked comparable.
- Upstream's Python files and packages are loaded from the tree (`load_module`, `import_file`,
  `import_package`, `exec_file`, `exec_package`), never installed or copied, under private names.
- What they import by upstream's own names, or must not get for real, comes from stand-in modules
  (`stand_in`, `stand_ins`, `modules_in_place`, `upstream_imports`) given only while they load or run;
  MCP-Atlas's (`atlas_*`) serve both its harness and its scorer.
- Code with requirements of its own runs in an isolated venv (`UpstreamVenv`), through subprocesses.

`tests/test_repo_hygiene.py` checks that no module elsewhere loads upstream code or writes `sys.modules`.
"""

from forge_eval.upstream._loading import (
    exec_file,
    exec_package,
    import_file,
    import_own_package,
    import_package,
    load_module,
    private_name,
    upstream_imports,
)
from forge_eval.upstream._manifest import (
    MANIFESTS,
    TreeCheck,
    blob_id,
    check_tree,
    manifest,
    manifest_path,
    trees_read,
)
from forge_eval.upstream._mcpatlas import LOOP_PACKAGE as ATLAS_LOOP_PACKAGE
from forge_eval.upstream._mcpatlas import SCORES_FILE as ATLAS_SCORES_FILE
from forge_eval.upstream._mcpatlas import SCRIPT_FILE as ATLAS_SCRIPT_FILE
from forge_eval.upstream._mcpatlas import (
    atlas_import_file,
    atlas_import_package,
    atlas_private_name,
)
from forge_eval.upstream._mcpatlas import litellm_shim as atlas_litellm_shim
from forge_eval.upstream._stand_ins import absent_module, modules_in_place, stand_in, stand_ins
from forge_eval.upstream._venv import UpstreamVenv

__all__ = [
    "ATLAS_LOOP_PACKAGE",
    "ATLAS_SCORES_FILE",
    "ATLAS_SCRIPT_FILE",
    "MANIFESTS",
    "TreeCheck",
    "UpstreamVenv",
    "atlas_import_file",
    "atlas_import_package",
    "atlas_litellm_shim",
    "atlas_private_name",
    "absent_module",
    "blob_id",
    "check_tree",
    "exec_file",
    "exec_package",
    "import_file",
    "import_own_package",
    "import_package",
    "load_module",
    "manifest",
    "manifest_path",
    "modules_in_place",
    "private_name",
    "stand_in",
    "stand_ins",
    "trees_read",
    "upstream_imports",
]
