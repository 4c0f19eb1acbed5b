"""The importance stage's result (reports/importance/<benchmark>.json): `ImportanceReport`, made by
`pipeline.analysis.statistics.importance.analyse` and read by the cluster and rank stages and the report. Apart from the
analysis so that reading the result needs none of its libraries.
"""
from __future__ import annotations

import numpy as np
from pydantic import ConfigDict, Field

from pipeline.core.artifacts import Artifact, Record


class Spread(Record):
    """A feature's permutation importance: R^2 lost when it is shuffled (unitless; higher: it matters more)."""

    mean: float
    """Mean over the `importance.permutation_repeats` shuffles."""
    std: float
    """Standard deviation over the shuffles."""


class RankCorrelation(Record):
    """Spearman's rank correlation of a numeric feature with the target, on the rows where the feature is known."""

    rho: float
    """Spearman's rho, -1 to 1."""
    p_value: float
    """Its p-value (3 significant digits)."""
    n: int
    """Complete pairs (at least `importance.MIN_SPEARMAN_PAIRS`)."""


class TargetFit(Record):
    """One target's cross-validation on held-out generations (`importance.cross_validated_importance`)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    oof_r2: float
    """R^2 of the model's out-of-fold predictions on held-out generations (unitless; higher: better)."""
    baseline_r2: float
    """The same for the baseline (least squares on log2 accelerator count and round date)."""
    gain: float
    """`oof_r2` - `baseline_r2`: what the hardware features add."""
    gain_low: float
    """The gain's 95% cluster-bootstrap interval over the generations: low end."""
    gain_high: float
    """High end."""
    oof_median_abs_error_log10: float
    """Median absolute out-of-fold error of log10 of the target (0.1: a factor of 1.26)."""
    permutation_importance: dict[str, Spread]
    """Per feature, the R^2 lost when it is shuffled."""
    stability: dict[str, float]
    """Per numeric hardware feature, the share of the generations' bootstrap resamples in which the selection rule
    keeps it for this target alone (0 to 1; never kept: left out)."""
    mutual_information: dict[str, float]
    """Model-free view: per feature, its mutual information with the target (nats)."""
    spearman: dict[str, RankCorrelation]
    """Model-free view: per numeric feature with enough known values, its rank correlation with the target."""
    importance_draws: dict[str, np.ndarray] = Field(default_factory=dict, exclude=True, repr=False)
    """Per feature, its R^2 lost in each bootstrap resample (resamples,), for the selection; not stored."""

    def __eq__(self, other: object) -> bool:
        """Equal stored fields (the draws, arrays never stored, would make `==` ambiguous)."""
        return isinstance(other, TargetFit) and self.model_dump() == other.model_dump()


class TargetVerdict(Record):
    """The gate's verdict on one target."""

    oof_r2: float
    """The model's R^2 on held-out generations (`TargetFit.oof_r2`)."""
    baseline_r2: float
    """The baseline's."""
    gain: float
    """Their difference."""
    gain_low: float
    """The gain's 95% interval: low end."""
    gain_high: float
    """High end."""
    passes: bool
    """Whether hardware features are credited for this target."""
    reason: str
    """Why not, in words; empty when it passes."""


class Gate(Record):
    """Which targets credit hardware features (`passing`), and why the others do not (`message`)."""

    min_r2: float
    """Params `importance.min_r2`."""
    min_families: int
    """Params `importance.min_families`."""
    n_families: int
    """Accelerator families in the data."""
    n_generations: int | None = None
    """Architecture generations in the data (the folds)."""
    rule: str
    """The gate's rule in words."""
    targets: dict[str, TargetVerdict]
    """Per target, the verdict."""
    passing: list[str]
    """The targets that pass."""
    explained: bool
    """Whether any target passes (the cluster stage then clusters on the selected features)."""
    message: str
    """The verdict in a sentence, as the stage prints it."""


class ImportanceReport(Artifact):
    """One benchmark's feature importance (reports/importance/<benchmark>.json, `importance.analyse`). A skipped
    one holds `reason`, `n_configurations`, and empty `targets` and `selected_features`."""

    KIND = "importance"

    n_configurations: int
    """Configurations (results) in scope."""
    targets: dict[str, TargetFit] = Field(default_factory=dict)
    """Per target (`log_time_to_train`, `log_accelerator_hours`), its cross-validation on held-out generations."""
    selected_features: list[str] = Field(default_factory=list)
    """The features the cluster stage clusters on, most stable first; empty when no target passes the gate."""
    n_families: int | None = None
    """Accelerator families."""
    n_generations: int | None = None
    """Architecture generations (accelerators.csv `generation`): the folds, each held out once with all its
    families."""
    round_feature: str | None = None
    """The column of the round's date (a covariate of every model, never selected)."""
    baseline: str | None = None
    """The baseline the gain is measured against, in words."""
    gate: Gate | None = None
    """Which targets credit hardware features."""
    selection_stability: dict[str, float] = Field(default_factory=dict)
    """Per numeric hardware feature, the share of the generations' bootstrap resamples in which the selection rule
    keeps it for any passing target (0 to 1; never kept: left out)."""

    @property
    def explained(self) -> bool:
        """Whether the gate credits hardware features for any target."""
        return self.gate is not None and self.gate.explained

    def oof_r2(self, target: str) -> float | None:
        """The model's R^2 on held-out generations for `target` (a key of TARGETS); None when not fitted."""
        fit = self.targets.get(target)
        return None if fit is None else fit.oof_r2
