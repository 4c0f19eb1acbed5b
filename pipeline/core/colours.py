"""The project's colours, without a plotting library: the page's tables and the figures use the same ones."""

# seaborn's whitegrid theme as matplotlib ships it (no seaborn import needed).
STYLE = "seaborn-v0_8-whitegrid"
# seaborn's colour-blind palette, as hex.
COLOURBLIND = ["#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc", "#ca9161", "#fbafe4", "#949494", "#ece133",
               "#56b4e9"]
