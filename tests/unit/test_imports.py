"""The harness's modules import downwards only, and in no cycle (issue 23).

Each package of ``conformance`` (the suite, its fixtures and the adapters aside: they are test code) is a layer; a
module imports only modules of lower layers, or of its own package: below its own sublayer where the package has
sublayers (data/, plugin/), else without a cycle (oracle/, report/, run/). So the report reads results and expectations without the ``--impl`` binding or pytest's hooks, and
the plugin is the one way in to the hooks (docs/AUTHORING.md, "The data path").
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "conformance"
OWN_CODE = ("suite", "fixtures", "adapters")

# The packages, lowest first. Within a package a module imports only from its own sublayers below (SUBLAYERS), or
# anything of a package with no sublayers (oracle, report, run) without a cycle.
LAYERS = (
    ("conformance",),  # the package itself: its version
    ("data",),  # plain data and its models: the words, the registry, a test's facts and results, the declarations
    ("testing",),  # the suite's assertion helpers, failing with their causes; random draws from fixed seeds
    ("oracle",),  # generated programs, run plainly and checkpointed; reads the registry's relaxations
    ("report",),  # results to pages (no pytest, no binding)
    ("plugin",),  # pytest's hooks, the judge, the binding of --impl; conformance.plugin registers them
    ("run",),  # the runner, which drives pytest with the plugin
    ("__main__",),
)
SUBLAYERS = {
    "data": (
        ("datafiles",),  # the door of the data files: their typed models checked at load
        ("vocabulary", "ids", "dimensions", "causes"),  # the words
        ("registry", "capabilities"),  # the clauses; what an implementation claims
        ("facts",),  # a test's facts
        ("results",),  # a test's facts and what happened
        ("expectations", "findings", "listing"),  # what is expected; the findings to file; the registry as text
    ),
    "plugin": (
        ("options", "hypothesis_profiles", "reproducers", "binding"),  # the command line; --impl to a module
        ("recording", "not_binding", "isolation", "since_release", "modules_not_run", "rerun", "staleness"),  # pytest hooks
        ("judging", "failure_summary"),  # the judge; the failures by clause at the end of a run
        ("__init__",),  # the one way in
    ),
}
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{a.name}" if _is_module(f"{node.module}.{a.name}") else node.module
                      for a in node.names}
    return {name for name in found if name.split(".")[0] == "conformance"}


def _layer(module: str) -> str:
    """The layer name of a module: its package below conformance (data, plugin, ...), or its own name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _sublayer(module: str) -> int | None:
    """The rank of a module within its package's SUBLAYERS (None: the package has none)."""
    parts = module.split(".")
    if parts[1:2] and parts[1] in SUBLAYERS:
        name = parts[2] if len(parts) > 2 else "__init__"
        return next((rank for rank, names in enumerate(SUBLAYERS[parts[1]]) if name in names), -1)
    return None


GRAPH = {_name(path): _imports(path) for path in PACKAGE.rglob("*.py")
         if not set(path.relative_to(PACKAGE).parts) & set(OWN_CODE)}


def test_every_module_has_a_layer():
    assert not {m for m in GRAPH if _layer(m) not in RANK}, "give the new module a layer in LAYERS"
    assert not {m for m in GRAPH if _sublayer(m) == -1 and not m.endswith((".data", ".testing"))}, \
        "give the new module a sublayer in SUBLAYERS"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_a_module_imports_only_lower_layers_or_its_own_package(module):
    upward = [d for d in GRAPH[module] if d in GRAPH and d != module and (
              RANK[_layer(d)] > RANK[_layer(module)] if _layer(d) != _layer(module)
              else _sublayer(module) is not None and _sublayer(d) is not None and _sublayer(d) >= _sublayer(module)
              and not module.startswith(d + "."))]
    assert not upward, f"{module} imports {upward}, of its own (sub)layer or above"


def test_no_import_cycle():
    done, path = set(), []

    def visit(module):
        if module in path:
            pytest.fail(f"import cycle: {' -> '.join(path[path.index(module):] + [module])}")
        if module in done:
            return
        path.append(module)
        for dependency in sorted(GRAPH.get(module, ())):
            if dependency != module and not module.startswith(dependency + "."):  # a package's own __init__
                visit(dependency)
        path.pop()
        done.add(module)

    for module in sorted(GRAPH):
        visit(module)
