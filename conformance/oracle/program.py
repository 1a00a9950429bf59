"""A program: a checkpointed region (or a checkpoint_sequential call), its inputs, the environment of its
forward and backward, and the caller's steps in between; written out as Python source.

A Program is a frozen dataclass of plain values whose repr is valid Python (hypothesis prints it as the
falsifying example); ``source()`` writes it as a function ``run(api, record)`` (see observe.py) that a
maintainer can read: the region is ordinary torch code, every caller step one ``record(...)`` line.
The same source runs checkpointed (``api`` = the implementation) and plain (``api`` = prelude.PLAIN).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from conformance.data.vocabulary import sequential_segments

WIDTH, BATCH = 4, 2

# The region's vocabulary: each op rewrites the running tensor h. {x}: an argument tensor, {m}: a Linear,
# {k}: the non-tensor argument. RANDOM ops draw from the global RNG.
OPS = {
    "linear": "h = {m}(h)",
    "functional_linear": "h = torch.nn.functional.linear(h, {m}.weight, {m}.bias)",
    "layer_norm": "h = norm(h)",
    "tanh": "h = torch.tanh(h)",
    "relu": "h = torch.relu(h)",
    "gelu": "h = torch.nn.functional.gelu(h)",
    "sigmoid": "h = torch.sigmoid(h)",
    "softmax": "h = torch.softmax(h, dim=-1)",
    "mul_arg": "h = h * {x}",
    "add_arg": "h = h + {x}",
    "scale": "h = h * {k}",
    "matmul": "h = h @ h.transpose(0, 1) @ h * 0.1",
    "in_place_add": "h = h * 1.0\nh.add_({x})",
    "in_place_relu": "h = torch.relu_(h * 1.0)",
    "detach": "h = h + h.detach() * 0.5",
    "no_grad_block": "with torch.no_grad():\n    s = h.mean()\nh = h - s",
    "integer_index": "h = h[:, h.argmax(dim=0) % h.shape[-1]]",
    # a region whose value depends on the object it was passed (an identity lookup, as caches do)
    "object_identity": "h = h * (1.5 if k is token else 1.0)",
    # a region whose value depends on the default device (a factory call without a device lands there)
    "default_device_branch": "h = h * (2.0 if torch.empty(0).device.type == 'meta' else 1.0)",
    # autograd inside the region: a gradient it takes and uses (create_graph), a backward on its own leaf
    "inner_grad": "with torch.enable_grad():\n    g, = torch.autograd.grad((h * h).sum(), h, create_graph=True)\nh = h + g * 0.1",
    "inner_backward": "with torch.enable_grad():\n    leaf = h.detach().requires_grad_()\n    (leaf * leaf).sum().backward()\nh = h + leaf.grad",
    # random ops, one of each kind torch has: masks, distributions, permutations, in-place samplers, modules
    "dropout": "h = torch.nn.functional.dropout(h, p=0.5, training=True)",
    "dropout_module": "h = drop(h)",
    "rand_like": "h = h + torch.rand_like(h)",
    "randn_like": "h = h * torch.randn_like(h)",
    "bernoulli": "h = h * torch.bernoulli(torch.full_like(h, 0.5))",
    "randperm": "h = h[:, torch.randperm(h.shape[-1])]",
    "normal_": "h = h + torch.empty_like(h).normal_()",
    "randint": "h = h + torch.randint(0, 3, h.shape).to(h.dtype)",
    "multinomial": "h = h * torch.multinomial(torch.ones(h.shape[-1]), h.shape[-1]).to(h.dtype)",
}
RANDOM_OPS = ("dropout", "dropout_module", "rand_like", "randn_like", "bernoulli", "randperm", "normal_", "randint",
              "multinomial")
ARG_OPS = ("mul_arg", "add_arg", "in_place_add")  # ops that read an argument tensor (not in nested regions)
NO_GRAD_SOURCE_OPS = ("detach", "no_grad_block")
# Only the non-reentrant variant records the forward's graph, which autograd inside the region needs;
# inner_grad also needs h to require grad (the strategies put it after an op with parameters).
INNER_AUTOGRAD_OPS = ("inner_grad", "inner_backward")
# What complex tensors support (the rest raise NotImplementedError in both runs: nothing to compare).
COMPLEX_OPS = ("linear", "functional_linear", "tanh", "sigmoid", "mul_arg", "add_arg", "scale", "matmul", "in_place_add",
               "detach", "no_grad_block", "object_identity", "default_device_branch", "rand_like", "randn_like", "randperm", "normal_", "randint",
               "multinomial")

# The region's output (the docs allow a tensor, a tuple, and under non-reentrant any nesting, with non-tensors)
OUTPUTS = {
    "tensor": "h",
    "one-tuple": "(h,)",
    "tuple": "h, (h * 2).sum()",
    "list": "[h, h.sum()]",
    "dict": "{'out': h, 'total': h.sum()}",
    "with-non-tensors": "h, None, 3, 'label'",
    "with-integer-tensor": "h.argmax(dim=-1), h",
    "argument-passed-through": "h, {first}",
    "same-tensor-twice": "h, h",
    "view": "h[0], h.transpose(0, 1)",
    "multi-output-op": "torch.max(h, dim=-1)",  # a torch.return_types structseq
    "detached": "h.detach()",  # no output requires grad
}
NESTED_OUTPUTS = ("list", "dict")
# Reentrant returns what torch.autograd.Function.apply makes of it: a structseq comes back a plain tuple
# (torch 2.13; the docs are silent), so only the non-reentrant variant is asked to keep it.
NON_REENTRANT_OUTPUTS = (*NESTED_OUTPUTS, "multi-output-op")

# Context managers the caller may have active around the forward or the backward.
CONTEXTS = {
    "no_grad": "torch.no_grad()",
    "enable_grad": "torch.enable_grad()",
    "inference_mode": "torch.inference_mode()",
    "autocast": "torch.autocast('cpu', dtype=torch.bfloat16)",
    "autocast_float16": "torch.autocast('cpu', dtype=torch.float16)",
    "default_device": "torch.device('cpu')",
    # the meta device: a default device other than the CPU that needs no hardware (a factory call without a
    # device makes a meta tensor); as a torch.device context and through torch.set_default_device
    "default_device_meta": "torch.device('meta')",
    "global_default_device_meta": "default_device_set('meta')",
    "saved_tensors_hooks": "torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t)",
}
META_CONTEXTS = ("default_device_meta", "global_default_device_meta")

# context_fn values (observe.py defines them): one that changes nothing, one whose forward manager swallows
# the function's exception (the docs: checkpoint still raises it).
CONTEXT_FNS = ("noop_contexts", "suppressing_contexts")

# Keyword parameters a region with open keywords declares, named like checkpoint's own options.
OPTION_NAMED_PARAMETERS = ("use_reentrant", "preserve_rng_state", "debug")

# A non-tensor argument that is an object of the caller's (a Token, which the region may compare by identity).
OBJECT = "<the caller's object>"

# What the caller does between the forward and the backward.
CALLER_STEPS = {
    "draw": ("draw random numbers", "torch.rand(3)"),
    "reseed": ("reseed the global RNG", "torch.manual_seed(7) and None"),
    "read": ("read the output", "total(out)"),
    "change_input": ("change an input in place", "change_in_place({first_input})"),
    "change_output": ("change the output in place", "change_in_place(first_tensor(out))"),
}

# How the caller differentiates.
BACKWARDS = {
    "none": [],
    "backward": [("backward", "loss_of(out).backward()")],
    "backward_twice": [("backward (retain_graph=True)", "loss_of(out).backward(retain_graph=True)"),
                       ("backward again", "loss_of(out).backward()")],
    "autograd_grad": [("torch.autograd.grad", "torch.autograd.grad(loss_of(out), record.leaves(), allow_unused=True)")],
    "backward_inputs": [("backward(inputs=...)", "loss_of(out).backward(inputs=record.leaves()[:1])")],
    "backward_one_output": [("backward through the first output", "loss_of(first_tensor(out)).backward()")],
    "backward_gradient": [("backward(gradient=...)",
                           "first_tensor(out).real.backward(gradient=torch.full_like(first_tensor(out).real, 0.5))")],
    "double_backward": [("torch.autograd.grad(create_graph=True)",
                         "torch.autograd.grad(loss_of(out), record.leaves(), create_graph=True, allow_unused=True)"),
                        ("backward of the gradients", "loss_of(record.last()).backward()")],
    # different subsets of the outputs (of every region), the graph retained between them
    "backward_subsets": [("backward through the first output (retain_graph=True)",
                          "loss_of(first_tensor(out)).backward(retain_graph=True)"),
                         ("backward through the last output (retain_graph=True)",
                          "loss_of(last_tensor(out)).backward(retain_graph=True)"),
                         ("backward through every output", "loss_of(out).backward()")],
}

SEQUENTIAL_FUNCTIONS = {
    "linear": "torch.nn.Linear({w}, {w}, dtype={dtype})",
    "tanh": "torch.nn.Tanh()",
    "relu": "torch.nn.ReLU()",
    "dropout": "torch.nn.Dropout(0.5)",
    "scale": "Lambda(lambda h: h * 0.5)",
    "residual": "Residual(torch.nn.Linear({w}, {w}, dtype={dtype}))",  # a block whose forward is more than its layers
}
# Functions that hand a tuple to the next one (as an nn.Sequential's modules may): "split" makes a pair of a
# tensor, "pair" maps a pair to a pair, "merge" makes a tensor of a pair.
TUPLE_FUNCTIONS = {
    "split": "Lambda(lambda h: (h, h * 0.5))",
    "pair": "Lambda(lambda p: (torch.tanh(p[0]), p[1] * p[0]))",
    "merge": "Lambda(lambda p: p[0] + p[1])",
}
# What checkpoint_sequential is given as its input: one tensor (what its docs allow), or a tuple of two,
# which it hands to the first function whole (torch 2.13; the docs allow "only one Tensor").
SEQUENTIAL_INPUTS = {"tensor": "x0", "tuple": "(x0, x1)"}


# How an argument tensor is made: its own leaf, or from the first one (the caller passes the same tensor
# twice, a view of it, a result computed from it), non-contiguous, integral (cannot require grad).
INPUT_KINDS = {
    "leaf": "torch.randn({b}, {w}, dtype={dtype}, requires_grad={rg})",
    "transposed": "torch.randn({w}, {b}, dtype={dtype}).t().requires_grad_({rg})",
    "same-as-first": "x0",
    "view-of-first": "x0[:, :]",
    "computed-from-first": "x0 * 2",
    "integral": "torch.randint(0, 3, ({b}, {w}))",
    "empty": "torch.randn(0, {w}, dtype={dtype}, requires_grad={rg})",
    "scalar": "torch.randn((), dtype={dtype}, requires_grad={rg})",
}
REDUCED_KINDS = ("empty", "scalar")  # do not broadcast against h: the region adds their sum
MADE_FROM_FIRST = ("same-as-first", "view-of-first", "computed-from-first")
OWN_LEAF_KINDS = ("leaf", "transposed", *REDUCED_KINDS)

# How the region is handed to checkpoint: a function, a module (whose forward runs it), the module's bound
# forward, or a functools.partial of the unbound forward with the module bound (as transformers does).
FORMS = {
    "function": "region",
    "module": "block",
    "method": "block.forward",
    "partial": "functools.partial(Block.forward, block)",
}

# The faults a region may have (Program.raises): it raises at its first call ("forward"), only when it runs
# again ("recompute"), or a tensor hook it registers on an intermediate raises during the backward.
FAULTS = ("forward", "recompute", "backward-hook")
# The steps of the second, healthy call after a fault (Program.again): the fault is off from the first on.
HEALTHY_STEPS = ("turn the fault off", "a second, healthy call", "backward of the second call")

# The API's own context managers a caller may hold around the forward (Program.switches), by the feature
# that provides each (vocabulary.FEATURES).
SWITCHES = {"early_stop": "set_checkpoint_early_stop", "debug": "set_checkpoint_debug_enabled"}


@dataclass(frozen=True)
class Input:
    requires_grad: bool = True
    place: str = "positional"  # positional | nested (in a list) | deep (in a tuple in a list) | keyword | bound (in a partial)
    kind: str = "leaf"  # INPUT_KINDS; the first input is always a leaf

    @property
    def grad_leaf(self) -> bool:
        """A leaf of the caller's that requires grad (what gradients are observed on)."""
        return self.requires_grad and self.kind in OWN_LEAF_KINDS


