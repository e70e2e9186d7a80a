"""The pieces of bench/bench_stats.py: the generated project, timing helpers, the report."""
