"""Modalities and cost classes: the numbers the batch-size planner sizes batches with, declared, not guessed.

Readers and operators *name* what they handle (``modality = "image"``, ``cost_class = "model"``); the names
resolve here, to classes carrying the numbers. The planner never looks at the bytes to decide what data is:
a reader knows its format (a WebDataset tar holds images), an operator knows what it decodes, and a column
of bytes does not say whether anything will ever decode it.

Core registers the built-ins through the ``mdf_register_modalities`` and ``mdf_register_cost_classes`` hooks,
like any plugin, so a plugin that brings a kind of data core has never heard of (point clouds, spectrograms)
registers its own profile and declares it on its reader or operators, without editing core::

    class PointCloud(mdf.Modality):
        \"\"\"LiDAR sweeps: float32 points decoded from a compressed .laz (about x6 its bytes).\"\"\"

        name = "point_cloud"
        memory_multiplier = 6.0
        complexity = 4.0
        default_rows = 500
        max_rows = 2_500

    @mdf.hookimpl
    def mdf_register_modalities(registry):
        registry.add(PointCloud)
"""

from __future__ import annotations

from typing import ClassVar

_MODALITY_NUMBERS = ("memory_multiplier", "complexity", "default_rows", "max_rows")


class Modality:
    """A kind of data: how much a row grows in memory while processed, and the rows a batch may hold.

    Subclass it with a unique snake_case ``name`` and every number below; register the class in an
    ``mdf_register_modalities`` hook. Checked when the class is defined (a missing or non-positive number
    raises ``TypeError``), so a mistake surfaces as the plugin failing to load, in ``mdf plugins``.

    Where a recipe's reader and operators declare several modalities the heaviest wins (largest
    ``memory_multiplier``, then ``complexity``): each column of a row grows at most by the heaviest factor, so
    sizing by it never underestimates a row.
    """

    name: ClassVar[str] = ""
    memory_multiplier: ClassVar[float]
    """Decoded size / payload size while processed (a JPEG decodes to several times its bytes)."""
    complexity: ClassVar[float]
    """The modality's own processing weight; the operators' cost-class weights are added to it."""
    default_rows: ClassVar[int]
    """Rows per batch when nothing can be sampled."""
    max_rows: ClassVar[int]
    """Rows per batch never exceeded, whatever the bytes say (per-row costs the bytes do not show)."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        for attr in _MODALITY_NUMBERS:
            value = getattr(cls, attr, None)
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise TypeError(f"modality {cls.__name__}.{attr} = {value!r}; give a positive number")
        if cls.max_rows < cls.default_rows:
            raise TypeError(f"modality {cls.__name__}: max_rows {cls.max_rows} < default_rows {cls.default_rows}")

    @classmethod
    def heaviness(cls) -> tuple[float, float]:
        """The order in which declared modalities compete: memory first, then processing weight."""
        return cls.memory_multiplier, cls.complexity


class CostClass:
    """How heavy a row is for an operator, as the weight it adds to the batch's complexity multiplier.

    Subclass it with a unique snake_case ``name`` and a ``weight`` (>= 0); register it in an
    ``mdf_register_cost_classes`` hook; operators declare it by name (``cost_class = "model"``).
    """

    name: ClassVar[str] = ""
    weight: ClassVar[float]
    """Added to the modality's complexity; rows per batch = bytes / (row memory x complexity)."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        weight = getattr(cls, "weight", None)
        if not isinstance(weight, int | float) or isinstance(weight, bool) or weight < 0:
            raise TypeError(f"cost class {cls.__name__}.weight = {weight!r}; give a number >= 0")


# Multipliers and default sizes from the seed; complexity from Data-Juicer (text 1, video 15, the rest
# between); max rows at 5x the default, the seed's ratio for text (10,000 -> 50,000) and video (400 -> 2,000).
class Text(Modality):
    """Plain columns (text, numbers, ids): a row takes its Arrow payload in memory. The default."""

    name = "text"
    memory_multiplier = 1.0
    complexity = 1.0
    default_rows = 10_000
    max_rows = 50_000


class Image(Modality):
    """Encoded images (JPEG, PNG, WebP ...) that operators decode to pixels."""

    name = "image"
    memory_multiplier = 5.0
    complexity = 3.0
    default_rows = 2_000
    max_rows = 10_000


class Audio(Modality):
    """Encoded audio decoded to samples."""

    name = "audio"
    memory_multiplier = 8.0
    complexity = 5.0
    default_rows = 1_000
    max_rows = 5_000


class Video(Modality):
    """Encoded video decoded to frames."""

    name = "video"
    memory_multiplier = 20.0
    complexity = 15.0
    default_rows = 400
    max_rows = 2_000


class Multimodal(Modality):
    """Interleaved documents (text with several images, audio), for a reader that yields them as one row."""

    name = "multimodal"
    memory_multiplier = 10.0
    complexity = 8.0
    default_rows = 1_600
    max_rows = 8_000


class Model(CostClass):
    """A neural network or statistical model evaluated per row (fastText language id, a classifier)."""

    name = "model"
    weight = 0.3


class Embedding(CostClass):
    """An encoder producing a vector per row (CLIP, a sentence encoder)."""

    name = "embedding"
    weight = 0.3


class Extraction(CostClass):
    """A whole document parsed per row (HTML -> main text): measured heavier per row than a fastText model."""

    name = "extraction"
    weight = 0.3


class FilterCost(CostClass):
    """Per-row rules deciding keep or drop (quality heuristics, thresholds). The default of filters."""

    name = "filter"
    weight = 0.2


class Deduplication(CostClass):
    """Keys hashed per row and claimed in the key-state service. The default of deduplicators."""

    name = "deduplication"
    weight = 0.2


class Cleaning(CostClass):
    """Columns added or rewritten with light per-row work. The default of refiners."""

    name = "cleaning"
    weight = 0.1


MODALITIES: tuple[type[Modality], ...] = (Text, Image, Audio, Video, Multimodal)
COST_CLASSES: tuple[type[CostClass], ...] = (Model, Embedding, Extraction, FilterCost, Deduplication, Cleaning)
