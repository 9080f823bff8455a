"""Namespace stub (see scripts/ruler_reference/stubs/README.md)."""
