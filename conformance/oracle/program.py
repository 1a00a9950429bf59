"""A program: a checkpointed region (or a checkpoint_sequential call), its inputs, the environment of its
forward and backward, and the caller's steps in between; written out as Python source.

A Program is a frozen dataclass of plain values whose repr is valid Python (hypothesis prints it as the
falsifying example); ``source()`` writes it as a function ``run(api, record)`` (see observe.py) that a
maintainer can read: the region is ordinary torch code, every caller step one ``record(...)`` line.
The same source runs checkpointed (``api`` = the implementation) and plain (``api`` = observe.PLAIN).
"""

from __future__ import annotations

from dataclasses import dataclass

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
}
NESTED_OUTPUTS = ("list", "dict")

# Context managers the caller may have active around the forward or the backward.
CONTEXTS = {
    "no_grad": "torch.no_grad()",
    "enable_grad": "torch.enable_grad()",
    "inference_mode": "torch.inference_mode()",
    "autocast": "torch.autocast('cpu', dtype=torch.bfloat16)",
    "default_device": "torch.device('cpu')",
    "saved_tensors_hooks": "torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t)",
}

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
    "backward_one_output": [("backward through the first output", "first_tensor(out).sum().backward()")],
    "backward_gradient": [("backward(gradient=...)",
                           "first_tensor(out).backward(gradient=torch.full_like(first_tensor(out), 0.5))")],
    "double_backward": [("torch.autograd.grad(create_graph=True)",
                         "torch.autograd.grad(loss_of(out), record.leaves(), create_graph=True, allow_unused=True)"),
                        ("backward of the gradients", "loss_of(record.last()).backward()")],
}

SEQUENTIAL_FUNCTIONS = {
    "linear": "torch.nn.Linear({w}, {w}, dtype={dtype})",
    "tanh": "torch.nn.Tanh()",
    "relu": "torch.nn.ReLU()",
    "dropout": "torch.nn.Dropout(0.5)",
    "scale": "(lambda h: h * 0.5)",
}


# How an argument tensor is made: its own leaf, or from the first one (the caller passes the same tensor
# twice, a view of it, a result computed from it), non-contiguous, integral (cannot require grad).
INPUT_KINDS = {
    "leaf": "torch.randn({b}, {w}, dtype={dtype}, requires_grad={rg})",
    "transposed": "torch.randn({w}, {b}, dtype={dtype}).t().requires_grad_({rg})",
    "same-as-first": "x0",
    "view-of-first": "x0[:, :]",
    "computed-from-first": "x0 * 2",
    "integral": "torch.randint(0, 3, ({b}, {w}))",
}


