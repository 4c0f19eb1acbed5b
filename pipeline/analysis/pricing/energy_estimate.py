"""Energy to train for every result: measured where MLPerf power logs exist, otherwise estimated, never passed off
as measured.

The estimate is a one-parameter model of the measured energies:

    energy_estimated_kwh = accelerators x time to train (h) x the accelerator's rated power (tdp_w of
                           pipeline/mlperf/hardware/accelerators.csv) x R / 1000

where R, the measured system power per accelerator as a share of the accelerator's rated power (host, network and
power conversion included), is the median of R over the measured results. Host power is not modelled apart: the
tables hold no host's rated power, so R carries it. The measured results are the independent ones (a DC twin of
an AC measurement, `same_runs_as`, is the same runs and is left out).

Its error is measured on submitters the fit did not see (leave-one-submitter-out: every measured system of a
submitter is left out together, so a submitter's several node counts do not vouch for each other): for each
measured result, |estimate / measured - 1| with R fitted on the other submitters' results. The median and the worst
of those errors go beside every estimate (`energy_estimate_error`, `energy_estimate_worst_error`). An estimate is
"estimated, not an MLPerf result" (ESTIMATE_LABEL): MLCommons' messaging rules forbid rated power presented as
measured.

Columns added to the configurations table:
- `energy_basis`: "measured" (energy_kwh holds MLPerf's measurement), "estimated" (energy_estimated_kwh holds the
  estimate) or missing (no accelerator count or no rated power for the family);
- `energy_estimated_kwh`: the estimate (kWh), only where no energy was measured;
- `energy_estimate_error`, `energy_estimate_worst_error`: the median and the worst leave-one-submitter-out relative
  error of the model on the measured results (fractions, 0.1 = 10%), on every estimated row.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.mlperf.hardware.accelerators import specifications

ESTIMATE_LABEL = "estimated, not an MLPerf result"
MEASURED, ESTIMATED = "measured", "estimated"
ESTIMATE_COLUMNS = ["energy_basis", "energy_estimated_kwh", "energy_estimate_error", "energy_estimate_worst_error"]
# The label of power_share_of_tdp a buyer reads correctly: it is not the accelerator's own draw.
SHARE_LABEL = ("measured system power per accelerator as a share of the accelerator's rated power (includes host, "
               "network, power conversion and cooling fans)")
# Stored digits of the fitted ratio: decisions and outputs do not move with the last bits of a median.
DIGITS = 6


@dataclass(frozen=True)
class EnergyModel:
    """The fitted ratio and its out-of-sample error (fractions) on `results` measured results of `submitters`."""
    share_of_rated_power: float
    median_error: float
    worst_error: float
    results: int
    submitters: int


def rated_hours_kwh(frame: pd.DataFrame) -> pd.Series:
    """accelerators x time to train (h) x rated power (kW) per row: the energy at exactly rated power, kWh."""
    tdp = frame["accelerator_family"].map(specifications()["tdp_w"]).astype(float)
    return frame["accelerator_count"].astype(float) * frame["time_to_train_min"].astype(float) / 60 * tdp / 1000


def training_set(frame: pd.DataFrame) -> pd.DataFrame:
    """The independent measured results (no DC twin) with a rated power: `submitter`, `energy_kwh`, `rated_kwh`."""
    rated = rated_hours_kwh(frame)
    keep = frame["energy_kwh"].notna() & frame["same_runs_as"].isna() & rated.notna() & (rated > 0)
    return pd.DataFrame({"submitter": frame.loc[keep, "submitter"], "energy_kwh": frame.loc[keep, "energy_kwh"],
                         "rated_kwh": rated[keep]})


def _ratio(training: pd.DataFrame) -> float:
    return round(float(np.median(training["energy_kwh"] / training["rated_kwh"])), DIGITS)


def held_out_errors(training: pd.DataFrame) -> pd.Series:
    """Per measured result: |estimate / measured - 1| with the ratio fitted without its submitter (NaN where no
    other submitter is left)."""
    errors = pd.Series(np.nan, index=training.index)
    for submitter, rows in training.groupby("submitter", sort=True):
        rest = training[training["submitter"] != submitter]
        if rest.empty:
            continue
        estimate = rows["rated_kwh"] * _ratio(rest)
        errors[rows.index] = (estimate / rows["energy_kwh"] - 1).abs()
    return errors


def fit(frame: pd.DataFrame) -> EnergyModel | None:
    """The model fitted on the measured results of `frame` (the configurations table), or None without any."""
    training = training_set(frame)
    if training.empty:
        return None
    errors = held_out_errors(training).dropna()
    median = round(float(errors.median()), DIGITS) if len(errors) else math.nan
    worst = round(float(errors.max()), DIGITS) if len(errors) else math.nan
    return EnergyModel(_ratio(training), median, worst, len(training), training["submitter"].nunique())


def with_energy_estimate(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (needs accelerator_family, accelerator_count, time_to_train_min, energy_kwh, same_runs_as, submitter)
    with ESTIMATE_COLUMNS (see the module docstring)."""
    model = fit(frame)
    measured = frame["energy_kwh"].notna()
    rated = rated_hours_kwh(frame)
    estimable = ~measured & rated.notna() & (model is not None)
    ratio = model.share_of_rated_power if model is not None else math.nan
    basis = pd.Series(None, index=frame.index, dtype=object)
    basis[measured] = MEASURED
    basis[estimable] = ESTIMATED
    return frame.assign(
        energy_basis=basis,
        energy_estimated_kwh=(rated * ratio).where(estimable),
        energy_estimate_error=pd.Series(model.median_error if model else math.nan, index=frame.index)
        .where(estimable),
        energy_estimate_worst_error=pd.Series(model.worst_error if model else math.nan, index=frame.index)
        .where(estimable))

