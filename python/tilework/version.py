"""The package version (a leaf: the compile driver hashes it into cache keys)."""
__version__ = "0.1.0"
