"""`python -m logsleuth` runs the CLI (guarded: parse workers start by importing the main module)."""
from .cli.launch import main

if __name__ == "__main__":
    main()
