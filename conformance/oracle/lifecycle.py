"""The caller's lifecycle as a hypothesis state machine (issue 44): any order of the actions a caller takes around
checkpoint (regions forwarded, in this thread or another, and kept for later, backwards of some or all of them,
modes and freezing and hooks changed, ContextVars set, generators drawn from, the API's switches held and left,
regions that raise, two threads whose forwards meet), and the invariant that every observable at every step equals
the un-checkpointed twin's.

The machine builds a program: each rule appends an Act (source lines of ``run(api, record)``, observe.py's
protocol), its preconditions keeping the caller's world one where the docs promise equality (nothing the
recompute reads is changed while a region waits for its backward: the docs' "if the function invocation during
the backward pass differs from the forward pass, ... may not be equivalent"). The program is then run plainly
(world.PLAIN_TWIN) and checkpointed, and compared step by step (compare.compare); hypothesis shrinks a failing
sequence of actions, which lifecycle_script() writes out as a standalone script.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from conformance.oracle import compare, observe, world
from conformance.data.registry import load_clauses

BATCH, WIDTH = 4, 4

# How the caller hands the region to checkpoint: the function, the module holding its layers (whose own hooks
# run around it), or the module's bound forward.
FORMS = {"function": "stage", "module": "block", "method": "block.forward"}
# What the caller passes: its own leaf, a leaf that does not require grad (non-reentrant: the reentrant variant
# documents no gradients then), a tensor subclass (world.Base2, which reroutes exp, and NonWrapperTensor of torch's
# test zoo, torch.testing._internal.common_subclass.subclass_db, which computes as plain tensors do).
ARGUMENTS = {
    "leaf": "torch.randn({b}, {w}, requires_grad=True)",
    "leaf-without-grad": "torch.randn({b}, {w})",
    "rerouting-subclass": "torch.randn({b}, {w}).as_subclass(Base2).requires_grad_()",
    "non-wrapper-subclass": "NonWrapperTensor(torch.randn({b}, {w})).requires_grad_()",
}
# What the caller holds around a forward or a backward.
AROUND = {
    "nothing": None,
    "autocast": "torch.autocast('cpu', dtype=torch.bfloat16)",
    "anomaly-detection": "torch.autograd.detect_anomaly()",
    "anomaly-detection-check-nan-off": "torch.autograd.detect_anomaly(check_nan=False)",
    "no_grad": "torch.no_grad()",
    "inference_mode": "torch.inference_mode()",
}
NO_GRAPH = ("no_grad", "inference_mode")  # a forward under these records nothing to backward
FORWARD_AROUND = tuple(AROUND)
BACKWARD_AROUND = ("nothing", "autocast", "anomaly-detection", "no_grad")
# context_fn values: none, the logging managers (world.logged_contexts), selective checkpointing saving the
# matrix products (one store per checkpoint call: regions waiting together must not share it).
CONTEXT_FNS = ("none", "logged", "selective")
# What the caller changes in what the recompute reads (only while no region waits for its backward): the module's
# mode, its parameters' requires_grad, a forward pre-hook on it, a ContextVar the function reads, its parameters
# changed in place (an optimizer's step).
CHANGES = ("mode", "freezing", "pre-hook", "scale", "step")
# What else a caller does, at any time (the steps' results are compared: a draw's numbers, say).
BETWEEN = {
    "a draw from torch's generator": "torch.rand(3)",
    "a draw from the caller's own torch.Generator": "torch.rand(3, generator=gen)",
    "a draw from Python's generator": "random.random()",
    **({"a draw from NumPy's generator": "numpy.random.rand()"} if importlib.util.find_spec("numpy") else {}),
    "gc.collect()": "gc.collect() and None",
    "block.zero_grad()": "block.zero_grad()",
}
SWITCHES = {"early_stop": ("set_checkpoint_early_stop", (False, True)),
            "debug": ("set_checkpoint_debug_enabled", (False, None))}  # debug=True: torch 2.13's known bug, not here

PRELUDE = """\
torch.manual_seed({seed})
random.seed({seed})
{numpy}gen = torch.Generator().manual_seed({seed})  # a generator of the caller's own (the docs restore only the default ones)
lin1, bn, lin2 = torch.nn.Linear({w}, {w}), torch.nn.BatchNorm1d({w}), torch.nn.Linear({w}, {w})
drop = torch.nn.Dropout(0.25)
scale = contextvars.ContextVar('scale', default=1.0)  # a setting the caller holds in a ContextVar
meeting, managers = Meeting(), Managers()
events, packs = [], []  # what context_fn's forward managers and the caller's saved-tensor hooks log
handles = []  # the caller's hooks on a parameter, the latest last

