"""BernsteinFusion on dask collections: the blocks of rows, and the sources of the binary and
the class-shared fits over them (dask is imported only when they run)."""
