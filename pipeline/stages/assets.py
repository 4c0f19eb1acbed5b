"""Stage `assets`: the site's shared assets in `reports/assets/` (site.css, site.js and vega.js, the chart library
from vl-convert-python; see `pipeline.report.assets`).

    python -m pipeline.stages.assets

Every page of the site (the `report` stage) loads them by relative path. They depend on code only, so this stage
reruns when the code or the chart library changes, not on a data or params change.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pipeline.core import paths
from pipeline.core.cli import stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import atomic_dir, write_text
from pipeline.report.assets import site_assets

# The settings this stage reads (tools/sync_dvc_params.py writes them into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ()


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run the assets stage: write the site's shared assets into reports/assets/ (one folder, swapped in whole);
    returns None."""
    stage_arguments("pipeline.stages.assets", __doc__, argv)
    assets = site_assets()
    with atomic_dir(paths.ASSETS) as folder:  # swapped in whole at the end: Ctrl-C keeps the previous one
        for name, text in sorted(assets.items()):
            write_text(text, folder / Path(name).relative_to(paths.ASSETS.name))
    print(f"wrote {len(assets)} assets into {paths.ASSETS}/ "
          f"({sum(len(text.encode()) for text in assets.values()) // 1024} KiB)")


if __name__ == "__main__":
    main()
