"""The official checker's logging rules as ingest applies them: the vendored rule table against the installed
mlperf-logging package, hand-made logs, and real logs judged by the official compliance checker itself."""
from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest

from pipeline.mlperf.logs import compliance
from pipeline.mlperf.logs.logparse import parse_log
from pipeline.mlperf.logs.readable import readable, record_lines
from pipeline.mlperf.rounds import ingest
from tests.conftest import mllog, run_log, small_round

START = 1_600_000_000_000


def check(log: str, round_: str = "v3.0") -> list[str]:
    """The verdict as ingest reaches it, which must be the one without the keys noted while reading."""
    data = log.encode()
    verdict = compliance.violations(data, parse_log(data, also_find=compliance.presence_keys()), round_)
    assert compliance.violations(data, parse_log(data), round_) == verdict
    return verdict


def with_benchmark(log: str, benchmark: str, division: str = "closed") -> str:
    return (log.replace('"value": "resnet"', f'"value": "{benchmark}"')
            .replace('"value": "closed"', f'"value": "{division}"'))


def test_the_rule_table_is_the_installed_checkers() -> None:
    pytest.importorskip("mlperf_logging")
    vendored = json.loads((Path(compliance.__file__).with_name(compliance.RULES_FILE)).read_text())
    assert vendored == json.loads(json.dumps(compliance.rules_document(compliance.checker_dir()))), (
        "pipeline/mlperf/logs/compliance_rules.json is stale: run python -m pipeline.mlperf.logs.compliance")


def test_the_fixture_log_meets_the_rules() -> None:
    assert check(run_log(10)) == []


def test_a_missing_required_record_is_named_with_its_rule() -> None:
    log = run_log(10).replace("eval_samples", "eval_samples_typo")
    assert check(log) == ["no eval_samples record (3.0.0 requires EXACTLY_ONE)"]


def test_the_benchmark_file_decides_what_is_required() -> None:
    # BERT's closed rules ask for opt_lamb_epsilon (and more), which a ResNet log does not have.
    broken = check(with_benchmark(run_log(10), "bert"), "v2.1")
    assert "no opt_lamb_epsilon record (2.1.0 requires EXACTLY_ONE)" in broken
    assert not any("sgd_opt" in rule for rule in broken)


def test_a_benchmark_the_checker_has_no_file_for() -> None:
    broken = check(with_benchmark(run_log(10), "nonesuch"))
    assert broken == ["submission_benchmark 'nonesuch' names rule file closed_nonesuch.yaml, which the checker "
                      "does not have"]


def test_rounds_without_a_ruleset_are_not_checked() -> None:
    assert check(mllog("run_start", START), "v9.9") == []


def test_one_of_two_alternatives_is_enough() -> None:
    assert check(run_log(10).replace('"block_stop"', '"epoch_stop"')) == []
    log = run_log(10).replace('"block_stop"', '"other_stop"').replace('"eval_stop"', '"other_eval_stop"')
    assert check(log) == ["none of block_stop / epoch_stop logged (3.0.0 requires one of them)",
                          "none of block_stop / eval_stop logged (3.0.0 requires one of them)"]


def test_a_required_key_is_found_wherever_its_text_stands() -> None:
    lines = run_log(10).splitlines()
    eval_samples = next(line for line in lines if '"eval_samples"' in line)
    rest = [line for line in lines if line != eval_samples]
    # After a wanted record on its line, where the reading moves on to the next line without seeing it.
    joined = [line + " " + eval_samples if '"run_start"' in line else line for line in rest]
    assert check("\n".join(joined) + "\n") == []
    # Before a wanted record on its line, which must still be read.
    joined = [eval_samples + " " + line if '"run_stop"' in line else line for line in rest]
    assert check("\n".join(joined) + "\n") == []
    assert parse_log("\n".join(joined).encode()).status == "success"


def test_a_required_key_logged_again_is_not_read_again() -> None:
    eval_samples = next(line for line in run_log(10).splitlines() if '"eval_samples"' in line)
    log = run_log(10) + eval_samples.replace("50000", "50000 ") + "\n"  # again, the same value: not read again
    facts = parse_log(log.encode(), also_find=compliance.presence_keys())
    assert "eval_samples" in facts.keys_found and facts.bad_lines == 0
    assert check(log) == []


