"""Build the Cython extensions (the fused CPU backend) when the package is built.

Everything else is in pyproject.toml; setuptools reads ext_modules from here.
"""
from setuptools import setup

EXTENSIONS: list = []  # the fused CPU backend adds its Cython modules here

setup(ext_modules=EXTENSIONS)
