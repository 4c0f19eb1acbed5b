"""The project's colours, without a plotting library: the pages' tables and charts use the same ones."""

# seaborn's colour-blind palette, as hex.
COLOURBLIND = ["#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc", "#ca9161", "#fbafe4", "#949494", "#ece133",
               "#56b4e9"]
