"""Sphinx configuration. The op table and API pages are generated from the registry."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.abspath(".."))
sys.path.insert(0, os.path.abspath("."))

import gen_api  # noqa: E402  (generates docs/generated/*.rst from lazyarr's op registry)
import gen_numpy_names  # noqa: E402  (the NumPy name table: native / fallback / unsupported)

project = "lazyarr"
author = "the lazyarr developers"
copyright = "2026, the lazyarr developers"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.doctest", "sphinx.ext.intersphinx"]
intersphinx_mapping = {}
html_theme = "furo"
html_title = "lazyarr"
html_static_path = ["_static"]
exclude_patterns = ["_build"]
autodoc_typehints = "none"
napoleon_numpy_docstring = True
nitpicky = False

gen_api.write(os.path.join(os.path.dirname(__file__), "generated"))
gen_numpy_names.write(os.path.join(os.path.dirname(__file__), "generated"))
