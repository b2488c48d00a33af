"""Reports: the self-contained HTML report of a run."""
