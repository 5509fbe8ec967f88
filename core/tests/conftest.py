from __future__ import annotations

import pyarrow.compute as pc
import pytest
from pydantic import Field, FilePath

from mdf import Filter, Params, hookimpl
from mdf.plugins import Plugins, _load, load_plugins
from mdf.testing import register_plugin


@pytest.fixture(autouse=True)
def fresh_plugins():
    """Plugin loading is cached per process; tests that change env or sys.path need a fresh load."""
    _load.cache_clear()
    yield
    _load.cache_clear()


class CharCountFilter(Filter):
    """Keep texts with min_length..max_length characters (core tests need no plugin installed)."""

    name = "char_count_filter"

    class Params(Params):
        column: str = Field("text", description="string column")
        min_length: int = Field(0, ge=0, description="fewest characters")
        max_length: int | None = Field(None, description="most characters")

    def keep(self, batch):
        n = pc.utf8_length(batch.column(self.params.column))
        hi = self.params.max_length if self.params.max_length is not None else 2**62
        return pc.and_(pc.greater_equal(n, self.params.min_length), pc.less_equal(n, hi)), "length"


class ListedFilter(Filter):
    """Drop rows whose column value is listed in a file."""

    name = "listed_filter"

    class Params(Params):
        column: str = Field("url", description="column to look up")
        listing: FilePath | None = Field(None, description="file of values, one a line")
        values: list[str] = Field(default_factory=list, description="values inline")

    def keep(self, batch):
        values = list(self.params.values)
        if self.params.listing:
            values += self.params.listing.read_text().split()
        return pc.invert(pc.is_in(batch.column(self.params.column), value_set=pc.cast(values, "string")))


class CoreTestPlugin:
    @hookimpl
    def mdf_register_operators(self, registry):
        registry.add(CharCountFilter)
        registry.add(ListedFilter)


@pytest.fixture
def core_plugins() -> Plugins:
    plugins = load_plugins()
    register_plugin(plugins, CoreTestPlugin(), "core-tests")
    return plugins
