"""The report: a small static site in `reports/` and its companion tables, from what the stages wrote.

inputs (loading the stages' outputs) -> tables and sections (one context per part of a page) and charts (Vega-Lite
specs written as dicts) -> site (the pages' contexts and their rendering through templates/*.html.j2); formatting
holds the one number formatter and table builder; provenance the git tree, input hashes and params; decide_section
the decide stage's part. The stage's `main` is `pipeline.stages.report`.
"""
