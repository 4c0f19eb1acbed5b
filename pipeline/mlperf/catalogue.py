"""The catalogue of MLPerf Training benchmarks: a results folder name is not a benchmark.

`ssd` was SSD-ResNet34 on COCO up to v1.1 and RetinaNet on OpenImages from v2.0 (a folder named `retinanet` from
v5.0); `dlrm` became DLRM-DCNv2 (`dlrm_dcnv2`) in v3.0; `gnn` is R-GAT (`rgat` from v5.0); Mask R-CNN folders are
sometimes named `mask`. Every comparison in the pipeline is made under the canonical `benchmark` id below, never
under a folder name, so results of different models never meet under one name.

Sources: the MLPerf Training rules (training_rules.adoc, "Benchmarks" and "Benchmark results") of each round for
what the table below holds (names, tasks, folder aliases, the rounds a folder name meant a benchmark); the
mlperf-logging package (`benchmark_rules`) for the rest: the runs a result needs and the olympic mean's drop
count of every benchmark, the last round of a benchmark the table calls current (the round before the first set
of rules without it: it is retired from then on), and the benchmarks the table does not know yet (a new round's),
which are catalogued under their folder name with the package's runs and quality target, marked `new`.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache

from pipeline.mlperf.benchmark_rules import rules


@dataclass(frozen=True)
class Benchmark:
    """One benchmark of the suite as the catalogue describes it: its id, task, model, data set, quality target, the
    runs a result needs, the rounds it was in (first and last) and its results folders' names."""
    id: str
    task: str
    model: str
    dataset: str
    quality_target: str
    runs_required: int
    first_round: str
    last_round: str | None  # None: still in the suite in the newest round we know
    folders: tuple[str, ...]
    # The official checker's quality target on eval_accuracy: (">=" or "<=", threshold), from `target_since`.
    # None where the value is not one number (Mask R-CNN, Stable Diffusion) or the rule varies within a round.
    target: tuple[str, float] | None = None
    target_since: str | None = None
    new: bool = False  # not described by this project yet: known from the official package's rules only

    def reached(self, round_: str, eval_values: Sequence[float]) -> bool | None:
        """Whether any evaluation met the quality target (None: not checked for this benchmark and round)."""
        if self.target is None or (self.target_since and round_version(round_) < round_version(self.target_since)):
            return None
        direction, threshold = self.target
        if direction == ">=":
            return any(value >= threshold for value in eval_values)
        return any(value <= threshold for value in eval_values)

    @property
    def olympic_drop(self) -> int:
        """k of the olympic mean: the fastest k runs are dropped (the result summarizer's rule: 4 for unet3d's 40
        runs, else 1)."""
        return rules().olympic_drop(self.folders[-1])

    def covers(self, round_: str) -> bool:
        """True when the round `round_` ("vX.Y") is between the benchmark's first and last round, both included."""
        version = round_version(round_)
        if version < round_version(self.first_round):
            return False
        return self.last_round is None or version <= round_version(self.last_round)


