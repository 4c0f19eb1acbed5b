"""The count curve's shape beyond a unit's published counts (issue 50): each unit's `ScalingShape` in one of the
curve's FORMS, its parameters estimated only from differences within a group (a unit in one round: same
hardware and software, different counts), so that software progress between rounds does not pass for scaling.

- POWER: the unit's within-round exponent (`drift.WithinGroupFit`), a constant slope in log-log.
- AMDAHL (fixed plus divisible): t(n) = c + a / n. With the group's level a free, log t - log(s + 1 / n) is
  constant within a group for the right s = c / a; the benchmark's pooled s minimises the within-group sum of
  squares of every unit, and each unit's minimises its own plus SHAPE_PRIOR_WEIGHT x (decades from the pooled)^2.
- COMMUNICATION: t(n) = c + a / n + k log2(n / D) beyond the unit's NVLink (or ICI) domain of D accelerators, an
  all-reduce tree over the inter-node fabric whose cost per level is the gradient's size over the fabric's
  bandwidth per accelerator. The benchmark's k / a (its gradient size, in units of a) is pooled at the
  benchmark's median fabric bandwidth and each unit's prior is it scaled by the benchmark's bandwidth over its own
  (`fabric_bandwidth`); each unit's s and k / a are then shrunk towards those as in AMDAHL.

Parameters are searched on fixed grids of decades (SERIAL_DECADES, COMMUNICATION_DECADES) and sums of squares
rounded to CURVE_DECIMALS before the smallest is taken, so no choice turns on the last bits of a float.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pipeline.analysis.forecasting.curve import AMDAHL, COMMUNICATION, CURVE_DECIMALS, POWER, ScalingShape

# s = c / a: the fixed part of a step in units of the divisible part, 1e-6 (linear scaling to a million
# accelerators) to 1 (no gain beyond one), in tenths of a decade.
SERIAL_DECADES = np.round(np.arange(-6.0, 0.001, 0.1), 1)
# k / a per doubling of the fabric's tree, 1e-7 (nothing at any published count) to 0.1, in tenths of a decade.
COMMUNICATION_DECADES = np.round(np.arange(-7.0, -0.999, 0.1), 1)
# A unit's parameters are pulled towards the benchmark's with this weight per squared decade (squared log
# minutes): a decade off costs as much as one result 10% off its group's shape, so a unit with a few pairs of
# counts in a round moves its parameters and one without keeps the benchmark's.
SHAPE_PRIOR_WEIGHT = 0.01
# Families whose NVLink domain spans a rack (NVL72) rather than a node, and families whose own links carry the
# all-reduce at every published count (a TPU pod's ICI torus: up to 8,960 v5p): their domain in accelerators.
RACK_DOMAINS = {"GB200": 72.0, "GB300": 72.0}
POD_FAMILIES, POD_DOMAIN = ("TPU",), 2.0 ** 16
# A fabric bandwidth per accelerator below this (Gbit/s) is a description's management port, not the fabric
# (MI300X's 10 GbE over 8 accelerators): taken as unknown.
FABRIC_FLOOR_GBPS = 10.0
# The model inputs' columns the communication-aware form reads, where present.
FABRIC_COLUMNS = ["accelerators_per_node", "interconnect_inter_gbps"]
# A unit's ScalingShape as the model's units keep it, beside its exponent.
SHAPE_COLUMNS = ("serial", "communication", "domain")


def unit_shapes(train: pd.DataFrame, log_n: np.ndarray, log_t: np.ndarray, group: np.ndarray, unit: np.ndarray,
                unit_keys: list[tuple[str, str]], exponent: np.ndarray, form: str) -> list[ScalingShape]:
    """Each unit's ScalingShape in `form` (one per `unit_keys`, in order), from the training rows `train` (model
    inputs; `accelerators_per_node` and `interconnect_inter_gbps` used where present) with their log counts,
    log minutes, group and unit codes, and each unit's within-round `exponent`."""
    if form == POWER:
        return [ScalingShape(POWER, float(value)) for value in exponent]
    if form not in (AMDAHL, COMMUNICATION):
        raise ValueError(f"unknown form {form!r}")
    domain, bandwidth = _domains(train, unit, unit_keys)
    reference = float(np.median(bandwidth))
    # candidates: every serial decade with every communication decade (AMDAHL: none)
    serial = 10.0 ** SERIAL_DECADES
    communication = 10.0 ** COMMUNICATION_DECADES if form == COMMUNICATION else np.zeros(1)
    s, k = (values.ravel() for values in np.meshgrid(serial, communication, indexing="ij"))
    pooled = int(np.argmin(np.round(_within_squares(log_n, log_t, group, unit, len(unit_keys), domain,
                                                    s, k[:, None] * (reference / bandwidth)[None, :]).sum(axis=1),
                                    CURVE_DECIMALS)))
    shapes = []
    for code in range(len(unit_keys)):
        rows = unit == code
        prior_k = k[pooled] * reference / bandwidth[code]
        squares = _within_squares(log_n[rows], log_t[rows], group[rows], np.zeros(int(rows.sum()), dtype=int), 1,
                                  domain[[code]], s, k[:, None])[:, 0]
        penalty = (np.log10(s) - np.log10(s[pooled])) ** 2
        if form == COMMUNICATION:
            penalty = penalty + (np.log10(k) - np.log10(prior_k)) ** 2
        best = int(np.argmin(np.round(squares + SHAPE_PRIOR_WEIGHT * penalty, CURVE_DECIMALS)))
        shapes.append(ScalingShape(form, float(exponent[code]), float(s[best]), float(k[best]),
                                   float(domain[code])))
    return shapes


