"""Energy metrics per configuration, from the energy to train MLPerf measured (results' `energy_j`,
`pipeline.mlperf.logs.power`), and one configuration for results that are the same runs.

Columns added to the configurations table:
- `same_runs_as`: "vX.Y/submitter/system" of the result of the same round whose runs this one publishes again
  (same benchmark, division, accelerator family and count, time to train equal within
  `configurations.REPUBLISHED_TOLERANCE`): v4.0 Sustainable Metal Cloud submitted the same runs as `smc`
  (performance), `smc-ac-power` (measured at AC) and `smc-dc-power` (measured at DC). Of such a group the result
  with a measured energy is kept (AC before DC, then by name) and the others name it; like the republished results
  they stay listed but are out of the analysis scope (`pipeline.analysis.scope`), whatever `analysis.republished`
  says: they are one configuration, never competing ones. None for the kept result and every other one.
- `energy_kwh`: energy to train (kWh) as MLPerf measured it for this result (the MLPerf result in kJ / 3600), at
  the point `power_measurement` names; where the same runs were measured at AC and at DC (v4.0 SMC) the kept
  result's is the AC figure and `power_measurement` is "AC and DC". Missing where no power was measured:
  nothing here is estimated from TDP.
- `energy_dc_kwh`: the DC-measured energy to train of the same runs where another result holds it (the kept AC
  result of v4.0 SMC), and `energy_dc_source` names that result ("vX.Y/submitter/system").
- `power_measurement`: "AC", "DC" or "AC and DC" (see above); `power_conversion_eff`: the AC/DC conversion
  efficiency the logs applied (the rules allow AC measurements converted to DC: the energy is then the DC-side
  estimate), missing where none.
- `power_per_accelerator_w` (derived, not an MLPerf result): the average power during the timed training runs per
  accelerator, W: `energy_kwh` over the time to train, divided by the accelerator count. It includes each
  accelerator's share of its host (CPUs, memory, fans, PSU losses at the measurement point) and of the switches
  the logs count: the whole measured system's power per accelerator, not the accelerator's own draw.
- `power_share_of_tdp` (derived, not an MLPerf result): `power_per_accelerator_w` / the accelerator's TDP
  (`tdp_w` of pipeline/mlperf/hardware/accelerators.csv); above 1 where the host's share outweighs what the accelerators
  leave below their TDP.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.mlperf.hardware.accelerators import specifications

JOULES_PER_KWH = 3.6e6
# Which measurement a group of results of the same runs keeps first.
MEASUREMENT_ORDER = {"AC": 0, "AC and DC": 0, "DC": 1}
ENERGY_COLUMNS = ["same_runs_as", "energy_kwh", "energy_dc_kwh", "energy_dc_source", "power_measurement",
                  "power_conversion_eff", "power_per_accelerator_w", "power_share_of_tdp"]
# Figures computed from MLPerf results that MLPerf does not publish: the page labels them so.
DERIVED_COLUMNS = ["power_per_accelerator_w", "power_share_of_tdp"]


def same_runs_as(frame: pd.DataFrame, key: list[str], tolerance: float, names: pd.Series) -> pd.Series:
    """For each result that publishes the same runs as another of its round, the name of the one kept (see the
    module docstring); None otherwise.

    `frame` needs `round`, `time_to_train_min` (minutes), `energy_j` (J, NaN where not measured),
    `power_measurement` and the `key` columns; `names` is each row's "round/submitter/system".
    """
    marks = pd.Series([None] * len(frame), index=frame.index, dtype=object)
    usable = frame.dropna(subset=[*key, "time_to_train_min"])
    order = pd.DataFrame({
        "unmeasured": usable["energy_j"].isna(),
        "measurement": usable["power_measurement"].map(MEASUREMENT_ORDER).fillna(2),
        "name": names[usable.index],
    }, index=usable.index).sort_values(["unmeasured", "measurement", "name"], kind="mergesort")
    usable = usable.loc[order.index]
    for _, rows in usable.groupby(["round", *key], dropna=False, sort=False).indices.items():
        minutes = usable["time_to_train_min"].to_numpy(dtype=float)[rows]
        taken = np.zeros(len(rows), dtype=bool)
        for first in range(len(rows)):
            if taken[first]:
                continue
            same = np.abs(minutes - minutes[first]) <= tolerance * np.maximum(minutes, minutes[first])
            same[: first + 1] = False
            for other in np.flatnonzero(same & ~taken):
                marks.at[usable.index[rows[other]]] = names[usable.index[rows[first]]]
                taken[other] = True
    return marks


def energy_metrics(frame: pd.DataFrame, names: pd.Series) -> pd.DataFrame:
    """`frame` with the module's columns, replacing the results' `power_measurement` and `power_conversion_eff`.

    Needs `benchmark`, `same_runs_as`, `energy_j` (J), `power_measurement`, `time_to_train_min` (minutes),
    `accelerator_count` and `accelerator_family`; `names` is each row's "round/submitter/system".
    """
    energy_kwh = frame["energy_j"] / JOULES_PER_KWH
    dc_kwh = pd.Series(np.nan, index=frame.index)
    dc_source = pd.Series([None] * len(frame), index=frame.index, dtype=object)
    measurement = frame["power_measurement"].astype(object).copy()
    # A name is a system's: the benchmark tells its results apart.
    rows_of = {(name, benchmark): row for row, name, benchmark in zip(frame.index, names, frame["benchmark"])}
    twins = frame["same_runs_as"].notna() & (frame["power_measurement"] == "DC") & energy_kwh.notna()
    for row in frame.index[twins]:
        kept = rows_of.get((frame.at[row, "same_runs_as"], frame.at[row, "benchmark"]))
        if kept is not None and frame.at[kept, "power_measurement"] == "AC" and pd.notna(energy_kwh[kept]):
            dc_kwh[kept], dc_source[kept] = energy_kwh[row], names[row]
            measurement[kept] = "AC and DC"
    hours = frame["time_to_train_min"] / 60
    per_accelerator = energy_kwh * 1000 / hours / frame["accelerator_count"]
    tdp = frame["accelerator_family"].map(specifications()["tdp_w"]).astype(float)
    return frame.assign(energy_kwh=energy_kwh, energy_dc_kwh=dc_kwh, energy_dc_source=dc_source,
                        power_measurement=measurement, power_per_accelerator_w=per_accelerator,
                        power_share_of_tdp=per_accelerator / tdp)
