"""The ingest pipeline: read -> detect -> parse -> fold -> segment -> normalize -> template -> store.

Each stage is a module with one job; ``logsleuth.ingest`` wires them together.
"""