@dataclass(frozen=True)
class Nested:
    """A checkpoint inside the region, over its own ops, in either variant."""

    reentrant: bool
    ops: tuple = ()


@dataclass(frozen=True)
class Program:
    variant: str  # the outer checkpoint's: reentrant | non_reentrant
    inputs: tuple = (Input(),)
    ops: tuple = ("linear",)  # op names; "op:i" reads argument i / Linear i; or Nested
    output: str = "tensor"
    non_tensor: object = None  # the non-tensor argument the region receives (and "scale" reads)
    non_tensor_first: bool = False  # passed before the tensors rather than after them
    dtype: str = "float64"
    options: tuple = ()  # checkpoint's own keywords: (name, value) pairs
    forward_contexts: tuple = ()
    steps: tuple = ()  # CALLER_STEPS between forward and backward
    backward: str = "backward"
    backward_contexts: tuple = ()
    raises: str = ""  # "" or one of FAULTS: the region (or its hook) raises ValueError there
    sequential: tuple = ()  # non-empty: a checkpoint_sequential program over these SEQUENTIAL_FUNCTIONS
    segments: int = 1
    seed: int = 0
    form: str = "function"  # FORMS
    open_keywords: bool = False  # the region also takes OPTION_NAMED_PARAMETERS and **extra, noting in keywords_seen what it was given
    as_sequential: bool = False  # checkpoint_sequential gets an nn.Sequential rather than a list
    # The caller's program around the region (issue 35; written by the methods at the end of the class):
    again: bool = False  # after a fault (raises), the caller goes on: fault off, gradients cleared, a second call
    armed: bool = True  # False: the same program, every step of it, with its fault never firing (the oracle's diagnosis)
    regions: int = 1  # the forward checkpoints the same callable this many times, each on its own first input
    switches: tuple = ()  # SWITCHES held around the forward: (name, value) pairs, entered in this order
    switch_exits: tuple = ()  # the order they are left in (indices into switches); a region runs at each level
    threads: bool = False  # a step runs the region's forward and backward in two threads at once
    sequential_input: str = "tensor"  # SEQUENTIAL_INPUTS
    # The program's hooks and the lifetimes of its tensors (issue 35, items 2 and 3):
    hooks: bool = False  # the caller hooks its modules, its first input, the output and the forward's saved tensors
    follow_intermediates: bool = False  # the region names its intermediates, whose lifetimes the record follows
    # The caller's modules (and the region's Block) in eval mode while grad is on (issue 44): a frozen backbone under
    # adapters, BatchNorm frozen for fine-tuning.
    eval_mode: bool = False

    # ------------------------------------------------------------------------ facts the conditions read
    @property
    def reentrant(self) -> bool:
        return self.variant == "reentrant"

    def all_ops(self):
        for op in self.ops:
            if isinstance(op, Nested):
                yield from op.ops
            else:
                yield op

    @property
    def op_names(self) -> frozenset:
        """The names of the region's ops, nested checkpoints' included (without their ":i" index)."""
        return frozenset(op.split(":")[0] for op in self.all_ops())

    @property
    def random(self) -> bool:
        return bool((self.op_names | set(self.sequential)) & {*RANDOM_OPS, "dropout"})

    @property
    def autograd_inside(self) -> bool:
        return bool(self.op_names & set(INNER_AUTOGRAD_OPS))

    def requires_grad(self, i: int) -> bool:
        """Whether argument i requires grad: a tensor made from the first one as that one does."""
        inp = self.inputs[i]
        if inp.kind in MADE_FROM_FIRST:
            return self.inputs[0].requires_grad
        return inp.requires_grad and inp.kind != "integral"

    @property
    def option(self):
        return dict(self.options)

    # ------------------------------------------------------------------------------------- source
    def source(self) -> str:
        """The program as the body of run(api, record)."""
        dtype = f"torch.{self.dtype}"
        lines = ["def run(api, record):", f"    torch.manual_seed({self.seed})"]
        if self.sequential:
            return "\n".join(lines + self._sequential_body(dtype)) + "\n"
        lines += [f"    m{i} = torch.nn.Linear({WIDTH}, {WIDTH}, dtype={dtype})" for i in range(2)]
        lines += [f"    norm = torch.nn.LayerNorm({WIDTH}, dtype={dtype})", "    drop = torch.nn.Dropout(0.3)",
                  "    token = Token()"]
        lines += ["    for module in (m0, m1, norm, drop):", "        module.eval()"] * self.eval_mode
        for i, inp in enumerate(self.inputs):
            rg = inp.requires_grad and inp.kind != "integral"
            lines.append(f"    x{i} = " + INPUT_KINDS[inp.kind].format(b=BATCH, w=WIDTH, dtype=dtype, rg=rg))
        lines += _indent(self._tower_inputs(dtype), 1)
        watched = ", ".join([f"x{i}=x{i}" for i in range(len(self.inputs))] + ["m0=m0", "m1=m1", "norm=norm"])
        watched += "".join(f", {t}={t}" for t in self._towers())
        if self.open_keywords:
            lines.append("    keywords_seen = []")
            watched += ", keywords_seen=keywords_seen"
        lines.append(f"    record.watch({watched})")
        lines += _indent(self._hooked(["m0", "m1", "norm", "drop"], "x0"), 1)
        lines += _indent(self._fault_setup(), 1)
        for n, nested in enumerate(op for op in self.ops if isinstance(op, Nested)):
            lines += [f"    def inner{n}(h):"] + _indent(self._body(nested.ops), 2) + ["        return h"]
        lines += _indent(self._region(), 1)
        if self.form != "function":
            held = ["m0=m0", "m1=m1", "norm=norm"] + ["drop=drop"] * ("dropout_module" in self.op_names)
            lines.append(f"    block = Block(region, {', '.join(held)})" + ".eval()" * self.eval_mode)
            # a module returning a list or a dict warns at each call that its backward hooks cannot be called
            # (the recompute's call too): it gets none
            lines += _indent(self._hooked(["block"], full_backward=self.output not in NESTED_OUTPUTS), 1)
        function = FORMS[self.form]
        bound = [f"{a}=x{a[1:]}" for a in self._names("bound")]
        if bound:
            function = (f"functools.partial(Block.forward, block, {', '.join(bound)})" if self.form == "partial"
                        else f"functools.partial({function}, {', '.join(bound)})")
        lines += _with(self.forward_contexts, self._saved_tensors_logged(self._forward_steps(function)), 1)
        lines += _indent(self._hooked([], "out"), 1)
        for step in self.steps:
            what, code = CALLER_STEPS[step]
            lines.append(f"    record({what!r}, lambda: {code.format(first_input='x0')})")
        lines += _with(self.backward_contexts, [f"record({what!r}, lambda: {code}, backward=True)" for what, code in BACKWARDS[self.backward]], 1)
        lines += _indent(self._threads_step(function) + self._healthy_call(function), 1)
        return "\n".join(lines) + "\n"

    def _names(self, place, prefix="a") -> list[str]:
        """The arguments in one place: as the region names them (a0, ...) or the caller (x0, ...)."""
        return [f"{prefix}{i}" for i, inp in enumerate(self.inputs) if inp.place == place]

    def _region(self) -> list[str]:
        positional, nested, deep = self._names("positional"), self._names("nested"), self._names("deep")
        keywords = self._names("keyword") + self._names("bound")
        containers = ["nest"] * bool(nested) + ["deep"] * bool(deep)
        # open keywords: parameters named like checkpoint's own options, and **extra: none of them may be given
        named = [f"{o}=None" for o in OPTION_NAMED_PARAMETERS] + ["**extra"]
        params = positional + containers + (["*", *keywords] if keywords or self.open_keywords else []) + named * self.open_keywords
        params.insert(0 if self.non_tensor_first else len(positional) + len(containers), "k")
        body = [f"{name} = nest[{j}]" for j, name in enumerate(nested)]
        body += [f"{name} = deep[0][{j}]" for j, name in enumerate(deep)]
        if self.raises == "recompute":  # a call after the forward's ones: the recompute
            body += ["calls.append(1)", f"if fault and len(calls) > {self.forward_regions}:",
                     "    raise ValueError('the region fails when it runs again')"]
        body.append("h = a0")
        # every argument reaches the output, so one dropped, detached or swapped changes the result
        for i, name in enumerate(positional[1:] + nested + deep + keywords):
            reduced = self.inputs[int(name[1:])].kind in REDUCED_KINDS
            body.append(f"h = h + {name}{'.sum()' * reduced} * {0.5 + i / 10}")
        if self.open_keywords:
            given = " + ".join(f"[{o!r}] * ({o} is not None)" for o in OPTION_NAMED_PARAMETERS)
            body.append(f"keywords_seen.extend(sorted(set([*extra, *{given}]) - set(keywords_seen)))")
        body += self._body(self.ops, follow=self.follow_intermediates)
        if self.raises == "forward":
            body += ["if fault:", "    raise ValueError('the region fails')"]
        if self.raises == "backward-hook":  # a hook on the region's last intermediate (none in a no_grad forward)
            body += ["if h.requires_grad:", "    h.register_hook(failing_hook)"]
        body.append("return " + OUTPUTS[self.output].replace("{first}", "a0"))
        return [f"def region({', '.join(params)}):"] + _indent(body, 1)

    def _body(self, ops, follow=False) -> list[str]:
        """The ops' code; follow: each op's result named h1, h2, ... for the record to follow its lifetime."""
        lines, nested = [], 0
        number = isinstance(self.non_tensor, (int, float)) and not isinstance(self.non_tensor, bool)
        for n, op in enumerate(ops, 1):
            if isinstance(op, Nested):
                lines.append(f"h = api.checkpoint(inner{nested}, h, use_reentrant={op.reentrant})")
                nested += 1
            else:
                name, _, index = op.partition(":")
                i = int(index or 0) % len(self.inputs)
                argument = f"a{i}" if self.inputs[i].kind != "empty" else "a0"  # an empty tensor does not broadcast
                code = OPS[name].format(x=argument, m=f"m{i % 2}", k="k" if number else "0.5")
                lines += code.split("\n")
            lines += [f"record.follow('h{n}', h)"] * follow
        return lines

    def _call_arguments(self, first="x0") -> str:
        """checkpoint's arguments, the caller's first input named ``first`` (another region's own input)."""
        positional, nested, deep = ([first if n == "x0" else n for n in self._names(place, "x")]
                                    for place in ("positional", "nested", "deep"))
        keyword = [f"a{i}={first if i == 0 else f'x{i}'}" for i, inp in enumerate(self.inputs) if inp.place == "keyword"]
        containers = [f"[{', '.join(nested)}]"] * bool(nested) + [f"[({', '.join(deep)},)]"] * bool(deep)
        args = positional + containers + keyword
        non_tensor = "token" if self.non_tensor == OBJECT else repr(self.non_tensor)
        args.insert(0 if self.non_tensor_first else len(positional) + len(containers), non_tensor)
        return ", ".join(args + [f"use_reentrant={self.reentrant}"] + [f"{k}={_option(v)}" for k, v in self.options])

    def _sequential_body(self, dtype) -> list[str]:
        functions = {**SEQUENTIAL_FUNCTIONS, **TUPLE_FUNCTIONS}
        lines = [f"    f{i} = {functions[f].format(w=WIDTH, dtype=dtype)}" for i, f in enumerate(self.sequential)]
        names = ", ".join(f"f{i}" for i in range(len(self.sequential)))
        lines += [f"    functions = torch.nn.Sequential({names})" if self.as_sequential else f"    functions = [{names}]",
                  f"    x0 = torch.randn({BATCH}, {WIDTH}, dtype={dtype}, requires_grad={self.inputs[0].requires_grad})"]
        inputs = ["x0"] + ["x1"] * (self.sequential_input == "tuple")
        lines += [f"    x1 = torch.randn({BATCH}, {WIDTH}, dtype={dtype}, requires_grad={self.inputs[0].requires_grad})"] * (
            self.sequential_input == "tuple")
        modules = [f"f{i}=f{i}" for i in range(len(self.sequential))]
        lines.append(f"    record.watch({', '.join([*(f'{x}={x}' for x in inputs), *modules])})")
        lines += _indent(self._hooked([f"f{i}" for i in range(len(self.sequential))], "x0"), 1)
        options = "".join(f", {k}={_option(v)}" for k, v in self.options)
        given = SEQUENTIAL_INPUTS[self.sequential_input]
        call = f"api.checkpoint_sequential(functions, {self.segments}, {given}, use_reentrant={self.reentrant}{options})"
        lines += _with(self.forward_contexts, [f"out = record('forward', lambda: {call})"], 1)
        lines += _indent(self._hooked([], "out"), 1)
        for step in self.steps:
            what, code = CALLER_STEPS[step]
            lines.append(f"    record({what!r}, lambda: {code.format(first_input='x0')})")
        lines += _with(self.backward_contexts, [f"record({what!r}, lambda: {code}, backward=True)" for what, code in BACKWARDS[self.backward]], 1)
        return lines

    # ----------------------------------------------------------- the program's hooks (issue 35, item 2)
    def _hooked(self, modules, tensor=None, full_backward=True) -> list[str]:
        """Where the program has hooks: the record's on these modules and on this tensor (if it requires grad)."""
        if not self.hooks:
            return []
        named = [f"{m}={m}" for m in modules] + ["full_backward=False"] * (not full_backward)
        hooked = [f"record.hook_modules({', '.join(named)})"] if modules else []
        return hooked + [f"record.hook_tensor({tensor!r}, {tensor})"] * bool(tensor)

    def _saved_tensors_logged(self, forward) -> list[str]:
        """The forward's lines, where the program has hooks inside the caller's logging saved_tensors_hooks.
        (Not around checkpoint_sequential: its last segment runs without checkpoint, saving what it makes.)"""
        if not self.hooks:
            return forward
        return ["with record.saved_tensors_logged():"] + _indent(forward, 1)

    # ------------------------------------------ the caller's program around the region (issue 35, items 4, 5)
    @property
    def forward_regions(self) -> int:
        """How many times the forward checkpoints the region: once per level of the switches, else regions."""
        return 2 * len(self.switches) if self.switches else self.regions

    def switch_values(self, name) -> set:
        """The values the caller's switches of one name (SWITCHES) take; empty where none is held."""
        return {value for held, value in self.switches if held == name}

    @property
    def early_stop_off(self) -> bool:
        """Some region's recompute runs whole: early_stop=False, or set_checkpoint_early_stop(False) held."""
        return self.option.get("early_stop") is False or False in self.switch_values("early_stop")

    @property
    def hands_on_tuples(self) -> bool:
        """checkpoint_sequential is given a tuple, or a function returns one to the next (TUPLE_FUNCTIONS)."""
        return bool(self.sequential) and (self.sequential_input == "tuple" or bool(set(self.sequential) & set(TUPLE_FUNCTIONS)))

    @property
    def tuple_enters_a_segment(self) -> bool:
        """A checkpointed segment of checkpoint_sequential gets a tuple: the input, or the function before it returns one."""
        if not 0 < self.segments <= len(self.sequential):
            return False  # checkpoint_sequential rejects the count
        return any(self.sequential[start - 1] in ("split", "pair") if start else self.sequential_input == "tuple"
                   for start, _ in sequential_segments(len(self.sequential), self.segments))

    def _towers(self) -> list[str]:
        """The caller's other first inputs: one per region after the first (y1, ...), one per thread (t0, t1)."""
        return [f"y{n}" for n in range(1, self.forward_regions)] + ["t0", "t1"] * self.threads

    def _tower_inputs(self, dtype) -> list[str]:
        """Each a leaf as the first input is, so that every region and thread computes on values of its own."""
        leaf = INPUT_KINDS["leaf"].format(b=BATCH, w=WIDTH, dtype=dtype, rg=self.inputs[0].requires_grad)
        return [f"{tower} = {leaf}" for tower in self._towers()]

    def _fault_setup(self) -> list[str]:
        """The fault's switch (on until the caller turns it off), and what the fault needs."""
        if not self.raises:
            return []
        lines = [f"fault = [{'True' * self.armed}]"] + ["record.go_on_after_errors()"] * self.again
        if self.raises == "recompute":
            lines.append("calls = []")
        if self.raises == "backward-hook":
            lines += ["def failing_hook(grad):", "    if fault:", "        raise ValueError('a hook fails during the backward')"]
        return lines

    def _forward_steps(self, function) -> list[str]:
        """The forward: the region checkpointed once; or the same callable once per region, each on its own
        first input; with switches, a region before them and one after each is entered or left (but the last)."""
        def region(n, what):
            first = f"y{n}" if n else "x0"
            return f"out{n} = record({what!r}, lambda: api.checkpoint({function}, {self._call_arguments(first)}))"

        if self.forward_regions == 1:
            return [f"out = record('forward', lambda: api.checkpoint({function}, {self._call_arguments()}))"]
        lines = [region(0, "forward")]
        if not self.switches:
            return lines + [region(n, f"forward of the same callable again, on y{n}") for n in range(1, self.regions)] + [
                f"out = ({', '.join(f'out{n}' for n in range(self.regions))},)"]
        held = []
        exits = self.switch_exits or tuple(reversed(range(len(self.switches))))
        if exits not in allowed_exit_orders(self.switches):
            raise ValueError(f"switches {self.switches} cannot be left in the order {exits}")
        events = [("enter", i) for i in range(len(self.switches))] + [("leave", i) for i in exits]
        for n, (event, i) in enumerate(events, 1):
            name, value = self.switches[i]
            if event == "enter":
                lines.append(f"switch{i} = record.hold(api.{SWITCHES[name]}({value!r}))")
                held.append(i)
            else:
                lines.append(f"record.release(switch{i})")
                held.remove(i)
            if n < len(events):
                under = ", ".join(f"{SWITCHES[self.switches[j][0]]}({self.switches[j][1]!r})" for j in held)
                lines.append(region(n, f"forward under {under}"))
        return lines + [f"out = ({', '.join(f'out{n}' for n in range(self.forward_regions))},)"]

    def _threads_step(self, function) -> list[str]:
        """The region's forward and backward in two threads at once, each on its own input."""
        if not self.threads:
            return []
        return ["def forward_and_backward(t):", *_indent(self._made_again(), 1),  # each thread its own
                f"    loss_of(api.checkpoint({function}, {self._call_arguments('t')})).backward()",
                "record('two threads at once, each a forward and a backward', "
                "lambda: in_threads(lambda i: forward_and_backward((t0, t1)[i])), backward=True)"]

    def _made_again(self) -> list[str]:
        """The arguments made from the first input, made again for another call: a backward freed their graph."""
        return [f"x{i} = {INPUT_KINDS[inp.kind]}" for i, inp in enumerate(self.inputs) if inp.kind in MADE_FROM_FIRST]

    def _healthy_call(self, function) -> list[str]:
        """After the fault: the caller turns it off, clears the gradients, and calls the region again."""
        if not (self.raises and self.again):
            return []
        turn_off, call, backward = HEALTHY_STEPS
        return self._made_again() + [f"record({turn_off!r}, lambda: recover(fault, record))",
                f"out_again = record({call!r}, lambda: api.checkpoint({function}, {self._call_arguments()}))",
                f"record({backward!r}, lambda: loss_of(out_again).backward(), backward=True)"]


