"""The profile and name of each cluster of the cluster stage (`pipeline.analysis.statistics.clustering`): size,
configuration (accelerator counts, families, intra-node links, year) and the median and range of each outcome, with
a short name and a one-sentence description that gives the group's accelerator counts beside its efficiency."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from functools import cache
from typing import Any

import pandas as pd

from pipeline.core.artifacts import Record
from pipeline.core.features import PROFILED, ROUND_EFFICIENCY
from pipeline.mlperf.hardware.links import link_table

DIGITS = 4  # stored statistics
NAMED_VENDOR_SHARE = 0.25  # a mixed cluster's name gives the link of each vendor with at least this share


def _optional(value: Any) -> float | None:
    return None if pd.isna(value) else round(float(value), DIGITS)


def _most_common(values: Iterable[Any]) -> str | None:
    """The commonest of the known `values`, as text (ties: the first by name); None when none is known."""
    counts = Counter(str(value) for value in values if not pd.isna(value))
    return min(counts, key=lambda value: (-counts[value], value)) if counts else None


def _names(group: pd.DataFrame, column: str) -> list[str]:
    """`column` of each member as text, "unknown" where missing (or for every member when the frame lacks it)."""
    if column not in group:
        return ["unknown"] * len(group)
    return ["unknown" if pd.isna(value) else str(value) for value in group[column].tolist()]


def family_counts(group: pd.DataFrame) -> pd.Series:
    """Results per accelerator family, most first (ties by name, so the order is stable)."""
    counts = Counter(_names(group, "accelerator_family"))
    return pd.Series(dict(sorted(counts.items(), key=lambda item: (-item[1], item[0]))), dtype="int64")


@cache  # the package's table: read and checked once per family and form factor
def table_link(family: Any, form_factor: Any) -> str | None:
    """The accelerator-to-accelerator link kind of `family` in `form_factor` when pipeline/mlperf/hardware/links.csv
    lists a
    single one for it (its rows of that form factor, else its rows for every form factor): ICI for a TPU, NVLink
    for an H100 SXM; None when the table lists none or several (an A100 PCIe may have an NVLink bridge or not)."""
    table = link_table()
    rows = table[table["family"] == family]
    if isinstance(form_factor, str) and (rows["form_factor"] == form_factor).any():
        rows = rows[rows["form_factor"] == form_factor]
    elif (rows["form_factor"] == "").any():
        rows = rows[rows["form_factor"] == ""]
    kinds = rows["link"].unique()
    return str(kinds[0]) if len(kinds) == 1 else None


def member_links(group: pd.DataFrame) -> pd.Series:
    """Each member's intra-node link kind: the one its description states (`interconnect_intra`), else the one the
    link table gives its family and form factor (`table_link`), else missing."""
    stated = group.get("interconnect_intra", pd.Series(None, index=group.index, dtype=object))
    form = group.get("accelerator_form_factor", pd.Series(None, index=group.index, dtype=object))
    return pd.Series([link if isinstance(link, str) else table_link(family, form_factor)
                      for link, family, form_factor in zip(stated, group["accelerator_family"], form)],
                     index=group.index, dtype=object)


def vendor_links(group: pd.DataFrame) -> dict[str, str]:
    """The most common intra-node link kind (`member_links`) of each accelerator vendor's members, vendors with
    most members first; a vendor none of whose members has a known link is left out."""
    links = member_links(group).tolist()
    vendors = _names(group, "accelerator_vendor")
    order = Counter(vendors)
    found = {}
    for vendor in sorted(order, key=lambda name: (-order[name], name)):
        link = _most_common(link for link, owner in zip(links, vendors) if owner == vendor)
        if link:
            found[vendor] = link
    return found


def cluster_name(group: pd.DataFrame) -> str:
    """A short name from the profile: the accelerator range, the family when it holds most members ("8-64 H100"
    when it holds all, "8-64 mostly H100" when more than half, "8-64 mixed" otherwise), and the intra-node link by
    its name: the dominant family's most common link, or in a mixed cluster the link of each vendor holding at
    least `NAMED_VENDOR_SHARE` of the members ("NVLink (NVIDIA), ICI (Google)"). Links come from `member_links`,
    so a TPU's is ICI, never another vendor's NVLink."""
    low, high = int(group["accelerator_count"].min()), int(group["accelerator_count"].max())
    shares = family_counts(group) / len(group)
    top, share = str(shares.index[0]), float(shares.iloc[0])
    size = f"{low}" if low == high else f"{low}-{high}"
    if share > 0.5:
        family = top if share == 1 else f"mostly {top}"
        link = _most_common(link for link, name in zip(member_links(group).tolist(),
                                                        _names(group, "accelerator_family")) if name == top)
        return f"{size} {family}" + (f", {link}" if link else "")
    vendors = Counter(_names(group, "accelerator_vendor"))
    named = {vendor: link for vendor, link in vendor_links(group).items()
             if vendors[vendor] / len(group) >= NAMED_VENDOR_SHARE}
    links = ", ".join(f"{link} ({vendor})" for vendor, link in named.items())
    return f"{size} mixed" + (f", {links}" if links else "")


class ClusterProfile(Record):
    """One cluster by its members (results): size, configuration and the median and range of each outcome. An
    outcome the configurations lack (round efficiency on old data) is left out."""

    cluster: int
    """0..k-1, from the highest median round efficiency (0: the most hardware-efficient)."""
    size: int
    """Results."""
    small: bool
    """Fewer results than params `cluster.min_size`: too few to read much into."""
    name: str
    """A short name from the profile (`cluster_name`), unique among the clusters."""
    accelerators_median: float
    """Accelerators per result: median."""
    accelerators_min: float
    """Accelerators per result: fewest."""
    accelerators_max: float
    """Accelerators per result: most."""
    families: dict[str, int]
    """Results per accelerator family, the four commonest (by name in the file)."""
    family_share: float
    """The commonest family's share of the results, 0 to 1."""
    links: dict[str, str]
    """Accelerator vendor -> its members' commonest intra-node link kind (`vendor_links`)."""
    accelerator_year_median: float | None
    """Median launch year of the accelerators."""
    time_to_train_min_median: float | None = None
    """Time to train, minutes (lower: faster): median."""
    time_to_train_min_min: float | None = None
    """Lowest."""
    time_to_train_min_max: float | None = None
    """Highest."""
    accelerator_hours_median: float | None = None
    """Accelerator-hours, accelerators x time to train (lower: less hardware time): median."""
    accelerator_hours_min: float | None = None
    """Lowest."""
    accelerator_hours_max: float | None = None
    """Highest."""
    scaling_efficiency_median: float | None = None
    """Within-series scaling efficiency (1 = linear, higher: better): median."""
    scaling_efficiency_min: float | None = None
    """Lowest."""
    scaling_efficiency_max: float | None = None
    """Highest."""
    round_efficiency_median: float | None = None
    """The round's fewest accelerator-hours / the result's (1 = best of its round): median."""
    round_efficiency_min: float | None = None
    """Lowest."""
    round_efficiency_max: float | None = None
    """Highest."""
    count_rank: int
    """Rank of the median accelerator count among the clusters, 1 = fewest accelerators."""
    description: str
    """The profile in one sentence (`describe`)."""

    def outcome(self, column: str, statistic: str) -> float | None:
        """`statistic` ("median", "min", "max") of a profiled outcome (`PROFILED`) or of "accelerators"."""
        value = getattr(self, f"{column}_{statistic}")
        return None if value is None else float(value)


