# SPDX-License-Identifier: Apache-2.0
"""The package's version, in a module of its own: importing it loads nothing
else, so any layer may read it without importing the package's root."""
__version__ = "0.1.0"
