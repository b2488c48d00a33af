"""The `forge-eval` command line."""
