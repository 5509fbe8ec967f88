"""mdf-slurm: ``mdf slurm run`` and ``mdf slurm status``, a recipe on Slurm (an allocation with Ray, or an array)."""
