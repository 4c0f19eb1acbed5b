"""MLPerf Training efficiency pipeline: the stages validate, fetch, ingest, features, importance, cluster, rank,
backtest, decide, assets and report (dvc.yaml; the layers: docs/architecture.md)."""
