"""MLPerf Training efficiency pipeline: the stages validate, fetch, ingest, features, importance, cluster, rank,
backtest, decide, assets and report (dvc.yaml; the layers: docs/architecture.md)."""
from pipeline.core.errors import quiet_interrupts
from pipeline.core.threads import pin_threads_env

# Before any stage or command loads numpy (pipeline/core/threads.py), and before Ctrl-C can interrupt an import.
pin_threads_env()
quiet_interrupts()
