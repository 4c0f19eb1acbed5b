"""The report: `reports/index.html` and its companion tables, from what the stages wrote.

inputs (loading the stages' outputs) -> tables and figures (embedding the stages' PNG files) -> sections (one
context per page section) -> templates/report.html.j2; formatting holds the one number formatter and table
builder; provenance the git tree, input hashes and params. The stage's `main` is `pipeline.stages.report`; the
per-benchmark figures are drawn by `pipeline.stages.figures`.
"""
