"""Minimal stand-in for the `wonderwords` package (see ../README.md): RULER only calls
wonderwords.random_word._get_words_from_text_file(name)."""
from . import random_word  # noqa: F401