@pytest.mark.parametrize("size", [10, compliance.FIRST_WINDOW * 3, compliance.FIRST_WINDOW * 25 + 7])
def test_a_needle_is_found_in_any_window_and_across_their_edges(size: int) -> None:
    needle = b'"key": "block_stop"'
    window = compliance.FIRST_WINDOW
    edges = {0, window, 5 * window, 21 * window, size - window, size - 5 * window, size // 2, size - len(needle)}
    for edge in sorted(edge for edge in edges if 0 <= edge <= size - len(needle)):
        for start in range(max(0, edge - len(needle)), min(size - len(needle), edge + 2) + 1):
            data = bytearray(b"." * size)
            data[start: start + len(needle)] = needle
            assert compliance._first_of(bytes(data), (b"absent", needle)) == 1, (size, start)
    assert compliance._first_of(b"." * size, (needle,)) is None


@pytest.mark.parametrize(("division", "init_minutes", "broken"), [
    ("closed", 29.0, False), ("closed", 31.0, True), ("open", 31.0, False), ("open", 241.0, True),
])
def test_initialisation_time_limit(division: str, init_minutes: float, broken: bool) -> None:
    log = run_log(10).replace(f'"time_ms": {START - 60_000}, ', f'"time_ms": {START - init_minutes * 60_000}, ')
    log = log.replace('"value": "closed"', f'"value": "{division}"')
    found = [rule for rule in check(log) if rule.startswith("initialisation")]
    assert bool(found) == broken, found
    if broken:
        assert found[0].startswith(f"initialisation took {init_minutes + 1 / 60_000:.1f} min")


def test_initialised_tensors_must_be_the_listed_ones() -> None:
    listed = compliance.checks_for("2.0.0", "closed", "resnet", "sgd").tensors
    assert listed and len(listed) > 100
    tensors = "".join(mllog("weights_initialization", START - 20, None, tensor=name) + "\n" for name in listed)
    complete = tensors + run_log(10)
    assert not any("weights_initialization" in rule for rule in check(complete, "v2.0"))
    short = "\n".join(complete.split("\n")[1:])
    [rule] = [rule for rule in check(short, "v2.0") if "tensors" in rule]
    assert rule == (f"weights_initialization records name {len(listed) - 1} tensors, not the {len(listed)} the "
                    f"2.0.0 rules list (1 missing, such as {listed[0]})")


def test_stable_diffusion_needs_two_evaluations_of_both_metrics() -> None:
    evaluations = [mllog("eval_accuracy", START + i, value, metric=metric, samples_count=count)
                   for i, (value, metric, count) in enumerate([(95.0, "FID", 512), (0.14, "CLIP", 512),
                                                               (80.0, "FID", 1024), (0.16, "CLIP", 1024)])]
    log = with_benchmark(run_log(10), "stable_diffusion") + "\n".join(evaluations) + "\n"
    aggregated = [rule for rule in check(log, "v4.0") if "aggregated" in rule]
    assert aggregated == []
    one = with_benchmark(run_log(10), "stable_diffusion") + "\n".join(evaluations[:2]) + "\n"
    assert [rule for rule in check(one, "v4.0") if "aggregated" in rule] == [
        "fewer than 2 aggregated_eval_accuracy records (4.0.0 requires AT_LEAST(2))"]


def test_a_rule_breaking_run_counts_as_non_converged_and_is_quarantined(make_archive) -> None:
    files = small_round()
    log = "Acme/results/box/resnet/result_0.txt"
    files[log] = str(files[log]).replace("eval_samples", "eval_samples_typo")
    tables = ingest([make_archive(files)])
    run = tables.runs.set_index("path").loc[log]
    assert run["compliance"] == "no eval_samples record (3.0.0 requires EXACTLY_ONE)"
    assert not run["converged"]
    assert tables.results["n_converged"].tolist() == [4]
    [reason] = tables.quarantine.loc[tables.quarantine["path"] == log, "reason"]
    assert reason.startswith("result log breaks the official checker's logging rules (no eval_samples record")


# Two processes' writes interleaved, as in v4.1 Lambda's published logs: the other process's output replaced the
# end of a record's value ("adamw", "/workspace/... of the record's own metadata) up to a path's tail.
INTERLEAVED = ('"value": "sgd", "metadata"', '"value": "sgd"Lambdaorkspace/rn50/callbacks.py", "metadata"')


def officially_clean(log: str) -> str:
    """run_log with the block's epoch_count, which the official checker tests and ingest does not."""
    return log.replace('"block_start", "value": null, "metadata": {"first_epoch_num": 1}',
                       '"block_start", "value": null, "metadata": {"first_epoch_num": 1, "epoch_count": 2}')


def official_verdict_of(log: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, round_: str = "v3.0") -> bool:
    pytest.importorskip("mlperf_logging")
    monkeypatch.chdir(tmp_path)  # the official checker writes compliance_checker.log where it runs
    path = tmp_path / "result_0.txt"
    path.write_bytes(log.encode("latin-1"))
    return official_verdict(path, round_)


def test_a_line_that_does_not_parse_is_absent_and_rejects_the_run(tmp_path: Path, monkeypatch) -> None:
    log = officially_clean(run_log(10)).replace(*INTERLEAVED)
    assert "Lambdaorkspace" in log
    facts = parse_log(log.encode(), also_find=compliance.presence_keys())
    assert facts.bad_lines == 1 and "opt_name" not in facts.keys_found and facts.optimizer is None
    assert check(log) == ["1 :::MLLOG line(s) that do not parse (the checker rejects a log with parsing errors)",
                          "no opt_name record (3.0.0 requires EXACTLY_ONE)"]
    assert not official_verdict_of(log, tmp_path, monkeypatch)
    assert official_verdict_of(officially_clean(run_log(10)), tmp_path, monkeypatch)


def test_a_damaged_line_of_a_key_no_rule_asks_for_still_rejects_the_run(tmp_path: Path, monkeypatch) -> None:
    stats = mllog("tracked_stats", START + 5, {"throughput": 1.5})
    assert official_verdict_of(officially_clean(run_log(10)) + stats + "\n", tmp_path, monkeypatch)
    log = officially_clean(run_log(10)) + stats.replace('": {"thr', '": nullX{"thr') + "\n"
    assert check(log) == ["1 :::MLLOG line(s) that do not parse (the checker rejects a log with parsing errors)"]
    assert not official_verdict_of(log, tmp_path, monkeypatch)


@pytest.mark.parametrize(("damage", "status"), [
    (lambda line: line[:-7], "no run_stop"),  # cut off
    (lambda line: line.replace('"status"', "\r\"status\""), "no run_stop"),  # a carriage return ends a line
    (lambda line: line.replace(":::MLLOG ", ":::MLLOG :::MLLOG "), "success"),  # the text after the last token
    # json.loads refuses an integer of more than 4,300 digits (the quick test of every line skips such a value)
    (lambda line: line.replace('"status"', '"n": 1' + "0" * 5000 + ', "status"'), "no run_stop"),
    (lambda line: line.replace('"status"', '"n": 1' + "0" * 400 + ', "status"'), "success"),
    (lambda line: line.replace('"status"', '"n": NaN, "status"'), "success"),  # json.loads reads NaN
])
def test_lines_are_split_and_read_as_the_official_parser_reads_them(damage, status: str) -> None:
    lines = run_log(10).splitlines()
    stop = next(index for index, line in enumerate(lines) if '"run_stop"' in line)
    lines[stop] = damage(lines[stop])
    facts = parse_log(("\n".join(lines) + "\n").encode())
    assert facts.status == status
    assert facts.bad_lines == (status != "success")


def test_damaged_lines_are_those_the_official_parser_fails_on() -> None:
    """Random damage to records of every shape, judged by the official parser itself."""
    import io
    import random
    parser = pytest.importorskip("mlperf_logging.compliance_checker.mlp_parser.ruleset_500")
    shapes = [mllog("tracked_stats", START, {"throughput": 56591.045814767414}, epoch_num=1602186),
              "0: " + mllog("opt_name", START, "adamw", file="/workspace/sd/callbacks.py", lineno=257),
              mllog("run_stop", START, None, status="success", x=[1, 2.5e-3, -0.0], y={"a": [True, False]}),
              mllog("eval_accuracy", START, float("nan")),
              "output :::MLLOG " + mllog("k", 12, [[1, 2], {"b": "c"}]).removeprefix(":::MLLOG "),
              "a line of other output"]
    alphabet = '{}[]",:0123456789.-eE \\/tnrufalsNIy\x00\x0c\r\xa0\xe9'
    rng = random.Random(22)
    compared = 0
    for _ in range(3000):
        lines = [list(rng.choice(shapes)) for _ in range(rng.randint(1, 3))]
        for line in lines:
            for _ in range(rng.choice([0, 1, 1, 2, 3])):
                at, op = rng.randrange(len(line) + 1), rng.random()
                if op < 0.05:
                    line[at:at] = list(":::MLLOG ")
                elif op < 0.45:
                    line.insert(at, rng.choice(alphabet))
                elif at < len(line):
                    line[at: at + 1] = [] if op < 0.75 else [rng.choice(alphabet)]
        data = "".join("".join(line) + rng.choice(["\n", "\r\n", "\r", ""]) for line in lines).encode("latin-1")
        try:
            _, failed = parser.parse_generator(io.TextIOWrapper(io.BytesIO(data), encoding="latin-1"))
        except (KeyError, TypeError):
            continue  # the official parser stops on a record that is no object or lacks a key
        assert readable(data)[1] == len(failed), data
        compared += 1
    assert compared > 2000



@pytest.mark.parametrize("digits", [300, 301, 400])
def test_a_long_run_of_digits_is_seen_wherever_it_lies(digits: int) -> None:
    """The quick test samples every 32nd byte for a run of digits long enough to matter to json.loads; a run of
    301 is seen at every offset, so such a log is read line by line, as before the sampling."""
    for offset in range(40):
        record = mllog("k", START, 1).removeprefix(":::MLLOG ").replace('"value": 1', f'"value": "{"x" * offset}"')
        record = record.replace('"metadata": {}', '"metadata": {"n": 1' + "0" * (digits - 1) + "}")
        data = f":::MLLOG {mllog('a', START).removeprefix(':::MLLOG ')}\n:::MLLOG {record}\n".encode()
        assert (record_lines(data) is None) == (digits > 300), offset


@pytest.mark.parametrize(("log", "records_only"), [
    ("{a}\n{b}\n", True),
    ("{a}\n{b}", True),  # no newline at the end
    ("{a}\r\n{b}\r\n", True),
    ("{a}\n\n{b}\n", False),  # an empty line
    ("{a}\n0: {b}\n", False),  # a prefix before the token
    ("launch fp8: true\n{a}\n{b}\n", False),  # other output
    ("{a}\n{b}\nthe end\n", False),
    ("{a}\n{b}\n\n", False),
    ("{a}\n{a} {b}\n", False),  # two tokens on a line: asked line by line
    ("{a}\n:::MLLOG {{\n", False),  # a line the parser cannot read
])
def test_a_log_of_mllog_lines_alone_is_told_from_one_with_other_output(log: str, records_only: bool) -> None:
    """Such a log prints no framework or launcher output, which pipeline.mlperf.logs.precision then does not look
    for (`Reading.records_only`)."""
    data = log.format(a=mllog("init_start", START), b=mllog("run_start", START + 1)).encode()
    assert readable(data).records_only is records_only
    assert parse_log(data).records_only is records_only


# Real logs, one per kind of rule, and ones that meet them all, judged by the official checker.
REAL_LOGS = [
    ("v1.1", r"Dell/results/[^/]+/bert/result_0\.txt"),  # no weights_initialization
    ("v2.1", r"[^/]+/results/[^/]+/bert/result_0\.txt"),  # opt_lamb_epsilon, for some submitters
    ("v2.0", r"NVIDIA/results/[^/]+/resnet/result_0\.txt"),
    ("v4.1", r"[^/]+/results/[^/]+/stable_diffusion/result_0\.txt"),
    ("v5.0", r"tinycorp/results/[^/]+/[^/]+/result_2\.txt"),  # initialisation over the limit
]


def official_verdict(path: Path, round_: str) -> bool:
    from mlperf_logging.compliance_checker import mlp_compliance
    ruleset = compliance.round_ruleset(round_)
    checker = mlp_compliance.make_checker(usage="training", ruleset=ruleset, quiet=True, werror=False)
    valid, *_ = mlp_compliance.main(str(path), f"training_{ruleset}/common.yaml", checker)
    return bool(valid)


@pytest.mark.slow
@pytest.mark.parametrize(("round_", "pattern"), REAL_LOGS)
def test_real_logs_get_the_official_checkers_verdict(mirror: Path, tmp_path: Path, monkeypatch, round_: str,
                                                     pattern: str) -> None:
    pytest.importorskip("mlperf_logging")
    monkeypatch.chdir(tmp_path)  # the official checker writes compliance_checker.log where it runs
    wanted = re.compile(pattern)
    checked = 0
    with tarfile.open(mirror / f"training_results_{round_}.tar.gz", "r|gz") as tar:
        for info in tar:
            relative = info.name.split("/", 1)[-1]
            if not (info.isfile() and wanted.fullmatch(relative)) or checked >= 6:
                continue
            data = tar.extractfile(info).read()  # type: ignore[union-attr]
            facts = parse_log(data)
            ours = compliance.violations(data, facts, round_)
            path = tmp_path / f"log_{checked}.txt"
            path.write_bytes(data)
            official = official_verdict(path, round_)
            # The official checker also tests values (quality target, hyperparameters) that ingest does not.
            if ours:
                assert not official, (relative, ours)
            elif facts.reached_target is not False:
                assert official, relative
            checked += 1
    assert checked
