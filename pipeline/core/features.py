"""The configuration features (columns of data/processed/configurations.parquet, docs/outputs.md) that the
analysis may use and params may name."""

# Hardware features; the importance stage selects among the numeric ones for clustering.
NUMERIC_FEATURES = [
    "accelerator_count", "n_nodes", "accelerators_per_node", "accelerator_memory_gib", "accelerator_year",
    "host_cpu_cores", "host_memory_gib", "interconnect_intra_gbps", "interconnect_inter_gbps",
]
CATEGORICAL_FEATURES = [
    "accelerator_vendor", "accelerator_family", "accelerator_form_factor", "host_cpu_vendor", "interconnect_intra",
    "interconnect_inter", "framework", "precision",  # the numeric format trained in (unknown: missing)
]

# Outcomes each cluster is profiled on, and the columns clustered and drawn on a log scale (they span decades).
ROUND_EFFICIENCY = "round_efficiency"  # accelerator-hours over the round's best (features stage)
PROFILED = ["time_to_train_min", "accelerator_hours", "scaling_efficiency", ROUND_EFFICIENCY]
LOG_SCALED = {"time_to_train_min", "accelerator_hours", "accelerator_count", "n_nodes", "accelerators_per_node",
              "accelerator_memory_gib", "host_cpu_cores", "host_memory_gib", "interconnect_intra_gbps",
              "interconnect_inter_gbps"}
