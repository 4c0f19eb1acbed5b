"""MLPerf Training efficiency pipeline: the stages fetch, ingest, features, importance, cluster, rank, backtest,
decide, figures and report (dvc.yaml; the layers: docs/architecture.md)."""
