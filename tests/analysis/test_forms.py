"""The count curve's forms beyond the published counts (`curve.ScalingShape`, `forms.unit_shapes`)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pipeline.analysis.forecasting import curve, forms, models_artifact
from pipeline.analysis.forecasting import model as forecast_model

COUNTS = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0])


def amdahl_results(serial: float, communication: float = 0.0, domain: float = 8.0) -> pd.DataFrame:
    """One H100 SXM unit in two rounds (the second 30% faster), t = level (serial + 1/n + k log2(n / domain))."""
    shape = curve.ScalingShape(curve.COMMUNICATION, -1.0, serial, communication, domain)
    times = np.exp(shape.log_shape(np.log(COUNTS)))
    return pd.DataFrame([{"round": round_, "accelerator_family": "H100", "form_factor": "SXM",
                          "accelerator_count": count, "time_to_train_min": level * 1000 * time, "submitter": "Acme",
                          "system": f"H100-{count:g}-{round_}", "republished_of": None, "accelerators_per_node": domain}
                         for round_, level in (("v3.0", 1.0), ("v3.1", 0.7)) for count, time in zip(COUNTS, times)])


@pytest.mark.parametrize("form", [curve.AMDAHL, curve.COMMUNICATION])
def test_every_form_never_rises_and_never_beats_linear_scaling(form: str) -> None:
    shape = curve.ScalingShape(form, -0.8, 0.003, 0.02 if form == curve.COMMUNICATION else 0.0, 8.0)
    log_counts = np.log(np.arange(1.0, 20000.0))
    steps = np.diff(shape.log_shape(log_counts))
    assert (steps <= 1e-12).all() and (steps >= -np.diff(log_counts) - 1e-12).all()
    if form == curve.COMMUNICATION:  # flat from ln 2 / k (35 accelerators) on: communication would make it rise
        beyond = log_counts > math.log(math.log(2) / 0.02)
        assert np.ptp(shape.log_shape(log_counts[beyond])) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(("form", "serial", "communication"), [(curve.AMDAHL, 0.01, 0.0),
                                                                (curve.COMMUNICATION, 0.001, 0.01)])
def test_unit_shapes_recover_the_parameters_from_differences_within_a_round(form: str, serial: float,
                                                                             communication: float) -> None:
    train = amdahl_results(serial, communication)
    fitted = forecast_model.fit(train, form=form)
    unit = fitted.units.loc[("H100", "SXM")]
    assert unit["serial"] == pytest.approx(serial) and unit["communication"] == pytest.approx(communication)
    assert unit["domain"] == 8.0
    # the curve continues the shape beyond the published counts: at 1,024 the form's own time (30% faster round)
    expected = math.log(0.7 * 1000) + curve.ScalingShape(form, -1.0, serial, communication, 8.0).log_shape(
        np.log(np.array([1024.0])))[0]
    assert fitted.curves[("H100", "SXM")].log_time(1024.0)[0] == pytest.approx(expected, abs=1e-3)


def test_the_constant_exponent_form_keeps_the_exponent_as_its_tail() -> None:
    fitted = forecast_model.fit(amdahl_results(0.01))
    unit_curve = fitted.curves[("H100", "SXM")]
    assert unit_curve.shape is None and unit_curve.form == curve.POWER
    assert (fitted.units[list(forms.SHAPE_COLUMNS)].to_numpy() == [[0.0, 0.0, 1.0]]).all()


def test_a_break_even_beyond_the_knots_follows_the_form() -> None:
    # t = c + a/n: efficiency from 1 is (s + 1) / (s n + 1); 0.7 at n = (1 + s) / (0.7 s) - 1 / s
    serial = 0.01
    shape = curve.ScalingShape(curve.AMDAHL, -1.0, serial)
    knots = np.log(np.array([1.0, 2.0]))
    unit_curve = curve.CountCurve(knots, shape.log_shape(knots), -0.9, shape)
    assert unit_curve.break_even(0.7, 1.0) == pytest.approx((1 + serial) / (0.7 * serial) - 1 / serial, rel=1e-12)
    # a fixed part so small the floor comes beyond e^BREAK_EVEN_SPAN accelerators: never
    nearly_linear = curve.ScalingShape(curve.AMDAHL, -1.0, 1e-25)
    assert curve.CountCurve(knots, nearly_linear.log_shape(knots), -1.0, nearly_linear).break_even(0.7, 1.0) is None


def test_the_saved_model_keeps_its_form_and_shapes() -> None:
    fitted = forecast_model.fit(amdahl_results(0.01), form=curve.AMDAHL)
    saved = models_artifact.ForecasterRecord.of(fitted).forecaster()
    assert saved.form == curve.AMDAHL
    assert saved.curves[("H100", "SXM")].log_time(4096.0) == pytest.approx(
        fitted.curves[("H100", "SXM")].log_time(4096.0))
