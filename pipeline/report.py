"""Stage `report`: `reports/index.html`, self-contained, plus the combined ranking, importance and metrics.

    python -m pipeline.report

Also writes `reports/ranking.csv` (every benchmark's ranking, with a `benchmark` column), `reports/metrics.json`
and `reports/importance.json` (keyed by benchmark; `dvc metrics show` prints the former).
"""
from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import pandas as pd

from . import plots
from .cluster import clusters_path
from .errors import cli
from .importance import reports_dir
from .io import load_params, section, write_csv, write_json, write_text

REPORTS = Path("reports")
RESULTS = Path("data/interim/results.parquet")
TEMPLATE = "report.html.j2"


def _load_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def scaling_figure(clustered: pd.DataFrame, benchmark: str) -> bytes:
    """Time to train against accelerators by cluster, with the ideal (linear) scaling line from the fastest."""
    figure, axis = plots.plt.subplots(figsize=(7.5, 4.8))
    plots.sns.scatterplot(data=clustered, x="accelerator_count", y="time_to_train_min", hue="cluster",
                          style="cluster", palette=plots.PALETTE, ax=axis, s=45)
    counts = np.geomspace(clustered["accelerator_count"].min(), clustered["accelerator_count"].max(), 50)
    best_hours = (clustered["time_to_train_min"] * clustered["accelerator_count"]).min()
    axis.plot(counts, best_hours / counts, color="black", linestyle="--", linewidth=1,
              label="ideal linear scaling (best accelerator-minutes)")
    axis.set(xscale="log", yscale="log", xlabel="Accelerators (count, log scale)",
             ylabel="Time to train (minutes, log scale)", title=f"{benchmark}: time to train by cluster")
    axis.legend(fontsize="small", title="cluster")
    return plots.png_bytes(figure)


def _embed(png: bytes, alt: str) -> dict[str, str]:
    return {"data": base64.b64encode(png).decode("ascii"), "alt": alt}


def benchmark_section(benchmark: str) -> tuple[dict[str, Any], pd.DataFrame]:
    out = reports_dir(benchmark)
    rank = _load_json(out / "rank.json")
    ranking = pd.read_csv(out / "ranking.csv")
    if rank["status"] != "ok":
        return {"benchmark": benchmark, "status": rank["status"], "reason": rank.get("reason")}, ranking
    clustered = pd.read_parquet(clusters_path(benchmark))
    figures = [
        _embed(scaling_figure(clustered, benchmark),
               f"{benchmark}: time to train versus accelerators, by cluster, log-log"),
        _embed((out / "importance.png").read_bytes(), f"{benchmark}: permutation importance of hardware features"),
        _embed((out / "k_selection.png").read_bytes(), f"{benchmark}: k-means diagnostics for k = 2 to 10"),
    ]
    head = ranking.head(25)
    return {"benchmark": benchmark, "status": "ok", "metrics": rank, "figures": figures,
            "columns": list(head.columns), "rows": head.round(3).astype(object).where(head.notna(), "").values.tolist(),
            }, ranking


def render(sections: list[dict[str, Any]], coverage: dict[str, Any]) -> str:
    environment = jinja2.Environment(loader=jinja2.PackageLoader("pipeline", "templates"),
                                     autoescape=jinja2.select_autoescape(["html", "j2"]),
                                     undefined=jinja2.StrictUndefined)
    return environment.get_template(TEMPLATE).render(sections=sections, coverage=coverage)


def coverage_of(results: pd.DataFrame) -> dict[str, Any]:
    rounds = sorted(results["round"].unique())
    return {"rounds": f"{rounds[0]} to {rounds[-1]}" if rounds else "none",
            "results": int(results["time_to_train_min"].notna().sum()),
            "submitters": int(results["submitter"].nunique())}


@cli
def main() -> None:
    params = load_params()
    benchmarks = section(params, "analysis")["benchmarks"]
    sections, rankings, metrics, importance = [], [], {}, {}
    for benchmark in benchmarks:
        part, ranking = benchmark_section(benchmark)
        sections.append(part)
        rankings.append(ranking.assign(benchmark=benchmark))
        metrics[benchmark] = {key: value for key, value in _load_json(reports_dir(benchmark) / "rank.json").items()
                              if not isinstance(value, (list, dict))}
        importance[benchmark] = _load_json(reports_dir(benchmark) / "importance.json")
    write_csv(pd.concat(rankings, ignore_index=True), REPORTS / "ranking.csv")
    write_json(metrics, REPORTS / "metrics.json")
    write_json(importance, REPORTS / "importance.json")
    html = render(sections, coverage_of(pd.read_parquet(RESULTS)))
    write_text(html, REPORTS / "index.html")
    print(f"wrote {REPORTS / 'index.html'} ({len(html) // 1024} KiB)")


if __name__ == "__main__":
    main()
