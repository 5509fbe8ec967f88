"""Image readers: a folder of files, LAION-style Parquet, WebDataset tar shards."""
