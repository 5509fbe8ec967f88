"""The Polars peer of W1 with its input and output on S3: ``../shared/peers/peers/polars/pl.py``'s query (imported
from there, not copied) over ``scan_parquet(s3://...)`` -> ``sink_parquet(s3://...)``, ``storage_options`` from the
standard AWS variables. Runs in the Polars peer venv.

usage: polars_s3.py PEERS_DIR BLOCKLIST S3_INPUT_PREFIX S3_OUTPUT_KEY
"""

import os
import sys


def main() -> None:
    peers, blocklist, src, dst = sys.argv[1:5]
    sys.path.insert(0, os.path.join(peers, "polars"))
    import pl as peer  # the shared peer's module: load_block, host_expr, SINK, MIN_LEN, MAX_LEN
    import polars

    options = {
        "aws_access_key_id": os.environ["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": os.environ["AWS_SECRET_ACCESS_KEY"],
        "aws_endpoint_url": os.environ["AWS_ENDPOINT_URL_S3"],
        "aws_region": os.environ.get("AWS_REGION", "us-east-1"),
        "aws_allow_http": "true",
    }
    block = peer.load_block(blocklist)
    keep = polars.col("text").str.len_chars().is_between(peer.MIN_LEN, peer.MAX_LEN)
    if block:
        pat = r"(?:^|\.)(?:" + "|".join(polars.escape_regex(d) for d in block) + r")$"
        keep = keep & ~peer.host_expr().str.contains(pat)
    lf = polars.scan_parquet(src.rstrip("/") + "/*.parquet", storage_options=options)
    lf.filter(keep).sink_parquet(dst, engine="streaming", storage_options=options, **peer.SINK)


if __name__ == "__main__":
    main()
