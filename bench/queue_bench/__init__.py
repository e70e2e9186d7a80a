"""The pieces of bench/bench_queue.py: its database, the loaded queue, the server, the load-generating
clients, the in-process claim measurements and the report."""
