"""Upstream code and data at run time: the pinned trees a benchmark reads, checked against their commits.

Every benchmark tree a run reads (`forge_eval.benchmarks._acquire.locate_data`) is checked file by file
against the manifest of its pinned commit; the runner refuses a tree whose files differ where the run reads
them, or records the difference (`--allow-modified-tree`) so that the run is not marked comparable.
"""

from forge_eval.upstream._manifest import (
    MANIFESTS,
    TreeCheck,
    blob_id,
    check_tree,
    manifest,
    manifest_path,
    trees_read,
)

__all__ = ["MANIFESTS", "TreeCheck", "blob_id", "check_tree", "manifest", "manifest_path", "trees_read"]
