"""``mdf report OUTPUT [--open]``: rebuild a run's HTML report from its metadata (``OUTPUT/_mdf/``).

``OUTPUT`` may be an ``s3://`` output: its ``_mdf/metrics.json`` is read from there, the page is rendered in a
local folder (sample rejected rows read from the published rejected output, by range) and uploaded to
``OUTPUT/_mdf/report.html``; the S3 settings are the AWS chain's and ``AWS_ENDPOINT_URL_S3``, as for a run.
"""

from __future__ import annotations

import tempfile
import webbrowser
from pathlib import Path

import click

from mdf import layout
from mdf.errors import MdfError
from mdf.report.build import write_report
from mdf.storage import default, is_remote, join


@click.command("report")
@click.argument("output")
@click.option("--open", "open_", is_flag=True, help="open the page in a browser, where one exists")
def command(output: str, open_: bool) -> None:
    """Write OUTPUT/_mdf/report.html for the run whose writer path is OUTPUT; print its path."""
    if is_remote(output):
        path, shown = _remote(output)
    else:
        path = write_report(output)
        shown = str(path)
    click.echo(shown)
    if open_ and not webbrowser.open(path.resolve().as_uri()):
        click.echo("no browser found on this machine: open the file above from a machine with one", err=True)


def _remote(url: str) -> tuple[Path, str]:
    """Render the report of an ``s3://`` output in a local folder and upload it; ``(local page, its URL)``."""
    storage = default()
    src = join(url, layout.META, "metrics.json")
    if not storage.exists(src):
        raise MdfError(f"{url}: no _mdf/metrics.json (not the output of a completed mdf run); pass the writer's path")
    local = Path(tempfile.mkdtemp(prefix="mdf-report-"))
    layout.meta_dir(local).mkdir(parents=True)
    layout.metrics_path(local).write_bytes(storage.read_bytes(src))
    page = write_report(local)
    target = join(url, layout.META, "report.html")
    storage.put_file(str(page), target)
    return page, target
