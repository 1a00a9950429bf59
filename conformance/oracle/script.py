"""A falsifying program as a standalone Python script: torch, the implementation and nothing else.

The script holds the observer (prelude.py, observe.py and compare.py, verbatim; for a lifecycle program world.py too), the program's source and the (step, observable)
pairs that differed, as the observer found them (a difference charged to the RNG keeps the observable it
showed in: gradients, say); run as ``python script.py [module]`` it runs the program through the module (by
default the implementation that failed) and plainly, prints every difference at those pairs, the most telling
first (values and gradients before process state), and exits 1, or exits 0. Only those pairs: a difference
a clause allows (torch shows it too) is not the implementation's bug.
"""

from __future__ import annotations

import inspect

from conformance.data import vocabulary
from conformance.oracle import compare, observe, prelude, world
from conformance.oracle.program import Program

# The harness's names the embedded modules import, written into the script as values (it needs torch and the
# implementation only).
EMBEDDED_NAMES = {"CHECKPOINT_KEYWORDS": vocabulary.CHECKPOINT_KEYWORDS}


def _module_source(module) -> str:
    """A module's source from its first import on (no docstring, no __future__ import: the script has its own),
    less its imports of the harness (the script holds what they name)."""
    lines = inspect.getsource(module).splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(("import ", "from ")) and "__future__" not in line)
    return "\n".join(line for line in lines[first:] if not line.startswith("from conformance"))


def reproducer(program: Program | str, module: str, differences, lifecycle: bool = False) -> str:
    """The script for a program (or a lifecycle program's source) and the differences the observer found in it
    (ChargedDifference.observed); a lifecycle program runs against world.PLAIN_TWIN, with world.py's names."""
    source = program if isinstance(program, str) else program.source()
    names = "\n".join(f"{name} = {value!r}" for name, value in EMBEDDED_NAMES.items())
    embedded = (prelude, observe, compare, *[world] * lifecycle)  # in this order: each uses names of those before it
    observer = names + "\n" + "\n\n\n".join(_module_source(module) for module in embedded)
    plain = "PLAIN_TWIN" if lifecycle else "PLAIN"
    differences = compare.most_telling_first(differences)
    checked = list(dict.fromkeys((d.step, d.observable) for d in differences))
    found = "\n".join(f"#   {d}" for d in differences)
    return f'''"""Reproducer written by the conformance oracle: the program below behaves differently checkpointed by
{module} than run without checkpointing. Needs torch and the implementation only.

    python this_script.py [MODULE]     # MODULE: an implementation of torch.utils.checkpoint's API (default {module})

Exits 1 and prints the differences where they occur, else 0 (torch.utils.checkpoint passes).
The differences found:
{found}
"""

from __future__ import annotations

{observer}

# ------------------------------------------------------------------------------------------ the program

{source}
CHECKED = {checked!r}  # the (step, observable) pairs that differed


def main(module_name):
    import importlib

    implementation = importlib.import_module(module_name)
    plain = observe(run, {plain})  # first, as the oracle runs them: global state the implementation leaves behind
    checkpointed = observe(run, implementation)  # must not be inherited by the plain run
    differences = most_telling_first(d for d in compare(checkpointed, plain) if (d.step, d.observable) in CHECKED)
    for d in differences:
        print(d)
    print(f"{{module_name}}: {{len(differences)}} difference(s) from the plain run")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else {module!r}))
'''