# The columns a profile reads.
PROFILE_COLUMNS = {"cluster", "accelerator_count", "accelerator_family", "accelerator_vendor", "accelerator_year",
                   "accelerator_form_factor", "interconnect_intra", "time_to_train_min", *PROFILED}


def profiles(frame: pd.DataFrame, min_size: int) -> list[ClusterProfile]:
    """Per cluster: size, configuration (accelerators, families, year) and outcome medians and ranges."""
    rows = []
    # Only the columns profiled: each group copies every column it has.
    frame = frame[[column for column in frame if column in PROFILE_COLUMNS]]
    for cluster, group in frame.groupby("cluster"):
        families = family_counts(group)
        profile = {
            "cluster": int(cluster), "size": len(group), "small": len(group) < min_size, "name": cluster_name(group),
            "accelerators_median": float(group["accelerator_count"].median()),
            "accelerators_min": float(group["accelerator_count"].min()),
            "accelerators_max": float(group["accelerator_count"].max()),
            "families": {str(name): int(count) for name, count in families.head(4).items()},
            "family_share": round(float(families.iloc[0] / len(group)), DIGITS),
            "links": vendor_links(group),
            "accelerator_year_median": _optional(group["accelerator_year"].median()),
        }
        for column in PROFILED:
            if column in group:
                profile.update({f"{column}_{stat}": _optional(getattr(group[column], stat)())
                                for stat in ("median", "min", "max")})
        rows.append(profile)
    by_count = sorted(rows, key=lambda row: (row["accelerators_median"], row["cluster"]))
    for row in rows:
        row["count_rank"] = by_count.index(row) + 1
        row["description"] = describe(row, len(rows))
    names = pd.Series([row["name"] for row in rows])
    for row, duplicate in zip(rows, names.duplicated(keep=False)):
        if duplicate:  # two clusters with one name: their outcome tells them apart
            row["name"] = f"{row['name']}, median {row['time_to_train_min_median']:.3g} min"
    return [ClusterProfile.model_validate(row) for row in rows]


def describe(profile: dict[str, Any], n_clusters: int) -> str:
    """One sentence of a profile, its efficiency beside its accelerator counts and their rank among the
    `n_clusters` groups (so an efficient group of few accelerators reads as such): "12 results on 8-64
    accelerators (H100 9, A100 3; count rank 1 of 5, 1 = fewest): median 20.1 min, 12.0 accelerator-hours, round
    efficiency 0.61, scaling efficiency 0.85"."""
    families = ", ".join(f"{name} {count}" for name, count in list(profile["families"].items())[:3])
    low, high = int(profile["accelerators_min"]), int(profile["accelerators_max"])
    size = f"{low}" if low == high else f"{low}-{high}"
    extra = "".join(f", {label} {profile[key]:.2f}" for key, label in
                    ((f"{ROUND_EFFICIENCY}_median", "round efficiency"),
                     ("scaling_efficiency_median", "scaling efficiency")) if profile.get(key) is not None)
    return (f"{profile['size']} results on {size} accelerators ({families}; count rank {profile['count_rank']} of "
            f"{n_clusters}, 1 = fewest): median "
            f"{profile['time_to_train_min_median']:.1f} min, {profile['accelerator_hours_median']:.1f} "
            f"accelerator-hours{extra}")
