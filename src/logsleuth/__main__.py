"""`python -m logsleuth` runs the CLI."""
from .cli.app import main

main()