def first(h):  # a model's stage, in two functions (checkpoint_sequential's); sin saves its argument, as a first op does
    if checks_managers:  # the caller's context_fn logs: every run of the stage is inside one of its managers
        managers.check(events, h)
    h = meeting(h.sin())
    return torch.tanh(bn(lin1(h)) * scale.get()).exp()

def second(h):
    return lin2(drop(h)).as_subclass(torch.Tensor)  # a plain output, whatever the argument's class

def stage(h):
    return second(first(h))

def steady(h):  # the stage without draws and BatchNorm: two threads running it at once race for neither
    return lin2(torch.tanh(lin1(meeting(h.sin())) * scale.get()))

def failing(h):
    lin1(h)
    raise ValueError('the region fails')

block = Block(stage, lin1=lin1, bn=bn, lin2=lin2, drop=drop)
waiting = {{}}  # the regions whose backward is still to come, by name
checks_managers = {checks_managers}
record.watch(block=block, events=events, packs=packs, gen=gen)
record.go_on_after_errors()  # the caller catches what a step raises and goes on
record('the caller builds its model', lambda: None)"""


@dataclass(frozen=True)
class Act:
    """One action of the caller: its source lines, and the clauses a difference at its steps violates (of the
    results and gradients; the other observables have their own, CHARGES), most specific first."""

    lines: tuple
    clauses: tuple = ("api.same-gradients",)


@dataclass
class Lifecycle:
    """A lifecycle program: the caller's actions in order."""

    variant: str
    seed: int = 0
    context_fn: str = "none"  # the caller's (CONTEXT_FNS)
    acts: list = field(default_factory=list)

    def source(self) -> str:
        # NumPy imported before the first step where a draw needs it, so that every step of both runs reads its state
        numpy = f"import numpy\nnumpy.random.seed({self.seed})\n" * any("numpy." in line for a in self.acts for line in a.lines)
        prelude = PRELUDE.format(seed=self.seed, w=WIDTH, checks_managers=self.context_fn == "logged", numpy=numpy)
        lines = ["def run(api, record):"] + ["    " + line for line in prelude.splitlines()]
        for n, act in enumerate(self.acts, 1):
            lines += ["    " + line.replace("[#]", f"[{n}]") for line in act.lines]
        return "\n".join(lines) + "\n"

    def act_of(self, step: observe.Step) -> Act | None:
        """The act a step belongs to (its name starts [n]), None for the prelude's."""
        if not step.name.startswith("["):
            return None
        return self.acts[int(step.name[1:step.name.index("]")]) - 1]


# The clauses of the observables that are not results or gradients.
CHARGES = {
    "rng": "rng.stream-restored",
    "state": "exceptions.no-leftover-state",
    "warnings": "warnings.no-warnings-of-its-own",
    "lifetimes": "memory.intermediates-freed",
    "reference-cycles": "memory.freed-without-collector",
    "hooks": "recompute.hooks-as-without-checkpoint",
}


