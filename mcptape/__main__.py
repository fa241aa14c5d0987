"""`python -m mcptape` runs the command line."""

from mcptape.cli import main

main()
