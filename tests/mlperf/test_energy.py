"""Energy to train (pipeline.mlperf.logs.power) against the official summarizer and MLCommons' published values.

Fast lane: our energies of the mirror's power results against the installed summarizer's outputs recorded in
tests/data/energy_summarizer.json (`python bench/energy.py --write-fixture`; 1e-9 relative), v4.0's published
values to their rounding (the installed summarizer raises ZeroDivisionError on most v4.0 results: their reference
is the published table), the two releases' rules on a synthetic log, and the quarantine of defective logs. Slow
lane: the installed summarizer run live on v4.1 and v5.0.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import msgspec
import pandas as pd
import pytest

from bench._common import archive_path
from bench.energy import (
    FIXTURE,
    KEY,
    POWER_ROUNDS,
    PUBLISHED_KJ,
    PUBLISHED_TOLERANCE_J,
    RELATIVE_TOLERANCE,
    comparison,
    power_results,
    read_fixture,
    run_summarizer,
)
from bench.parity import sha256_of
from pipeline.analysis.configurations import REPUBLISHED_KEY, REPUBLISHED_TOLERANCE, result_names
from pipeline.analysis.pricing.energy import energy_metrics, same_runs_as
from pipeline.mlperf.logs import power
from pipeline.mlperf.rounds import ingest
from tests.conftest import mllog, run_log, small_round, system_json

NODE = {"submitter": "Acme", "system": "box", "benchmark": "resnet", "run": "0", "device": "node"}


@pytest.fixture(scope="module")
def ours() -> pd.DataFrame:
    if not all(archive_path(round_).is_file() for round_ in POWER_ROUNDS):
        pytest.skip("the MLPerf mirror's power rounds are absent")
    return power_results()


@pytest.fixture(scope="module")
def recorded() -> dict:
    fixture = read_fixture()
    for round_, sha256 in fixture["archives"].items():
        if sha256_of(archive_path(round_)) != sha256:
            pytest.skip(f"{archive_path(round_).name} is not the archive {FIXTURE.name} was recorded from: "
                        "python bench/energy.py --write-fixture")
    return fixture


def test_every_power_result_of_the_mirror_has_its_energy(ours: pd.DataFrame) -> None:
    counts = ours.groupby("round").size().to_dict()
    assert counts == {"v4.0": 24, "v4.1": 1, "v5.0": 4}
    # v4.0 dlrm_dcnv2 (AC and DC) keeps runs whose *_raw_* power folders the mirror leaves out.
    missing = ours[ours["energy_j"].isna()]
    assert set(missing["benchmark"]) == {"dlrm_dcnv2"} and len(missing) == 2
    assert set(ours.loc[ours["round"] == "v4.0", "power_measurement"]) == {"AC", "DC"}
    assert set(ours.loc[ours["round"] != "v4.0", "power_measurement"]) == {"AC"}


def test_energies_equal_the_recorded_summarizer_outputs(ours: pd.DataFrame, recorded: dict) -> None:
    table = comparison(ours, recorded)
    compared = table[table["summarizer_j"].notna()]
    assert set(table.loc[table["round"] != "v4.0", "summarizer_j"].notna()) == {True}
    assert len(compared) == 15  # v4.1: 1, v5.0: 4, v4.0: the 10 whose logs the installed rule can read
    assert (compared["rel_summarizer"] <= RELATIVE_TOLERANCE).all(), compared.to_string()
    # The other 14 of v4.0 raise: ZeroDivisionError where a log's stop equals its start, AssertionError for
    # dlrm_dcnv2, whose *_raw_* runs have no power folder in the mirror.
    errors = table["summarizer_error"].dropna().str.split(":").str[0]
    assert errors.value_counts().to_dict() == {"ZeroDivisionError": 12, "AssertionError": 2}


@pytest.mark.parametrize("key", sorted(PUBLISHED_KJ))
def test_v4_0_energies_equal_the_published_values(ours: pd.DataFrame, key: tuple[str, ...]) -> None:
    row = ours.set_index(KEY).loc[key]
    assert abs(row["energy_j"] - PUBLISHED_KJ[key] * 1000) <= PUBLISHED_TOLERANCE_J
    assert row["energy_rule"] == power.RELEASE_V4_0


def _node_log(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


# A log whose stop line, last in the file, carries its start's time (as 12 of v4.0's results do).
STOP_AT_START = _node_log(
    mllog("power_measurement_start", 1000), *(mllog("power_reading", 1000 + 1000 * i, 100.0 + i) for i in range(1, 4)),
    mllog("power_measurement_stop", 1000),
)
# A log with a reading logged after the stop time but before the stop line, and one out of time order.
LATE_READING = _node_log(
    mllog("power_measurement_start", 0), mllog("power_reading", 1000, 100.0), mllog("power_reading", 3000, 300.0),
    mllog("power_reading", 2000, 200.0), mllog("power_reading", 5000, 500.0), mllog("power_measurement_stop", 4000),
)


def test_the_v4_0_release_rule_ends_the_window_at_the_last_reading_where_the_installed_one_cannot() -> None:
    old = power.read_power_log("p", NODE, STOP_AT_START, "v4.0")
    new = power.read_power_log("p", NODE, STOP_AT_START, "v4.1")
    # File order: (101 x 1000 + 102 x 1000 + 103 x 1000) W·ms over a window from 1000 to the last reading, 4000.
    assert old.weighted == 306_000 and old.window_ms == 3000
    assert old.energy_j(60_000) == pytest.approx(102 * 60)  # mean 102 W over a 60 s run
    assert not new.usable and "window of 0 ms" in new.defects[-1]  # the installed summarizer divides by zero


def test_the_two_rules_read_late_and_unordered_readings_differently() -> None:
    old = power.read_power_log("p", NODE, LATE_READING, "v4.0")
    new = power.read_power_log("p", NODE, LATE_READING, "v4.1")
    # v4.0: file order up to the stop line: 100 x 1000 + 300 x 2000 + 200 x (2000 - 3000) + 500 x 3000, window 0-5000.
    assert (old.weighted, old.window_ms) == (100 * 1000 + 300 * 2000 - 200 * 1000 + 500 * 3000, 5000)
    # installed: time order, readings after the stop time dropped: 100 x 1000 + 200 x 1000 + 300 x 1000, window 0-4000.
    assert (new.weighted, new.window_ms) == (600_000, 4000)
    assert any("outside the window" in defect for defect in old.defects + new.defects)


def _with_power(node_logs: dict[str, bytes], round_: str = "v3.0") -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {**small_round(), "Acme/systems/box.json": system_json(system_name="box DC")}
    for run, data in node_logs.items():
        files[f"Acme/results/box/resnet/power/result_{run}/node_0.txt"] = data
    return files


def _steady_log(start_ms: float, minutes: float, watts: float = 1000.0, **eff: object) -> bytes:
    """A log with a reading each second over the run, `watts` each, and the optional conversion_eff line."""
    seconds = int(minutes * 60)
    lines = [mllog("power_measurement_start", start_ms)]
    if eff:
        lines.append(mllog("conversion_eff", start_ms, eff["value"], measurement_type=eff["kind"]))
    lines += [mllog("power_reading", start_ms + 1000 * i, watts) for i in range(1, seconds + 1)]
    lines.append(mllog("power_measurement_stop", start_ms + 1000 * seconds))
    return _node_log(*lines)


@pytest.mark.parametrize("record", [
    '{"time_ms": 1715341278865, "key": "power_reading", "value": 6713, "metadata": ""}',
    '{"time_ms": 1.5e3, "key": "power_reading", "value": 0.1, "metadata": {"measurement_type": "AC"}}',
    '{"time_ms": 111111111111111111111111111111, "key": "power_reading", "value": 1, "metadata": {}}',
    '{"time_ms": 1, "key": "power_reading", "value": -111111111111111111111111111111, "metadata": {}}',
    '{"time_ms": 1, "key": 18446744073709551616, "value": 1, "metadata": {}}',
    '{"time_ms": 1, "key": "conversion_eff", "value": NaN, "metadata": {}}',
    '{"time_ms": 1e400, "key": "power_reading", "value": "\\ud800", "metadata": {}}',
    '[1, 2]', "", "{",
])
def test_power_records_read_as_the_official_parser_reads_them(record: str) -> None:
    """orjson reads a power log's lines only where it gives what json.loads gives (same values, same types):
    a 64-bit overflow, a NaN or a lone surrogate goes to the standard reader."""
    def read(loads: Callable[[str], object]) -> object:
        try:
            return loads(record)
        except ValueError as error:
            return type(error)
    ours, official = read(power._ascii_loads), read(json.loads)
    assert repr(ours) == repr(official)


def test_a_result_s_energy_is_the_olympic_mean_of_the_same_runs_times_the_scaling_factor(
        make_archive: Callable[..., Path]) -> None:
    minutes = [10.0, 11.0, 12.0, 13.0, 14.0]
    logs = {str(run): _steady_log(1_600_000_000_000, value, watts=1000.0 * (run + 1))
            for run, value in enumerate(minutes)}
    files = _with_power(logs)
    files["Acme/results/box/resnet/scaling.json"] = '{"scaling_factor": 2.0}'
    result = ingest([make_archive(files)]).results.iloc[0]
    # Runs 1-3 are kept (11, 12, 13 min at 2, 3, 4 kW).
    expected = (2000 * 11 * 60 + 3000 * 12 * 60 + 4000 * 13 * 60) / 3 * 2.0
    assert result["energy_j"] == pytest.approx(expected, rel=1e-12)
    assert result["power_measurement"] == "DC" and result["power_nodes"] == 1 and result["power_switches"] == 0


def test_conversion_eff_scales_the_energy_and_names_the_measurement(make_archive: Callable[..., Path]) -> None:
    logs = {str(run): _steady_log(1_600_000_000_000, value, value=0.9, kind="AC")
            for run, value in enumerate([10.0, 11.0, 12.0, 13.0, 14.0])}
    result = ingest([make_archive(_with_power(logs))]).results.iloc[0]
    assert result["energy_j"] == pytest.approx(0.9 * 1000 * 12 * 60, rel=1e-12)
    assert result["power_measurement"] == "AC" and result["power_conversion_eff"] == 0.9


def test_defective_power_logs_are_quarantined_with_their_reason(make_archive: Callable[..., Path]) -> None:
    start = 1_600_000_000_000
    logs = {str(run): _steady_log(start, value) for run, value in enumerate([10.0, 11.0, 12.0, 13.0, 14.0])}
    logs["1"] = _node_log(mllog("power_measurement_start", start + 5000),
                          *(mllog("power_reading", start + 1000 * i, 900.0) for i in range(1, 100)),
                          mllog("power_measurement_stop", start))
    logs["2"] = _node_log(mllog("power_measurement_start", start),
                          *(mllog("power_reading", start + 1000 * i, 900.0) for i in range(1, 10)),
                          mllog("power_measurement_stop", start + 9000))
    tables = ingest([make_archive(_with_power(logs))])
    reasons = tables.quarantine.set_index("path")["reason"]
    folder = "Acme/results/box/resnet/power/result_{}/"
    assert "stop before power_measurement_start" in reasons[folder.format(1)]
    assert "the run has no energy" in reasons[folder.format(1)]
    assert "fewer readings in the window than the rules' minimum of 60" in reasons[folder.format(2)]
    assert "used" in reasons[folder.format(2)]
    assert math.isnan(tables.results.iloc[0]["energy_j"])  # run 1 is one the olympic mean keeps
    assert "no energy to train" in reasons["Acme/results/box/resnet/power/"]
    assert tables.tally.iloc[0]["power_files"] == 5


def test_results_without_power_logs_have_no_energy(make_archive: Callable[..., Path]) -> None:
    result = ingest([make_archive(small_round())]).results.iloc[0]
    assert math.isnan(result["energy_j"]) and pd.isna(result["power_measurement"])
    assert math.isnan(result["power_nodes"])


def test_a_run_log_and_its_power_logs_are_matched_by_run_id(make_archive: Callable[..., Path]) -> None:
    files = _with_power({})
    files["Acme/results/box/resnet/power/result_9/node_0.txt"] = _steady_log(1_600_000_000_000, 10.0)
    files["Acme/results/box/resnet/result_9.txt"] = run_log(99.0, status="aborted")
    tables = ingest([make_archive(files)])
    assert "no converged result log" in tables.quarantine.set_index("path")["reason"][
        "Acme/results/box/resnet/power/result_9/"]


@pytest.mark.slow
def test_the_installed_summarizer_gives_our_energies_live_on_v4_1_and_v5_0() -> None:
    rounds = ("v4.1", "v5.0")
    if not all(archive_path(round_).is_file() for round_ in rounds):
        pytest.skip("the MLPerf mirror's power rounds are absent")
    results = power_results(rounds)
    table = comparison(results, run_summarizer(results))
    assert len(table) == 5 and table["summarizer_j"].notna().all(), table.to_string()
    assert (table["rel_summarizer"] <= RELATIVE_TOLERANCE).all(), table.to_string()


def _smc_like() -> pd.DataFrame:
    """The v4.0 pattern: one set of runs published as performance, AC-measured and DC-measured results, and an
    unrelated result."""
    rows = [("smc", math.nan, None), ("smc-ac-power", 1.8e6, "AC"), ("smc-dc-power", 1.7e6, "DC"),
            ("other", math.nan, None)]
    frame = pd.DataFrame([{"round": "v4.0", "submitter": submitter, "system": "1xbox", "benchmark": "bert",
                           "division": "closed", "accelerator_family": "H100", "accelerator_count": 8.0,
                           "time_to_train_min": 5.0 if submitter != "other" else 6.0, "energy_j": energy,
                           "power_measurement": measurement}
                          for submitter, energy, measurement in rows])
    return frame


def test_ac_and_dc_measurements_of_the_same_runs_are_one_configuration_with_two_figures() -> None:
    frame = _smc_like()
    names = result_names(frame)
    frame = frame.assign(same_runs_as=same_runs_as(frame, REPUBLISHED_KEY, REPUBLISHED_TOLERANCE, names))
    assert frame["same_runs_as"].tolist() == ["v4.0/smc-ac-power/1xbox", None, "v4.0/smc-ac-power/1xbox", None]
    frame = energy_metrics(frame, names)
    kept = frame.iloc[1]
    assert kept["power_measurement"] == "AC and DC"
    assert kept["energy_kwh"] == pytest.approx(0.5) and kept["energy_dc_kwh"] == pytest.approx(1.7e6 / 3.6e6)
    assert kept["energy_dc_source"] == "v4.0/smc-dc-power/1xbox"
    # 0.5 kWh over 5 min on 8 accelerators: 750 W each, host share included; H100 SXM's TDP is 700 W.
    assert kept["power_per_accelerator_w"] == pytest.approx(750.0)
    assert kept["power_share_of_tdp"] == pytest.approx(750.0 / 700.0)
    # Nothing is estimated where nothing was measured.
    assert frame.iloc[[0, 3]][["energy_kwh", "power_per_accelerator_w", "power_share_of_tdp"]].isna().all().all()


def test_results_of_the_same_runs_stay_listed_but_out_of_the_analysis_scope() -> None:
    from pipeline.analysis.scope import in_scope, same_runs_left_out
    from pipeline.settings import AnalysisSettings
    from tests.conftest import configurations

    frame = _smc_like()
    marks = same_runs_as(frame, REPUBLISHED_KEY, REPUBLISHED_TOLERANCE, result_names(frame))
    table = configurations([{"round": "v4.0", "submitter": row.submitter, "system": "1xbox",
                             "accelerator_family": "H100", "accelerator_form_factor": "SXM", "accelerator_count": 8.0,
                             "time_to_train_min": row.time_to_train_min} for row in frame.itertuples()],
                           benchmark="bert").assign(same_runs_as=marks.to_numpy())
    for republished in ("exclude", "include"):
        analysis = AnalysisSettings(benchmarks=["bert"], division="all", rounds="all",
                            availability="all", republished=republished, min_configurations=2)
        assert in_scope(table, analysis, "bert")["submitter"].tolist() == ["smc-ac-power", "other"]
        assert same_runs_left_out(table, analysis, "bert")["submitter"].tolist() == ["smc", "smc-dc-power"]


POWER_LINES = [
    b':::MLLOG {"namespace": "", "time_ms": 1000, "key": "power_measurement_start", "value": null, "metadata": ""}',
    b':::MLLOG {"time_ms": 1500, "key": "power_reading", "value": 2090.25, "metadata": {"host": "n1"}}',
    b'prefix :::MLLOG {"time_ms": 1.6e3, "key": "power_reading", "value": 18446744073709551616, "metadata": {}}',
    b':::MLLOG {"time_ms": 2000, "key": "conversion_eff", "value": 0.9, "value": 1, "metadata": {"a": 1, "a": 2}}',
    b'other output',
    b':::MLLOG {"time_ms": 3000, "key": "power_measurement_stop", "value": null, "metadata": null}',
]


@pytest.mark.parametrize("damage", [
    lambda lines: lines,
    lambda lines: [line + b"\r" for line in lines],  # \r\n line ends
    lambda lines: [*lines[:2], lines[2].replace(b"18446744073709551616", b"NaN"), *lines[3:]],
    lambda lines: [*lines[:2], lines[2].replace(b"18446744073709551616", b"1" + b"0" * 5000), *lines[3:]],
    lambda lines: [*lines[:2], lines[2].replace(b'"time_ms": 1.6e3', b'"time_ms": "1600"'), *lines[3:]],
    lambda lines: [*lines[:2], lines[2].replace(b', "metadata": {}', b""), *lines[3:]],
    lambda lines: [*lines[:2], lines[2].replace(b"prefix", b":::MLLOG {"), *lines[3:]],  # the last token counts
    lambda lines: [*lines[:2], lines[2].replace(b'"power_reading"', b'"power_reading"\r'), *lines[3:]],  # lone CR
    lambda lines: [*lines[:2], lines[2] + b"\x0c", *lines[3:]],  # whitespace to Python, not to JSON
    lambda lines: [*lines[:2], b":::MLLOG ", b":::MLLOG 17", *lines[2:]],
])
def test_power_lines_read_whole_are_the_lines_read_one_by_one(damage: Callable[[list[bytes]], list[bytes]],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"\n".join(damage(list(POWER_LINES))) + b"\n"
    whole = power.parse_power_lines(data)
    monkeypatch.setattr(power, "_quick_lines", lambda _: None)
    one_by_one = power.parse_power_lines(data)
    assert repr(whole) == repr(one_by_one)
    assert ([list(map(type, msgspec.structs.astuple(line))) for line in whole]
            == [list(map(type, msgspec.structs.astuple(line))) for line in one_by_one])
