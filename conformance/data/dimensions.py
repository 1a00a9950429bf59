"""The vocabulary of input dimensions a clause may declare (``dimensions = [...]`` in clauses.toml).

A dimension is a range of inputs a clause's sentence speaks of ("any dtype", "outputs of any
structure", "segments 1..len(functions)"). Each one names the pytest parameter that spans it in the
suite and the values that parameter must take; a hypothesis test spans it when its strategy can draw
every value (read from the drawn example's attribute of the same name). tests/unit/test_dimensions.py
checks, clause by clause, that some collected test of the clause spans each declared dimension.
Plain data: no pytest, no torch (the report may read it too).
"""

from __future__ import annotations

from dataclasses import dataclass

# checkpoint_sequential is spanned over every segment count for this many functions (fixtures.models).
SEQUENTIAL_FUNCTIONS = 6


@dataclass(frozen=True)
class Dimension:
    param: str  # the pytest parameter (and hypothesis example attribute) that ranges over it
    values: tuple  # the values a spanning test must take, all of them
    meaning: str
    drawable: bool = True  # False: only a pytest parametrization can span it


DIMENSIONS: dict[str, Dimension] = {
    "dtype": Dimension("dtype", ("float32", "float64", "bfloat16", "float16"),
                       "floating dtypes of the tensor arguments (and of the parameters inside)"),
    "aliasing": Dimension("aliasing", ("distinct", "same-tensor-twice", "views-of-one-base", "non-leaf"),
                          "how the tensor arguments relate: independent leaves, one tensor passed twice, "
                          "views of one base, non-leaf tensors made by ops that save nothing"),
    "output structure": Dimension("structure", ("tensor", "1-tuple", "tuple"),
                                  "what the function returns: a lone tensor, a 1-tuple, a longer tuple"),
    "nested output structure": Dimension("structure", ("list", "dict", "nested-with-non-tensors"),
                                         "non-reentrant: tensors returned inside lists and dicts, "
                                         "mixed with non-tensor items"),
    "options": Dimension("options", ("omitted", "explicit-default"),
                         "checkpoint's own keywords omitted, and each passed explicitly with its default"),
    "segments": Dimension("segments", tuple(range(1, SEQUENTIAL_FUNCTIONS + 1)),
                          f"every valid segment count, 1..len(functions), over {SEQUENTIAL_FUNCTIONS} functions",
                          drawable=False),
    "preserve_rng_state": Dimension("preserve_rng_state", (True, False), "preserve_rng_state True and False"),
    "debug override": Dimension("debug_enabled", (True, False, None),
                                "set_checkpoint_debug_enabled(True), (False) and (None: no override)"),
    "early stop override": Dimension("early_stop_enabled", (True, False), "set_checkpoint_early_stop(True) and (False)"),
    "early_stop": Dimension("early_stop", (True, False), "the early_stop keyword True and False"),
    "frozen inputs": Dimension("body", ("parameters", "parameters-and-random-ops"),
                               "inputs that do not require grad, with parameters and with random ops inside"),
    "random ops": Dimension("random_op", ("dropout", "rand_like", "bernoulli"),
                            "the kinds of random draws the function makes"),
    "nesting": Dimension("kind", ("list", "tuple", "dict", "custom-object", "deep"),
                         "the structure a tensor argument is nested in"),
    "container": Dimension("container", ("nn.Sequential", "list-of-modules", "nn.ModuleList", "list-of-functions"),
                           "how checkpoint_sequential's functions are handed over"),
    "entry point": Dimension("entry", ("checkpoint", "checkpoint_sequential"),
                             "the two entry points a sentence names"),
    # Selective checkpointing, GraphExecGroup, the determinism check, backward inside the region (issue 20, 5-6).
    "checkpoint policy": Dimension("policy", ("MUST_SAVE", "PREFER_SAVE", "MUST_RECOMPUTE", "PREFER_RECOMPUTE",
                                              "MUST_CPU_OFFLOAD", "PREFER_CPU_OFFLOAD"),
                                   "every CheckpointPolicy value a policy function may return"),
    "save policy": Dimension("policy", ("MUST_SAVE", "PREFER_SAVE"), "the CheckpointPolicy values that save"),
    "recompute policy": Dimension("policy", ("MUST_RECOMPUTE", "PREFER_RECOMPUTE"),
                                  "the CheckpointPolicy values that recompute"),
    "offload policy": Dimension("policy", ("MUST_CPU_OFFLOAD", "PREFER_CPU_OFFLOAD"),
                                "the CheckpointPolicy values that save and offload to CPU"),
    "cache mutation": Dimension("mutated_by", ("function", "caller"),
                                "who changes in place a tensor selective checkpointing cached: the checkpointed "
                                "function after the op, or the caller on a returned tensor before backward"),
    "backward API": Dimension("backward", ("autograd.grad", "Tensor.backward"),
                              "the two ways of calling backward: torch.autograd.grad and Tensor.backward"),
    "recompute change": Dimension("change", ("shape", "dtype"),
                                  "the metadata of a saved tensor that differs in the recompute (a device change "
                                  "needs two devices)"),
    "inner backward": Dimension("inner", ("autograd.grad", "autograd.grad-create-graph", "Tensor.backward"),
                                "a backward inside the checkpointed function: torch.autograd.grad, the same with "
                                "create_graph=True, Tensor.backward"),
    "DDP case": Dimension("ddp_case", ("once", "twice", "unused-inside", "unused-outside"),
                          "the layer checkpointed once or twice, a parameter the forward never uses inside or "
                          "outside the checkpointed layer", drawable=False),
    "unsupported DDP case": Dimension("ddp_case", ("twice", "unused-inside", "unused-outside"),
                                      "the cases DDP's docs call unsupported for the reentrant variant", drawable=False),
    "FSDP API": Dimension("api", ("FullyShardedDataParallel", "fully_shard"), "both FSDP APIs of torch 2.13",
                          drawable=False),
    "device": Dimension("device", ("cpu", "cuda"), "the devices the tensors live on (CUDA skips where absent)",
                        drawable=False),
    # The caller's objects after the call, and the program state the recompute replays (issue 20, parts 3-4).
    "caller moment": Dimension("moment", ("after-forward", "between-passes", "after-backward"),
                               "when the caller looks at its input tensors again: right after the call, "
                               "reusing them between forward and backward (a residual connection), after backward"),
    "autocast dtype": Dimension("autocast_dtype", ("bfloat16", "float16"),
                                "the dtype CPU autocast computes in around the forward (bfloat16 is its default)"),
    "default device setter": Dimension("device_setter", ("torch.device", "set_default_device"),
                                       "how the forward's default device is set: a `with torch.device(...)` block, "
                                       "or torch.set_default_device(...), undone before backward"),
    "grad mode at backward": Dimension("backward_mode", ("enable_grad", "no_grad"),
                                       "the grad mode of the code that calls backward"),
    # checkpoint_sequential over nested modules (issue 20, part 7).
    "nested blocks": Dimension("block", ("residual", "sequential", "residual-around-sequential"),
                               "the children of an nn.Sequential: blocks with their own forward (x + f(x)), "
                               "nn.Sequentials, and blocks whose forward wraps an inner nn.Sequential"),
    # What `*args` and the output may hold besides floating tensors of one layout (issue 20, parts 1-2).
    "non-tensor argument": Dimension("non_tensor", ("None", "bool", "int", "float", "str", "object"),
                                     "the kinds of non-tensor arguments: None, a flag, an int, a float, a "
                                     "string, an object of the caller's own class"),
    "argument position": Dimension("position", ("first", "middle", "last"),
                                   "where an argument that is not a floating tensor sits among two floating "
                                   "ones: before both, between them, after both"),
    "integral tensor": Dimension("integral", ("int64", "bool"),
                                 "tensor arguments that cannot require grad: int64 indices, bool masks"),
    "complex dtype": Dimension("dtype", ("complex64", "complex128"),
                               "complex tensor arguments and outputs"),
    "degenerate shape": Dimension("shape", ("0-d", "empty"),
                                  "0-d tensors and tensors with no elements, as arguments and as outputs"),
    "memory layout": Dimension("layout", ("transposed", "column-slice", "channels_last"),
                               "non-contiguous tensor arguments: a transposed leaf, a slice of the columns "
                               "of a leaf, a channels_last leaf"),
    "parameter sharing": Dimension("sharing", ("tied-weight", "same-module", "existing-grad"),
                                   "a parameter that also gets gradients outside the region: tied to a "
                                   "layer outside, its module called outside too, an existing .grad "
                                   "accumulated into (a second micro-batch)"),
    "non-tensor output": Dimension("item", ("None", "int", "bool", "str"),
                                   "non-tensor items of a tuple output, before and between tensors"),
    "non-differentiable output": Dimension("companion", ("mask", "indices", "lengths"),
                                           "integral outputs (a bool mask, int64 indices, int64 lengths) "
                                           "returned before outputs that require grad"),
    "view output": Dimension("view", ("identity", "slice", "transpose", "reshape"),
                             "an output that is an argument itself or a view of one"),
}


def unknown(names) -> list[str]:
    return [name for name in names if name not in DIMENSIONS]