def allowed_exit_orders(switches) -> list[tuple]:
    """The orders in which held switches may be left: any, but of two with the same name the inner first (each
    restores the value it found on entering, so leaving the outer first would leave the inner's behind)."""
    pairs = itertools.combinations(range(len(switches)), 2)
    inner_first = [(i, j) for i, j in pairs if switches[i][0] == switches[j][0]]
    return [order for order in itertools.permutations(range(len(switches)))
            if all(order.index(j) < order.index(i) for i, j in inner_first)]


def _option(value) -> str:
    return value if value in CONTEXT_FNS else repr(value)


def _indent(lines, levels):
    return ["    " * levels + line for line in lines]


def _with(contexts, body, level):
    if not contexts or not body:
        return _indent(body, level)
    return _indent([f"with {', '.join(CONTEXTS[c] for c in contexts)}:"], level) + _indent(body, level + 1)


def runnable(source: str, *names_from):
    """The ``run(api, record)`` function a program's source defines, run with the names of prelude.py, observe.py and
    compare.py in scope (and of ``names_from``, a lifecycle program's world.py), as in a reproducer script, which holds
    those modules' sources in that order."""
    from conformance.oracle import compare, observe, prelude

    namespace = {}
    for module in (prelude, observe, compare, *names_from):
        namespace.update((k, v) for k, v in vars(module).items() if not k.startswith("__"))
    exec(compile(source, "<program>", "exec"), namespace)  # noqa: S102  (the oracle's own generated code)
    return namespace["run"]