DESCRIBED: tuple[Benchmark, ...] = (
    Benchmark("resnet", "image classification", "ResNet-50 v1.5", "ImageNet", "75.90% top-1 accuracy", 5,
              "v0.6", "v4.0", ("resnet",), (">=", 0.759)),
    Benchmark("ssd_resnet34", "object detection (light weight)", "SSD-ResNet34", "COCO 2017", "23.0% mAP", 5,
              "v0.6", "v1.1", ("ssd",), (">=", 0.23)),
    Benchmark("retinanet", "object detection (light weight)", "RetinaNet ResNeXt50", "OpenImages (MLPerf subset)",
              "34.0% mAP", 5, "v2.0", None, ("ssd", "retinanet"), (">=", 0.34)),
    Benchmark("maskrcnn", "object detection (heavy weight)", "Mask R-CNN", "COCO 2017",
              "0.377 box mAP and 0.339 mask mAP", 5, "v0.6", "v3.1", ("maskrcnn", "mask")),
    Benchmark("gnmt", "translation (recurrent)", "GNMT", "WMT16 English-German", "24.0 sacre BLEU", 10,
              "v0.6", "v0.7", ("gnmt",), (">=", 0.24), "v0.7"),
    Benchmark("transformer", "translation (non-recurrent)", "Transformer", "WMT17 English-German", "25.00 BLEU", 10,
              "v0.6", "v0.7", ("transformer",), (">=", 0.25), "v0.7"),
    Benchmark("ncf", "recommendation", "NCF", "MovieLens-20M", "0.635 HR@10", 10, "v0.6", "v0.6", ("ncf",)),
    Benchmark("minigo", "reinforcement learning", "MiniGo", "Go 9x9 self-play", "50% win rate vs. checkpoint", 10,
              "v0.6", "v2.1", ("minigo",), (">=", 0.5)),
    Benchmark("bert", "language modelling", "BERT-large", "Wikipedia 2020-01-01", "0.720 masked-LM accuracy", 10,
              "v0.7", "v5.0", ("bert",), (">=", 0.72), "v1.0"),
    Benchmark("dlrm", "recommendation", "DLRM", "Criteo 1TB Click Logs", "0.8025 AUC", 5,
              "v0.7", "v2.1", ("dlrm",), (">=", 0.8025)),
    Benchmark("dlrm_dcnv2", "recommendation", "DLRM-DCNv2", "Criteo 4TB multi-hot", "0.80275 AUC", 10,
              "v3.0", None, ("dlrm_dcnv2",), (">=", 0.80275)),
    Benchmark("rnnt", "speech recognition", "RNN-T", "LibriSpeech", "0.058 word error rate", 10,
              "v1.0", "v3.1", ("rnnt",), ("<=", 0.058)),
    Benchmark("unet3d", "medical image segmentation", "3D U-Net", "KiTS19", "0.908 mean DICE", 40,
              "v1.0", "v4.0", ("unet3d",), (">=", 0.908)),
    Benchmark("gpt3", "large language model pre-training", "GPT-3 175B", "C4", "2.69 log perplexity", 3,
              "v2.1", "v4.1", ("gpt3",), ("<=", 2.69)),
    Benchmark("stable_diffusion", "text to image", "Stable Diffusion v2", "LAION-400M-filtered",
              "FID <= 90 and CLIP >= 0.15", 10, "v3.1", "v5.0", ("stable_diffusion",)),
    Benchmark("llama2_70b_lora", "large language model fine-tuning", "Llama 2 70B LoRA", "SCROLLS GovReport",
              "0.925 log perplexity", 10, "v4.0", None, ("llama2_70b_lora",), ("<=", 0.925)),
    Benchmark("rgat", "graph neural network", "R-GAT", "IGBH-Full", "72.0% classification accuracy", 10,
              "v4.0", None, ("gnn", "rgat"), (">=", 0.72)),
    Benchmark("llama31_405b", "large language model pre-training", "Llama 3.1 405B", "C4", "5.6 log perplexity", 3,
              "v5.0", None, ("llama31_405b",), ("<=", 5.6)),
    Benchmark("llama31_8b", "large language model pre-training", "Llama 3.1 8B", "C4", "3.3 log perplexity", 10,
              "v5.1", None, ("llama31_8b",)),
    Benchmark("flux1", "text to image", "FLUX.1", "CC12M", "0.586 validation loss", 10,
              "v5.1", None, ("flux1",)),
)


@cache
def round_version(round_: str) -> tuple[int, int]:
    """A round's name "vX.Y" as the pair (X, Y) that sorts rounds in order; a ValueError for any other name."""
    match = re.fullmatch(r"v(\d+)\.(\d+)", round_)
    if not match:
        raise ValueError(f"not a round name: {round_!r} (expected vX.Y)")
    return int(match.group(1)), int(match.group(2))


def successors(round_: str) -> list[str]:
    """The rounds that may follow `round_`: vX.1 after vX.0, and v(X+1).0."""
    major, minor = round_version(round_)
    return ([f"v{major}.1"] if minor == 0 else []) + [f"v{major + 1}.0"]


def unavailable_rounds(analysed: Sequence[str] | str, available: Sequence[str], among: str, remedy: str) -> str | None:
    """What is wrong when params `analysis.rounds` (a list; "all" passes) names a round not in `available` (the
    rounds fetched, called `among` in the message), so there would be no data for it: "v9.9 is not among
    fetch.rounds (v4.0, v5.1), so there is no data for it: {remedy}"; None when nothing is."""
    if analysed == "all":
        return None
    missing = [round_ for round_ in analysed if round_ not in available]
    if not missing:
        return None
    return (f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not among {among} "
            f"({', '.join(available) or 'none'}), so there is no data for {'it' if len(missing) == 1 else 'them'}: "
            f"{remedy}")


