"""Fuzz targets (hypothesis): brief in `make test`, long in `make fuzz`."""