def charged(difference: compare.Difference, act: Act | None, variant: str) -> str:
    """The clause a difference violates: the most specific one that binds the variant."""
    if difference.observable == "objects":
        candidates = ["contextfn.forward-and-recompute"] * ("events" in difference.detail)
        candidates += ["memory.only-inputs-saved"] * ("packs" in difference.detail) + ["inputs.unchanged"]
    elif difference.observable in CHARGES:
        candidates = [CHARGES[difference.observable]]
    else:
        candidates = [*(act.clauses if act else ()), "api.same-gradients"]
    clauses = load_clauses()
    return next(c for c in candidates if variant in clauses[c].variants)


def differences(program: Lifecycle, implementation) -> list[tuple[compare.Difference, str]]:
    """Each difference between the program run checkpointed and plainly, with the clause it violates."""
    run = world.program(program.source())
    expected = observe.observe(run, world.PLAIN_TWIN)
    actual = observe.observe(run, implementation)
    steps = {i: program.act_of(s) for i, s in enumerate(expected)}
    return [(d, charged(d, steps.get(d.step), program.variant)) for d in compare.compare(actual, expected)]


# ------------------------------------------------------------------------------------------- the machine

def lifecycle_machine(variant: str, claims, check):
    """A RuleBasedStateMachine class over the caller's actions, for one variant and what the implementation claims
    (its Capabilities); ``check(program)`` runs at the end of each sequence of actions and raises on a difference."""
    features = claims.features
    reentrant = variant == "reentrant"
    arguments = tuple(a for a in ARGUMENTS if not (reentrant and a == "leaf-without-grad"))
    context_fns = ("none",) if reentrant else tuple(
        c for c in CONTEXT_FNS if c == "none" or (c == "logged" and "context_fn" in features)
        or (c == "selective" and "selective_checkpointing" in features))
    switches = sorted(s for s in SWITCHES if s in features and not reentrant)
    # (a backward run in a thread was left out for a failure in CI that was the runner's limit on an ordinary test,
    # conformance/run/policy.py: the test is marked slow now; the rule may come back)
    backwards = ("backward", "backward-retained") + ("autograd.grad", "double-backward") * (not reentrant)
    backwards += ("grouped",) * ("graph_exec_group" in features and not reentrant)

    class CallerLifecycle(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            self.program = Lifecycle(variant)
            self.waiting: list[str] = []  # regions forwarded, their backward to come
            self.regions = 0
            self.form, self.argument, self.context_fn = "function", "leaf", "none"
            self.mode, self.frozen, self.hooked, self.scaled = "train", False, False, False
            self.hooks = False  # the caller's hook on a parameter is registered
            self.held: list[str] = []  # the API's switches the caller holds, by variable name
            self.selective: set[str] = set()  # the regions under selective checkpointing

        def act(self, *lines, clauses=("api.same-gradients",)):
            self.program.acts.append(Act(tuple(lines), tuple(clauses)))

        @initialize(seed=st.integers(0, 2**16), form=st.sampled_from(tuple(FORMS)), argument=st.sampled_from(arguments),
                    context_fn=st.sampled_from(context_fns),
                    changes=st.lists(st.sampled_from(tuple(CHANGES)), unique=True, max_size=3))
        def start(self, seed, form, argument, context_fn, changes):
            """The caller's world as it starts: its seed, how it hands its stage to checkpoint, what it passes and
            its context_fn (a caller keeps to one: a model's blocks are wrapped alike), and the first changes to its
            world."""
            self.program.seed, self.form, self.argument, self.context_fn = seed, form, argument, context_fn
            self.program.context_fn = context_fn
            for change in changes:
                self.change(change)

        @property
        def quiet(self) -> bool:
            """Nothing waits for a backward: what the recompute reads may change."""
            return not self.waiting

        # ------------------------------------------------------------------------------- regions
        def _call(self, form, name, context_fn):
            options = {"none": "", "logged": f", context_fn=logged_contexts(events, {name!r}, managers)",
                       "selective": ", context_fn=functools.partial(api.create_selective_checkpoint_contexts, "
                                    "[torch.ops.aten.addmm.default, torch.ops.aten.mm.default])"}[context_fn]
            return f"api.checkpoint({FORMS[form]}, x_{name}, use_reentrant={reentrant}{options})"

        @rule(around=st.sampled_from(FORWARD_AROUND), packed=st.booleans(), times=st.sampled_from((1, 1, 2)),
              sequential=st.sampled_from((False, False, True)))
        def forward(self, around, packed, times, sequential):
            """The stage checkpointed (once, or twice on two inputs: a shared layer), each output kept for a later
            backward (none without a graph: under no_grad, or a frozen stage given no tensor that requires grad);
            or, where the caller passes no context_fn, its two functions through checkpoint_sequential."""
            # without a graph checkpoint may just call the function (the docs are silent)
            context_fn = "none" if around in NO_GRAPH else self.context_fn
            sequential = sequential and self.context_fn == "none" and "checkpoint_sequential" in features
            for _ in range(times):
                self._forward(around, context_fn, packed, sequential)

        def _forward(self, around, context_fn, packed, sequential, thread=False):
            form, argument = self.form, self.argument
            self.regions += 1
            name = f"r{self.regions}"
            region = (f"api.checkpoint_sequential([first, second], 2, x_{name}, use_reentrant={reentrant})" if sequential
                      else self._call(form, name, context_fn))
            if thread:  # alone in a thread of its own, which ends before anything else runs
                region = f"in_threads(lambda i: {region}, count=1)[0]"
            call = f"record('[#] forward of {name}{' in another thread' * thread}', lambda: {region})"
            body = [f"waiting[{name!r}] = {call}"]
            # The caller's saved-tensor hooks around the forward, where the plain run's first op saves the argument
            # itself: a plain leaf that requires grad (checkpoint may keep one without grad all the same), not what
            # the module's pre-hook made of it; with a subclass the hooks change what torch's own recompute computes
            # (the docs are silent).
            if packed and argument == "leaf" and not (self.hooked and form == "module"):
                body = [f"with arguments_packed([x_{name}], packs, {name!r}):"] + ["    " + line for line in body]
            if AROUND[around]:
                body = [f"with {AROUND[around]}:"] + ["    " + line for line in body]
            clauses = {"autocast": ["autocast.recompute-under-forward-state"], "no_grad": ["callers.no-grad"],
                       "inference_mode": ["callers.inference-mode"]}.get(around, [])
            clauses += ["sac.same-gradients"] * (context_fn == "selective") + ["sequential.same-results"] * sequential
            clauses += ["reqgrad.non-reentrant-gradients"] * (argument == "leaf-without-grad")
            self.act(f"x_{name} = " + ARGUMENTS[argument].format(b=BATCH, w=WIDTH),
                     "before = int(bn.num_batches_tracked)", *body, clauses=clauses + ["api.same-gradients"])
            self.act(f"record('[#] BatchNorm updates in forward {name}', lambda: int(bn.num_batches_tracked) - before)",
                     clauses=("modulestate.buffers-match",))  # the forward runs the function: once, as the plain call
            if around in NO_GRAPH or (self.frozen and argument == "leaf-without-grad"):
                self.act(f"waiting.pop({name!r})")
            else:
                self.waiting.append(name)
                if context_fn == "selective":
                    self.selective.add(name)

        @precondition(lambda self: not self.scaled)  # a fresh thread reads the ContextVar's default
        @rule()
        def forward_in_another_thread(self):
            """The stage checkpointed in a thread of its own, its backward to come in this one (autograd's device
            threads run a backward elsewhere than its forward)."""
            self._forward("nothing", self.context_fn, False, False, thread=True)

        @rule()
        def forward_that_raises(self):
            """A region that raises in its forward, the exception caught by the caller."""
            self.regions += 1
            name = f"r{self.regions}"
            call = self._call("function", name, self.context_fn).replace("stage", "failing", 1)
            self.act(f"x_{name} = " + ARGUMENTS["leaf"].format(b=BATCH, w=WIDTH),
                     f"record('[#] forward of {name}, which raises', lambda: {call})",
                     clauses=("exceptions.forward-propagates", "exceptions.no-leftover-state"))

        @precondition(lambda self: not self.scaled)  # a fresh thread reads the ContextVar's default
        @rule()
        def forwards_in_two_threads(self):
            """Two regions forwarded in two threads at once, meeting midway (their forwards interleave)."""
            first, second = f"r{self.regions + 1}", f"r{self.regions + 2}"
            self.regions += 2
            make = ARGUMENTS[self.argument if self.argument == "leaf-without-grad" else "leaf"].format(b=BATCH, w=WIDTH)
            calls = ", ".join(self._call("function", n, "none").replace("stage", "steady", 1) for n in (first, second))
            calls = f"({calls})[i]"
            self.act(f"x_{first}, x_{second} = {make}, {make}", "with meeting.held():",
                     f"    waiting[{first!r}], waiting[{second!r}] = record('[#] forwards of {first} and {second} in "
                     f"two threads, meeting midway', lambda: in_threads(lambda i: {calls}))")
            if self.frozen and self.argument == "leaf-without-grad":  # no graph to backward
                self.act(f"waiting.pop({first!r}), waiting.pop({second!r})")
            else:
                self.waiting += [first, second]

        @precondition(lambda self: self.waiting)
        @rule(which=st.sampled_from(("all", "oldest", "newest")), how=st.sampled_from(backwards),
              around=st.sampled_from(BACKWARD_AROUND))
        def backward(self, which, how, around):
            names = {"all": self.waiting, "oldest": self.waiting[:1], "newest": self.waiting[-1:]}[which]
            if how in ("backward-retained", "double-backward") and self.selective & set(names):
                how = "backward"  # torch 2.13 recomputes a selective region once (a second raises; the docs are silent)
            retained = how == "backward-retained" or how == "grouped" and not self.selective & set(names)
            loss = " + ".join(f"loss_of(waiting[{n!r}])" for n in names)
            what = f"{how} of {', '.join(names)}"
            grad = "torch.autograd.grad({}, record.leaves(), allow_unused=True{})"
            call = {"backward": f"({loss}).backward()",
                    "backward-retained": f"({loss}).backward(retain_graph=True)",
                    "autograd.grad": grad.format(loss, ""),
                    # the gradients' squared norm, backward: second order through the recompute
                    "double-backward": f"sum((g * g).sum() for g in {grad.format(loss, ', create_graph=True')} "
                                       "if g is not None).backward()",
                    # one GraphExecGroup (made, used, dropped) over each region's gradients in turn, the graphs
                    # retained for later backwards (under later groups too)
                    "grouped": f"with_group(api, [lambda n=n: {grad.format('loss_of(waiting[n])', f', retain_graph={retained}')}"
                               f" for n in {names!r}])"}[how]
            line = f"record('[#] {what}', lambda: {call}, backward=True)"
            body = [f"with {AROUND[around]}:", "    " + line] if AROUND[around] else [line]
            clauses = {"autograd.grad": ["gradapi.non-reentrant-grad"], "double-backward": ["retain.double-backward"],
                       "grouped": ["groups.recompute-at-most-once"],
                       "backward-retained": ["retain.repeated-backward"]}.get(how, [])
            clauses += ["autocast.backward-state-ignored"] * (around == "autocast")
            clauses += ["gradmode.recompute-grad-enabled"] * (around == "no_grad")
            self.act(*body, clauses=clauses + ["api.same-gradients"])
            if not retained:
                self.waiting = [n for n in self.waiting if n not in names]

        # Non-reentrant: the reentrant variant runs a backward of its own per region, in which a parameter's
        # gradient is accumulated, so the hook of a parameter that two waiting regions share fires once per region
        # (the docs are silent).
        @precondition(lambda self: not reentrant)
        @rule()
        def parameter_hook(self):
            """A gradient hook on a parameter (it logs, and doubles the gradient) registered, or the latest removed,
            at any time: it fires once in each backward that reaches the parameter, as without checkpoint."""
            if self.hooks:
                self.act("record('[#] the hook on lin2.weight removed', lambda: handles and handles.pop().remove())")
            else:
                self.act("record('[#] a hook on lin2.weight registered', lambda: handles.append(lin2.weight.register_hook("
                         "lambda g: record.fired_hooks.append('grad:lin2.weight') or g * 2)))")
            self.hooks = not self.hooks

        # ------------------------------------------------------- the caller's world, between regions
        @precondition(lambda self: self.quiet)
        @rule(what=st.sampled_from(tuple(CHANGES)))
        def change(self, what):
            """A change to what the recompute reads, while no region waits for its backward."""
            if what == "mode":  # BatchNorm's statistics reset on the way to eval: the recompute's second update of
                # them is modulestate.buffers-match's, a SHOULD torch does not meet, not this machine's to compare
                self.mode = "eval" if self.mode == "train" else "train"
                self.act(*["bn.reset_running_stats()"] * (self.mode == "eval"),
                         f"record('[#] block.{self.mode}()', lambda: block.{self.mode}() and None)")
            elif what == "freezing":
                self.frozen = not self.frozen
                self.act(f"record('[#] block.requires_grad_({not self.frozen})', "
                         f"lambda: block.requires_grad_({not self.frozen}) and None)",
                         clauses=("reqgrad.non-reentrant-gradients", "api.same-gradients"))
            elif what == "pre-hook":  # an adapter's, scaling what the block sees
                self.act(*(["hook.remove()"] if self.hooked else
                           ["hook = block.register_forward_pre_hook(lambda module, args: (args[0] * 2,))"]),
                         f"record('[#] the block\\'s forward pre-hook {'removed' if self.hooked else 'added'}', lambda: None)")
                self.hooked = not self.hooked
            elif what == "step":
                self.act("record('[#] an optimizer step (the parameters changed in place)', "
                         "lambda: [p.data.add_(0.01) for p in block.parameters()] and None)")
            else:  # a ContextVar the function reads, set by the caller for both the forward and the backward
                self.scaled = not self.scaled
                value = 3.0 if self.scaled else 1.0
                self.act(f"record('[#] scale.set({value})', lambda: scale.set({value}) and None)")

        @rule(what=st.sampled_from(tuple(BETWEEN)))
        def between(self, what):
            """What else a caller does, at any time."""
            self.act(f"record({'[#] ' + what!r}, lambda: {BETWEEN[what]})", clauses=("rng.stream-restored",) * ("draw" in what))

        # ------------------------------------------------------------------------ the API's switches
        @precondition(lambda self: switches)
        @rule(data=st.data())
        def switch(self, data):
            """One of the API's switches entered and held (from a later forward on, until left), the latest left, or
            one entered and left by an exception raised inside it."""
            what = data.draw(st.sampled_from(("hold", "raise inside") + ("leave",) * bool(self.held)), label="what")
            if what == "leave":
                variable = self.held.pop()
                self.act(f"record('[#] {variable} left', lambda: record.release({variable}))")
                return
            manager, values = SWITCHES[data.draw(st.sampled_from(switches), label="switch")]
            value = data.draw(st.sampled_from(values), label="value")
            if what == "hold":
                variable = f"switch{len(self.program.acts)}"
                self.act(f"{variable} = record.hold(api.{manager}({value!r}))")
                self.held.append(variable)
            else:
                self.act(f"record('[#] an exception raised inside {manager}({value!r})', "
                         f"lambda: raised_inside(api.{manager}({value!r})))", clauses=("exceptions.no-leftover-state",))

        def teardown(self):
            check(self.program)

    return CallerLifecycle
