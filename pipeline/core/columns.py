"""What every column of the pipeline's tables means: the one home of the column descriptions.

`TABLES` maps each table (its path, as `pipeline.core.paths` names it) to its columns in the order the table
holds them, each with one line saying what it holds, its unit and which way is better. `docs/outputs.md` is
generated from it (`python tools/generate_docs.py`), and tests/test_docs.py checks that every table's columns
here are exactly the columns its writer declares (`pipeline.core.schemas` and the modules named below).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    """A table the pipeline writes: its path, what one row is, and a description per column, in table order."""

    path: str
    row: str
    columns: dict[str, str]
    note: str = ""


_KEY = {
    "round": "the MLPerf Training round, vX.Y",
    "submitter": "the submitting organisation, as its folder is named",
    "system": "the system name, as its description file is named",
}

_PRECISION = {
    "precision": "the lowest numeric format the linear layers train in: `fp32`, `tf32`, `fp16`, `bf16`, `fp8` "
                 "(per-tensor scales), `mxfp8`, `mxfp6`, `nvfp4`, `mxfp4`, `int8` or `int4`; empty when unknown "
                 "(`pipeline/mlperf/logs/precision.py`)",
    "precision_source": "where it was read, the first that tells: `mllog` (the log's "
                        "`lowest_numerical_precision_in_linear`), `log` (framework output in the log), `config` (the "
                        "launch configuration the log names), `config_match` (the submitter's launch configurations "
                        "for the system's implementation folder, node and accelerator counts, all agreeing), "
                        "`inferred` (every launch configuration of the submitter for the benchmark, but those "
                        "naming another vendor's accelerator, agreeing); empty when unknown",
    "tensor_parallel": "tensor parallel size (ways each layer's matrices are split); empty where not stated",
    "pipeline_parallel": "pipeline parallel size (stages the layers are split into); empty where not stated",
    "context_parallel": "context parallel size (ways each sequence is split); empty where not stated",
    "expert_parallel": "expert parallel size (ways the experts are split); empty where not stated",
    "micro_batch_size": "samples per accelerator per forward pass; empty where not stated",
    "parallel_source": "where the parallel sizes were read, with the same sources as `precision_source` (the MLLOG "
                       "keys `tensor_parallelism`, ..., `micro_batch_size`; framework output; launch "
                       "configurations), all of them from the first that states any; empty when none does",
}

SYSTEMS = Table(
    "data/interim/systems.parquet", "one system description file",
    {**_KEY,
     "path": "the description file's path inside the round",
     "ingest_note": "repairs made while reading it (trailing commas, keys given twice, a system name another "
                    "submitter also uses); empty when none"},
    note="Then every raw field of the description JSON as text, named as the file names it (`accelerator_model_name`, "
         "`number_of_nodes`, `host_processor_core_count`, ...): their set differs from round to round.",
)

RUNS = Table(
    "data/interim/runs.parquet", "one `result_*.txt` run log, none skipped",
    {**_KEY,
     "benchmark": "the results folder name (not yet the catalogue's benchmark)",
     "run": "the run id, what follows `result_` in the log's name (`3`, or a job id such as "
            "`5119-240510190348838227199_06`); runs are listed in natural order, `2` before `10`",
     "path": "the log's path inside the round",
     "status": "run_stop's status, or what is missing: `no run_start`, `no run_stop`, `no MLPerf log lines`",
     "converged": "the run counts: status `success`, the quality target reached and no broken logging rule",
     "time_to_train_min": "run_stop - run_start, minutes; missing unless converged (lower is better)",
     "log_format": "`mllog` (v0.7 on) or v0.6's `mll`",
     "run_start_ms": "run_start's time stamp, ms",
     "run_stop_ms": "run_stop's time stamp, ms",
     "eval_metric": "the metric of the last evaluation before run_stop",
     "eval_value": "its value",
     "target_value": "the quality target, where the log states one",
     "epochs_to_converge": "the log's `epoch_num` at run_stop (BERT and GPT-3 log a sample counter there)",
     "samples_to_converge": "the log's `samples_count` at run_stop",
     "global_batch_size": "as logged",
     "train_samples": "as logged (RetinaNet logs steps per epoch here)",
     "gradient_accumulation_steps": "as logged",
     "optimizer": "as logged",
     "seed": "as logged",
     "submission_benchmark": "the log's `submission_benchmark`",
     "submission_org": "the log's `submission_org`",
     "submission_division": "the log's `submission_division`",
     "submission_status": "the log's `submission_status`",
     "submission_platform": "the log's `submission_platform`",
     "log_number_of_nodes": "the log's `number_of_nodes`",
     "log_accelerators_per_node": "the log's `accelerators_per_node`",
     "init_time_ms": "last init_stop - first init_start, ms",
     "throughput_samples_per_s": "samples to converge, or epochs x train_samples, over the timed run, samples/s "
                                 "(higher is better; see `pipeline/mlperf/logs/logparse.py`)",
     "bad_lines": "lines skipped: `:::MLLOG` lines the official parser cannot read, and unusable records of the "
                  "keys read",
     "reached_target": "whether any evaluation met the benchmark's quality target, as the official checker "
                       "requires; empty where the target is not one number",
     "compliance": "the official checker's logging rules the log breaks; empty when it meets them"},
)

RESULTS = Table(
    "data/interim/results.parquet", "one results folder (a system's result on a benchmark in a round)",
    {**_KEY,
     "benchmark": "the results folder name",
     "benchmark_id": "the catalogue's benchmark (`pipeline/mlperf/catalogue.py`); empty for a folder it lacks",
     "division": "closed or open",
     "n_runs": "run logs in the folder",
     "n_converged": "runs that count",
     "runs_required": "runs the benchmark's rules require",
     "complete": "the folder holds at least the runs required",
     "scaling_factor": "from `scaling.json`, else 1",
     "time_to_train_min": "the official score: the olympic mean of the converged runs x scaling factor, minutes "
                          "(lower is better)",
     "score_note": "why there is no score; empty when there is one",
     "energy_j": "energy to train, J: the olympic mean of the runs' energies x scaling factor, by the round's "
                 "summarizer rule (docs/energy.md); empty without power logs",
     "energy_rule": "which summarizer release's energy rule was applied",
     "power_measurement": "AC or DC: where the power was measured",
     "power_conversion_eff": "the power logs' conversion efficiency (1: none applied)",
     "power_nodes": "nodes whose power was measured",
     "power_switches": "switches whose power was measured",
     **_PRECISION},
)

QUARANTINE = Table(
    "data/interim/quarantine.csv", "one file or record that could not be used",
    {"round": _KEY["round"], "path": "the file's path inside the round",
     "reason": "what is wrong, then what was done"},
    note="The repository's own code and documentation are not listed: `tally.csv` counts them.",
)

TALLY = Table(
    "data/interim/tally.csv", "one round: the ingest's file accounting",
    {"round": _KEY["round"],
     "log_files": "`result_*.txt` files read",
     "runs": "rows of runs.parquet (equal to log_files)",
     "system_files": "system description files",
     "systems": "descriptions read (rows of systems.parquet)",
     "systems_quarantined": "descriptions quarantined (system_files = systems + systems_quarantined)",
     "results": "results folders",
     "scored": "results with an official score",
     "other_files": "input files that are neither a log nor a description",
     "repository_files": "files outside every `<submitter>/systems/` and `<submitter>/results/` (a clone's code "
                         "and docs): not inputs, not listed one by one",
     "quarantined": "rows of quarantine.csv",
     "power_files": "power log files (`power/result_*/node_*.txt`, `sw_*.txt`) read",
     "config_files": "launch configurations (`<submitter>/benchmarks/<benchmark>/implementations/<impl>/config*.sh`) "
                     "read for the results' precision (`pipeline/mlperf/logs/precision.py`)"},
)

CONFIGURATIONS = Table(
    "data/processed/configurations.parquet", "one scored result of a catalogued benchmark, none dropped",
    {**_KEY,
     "benchmark": "the catalogue's benchmark id",
     "benchmark_folder": "the results folder name",
     "division": "closed or open (v1.0 PCL's \"close\" read as closed)",
     "availability": "MLCommons' category: `available_onprem`, `available_cloud`, `preview` or `research`, from "
                     "every published spelling of the description's `status`; missing for an unknown one",
     "republished_of": "\"vX.Y/submitter/system\" of the earliest result this one repeats; empty for an original "
                       "(docs/data.md)",
     "time_to_train_min": "the official score, minutes (lower is better)",
     "accelerator_name": "the accelerator as the description names it",
     "accelerator_vendor": "its vendor",
     "accelerator_family": "its family, as `pipeline/mlperf/hardware/accelerators.csv` spells it",
     "accelerator_form_factor": "SXM, PCIe, OAM, ...",
     "accelerator_memory_gib": "memory of one accelerator, GiB",
     "accelerator_year": "the year the family launched (`accelerators.csv`)",
     "accelerator_count": "accelerators in the system",
     "n_nodes": "nodes",
     "accelerators_per_node": "accelerators per node",
     "host_cpu_vendor": "the host CPU's vendor",
     "host_cpu_model": "the host CPU model",
     "host_cpu_cores": "physical host CPU cores per node (`pipeline/mlperf/hardware/cpus.csv`)",
     "host_memory_gib": "host memory per node, GiB",
     "interconnect_intra": "the link between the accelerators of one node (NVLink, ICI, ...)",
     "interconnect_intra_gbps": "its bandwidth per accelerator and per direction, Gbit/s "
                                "(`pipeline/mlperf/hardware/links.csv`)",
     "interconnect_inter": "the fabric the accelerators use across nodes",
     "interconnect_inter_gbps": "its bandwidth per node (ports x the rate of one port), Gbit/s",
     "framework": "the training framework",
     "throughput_samples_per_s": "median over the converged runs, samples/s",
     "samples_to_converge": "median over the converged runs of the logs' `samples_count` at run_stop",
     "epochs_to_converge": "median over the converged runs of the logs' `epoch_num` at run_stop",
     "series": "the scaling series: `round/benchmark/division/submitter/family/form factor/framework`",
     "accelerator_hours": "accelerators x time to train / 60: the hardware time a training took (lower is better)",
     "speedup": "t_base / t within the series (higher is better); missing alone in a series",
     "scaling_efficiency": "speed-up / (accelerators / base accelerators) within the series: 1 is linear, above "
                           "1 superlinear",
     "round_efficiency": "the fewest accelerator-hours of the benchmark, round and division / this result's: 1 is "
                         "the most hardware-efficient of its round",
     "throughput_per_accelerator": "throughput_samples_per_s / accelerator_count, samples/s",
     "throughput_scaling": "training work per accelerator-minute / the series base's",
     "convergence_work_ratio": "samples (else epochs) to converge / the series base's (below 1: it needed less "
                               "work)",
     "same_runs_as": "\"vX.Y/submitter/system\" of the result of the same round publishing the same runs (such as "
                     "an AC and a DC measurement of one training); always out of scope, listed",
     "energy_kwh": "measured energy to train, kWh (the AC measurement where both exist); empty without power logs",
     "energy_dc_kwh": "the DC measurement of the same runs, kWh, where one was published",
     "energy_dc_source": "the result the DC measurement comes from",
     "power_measurement": "AC, DC, or AC and DC",
     "power_conversion_eff": "the power logs' conversion efficiency (1: none applied)",
     "power_per_accelerator_w": "derived, not an MLPerf result: energy / time to train / accelerators, W, host and "
                                "switch share included",
     "power_share_of_tdp": "derived, not an MLPerf result: measured system power per accelerator as a share of "
                           "the accelerator's rated power (tdp_w): includes host, network and power conversion, so "
                           "above 1 is usual",
     "energy_basis": "measured (energy_kwh is MLPerf's measurement), estimated (energy_estimated_kwh), or empty "
                     "(no accelerator count or no rated power for the family)",
     "energy_estimated_kwh": "estimated, not an MLPerf result: accelerators x hours x rated power x the median "
                             "measured share of rated power, kWh; only where no energy was measured",
     "energy_estimate_error": "the estimate's median relative error on measured results of submitters its fit did "
                              "not see (0.1 = 10%)",
     "energy_estimate_worst_error": "the estimate's worst relative error on measured results of submitters its fit "
                                    "did not see",
     **_PRECISION},
    note="Definitions of the efficiency metrics: docs/methods.md. A result without a system description keeps "
         "its row with missing hardware values and a note in feature_notes.csv.",
)

FEATURE_NOTES = Table(
    "data/processed/feature_notes.csv", "one description value the features stage set missing or corrected",
    {**_KEY,
     "field": "the feature or description field",
     "value": "what the description stated",
     "reason": "why it was set missing or corrected"},
    note="Also one row for each result without a system description, each result whose description has another "
         "name (`pipeline/mlperf/system_aliases.py`) and each unknown `status` spelling.",
)

BACKTEST = Table(
    "data/processed/backtest.parquet", "one result of a round forecast from the rounds before it, per method",
    {"benchmark": "the catalogue's benchmark id",
     "fold": "the round forecast",
     "fold_time": "its publication date, fractional year",
     "accelerator_family": "the result's accelerator family",
     "form_factor": "its form factor",
     "submitter": _KEY["submitter"],
     "system": _KEY["system"],
     "accelerator_count": "accelerators",
     "time_to_train_min": "the published time, minutes",
     "rerun": "the result repeats an earlier one",
     "method": "`model`, `naive`, `monotone naive`, `blend`, or `answer` (what `predict` would have answered)",
     "chosen": "for `answer` rows: the method chosen on the earlier folds",
     "kind": "what the forecast rests on: `family` (the unit's own curve), `family level, benchmark scaling`, "
             "`sibling`, `sibling, measured ratio` or `specification` (a family new to the benchmark) or `naive`",
     "distance": "log count ratio outside the unit's published counts (0 inside)",
     "scale": "the forecast's scale (log minutes): run-to-run noise, submitter spread and drift uncertainty",
     "predicted_min": "the forecast, minutes",
     "low_min": "the lower end of its interval, minutes",
     "high_min": "the upper end, minutes",
     "ape_pct": "absolute percentage error of the forecast (lower is better)",
     "inside_interval": "the published time lies inside its interval (meant to hold `decide.target_coverage` of them)",
     "log_residual": "log published time - log forecast",
     "shift_log": "added to the forecast (log minutes): a new family's re-centring on earlier ones' errors, else 0",
     "calibration": "the residual pool the interval was calibrated on",
     "trusted": "the forecast meets `decide.trust`",
     "reasons": "each trust condition it fails; empty when trusted"},
)

CLUSTER_TABLE = Table(
    "data/processed/clusters/<b>.parquet", "one in-scope configuration of the benchmark",
    {"cluster": "its cluster, 0 the most hardware-efficient (highest median round efficiency)"},
    note="Every column of configurations.parquet, then `cluster`.",
)

RANKING = Table(
    "reports/rank/<b>.csv", "one in-scope configuration of the benchmark, best first",
    {"rank": "over all rounds: by front, then score (1 is best)",
     "front": "non-dominated front on time to train and accelerator-hours over all rounds (1 is best)",
     "score": "the trade-off score: the weighted geometric mean of the `rank.criteria` (lower is better)",
     "round_rank": "the rank within its round (front, then trade-off score; 1 first)",
     "round_front": "the front within its round",
     "pareto": "on its round's first front",
     "cluster": "its cluster",
     "round": _KEY["round"], "submitter": _KEY["submitter"], "system": _KEY["system"],
     "division": "closed or open", "accelerator_family": "the accelerator family",
     "accelerator_count": "accelerators", "precision": _PRECISION["precision"],
     "time_to_train_min": "minutes (lower is better)",
     "accelerator_hours": "hardware time (lower is better)", "round_efficiency": "1 = best of its round",
     "scaling_efficiency": "within its series, 1 = linear", "speedup": "within its series",
     "series": "its scaling series", "republished_of": "the result it repeats, if any"},
)

TABLES: tuple[Table, ...] = (SYSTEMS, RUNS, RESULTS, QUARANTINE, TALLY, CONFIGURATIONS, FEATURE_NOTES, BACKTEST,
                             CLUSTER_TABLE, RANKING)


# Every file the pipeline writes (<b>: a benchmark id), what it holds; the tables' columns are in TABLES.
FILES: dict[str, str] = {
    "data/mirror.json": "the validate stage's listing of what fetch copies, by content (each archive's name, size "
                        "and SHA-256, each folder's files, each clone's URL): fetch reruns when it changes",
    "data/.mirror-hashes.json": "the archives' SHA-256 cached by size and modification time (git-ignored, not "
                                "tracked by DVC)",
    "data/.upstream.json": "what upstream answered when the validate stage last reached it (`fetch.rounds: all`): "
                           "when, the rounds it has, the ones newer than the catalogue; written on every run (kept "
                           "when upstream does not answer), a dep of the report and brief stages (the newer-round "
                           "notice; `pipeline.mlperf.upstream`)",
    "data/raw/": "the rounds as fetched: `training_results_vX.Y.tar.gz` from the mirror, or a sparse clone packed "
                 "into one",
    "data/interim/systems.parquet": "one row per system description",
    "data/interim/runs.parquet": "one row per `result_*.txt` run log, none skipped",
    "data/interim/results.parquet": "one row per results folder, with the official olympic score",
    "data/interim/quarantine.csv": "every file or record that could not be used, with the reason",
    "data/interim/tally.csv": "the ingest's file accounting per round",
    "data/interim/summary_check.json": "per round that ships the official summarizer's scores (`summary.json` or "
                                       "a summary CSV): how many equal ours, how many differ (the largest "
                                       "difference) and how many have no score here",
    "data/processed/configurations.parquet": "one row per scored result of a catalogued benchmark: normalised "
                                             "hardware features, availability, `republished_of`, efficiency metrics",
    "data/processed/feature_notes.csv": "every description value the features stage set missing or corrected",
    "data/processed/backtest.parquet": "every forward-chaining forecast of every analysed benchmark, and "
                                       "`predict`'s answer with its trust (docs/predictions.md)",
    "data/processed/kscan/<b>.json": "k-means at every k of `cluster.k_range`: the feature choice, each k's labels, "
                                      "diagnostics and bootstrap stability, and the support of each k (every field "
                                      "below); the cluster stage picks `cluster.k` among them",
    "data/processed/clusters/<b>.parquet": "the in-scope configurations of `<b>` with their `cluster`",
    "data/processed/buyer/<b>.json": "the answer for a buyer, one per today's benchmark (those the entry page "
                                      "shows): today's fastest and least-hardware results, its front, and per "
                                      "deadline and budget the option that answers it (every field below)",
    "data/processed/findings/<b>.json": "the published findings tested on `<b>`'s results, Holm-corrected over "
                                         "every benchmark (every field below); the rank stage adds them to its file",
    "reports/importance/<b>.json": "feature importance on held-out accelerator families: per target the model's and "
                                   "the baseline's R² (`oof_r2`, `baseline_r2`), the `gain` with its interval "
                                   "(`gain_low`, `gain_high`), permutation importance (`mean`, `std`), each "
                                   "feature's `stability`, `spearman` and `mutual_information`; the `gate` verdict "
                                   "per target with its `reason`; `selected_features` and their "
                                   "`selection_stability`",
    "reports/clusters/<b>.json": "the clustering: its inputs, profiles, k diagnostics, stability and k verdict "
                                 "(every field below)",
    "reports/rank/<b>.csv": "the ranking of `<b>`, over all rounds and within each round",
    "reports/rank/<b>.json": "the ranking's headline numbers, the clusters' standings, the "
                             "published findings tested and the superlinear cases (every field below)",
    "reports/decide/<b>.json": "decision support: the backtest, next-round forecasts, break-even, trust "
                               "(docs/predictions.md), and the data of the site's charts (per unit `band`, "
                               "`backtest_points`)",
    "reports/decide/<b>.models.json": "the fitted forecast models `predict` and `recommend` answer from "
                                      "(`pipeline/analysis/forecasting/models_artifact.py`)",
    "reports/ranking.csv": "every benchmark's ranking in one file",
    "reports/importance.json": "every benchmark's importance in one file",
    "reports/metrics.json": "every scalar of `rank` and `decide`, by benchmark",
    "reports/metrics/<b>.json": "the DVC metrics: a few headline numbers per benchmark, one row each in "
                                "`dvc metrics show`",
    "reports/metrics/summary.json": "over every benchmark: benchmarks analysed, mean silhouette at the k used, "
                                    "findings supported after the correction over the page",
    "reports/index.html": "the site's entry page: today's answer, the family comparison, history (docs/report.md)",
    "reports/benchmarks/<b>.html": "one page per analysed benchmark, with its interactive charts",
    "reports/methods.html": "methods and evidence: findings, backtest, diagnostics, definitions, parameters",
    "reports/data.html": "coverage, quarantine and provenance",
    "reports/assets/": "the site's shared stylesheet, script and chart library (`vega.js`), once",
    "reports/briefs/<b>.pdf": "the printable brief of one of today's benchmarks: front, cost at a deadline, "
                              "scaling forecast and the procurement table, one page (docs/report.md)",
}
