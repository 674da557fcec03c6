"""BatchPPO: proximal policy optimisation that runs inside the fused step."""
