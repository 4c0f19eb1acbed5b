"""MLPerf Training efficiency pipeline: fetch, ingest, features, importance, cluster, rank, report."""
