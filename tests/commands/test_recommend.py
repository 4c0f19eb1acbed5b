"""`pipeline.commands.recommend` and its library (`pipeline.analysis.buyer`, `pipeline.analysis.recommendation`):
today's options (the newest round, republished results included), the buyer's order (a deadline: cheapest first;
a budget alone: fastest first), a cap at the dearest price of the range, how many matched and how many are shown,
implausible prices refused; the command on a scratch project of synthetic resnet results whose decide stage has run
(`tests.conftest.decide_project`, newest round v4.1) and on this checkout's real outputs."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline.analysis import buyer, recommendation
from pipeline.analysis.pricing.costs import COST_LABEL
from pipeline.commands import recommend
from pipeline.core import paths
from tests.conftest import ROOT, exit_message

# The shipped table prices Gaudi2; these tests need one family without a public price.
pytestmark = pytest.mark.usefixtures("gaudi2_unpriced")


def json_rows(capsys: pytest.CaptureFixture[str]) -> list[dict]:
    """The --json output: one object per line."""
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _options() -> pd.DataFrame:
    """Three published results and one forecast, as `buyer.priced` gives them with H100 at 2 and A100 at 1 USD
    per accelerator-hour, Gaudi2 without a price."""
    published = buyer.published_options(pd.DataFrame({
        "round": "v5.1", "submitter": ["Acme", "Acme", "Beta"], "system": ["a", "b", "c"],
        "accelerator_family": ["A100", "H100", "Gaudi2"], "accelerator_count": [8.0, 64.0, 8.0],
        "time_to_train_min": [30.0, 3.0, 20.0], "accelerator_hours": [4.0, 3.2, 20 * 8 / 60],
        "scaling_efficiency": [1.0, 0.5, float("nan")], "republished_of": [None, "v5.0/Acme/b0", None]}))
    forecast = pd.DataFrame([{**dict.fromkeys(buyer.OPTION_COLUMNS), "kind": buyer.FORECAST, "label": "H100 SXM x 16",
                              "accelerator_family": "H100", "accelerator_count": 16.0, "time_to_train_min": 9.0,
                              "time_low_min": 7.0, "time_high_min": 12.0, "accelerator_hours": 2.4,
                              "scaling_efficiency": 0.8, "detail": "forecast", "energy_kwh": math.nan,
                              "energy_estimated_kwh": math.nan, "energy_estimate_error": math.nan}])
    return buyer.priced(pd.concat([published, forecast], ignore_index=True), {"H100": 2.0, "A100": 1.0})


def test_a_deadline_lists_the_cheapest_first_and_a_forecast_meets_it_at_its_upper_end() -> None:
    options = _options()
    chosen = recommendation.recommend(options, recommendation.constraints_of(None, 40.0, None), 0.7)
    # a: 4 USD, H100 x 16: 16 x 12 / 60 x 2 = 6.4, b: 6.4 (ties: faster first), Gaudi2 without a price last
    assert chosen["label"].tolist() == ["v5.1 Acme a", "v5.1 Acme b", "H100 SXM x 16", "v5.1 Beta c"]
    assert chosen["rank"].tolist() == [1, 2, 3, 4]
    tight = recommendation.recommend(options, recommendation.constraints_of(None, 10.0, None), 0.7)
    assert tight["label"].tolist() == ["v5.1 Acme b"]  # the forecast's 12 min upper end misses 10
    assert "republished from v5.0 (the result of v5.0 Acme b0)" in tight.loc[0, "reason"]


def test_a_budget_alone_lists_the_fastest_first_and_an_unpriced_one_never_fits() -> None:
    chosen = recommendation.recommend(_options(), recommendation.constraints_of(None, None, 6.4), 0.7)
    assert chosen["label"].tolist() == ["v5.1 Acme b", "H100 SXM x 16", "v5.1 Acme a"]
    left = recommendation.left_out(_options(), chosen, recommendation.constraints_of(None, None, 6.4))
    assert left == ["Gaudi2 (1 candidate): --max-cost 6.4: no public price for it (nor in your price file), so no "
                    "cost to compare"]


def test_the_cap_holds_at_the_dearest_public_price() -> None:
    options = buyer.priced(_options().drop(columns=[c for c in _options() if c.startswith("cost_")]))
    public = options[options["cost_basis"] == "public"]
    assert (public["cost_high_usd"] >= public["cost_low_usd"]).all()
    published = public[public["kind"] == buyer.PUBLISHED]
    assert published["cost_cap_usd"].tolist() == pytest.approx(published["cost_high_usd"].tolist())
    limit = float(published["cost_cap_usd"].max())
    between = float(published["cost_low_usd"].max())  # every cheapest price fits, not every dearest one
    chosen = recommendation.recommend(options, recommendation.constraints_of(None, None, between), 0.7)
    assert (chosen["cost_cap_usd"] <= between).all() and len(chosen) < len(public) <= (
        options["cost_cap_usd"] <= limit).sum() + 1


def test_impossible_constraints_say_what_to_relax() -> None:
    constraints = recommendation.constraints_of(8, 5.0, None)
    assert recommendation.recommend(_options(), constraints, 0.7).empty
    message = recommendation.why_infeasible(_options(), constraints)
    assert "--max-accelerators 8: relax it to 64 accelerators (published v5.1 Acme b)" in message
    assert "--deadline-min 5: relax it to 20 min (published v5.1 Beta c)" in message


def test_the_answer_says_how_many_matched_and_how_many_it_shows() -> None:
    options = _options()
    constraints = recommendation.constraints_of(None, 40.0, None)
    chosen = recommendation.recommend(options, constraints, 0.7)
    text = recommendation.render(chosen, options, constraints, "resnet", None, None, 2, [])
    assert "4 matched (--deadline-min 40), showing 2; --limit N shows more" in text
    assert "cheapest first (cost at the dearest listed on-demand price of each configuration's range" in text
    assert len(re.findall(r"^\s*\d+\. \[", text, flags=re.MULTILINE)) == 2
    assert "showing 4 (" in recommendation.render(chosen, options, constraints, "resnet", None, None, 10, [])


def test_buyer_answer_names_the_cheapest_within_each_deadline_and_the_fastest_within_each_budget() -> None:
    options = _options()
    published = options[options["kind"] == buyer.PUBLISHED][buyer.OPTION_COLUMNS]
    forecasts = options[options["kind"] == buyer.FORECAST][buyer.OPTION_COLUMNS]
    answer = buyer.buyer_answer("resnet", published, forecasts, [10, 60], [5, 100], {"H100": 2.0, "A100": 1.0})
    assert answer.fastest.label == "v5.1 Acme b" and answer.fastest.republished == "republished from v5.0"
    assert answer.least_hardware.label == "v5.1 Beta c"  # 2.67 accelerator-hours
    assert [option.label for option in answer.front] == ["v5.1 Acme b", "v5.1 Beta c"]  # a: beaten by c on both
    ten, sixty = answer.deadlines
    assert ten.option is not None and ten.option.label == "v5.1 Acme b" and ten.matched == 1
    assert sixty.option is not None and sixty.option.label == "v5.1 Acme a"  # 4 USD against 6.4
    assert sixty.unpriced == ["v5.1 Beta c"]  # finishes in time, no price: never called cheapest
    five, hundred = answer.budgets
    assert five.option is not None and five.option.label == "v5.1 Acme a" and five.matched == 1
    assert hundred.option is not None and hundred.option.label == "v5.1 Acme b"


def test_the_price_basis_is_one_rule_the_buyer_chooses() -> None:
    """Issue 52: cheapest, typical (the geometric middle) or dearest end of each range, the user's one price whatever
    the basis; the rule in the words every page, brief and --help use."""
    costs = pd.DataFrame({"cost_low_usd_per_accelerator_hour": [2.0, 3.0, math.nan],
                          "cost_high_usd_per_accelerator_hour": [8.0, 3.0, math.nan]})
    assert buyer.decision_price(costs, "cheapest").tolist()[:2] == [2.0, 3.0]
    assert buyer.decision_price(costs, "typical").tolist()[:2] == pytest.approx([4.0, 3.0])
    assert buyer.decision_price(costs, "dearest").tolist()[:2] == [8.0, 3.0]
    assert math.isnan(buyer.decision_price(costs, "typical").iloc[2])
    with pytest.raises(ValueError, match="unknown price basis 'median'"):
        buyer.decision_price(costs, "median")
    assert "whichever listed provider you rent from" in buyer.cheapest_rule()
    assert "at the cheapest listed on-demand price" in buyer.cheapest_rule("cheapest")


def test_recommend_decides_at_the_price_basis_asked_for(decide_project: Path, capsys) -> None:
    recommend.main(["--benchmark", "resnet", "--deadline-min", "1000", "--price-basis", "cheapest", "--prices",
                    str(ROOT / "examples/prices.yaml")])
    assert "cheapest first (cost at the cheapest listed on-demand price" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        recommend.main(["--benchmark", "resnet", "--deadline-min", "40", "--price-basis", "median"])


def test_recommend_prices_with_the_providers_asked_for(decide_project: Path, capsys) -> None:
    recommend.main(["--benchmark", "resnet", "--deadline-min", "1000", "--provider", "lambda", "--provider", "AWS"])
    out = capsys.readouterr().out
    assert "providers: the public prices of AWS, Lambda alone (--provider)" in out
    assert "among the prices of" not in out  # the rule's words are the pages'; the answer says its providers once
    message = exit_message(recommend.main, ["--benchmark", "resnet", "--provider", "Acme Cloud"], capsys)
    assert message.startswith("error: --provider: unknown provider Acme Cloud; the price table's providers: ")
    assert "among the prices of AWS" in buyer.cheapest_rule("dearest", ["AWS"])


def test_the_price_age_limit_is_a_param_recommend_follows(decide_project: Path, capsys,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 52: params report.max_price_age_days moves a row between current and history, and recommend's answer
    follows, as does the buyer stage's. Within 240 min the round offers Gaudi2 x 8 (20.4 accelerator-hours) and the
    A100 x 16 forecast (31.5 at its interval's upper end, 63 USD at 2). At 365 days Beta's Gaudi2 price of
    2026-06-01 (183 days before the table's newest) is current and sets Gaudi2's dearest end, 4 USD (82 USD): the
    forecast comes first; at 100 days it is history, Gaudi2's range is Acme's 1.5 alone (31 USD) and Gaudi2 comes
    first."""
    from pipeline.analysis.pricing import price_table as pt
    from pipeline.analysis.scope import read_configurations
    from pipeline.settings import load_settings

    rows = [{"family": family, "provider": provider, "instance_type": family, "accelerators_per_instance": 1,
             "price_per_hour": price, "price_unit": "accelerator-hour", "currency": "USD", "price_type": "on-demand",
             "region": "unstated", "date": date, "source": "https://example.com", "source_kind": "provider",
             "note": "a test row", "verified": "2026-12-07", "verified_against": "https://example.com"}
            for family, provider, date, price in [("Gaudi2", "Acme", "2026-12-01", 1.5),
                                                  ("Gaudi2", "Beta", "2026-06-01", 4.0),
                                                  ("A100", "Acme", "2026-12-01", 2.0)]]
    table = pt.validate(pd.DataFrame(rows))
    monkeypatch.setattr(pt, "price_table", lambda: table)
    caches = (pt._package_current_prices, pt._package_types, pt._package_quotes)
    for cached in caches:
        cached.cache_clear()
    assert pt.offer_status(table).tolist() == [pt.CURRENT] * 3
    assert pt.offer_status(table, 100).tolist() == [pt.CURRENT, pt.STALE, pt.CURRENT]

    def first(max_age_days: int) -> tuple[str, str]:
        """recommend's first answer within 240 min at `max_age_days` (its family and the whole text); the buyer
        stage's answer (`answer_for`, as the stage calls it) names the same family."""
        params = yaml.safe_load(Path("params.yaml").read_text(encoding="utf-8"))
        params["report"]["max_price_age_days"] = max_age_days
        Path("params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
        recommend.main(["--benchmark", "resnet", "--deadline-min", "240", "--limit", "1"])
        out = capsys.readouterr().out
        family = re.findall(r"^ 1\. \[\w+\] [^:]*: (\w+) x", out, re.MULTILINE)[0]
        answer = buyer.answer_for("resnet", read_configurations(), load_settings(), None)
        assert answer is not None and answer.deadlines[-1].limit == 240
        option = answer.deadlines[-1].option
        assert option is not None and option.accelerator_family == family
        return family, out

    family, out = first(365)
    assert family == "A100" and "none more than 365 days older than the table's newest price" in out
    family, out = first(100)
    assert family == "Gaudi2" and "none more than 100 days older than the table's newest price" in out
    assert "Gaudi2 x 8, 153 min, 20.4 accelerator-hours, cost 30.6 USD (Acme on-demand 2026-12-01)" in out
    for cached in caches:
        cached.cache_clear()


def test_families_are_compared_at_the_counts_two_or_more_published() -> None:
    """At 8 accelerators A100 (30 min) and Gaudi2 (20 min) both published: each family's fastest there, fastest
    first, with its time over the fastest's; H100 alone at 64 makes no group; a family's slower result at the same
    count is not its best."""
    options = _options()
    published = options[options["kind"] == buyer.PUBLISHED]
    slower = published.iloc[[0]].assign(label="v5.1 Gamma d", time_to_train_min=40.0, time_high_min=40.0)
    (group,) = buyer.equal_size_groups(pd.concat([published, slower], ignore_index=True))
    assert group.accelerator_count == 8.0
    assert [option.label for option in group.options] == ["v5.1 Beta c", "v5.1 Acme a"]
    assert group.time_vs_fastest == [1.0, 1.5]
    answer = buyer.buyer_answer("resnet", published[buyer.OPTION_COLUMNS], published.iloc[0:0][buyer.OPTION_COLUMNS],
                                [10], [5], {"H100": 2.0, "A100": 1.0})
    assert [group.accelerator_count for group in answer.equal_size] == [8.0]


def test_implausible_prices_are_refused_with_the_band_they_broke(decide_project: Path, capsys) -> None:
    prices = decide_project / "mine.yaml"
    prices.write_text("H100: 0.002\n")
    message = exit_message(recommend.main, ["--benchmark", "resnet", "--prices", str(prices)], capsys)
    assert "implausible price" in message and "H100: 0.002 USD per accelerator-hour is outside" in message
    assert "public H100 prices" in message and "fix the figure or its unit" in message


def test_recommend_cli_lists_the_newest_round_with_republished_results_and_forecasts(decide_project: Path,
                                                                                      capsys) -> None:
    recommend.main(["--benchmark", "resnet", "--prices", str(ROOT / "examples/prices.yaml"), "--limit", "30"])
    out = capsys.readouterr().out
    assert "public list prices of pipeline/analysis/pricing/price_table.csv" in out and "overrides it" in out
    assert out.startswith("resnet, round v4.1: ")
    listed = re.findall(r"^\s*\d+\. \[(\w+)\] (.+?):", out, flags=re.MULTILINE)
    # v4.1 published Gaudi2's v3.0 result again: on offer in v4.1, and marked
    assert ("published", "v4.1 Acme Gaudi2-SXM-8-2") in listed
    assert "republished from v3.0" in out
    assert [label for kind, label in listed if kind == "forecast"] == ["A100 SXM x 16"]
    assert "not forecast (forecast not trusted): Gaudi2 SXM" in out
    assert out.count("    why: ") == len(listed)
    assert "note: resnet was retired from MLPerf Training after v4.0" in out


def test_recommend_json_gives_one_object_per_candidate(decide_project: Path, capsys) -> None:
    recommend.main(["--benchmark", "resnet", "--limit", "30", "--json"])
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert {row["kind"] for row in rows} == {"published", "forecast"}
    assert all(row["forecast"] is None for row in rows if row["kind"] == "published")
    assert all(row["forecast"]["target_coverage"] == 0.9 for row in rows if row["kind"] == "forecast")
    assert f"note: {len(rows)} matched, showing {len(rows)}" in captured.err


@pytest.mark.parametrize(("argv", "expected"), [
    (["--family", "H200"], "families with data: A100, Gaudi2, H100"),
    (["--max-accelerators", "0"], "--max-accelerators must be positive"),
    (["--deadline-min", "-5"], "--deadline-min must be positive"),
    (["--limit", "0"], "--limit must be positive"),
    (["--max-energy-kwh", "10"], "--max-energy-kwh: "),
    (["--max-accelerators", "4"], "--max-accelerators 4: relax it to 8 accelerators"),
    (["--prices", "missing.yaml"], "price file missing.yaml not found"),
])
def test_recommend_cli_mistakes_exit_1_with_the_valid_choices(decide_project: Path, capsys, argv: list[str],
                                                              expected: str) -> None:
    assert expected in exit_message(recommend.main, ["--benchmark", "resnet", *argv], capsys)


def test_recommend_cli_names_the_analysed_benchmarks(decide_project: Path, capsys) -> None:
    assert "unknown benchmark 'bert'; choose one of: resnet" in exit_message(recommend.main, ["--benchmark", "bert"],
                                                                               capsys)


def test_family_names_and_price_keys_match_in_any_case(decide_project: Path, capsys) -> None:
    prices = decide_project / "prices.yaml"
    prices.write_text("gaudi2: 2.0\nmi300x: 2.0\n")
    recommend.main(["--benchmark", "resnet", "--family", "gaudi2", "--prices", str(prices), "--limit", "1"])
    captured = capsys.readouterr()
    assert captured.out.startswith("resnet (Gaudi2), round v4.1: ")
    assert "cost 40.8 USD (your price file)" in captured.out  # 8 x 153 min / 60 = 20.4 accelerator-hours x 2.0
    assert "MI300X (families with results: A100, Gaudi2, H100)" in captured.err


def test_recommend_shows_a_cost_basis_and_max_cost_holds_at_the_dearest_price(decide_project: Path, capsys) -> None:
    recommend.main(["--benchmark", "resnet", "--limit", "30", "--json"])
    everything = json_rows(capsys)
    for row in everything:
        if row["cost_basis"] == "public":
            hours_high = row["accelerator_count"] * row["time_high_min"] / 60
            assert row["cost_cap_usd"] == pytest.approx(hours_high * row["cost_high_usd_per_accelerator_hour"])
        else:
            assert row["cost_cap_usd"] is None
    recommend.main(["--benchmark", "resnet", "--limit", "30"])
    out = capsys.readouterr().out
    assert f"cost ({COST_LABEL}) = accelerator-hours x price per accelerator-hour" in out
    assert "Gaudi2 x 8, 153 min, 20.4 accelerator-hours, no public price" in out


@pytest.mark.skipif(not (ROOT / paths.models_json("llama31_8b")).is_file() or
                    not (ROOT / paths.CONFIGURATIONS).is_file(), reason="needs this checkout's `dvc repro` outputs")
def test_llama31_8b_within_an_hour_and_300_usd_lists_only_what_fits_at_the_dearest_price(
        capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's check on the real data: every listed configuration costs at most 300 USD at the dearest listed
    price, cheapest first, and the answer says how many matched."""
    monkeypatch.chdir(ROOT)
    recommend.main(["--benchmark", "llama31_8b", "--deadline-min", "60", "--max-cost", "300", "--json"])
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert rows and all(row["cost_high_usd"] <= 300 and row["time_high_min"] <= 60 for row in rows)
    caps = [row["cost_cap_usd"] for row in rows]
    assert caps == sorted(caps)
    assert re.search(rf"note: {len(rows)} matched, showing {len(rows)}", captured.err)
    recommend.main(["--benchmark", "llama31_8b", "--deadline-min", "60", "--max-cost", "300"])
    assert re.search(r"^llama31_8b, round v5\.1: \d+ matched \(--deadline-min 60, --max-cost 300\), showing \d+",
                     capsys.readouterr().out)
