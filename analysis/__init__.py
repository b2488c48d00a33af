"""Analysis: logs -> tidy tables; statistics (bootstrap, pass@k, paired tests); behavior metrics."""
