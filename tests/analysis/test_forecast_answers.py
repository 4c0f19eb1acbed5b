"""`predict`'s answers: wider outside the published counts and saying so, trust within the latest round's counts
for a method resting on the naive rule, absurd counts refused, a retired benchmark answered as history, rising
published times named."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from pipeline.analysis.forecasting import answers, backtest, trust
from pipeline.analysis.forecasting import model as forecast_model
from pipeline.core.errors import UsageError
from tests.analysis.forecast_inputs import RULE, SERIES, evidence, results


def _fitted() -> answers.FittedBenchmark:
    """SERIES with a result off its power law (so the fit has a spread), fitted with no backtest behind it, as
    `predict` would load it for bert."""
    empty = pd.DataFrame(columns=backtest.POINT_COLUMNS)
    return answers.fit_benchmark("bert", pd.concat([SERIES, results([("v1.0", "H100", 16, 75.0)])]), empty, 0.9)


def test_answers_widen_outside_the_published_counts_and_say_extrapolated() -> None:
    fitted = _fitted()
    inside, beyond, far = (answers.answer(fitted, "H100", "SXM", count, RULE) for count in (32, 64, 2048))
    widths = [math.log(a.high_min / a.predicted_min) for a in (inside, beyond, far)]
    # uncalibrated q x (1 + kappa d) with the default kappa: d = 0, log 2 and log 64 beyond the largest, 32
    assert widths[0] > 0
    assert widths[1] == pytest.approx(widths[0] * (1 + math.log(64 / 32)))
    assert widths[2] == pytest.approx(widths[0] * (1 + math.log(2048 / 32)))
    assert not inside.extrapolated and not beyond.extrapolated and far.extrapolated  # RULE allows twice 32
    assert any(note.startswith("extrapolated: 2048 accelerators lies outside the published 8 to 32")
               for note in far.notes)
    assert any(note.startswith("outside the published counts of H100 SXM") for note in beyond.notes)
    assert far.count == 2048 and isinstance(far.model_dump()["count"], int)


def test_a_method_resting_on_the_naive_rule_is_trusted_only_within_the_latest_rounds_counts() -> None:
    fitted = _fitted()  # SERIES: v1.0 published 8, 16 and 32; its latest round, v1.1, only 8
    assert fitted.forecaster.latest_round_ranges == {"H100": (8.0, 8.0)}
    assert fitted.family_range("H100") == (8.0, 32.0)
    assert fitted.family_range("H100", forecast_model.MONOTONE) == (8.0, 8.0)
    good = evidence(9, 10)
    [reason] = trust.trust_reasons(3, 32, (8, 8), good, good, RULE, latest_round_only=True)
    assert "outside the family's latest round's published 8 to 8" in reason
    assert trust.trust_reasons(3, 32, (8, 32), good, good, RULE) == []


@pytest.mark.parametrize(("count", "message"), [(2_000_000, "refused: more than 1,000,000"),
                                                (2.5, "a positive whole number"), (0, "a positive whole number")])
def test_absurd_and_fractional_counts_are_refused(count: float, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        answers.answer(_fitted(), "H100", "SXM", count, RULE)


def test_a_retired_benchmark_is_answered_as_history_naming_its_last_round() -> None:
    # bert's last round is v5.0: fitted up to v1.1 it still runs next round; fitted up to v5.0 it does not
    assert answers.retirement_note("bert", "v1.1") is None
    assert "retired from MLPerf Training after v5.0" in (answers.retirement_note("bert", "v5.0") or "")
    assert answers.retirement_note("llama2_70b_lora", "v5.1") is None  # still run


def test_published_times_rising_with_the_count_are_named() -> None:
    published = results([("v1.0", "H100", 8, 100.0), ("v1.0", "H100", 16, 120.0), ("v1.0", "H100", 32, 50.0)])
    note = answers.rising_published(published, "H100", "SXM", 12)
    assert note is not None and "v1.0: 100 min at 8, 120 min at 16" in note
    assert answers.rising_published(published, "H100", "SXM", 24) is None
