"""Start a real two-raylet Ray cluster on this machine (loopback only) and keep it until stdin closes.

Prints the GCS address on its first line. Used by the multi-node test: the head offers ``head_node``, the
second raylet ``second_node``, so a stage that asks for ``second_node`` must run on the second raylet.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # bind to 127.0.0.1, before ray is imported

from ray.cluster_utils import Cluster


def main() -> None:
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "resources": {"head_node": 1}})
    cluster.add_node(num_cpus=1, resources={"second_node": 1})
    cluster.wait_for_nodes()
    print(cluster.address, flush=True)
    sys.stdin.read()
    cluster.shutdown()


if __name__ == "__main__":
    main()
