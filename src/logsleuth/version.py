"""The version of logsleuth (one place: the package, the CLI and the report read it here)."""
__version__ = "0.1.0"
