"""mcptape's benchmarks: `make bench` (or `python -m bench [--quick]`). Not tests: CI does not run them."""