@cache  # asked once per result log
def identify(round_: str, folder: str) -> Benchmark | None:
    """The benchmark a results folder of a round holds, or None when the catalogue has no such benchmark."""
    for benchmark in CATALOGUE:
        if folder in benchmark.folders and benchmark.covers(round_):
            return benchmark
    return None


# When each round was published (year, month): the software era a result belongs to. v6.0: MLCommons' press
# release of 16 June 2026 (mlcommons.org, "MLPerf Training v6.0 results").
ROUND_PUBLISHED = {
    "v0.5": (2018, 12), "v0.6": (2019, 7), "v0.7": (2020, 7), "v1.0": (2021, 6), "v1.1": (2021, 12),
    "v2.0": (2022, 6), "v2.1": (2022, 11), "v3.0": (2023, 6), "v3.1": (2023, 11), "v4.0": (2024, 6),
    "v4.1": (2024, 11), "v5.0": (2025, 6), "v5.1": (2025, 11),
    "v6.0": (2026, 6),
}


def round_published(round_: str) -> float:
    """The round's publication date as a fractional year (the start of its month). A round not in
    ROUND_PUBLISHED (one published after this table) falls back on the calendar MLCommons keeps: vX.0 in June and
    vX.1 in November of 2020 + X. Raises ValueError for a name not of the form vX.Y."""
    if round_ in ROUND_PUBLISHED:
        year, month = ROUND_PUBLISHED[round_]
    else:
        major, minor = round_version(round_)
        year, month = 2020 + major, (6 if minor == 0 else 11)
    return year + (month - 1) / 12


def published_text(round_: str) -> str:
    """'published June 2025', or for a round not in the catalogue's dated table, the calendar's month said so."""
    if round_ in ROUND_PUBLISHED:
        year, month = ROUND_PUBLISHED[round_]
        return f"published {dt.date(year, month, 1):%B %Y}"
    when = round_published(round_)
    year, month = int(when), round((when - int(when)) * 12) + 1
    return (f"published about {dt.date(year, month, 1):%B %Y} (MLCommons' usual calendar: the round is not in "
            "this project's table of publication dates)")


def last_allowed(folders: Sequence[str]) -> str | None:
    """The last round whose rules allow one of `folders`, when a later round's rules allow none (retired from
    then on); None while the newest rules still allow one."""
    allowed = [round_ for round_, names in rules().rounds.items() if set(folders) & set(names)]
    newest = max(rules().rounds, key=round_version)
    if not allowed or newest in allowed:
        return None
    return max(allowed, key=round_version)


def _with_package_rules(benchmark: Benchmark) -> Benchmark:
    runs = rules().runs.get(benchmark.folders[-1], benchmark.runs_required)
    last = benchmark.last_round or last_allowed(benchmark.folders)
    return replace(benchmark, runs_required=runs, last_round=last)


def _new_benchmarks(described: Sequence[Benchmark]) -> tuple[Benchmark, ...]:
    """The benchmarks of the package's rules that `described` does not know, under their folder names."""
    known = {folder for benchmark in described for folder in benchmark.folders}
    firsts: dict[str, str] = {}
    for round_, names in sorted(rules().rounds.items(), key=lambda item: round_version(item[0])):
        for name in names:
            firsts.setdefault(name, round_)
    new = []
    for folder, first in sorted(firsts.items()):
        if folder in known:
            continue
        target = rules().targets.get(folder)
        quality = "not stated in the package" if target is None else f"{target[0]} {target[1]:g} (eval_accuracy)"
        new.append(Benchmark(folder, "", folder, "", quality,
                             rules().runs.get(folder, 10), first, last_allowed((folder,)), (folder,), target,
                             new=True))
    return tuple(new)


CATALOGUE: tuple[Benchmark, ...] = (*(_with_package_rules(benchmark) for benchmark in DESCRIBED),
                                    *_new_benchmarks(DESCRIBED))
BY_ID = {benchmark.id: benchmark for benchmark in CATALOGUE}
