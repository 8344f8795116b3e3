"""Sphinx configuration. The op table and API pages are generated from the registry; the build
stops if a public name is undocumented (gen_api.check_documented)."""
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
# CI reaches PyPI only, not numpy.org: the inventory of the NumPy names these pages cite is
# written by gen_api.py (docs/generated/numpy-objects.inv), so `numpy.add` links work offline.
intersphinx_mapping = {"numpy": (gen_api.NUMPY_DOCS, "generated/numpy-objects.inv")}
html_theme = "furo"
html_title = "lazyarr"
html_static_path = ["_static"]
html_css_files = ["custom.css"]   # wide code blocks and tables: wrap or scroll
exclude_patterns = ["_build"]
autodoc_typehints = "none"
napoleon_numpy_docstring = True
nitpicky = False

gen_api.write(os.path.join(os.path.dirname(__file__), "generated"))
gen_numpy_names.write(os.path.join(os.path.dirname(__file__), "generated"))