def stored_shapes(units: pd.DataFrame, form: str) -> dict[tuple[str, str], ScalingShape | None]:
    """Each unit's ScalingShape in `form` from the model's `units` (index UNIT, columns exponent and
    SHAPE_COLUMNS); None for every unit in the POWER form (the curve's exponent is its tail)."""
    return {key: None if form == POWER else ScalingShape(form, exponent, serial, communication, domain)
            for key, exponent, serial, communication, domain in zip(units.index, *(
                units[name].to_numpy(dtype=float) for name in ("exponent", *SHAPE_COLUMNS)))}


def _within_squares(log_n: np.ndarray, log_t: np.ndarray, group: np.ndarray, unit: np.ndarray, n_units: int,
                    domain: np.ndarray, serial: np.ndarray, communication: np.ndarray) -> np.ndarray:
    """Each candidate's (rows of `serial`, with `communication` per candidate and unit) within-group sum of squares
    of log t - shape(log n) per unit (candidates x units): the group's level is its mean."""
    residual = log_t[None, :] - _shapes(log_n, unit, domain, serial, communication)
    _, position = np.unique(group, return_inverse=True)
    # group means and unit sums as products with indicator matrices: thousands of candidates at once
    member = np.eye(position.max() + 1)[position]
    centred = residual - (residual @ member / member.sum(axis=0)) @ member.T
    return (centred ** 2) @ np.eye(n_units)[unit]


def _shapes(log_n: np.ndarray, unit: np.ndarray, domain: np.ndarray, serial: np.ndarray,
            communication: np.ndarray) -> np.ndarray:
    """`ScalingShape.log_shape` of every candidate (rows) at every result (columns) of its unit."""
    counts = np.exp(log_n)[None, :]
    k = communication[:, unit]
    d = domain[unit][None, :]
    with np.errstate(divide="ignore"):
        turn = np.where(k > 0, math.log(2) / np.where(k > 0, k, 1.0), np.inf)
    held = np.minimum(counts, np.maximum(d, turn))
    return np.log(serial[:, None] + 1.0 / held + k * np.log2(np.maximum(held / d, 1.0)))


def _domains(train: pd.DataFrame, unit: np.ndarray, unit_keys: list[tuple[str, str]]
             ) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's NVLink (or ICI) domain (accelerators: its median accelerators per node, RACK_DOMAINS,
    POD_DOMAIN for POD_FAMILIES, 1 unknown) and fabric bandwidth per accelerator (`fabric_bandwidth`)."""
    per_node = (train["accelerators_per_node"].to_numpy(dtype=float) if "accelerators_per_node" in train.columns
                else np.full(len(train), np.nan))
    domain = np.ones(len(unit_keys))
    for code, (family, _) in enumerate(unit_keys):
        known = per_node[(unit == code) & np.isfinite(per_node)]
        domain[code] = (POD_DOMAIN if str(family).startswith(POD_FAMILIES) else RACK_DOMAINS.get(str(family), float(
            np.median(known)) if len(known) else 1.0))
    return domain, fabric_bandwidth(train, unit, len(unit_keys))


def fabric_bandwidth(train: pd.DataFrame, unit: np.ndarray, n_units: int) -> np.ndarray:
    """Each unit's inter-node fabric bandwidth per accelerator (Gbit/s: interconnect_inter_gbps over
    accelerators_per_node, the median of its results that state it, FABRIC_FLOOR_GBPS or more), else the
    benchmark's median, else 1 (every unit alike)."""
    if not set(FABRIC_COLUMNS) <= set(train.columns):
        return np.ones(n_units)
    each = (train["interconnect_inter_gbps"].to_numpy(dtype=float)
            / train["accelerators_per_node"].to_numpy(dtype=float))
    usable = np.isfinite(each) & (each >= FABRIC_FLOOR_GBPS)
    typical = float(np.median(each[usable])) if usable.any() else 1.0
    return np.array([float(np.median(each[usable & (unit == code)])) if (usable & (unit == code)).any()
                     else typical for code in range(n_units)])
