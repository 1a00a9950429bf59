"""A dispatch mode that keeps a reference to every tensor made inside it: the shape of a memory leak."""

from torch.utils._python_dispatch import TorchDispatchMode


class Hoard(TorchDispatchMode):
    """Appends the output of every op that runs inside it to `into`, a list its owner clears (or never)."""

    def __init__(self, into):
        super().__init__()
        self.into = into

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.into.append(out)
        return out
