"""Stage `buyer`: each benchmark's answer for a buyer, from its newest round and its trusted forecasts: the one
record of today the pages, the brief and `recommend` draw.

    python -m pipeline.stages.buyer

For each analysed benchmark (params `analysis`; the entry page shows today's, `pipeline.analysis.scope.today`, and
`recommend` answers for any), `pipeline.analysis.buyer.answer_for` takes its newest round's published results
(republished ones included) and
the trusted forecasts of the decide stage's saved models (params `decide.trust`), prices them (the public price
table, or params `report.prices`, with params `report.electricity_usd_per_kwh`) and answers each deadline and budget
of params `report.deadlines_min` and `report.budgets_usd`; it writes data/processed/buyer/<benchmark>.json, which
the report shows. None of it reads the clusters, so a change of `cluster.k` does not answer again.
"""
from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.core import paths
from pipeline.core.stage import Plan, per_benchmark_stage
from pipeline.settings import Settings, load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("analysis", "decide.trust", "report")

if TYPE_CHECKING:
    import pandas as pd

    from pipeline.analysis.pricing.energy_estimate import EnergyModel


def answer(benchmark: str, configurations: pd.DataFrame, settings: Settings, energy_model: EnergyModel | None,
           prices: Mapping[str, float] | None, folder: Path) -> str:
    """Write the `BuyerReport` of `benchmark` into `folder`; the line to print."""
    from pipeline.analysis.buyer import BuyerReport, answer_for
    from pipeline.analysis.pricing.electricity import electricity_price

    found = answer_for(benchmark, configurations, settings, energy_model, prices,
                       electricity_price(settings.report.electricity_usd_per_kwh))
    report = (BuyerReport(benchmark=benchmark, status="skipped", reason="no result in scope") if found is None
              else BuyerReport(benchmark=benchmark, status="ok", answer=found))
    report.write(paths.buyer_json(benchmark, folder))
    return f"{benchmark}: " + ("no result in scope" if found is None else
                               f"{found.round}, {found.n_published} results and {found.n_forecasts} forecasts")


def plan(folder: Path) -> Plan[str, str]:
    """Answer for every analysed benchmark, writing into `folder`."""
    settings = load_settings()
    from pipeline.analysis.pricing.energy_estimate import fit as fit_energy
    from pipeline.analysis.pricing.prices import load_price_table
    from pipeline.analysis.scope import analysed_benchmarks, read_configurations

    prices = load_price_table(settings.report.prices)
    configurations = read_configurations()
    return Plan(partial(answer, configurations=configurations, settings=settings,
                        energy_model=fit_energy(configurations), prices=None if prices is None else prices.per_hour,
                        folder=folder),
                analysed_benchmarks(settings.analysis, configurations))


main = per_benchmark_stage("pipeline.stages.buyer", __doc__, plan, outputs=(paths.BUYER,),
                           preload=("pipeline.analysis.buyer",))


if __name__ == "__main__":
    main()
