"""Every hook mdf calls, in one place: this module is the plugin API reference.

A plugin is a module (usually ``<package>.plugin``) exposed through the entry-point group ``mdf`` whose
functions are decorated with :data:`mdf.hookimpl` and named after the hooks below. Built-in readers and
writers are registered through these same hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from mdf.commands import CommandRegistry
    from mdf.recipe import Recipe
    from mdf.registry import Registry

hookspec = pluggy.HookspecMarker("mdf")


@hookspec
def mdf_register_operators(registry: Registry) -> None:
    """Add the plugin's operator classes.

    Call ``registry.add(OperatorClass)`` once per class. The class must subclass :class:`mdf.Filter`,
    :class:`mdf.Refiner` or :class:`mdf.Deduplicator` and have a ``name`` no other plugin uses; the registry
    raises :class:`mdf.errors.PluginError` otherwise and records which distribution contributed the class.

    :param registry: the operator registry.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def mdf_register_readers(registry: Registry) -> None:
    """Add the plugin's reader classes (subclasses of :class:`mdf.Reader`), keyed by their ``name``.

    The name is what a recipe writes as ``reader: {type: NAME}``.

    :param registry: the reader registry.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def mdf_register_writers(registry: Registry) -> None:
    """Add the plugin's writer classes (subclasses of :class:`mdf.Writer`), keyed by their ``name``.

    The name is what a recipe writes as ``writer: {type: NAME}`` or ``rejected: {type: NAME}``.

    :param registry: the writer registry.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def mdf_register_state_types(registry: Registry) -> None:
    """Add the plugin's bucket-side state types (subclasses of :class:`mdf.StateType`), keyed by their ``name``.

    A state type is what a deduplicator keeps in the key-state service beyond "was this key claimed first":
    a Hamming near-index, a store of signatures. The service routes a request's rows to buckets
    (:meth:`mdf.KeyState.request`), keeps one instance per bucket and namespace, snapshots and restores it with
    the bucket, inline and in Ray bucket actors alike; the state type answers, idempotently under retries. A
    deduplicator lists the types it asks in ``state_types``; a type no plugin registers is reported as a load
    error of the operator's plugin (``mdf plugins``) naming it.

    :param registry: the state-type registry.
    :return: nothing.

    .. versionadded:: 0.2
    """


@hookspec
def mdf_register_modalities(registry: Registry) -> None:
    """Add the plugin's modalities (subclasses of :class:`mdf.Modality`), keyed by their ``name``.

    A modality is what a reader's batches or an operator's columns hold, with the numbers the batch-size
    planner sizes batches by (memory multiplier, complexity, default and maximum rows). Readers and operators
    declare it by name (``modality = "point_cloud"``); one that names a modality no plugin registers is
    reported as a load error of its plugin (``mdf plugins``). Core registers ``text``, ``image``, ``audio``,
    ``video`` and ``multimodal`` through this hook.

    :param registry: the modality registry.
    :return: nothing.

    .. versionadded:: 0.2
    """


@hookspec
def mdf_register_cost_classes(registry: Registry) -> None:
    """Add the plugin's cost classes (subclasses of :class:`mdf.CostClass`), keyed by their ``name``.

    A cost class is the weight an operator adds to a batch's complexity (heavier pipelines get smaller
    batches). Operators declare it by name (``cost_class = "model"``); an unregistered name is reported as a
    load error of the operator's plugin. Core registers ``model``, ``embedding``, ``extraction``, ``filter``,
    ``deduplication`` and ``cleaning`` through this hook.

    :param registry: the cost-class registry.
    :return: nothing.

    .. versionadded:: 0.2
    """


@hookspec
def mdf_recipe_loaded(recipe: Recipe) -> Any:
    """Inspect a recipe after it validated and before any work starts.

    Raise :class:`mdf.errors.RecipeError` (with the YAML path) to refuse a recipe the plugin cannot serve, for
    example an operator combination that cannot work. Return value is ignored.

    :param recipe: the validated recipe.

    .. versionadded:: 0.1
    """


@hookspec
def mdf_register_executors(registry: Registry) -> None:
    """Add the plugin's executor classes (subclasses of :class:`mdf.Executor`), keyed by their ``name``.

    The name is what a recipe writes as ``executor: {type: NAME}``. The class's ``Params`` model (a subclass of
    :class:`mdf.ExecutorParams`) declares the executor's own keys of the ``executor:`` mapping; they are
    validated once, with their YAML path (``executor.max_in_flight``), when the recipe is loaded, and ``mdf ops``
    lists them. The class's ``Metrics`` (a subclass of :class:`mdf.ExecutorMetrics`) is the record its run
    returns: its methods put the executor's figures in ``mdf run``'s table and the report (core names no
    executor), and ``claims`` may take a recipe without ``type`` (Ray does for ``address``). Core registers
    ``inline`` and ``ray`` through this hook.

    :param registry: the executor registry.
    :return: nothing.

    .. versionadded:: 0.2
    """


@hookspec
def mdf_register_commands(registry: CommandRegistry) -> None:
    """Add the plugin's sub-commands of ``mdf`` (click commands or groups), keyed by their name.

    Register by reference so that loading the plugin (every run does) imports none of the command's code:
    ``registry.add_lazy("index", "mdf_dedup.cli:command")`` names a module attribute holding a
    :class:`click.Command` whose ``name`` is the registered one; ``registry.add(command)`` takes the command
    itself. ``mdf --help`` lists the commands of the installed plugins after mdf's own, and ``mdf NAME ...``
    runs one. A name is lower-case words joined by ``-``; one of mdf's own commands (``run``, ``validate``, ...)
    or one another plugin took is refused as a :class:`mdf.errors.PluginError` of this plugin. A command whose
    module fails to import fails alone, in one line naming the plugin; ``mdf plugins`` shows the error.

    Raise :class:`mdf.errors.MdfError` subclasses from the command for one-line errors (``RecipeError``: exit 2).

    :param registry: the command registry.
    :return: nothing.

    .. versionadded:: 0.3
    """