@dataclass(frozen=True)
class Input:
    requires_grad: bool = True
    place: str = "positional"  # positional | nested (in a list argument) | keyword
    kind: str = "leaf"  # INPUT_KINDS; the first input is always a leaf

    @property
    def grad_leaf(self) -> bool:
        """A leaf of the caller's that requires grad (what gradients are observed on)."""
        return self.requires_grad and self.kind in ("leaf", "transposed")


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
    raises: str = ""  # "" | "forward" | "recompute": the region raises ValueError there
    sequential: tuple = ()  # non-empty: a checkpoint_sequential program over these SEQUENTIAL_FUNCTIONS
    segments: int = 1
    seed: int = 0

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
    def random(self) -> bool:
        names = {op.split(":")[0] for op in self.all_ops()} | set(self.sequential)
        return bool(names & {*RANDOM_OPS, "dropout"})

    def requires_grad(self, i: int) -> bool:
        """Whether argument i requires grad: a tensor made from the first one as that one does."""
        inp = self.inputs[i]
        if inp.kind in ("same-as-first", "view-of-first", "computed-from-first"):
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
        lines += [f"    norm = torch.nn.LayerNorm({WIDTH}, dtype={dtype})", "    drop = torch.nn.Dropout(0.3)"]
        for i, inp in enumerate(self.inputs):
            rg = inp.requires_grad and inp.kind != "integral"
            lines.append(f"    x{i} = " + INPUT_KINDS[inp.kind].format(b=BATCH, w=WIDTH, dtype=dtype, rg=rg))
        watched = ", ".join([f"x{i}=x{i}" for i in range(len(self.inputs))] + ["m0=m0", "m1=m1", "norm=norm"])
        lines.append(f"    record.watch({watched})")
        if self.raises == "recompute":
            lines.append("    calls = []")
        for n, nested in enumerate(op for op in self.ops if isinstance(op, Nested)):
            lines += [f"    def inner{n}(h):"] + _indent(self._body(nested.ops), 2) + ["        return h"]
        lines += _indent(self._region(), 1)
        call_args = self._call_arguments()
        lines += _with(self.forward_contexts, [f"out = record('forward', lambda: api.checkpoint(region, {call_args}))"], 1)
        for step in self.steps:
            what, code = CALLER_STEPS[step]
            lines.append(f"    record({what!r}, lambda: {code.format(first_input='x0')})")
        lines += _with(self.backward_contexts, [f"record({what!r}, lambda: {code}, backward=True)" for what, code in BACKWARDS[self.backward]], 1)
        return "\n".join(lines) + "\n"

    def _region(self) -> list[str]:
        positional = [f"a{i}" for i, inp in enumerate(self.inputs) if inp.place == "positional"]
        nested = [f"a{i}" for i, inp in enumerate(self.inputs) if inp.place == "nested"]
        keyword = [f"a{i}" for i, inp in enumerate(self.inputs) if inp.place == "keyword"]
        params = positional + (["nest"] if nested else []) + (["*", *keyword] if keyword else [])
        params.insert(0 if self.non_tensor_first else len(positional) + bool(nested), "k")
        body = [f"{name} = nest[{j}]" for j, name in enumerate(nested)]
        if self.raises == "recompute":
            body += ["calls.append(1)", "if len(calls) > 1:", "    raise ValueError('the region fails when it runs again')"]
        body.append("h = a0")
        # every argument reaches the output, so one dropped, detached or swapped changes the result
        body += [f"h = h + {name} * {0.5 + i / 10}" for i, name in enumerate(positional[1:] + nested + keyword)]
        body += self._body(self.ops)
        if self.raises == "forward":
            body.append("raise ValueError('the region fails')")
        body.append("return " + OUTPUTS[self.output].replace("{first}", "a0"))
        return [f"def region({', '.join(params)}):"] + _indent(body, 1)

    def _body(self, ops) -> list[str]:
        lines, nested = [], 0
        for op in ops:
            if isinstance(op, Nested):
                lines.append(f"h = api.checkpoint(inner{nested}, h, use_reentrant={op.reentrant})")
                nested += 1
                continue
            name, _, index = op.partition(":")
            i = int(index or 0)
            code = OPS[name].format(x=f"a{i % len(self.inputs)}", m=f"m{i % 2}", k="k" if isinstance(self.non_tensor, (int, float)) and not isinstance(self.non_tensor, bool) else "0.5")
            lines += code.split("\n")
        return lines

    def _call_arguments(self) -> str:
        positional = [f"x{i}" for i, inp in enumerate(self.inputs) if inp.place == "positional"]
        nested = [f"x{i}" for i, inp in enumerate(self.inputs) if inp.place == "nested"]
        keyword = [f"a{i}=x{i}" for i, inp in enumerate(self.inputs) if inp.place == "keyword"]
        args = positional + ([f"[{', '.join(nested)}]"] if nested else []) + keyword
        args.insert(0 if self.non_tensor_first else len(positional) + bool(nested), repr(self.non_tensor))
        return ", ".join(args + [f"use_reentrant={self.reentrant}"] + [f"{k}={_option(v)}" for k, v in self.options])

    def _sequential_body(self, dtype) -> list[str]:
        lines = [f"    f{i} = {SEQUENTIAL_FUNCTIONS[f].format(w=WIDTH, dtype=dtype)}" for i, f in enumerate(self.sequential)]
        lines += [f"    functions = [{', '.join(f'f{i}' for i in range(len(self.sequential)))}]",
                  f"    x0 = torch.randn({BATCH}, {WIDTH}, dtype={dtype}, requires_grad={self.inputs[0].requires_grad})"]
        modules = [f"f{i}=f{i}" for i, f in enumerate(self.sequential) if f != "scale"]
        lines.append(f"    record.watch({', '.join(['x0=x0', *modules])})")
        options = "".join(f", {k}={_option(v)}" for k, v in self.options)
        call = f"api.checkpoint_sequential(functions, {self.segments}, x0, use_reentrant={self.reentrant}{options})"
        lines += _with(self.forward_contexts, [f"out = record('forward', lambda: {call})"], 1)
        for step in self.steps:
            what, code = CALLER_STEPS[step]
            lines.append(f"    record({what!r}, lambda: {code.format(first_input='x0')})")
        lines += _with(self.backward_contexts, [f"record({what!r}, lambda: {code}, backward=True)" for what, code in BACKWARDS[self.backward]], 1)
        return lines


def _option(value) -> str:
    return "noop_contexts" if value == "noop_contexts" else repr(value)


def _indent(lines, levels):
    return ["    " * levels + line for line in lines]


def _with(contexts, body, level):
    if not contexts or not body:
        return _indent(body, level)
    return _indent([f"with {', '.join(CONTEXTS[c] for c in contexts)}:"], level) + _indent(body, level + 1)
