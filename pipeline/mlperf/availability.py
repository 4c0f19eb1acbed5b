"""A system's availability category, as MLCommons publishes it, from the description's free-text `status`.

MLCommons lists every Training result under one of four categories (the system description checker of
mlperf-logging requires exactly these names from ruleset 4.0 on, and its result summarizer maps the older
spellings onto them with `result_summarizer/config.yaml`):

    available_onprem   "Available on-premise"
    available_cloud    "Available cloud"
    preview            "Preview"
    research           "Research, Development, or Internal (RDI)"

`category` reads every spelling published from v0.6 to v5.1 (`SPELLINGS`, compared without case, spaces and
hyphens): "onprem", "on-premise", "Available on premise", "cloud", "Available in cloud", "rdi"...
A bare "available" (v0.7 to v4.0) is on-premise, as the official summarizer maps it, although a few of those
systems are cloud instances by their name (Google's cloud-tpu-v4 of v2.0): the description does not say, and
the official tables follow the same map. A spelling not in the table is no category (missing), never a guess;
`unknown_spellings` lists them for the features stage's notes.

In params (`analysis.availability`) the categories are named as above; `SHORTHANDS` are accepted too: `available`
for both available categories, `onprem`, `cloud`, `rdi` and `internal` for the one they name.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only annotations: params validation (pipeline.settings) runs without loading pandas
    import pandas as pd

AVAILABLE_ONPREM, AVAILABLE_CLOUD, PREVIEW, RESEARCH = "available_onprem", "available_cloud", "preview", "research"
CATEGORIES = (AVAILABLE_ONPREM, AVAILABLE_CLOUD, PREVIEW, RESEARCH)
# The names MLCommons' tables give the categories.
OFFICIAL_NAMES = {AVAILABLE_ONPREM: "Available on-premise", AVAILABLE_CLOUD: "Available cloud",
                  PREVIEW: "Preview", RESEARCH: "Research, Development, or Internal (RDI)"}

# Every published spelling, in `spelling_key` form, with the category it means: the keys of mlperf-logging's
# result_summarizer/config.yaml and the other spellings of the published descriptions (v0.6 "on-premise",
# v3.1 "Available on premise" and "Available in cloud", v4.0 "Cloud").
SPELLINGS = {
    "availableonpremise": AVAILABLE_ONPREM, "availableonprem": AVAILABLE_ONPREM, "onpremise": AVAILABLE_ONPREM,
    "onprem": AVAILABLE_ONPREM, "available": AVAILABLE_ONPREM,
    "availablecloud": AVAILABLE_CLOUD, "availableincloud": AVAILABLE_CLOUD, "cloud": AVAILABLE_CLOUD,
    "preview": PREVIEW,
    "research,development,orinternal(rdi)": RESEARCH, "research,development,orinternal": RESEARCH,
    "rdi": RESEARCH, "research": RESEARCH, "development": RESEARCH, "internal": RESEARCH,
}
# What params may name besides the categories: a shorthand stands for one category or several.
SHORTHANDS = {"available": (AVAILABLE_ONPREM, AVAILABLE_CLOUD), "onprem": (AVAILABLE_ONPREM,),
              "cloud": (AVAILABLE_CLOUD,), "rdi": (RESEARCH,), "internal": (RESEARCH,)}
# Ignored when spellings are compared, besides case.
_IGNORED = re.compile(r"[\s\-_]+")


def spelling_key(text: str) -> str:
    """A status as `SPELLINGS` keys it: lower case, without spaces, hyphens and underscores."""
    return _IGNORED.sub("", text.strip().lower())


def _is_stated(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def category(value: object) -> str | None:
    """The category (`CATEGORIES`) a description's status means; None when it is not stated or not a known
    spelling."""
    if not _is_stated(value):
        return None
    return SPELLINGS.get(spelling_key(str(value)))


def unknown_spellings(status: pd.Series) -> pd.Series:
    """True where a status is stated but is no known spelling (its category is then missing)."""
    return status.map(lambda value: _is_stated(value) and category(value) is None).astype(bool)


def params_categories(values: list[object]) -> list[str]:
    """The categories a params list names (categories or `SHORTHANDS`, any case), in `CATEGORIES` order without
    repeats. Raises ValueError naming the unknown values and the valid ones."""
    chosen: set[str] = set()
    unknown = []
    for value in values:
        name = str(value).strip().lower().replace("-", "_")
        if name in CATEGORIES:
            chosen.add(name)
        elif name in SHORTHANDS:
            chosen.update(SHORTHANDS[name])
        else:
            unknown.append(str(value))
    if unknown:
        raise ValueError(f"holds {', '.join(unknown)}; the availability categories are {', '.join(CATEGORIES)} "
                         f"(or the shorthands {', '.join(SHORTHANDS)})")
    return [name for name in CATEGORIES if name in chosen]
