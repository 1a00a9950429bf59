"""The binding (conformance/plugin/binding.py) is the one reader of what an implementation module says of itself: its
``__conformance__``, checked at the door."""

import sys
import textwrap

import pytest

from conformance.plugin.binding import BindingError, load_implementation

API = "from torch.utils.checkpoint import checkpoint, checkpoint_sequential\n"


@pytest.fixture
def module(tmp_path, monkeypatch):
    """Write an implementation module to import by name."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written = []

    def write(name: str, body: str) -> str:
        (tmp_path / f"{name}.py").write_text(API + textwrap.dedent(body))
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


def test_what_the_protocol_says_is_what_the_implementation_is(module):
    name = module("said_all", """
        def take_notes():
            return ["noted"]
        __conformance__ = {"id": "mine", "name": "My checkpoint", "fixed_draws": False, "notes": take_notes,
                           "capabilities": {"variants": ["non_reentrant"]}}
        """)
    impl = load_implementation(name)
    assert (impl.id, impl.name, impl.fixed_draws, impl.take_notes()) == ("mine", "My checkpoint", False, ["noted"])
    assert impl.capabilities.variants == {"non_reentrant"} and impl.capabilities.declared == ("variants",)


def test_without_a_protocol_everything_is_inferred(module):
    impl = load_implementation(module("said_nothing", ""))
    assert (impl.id, impl.name, impl.fixed_draws, impl.take_notes()) == ("said_nothing", "said_nothing", True, [])
    assert impl.capabilities.source == "inferred"


def test_an_unknown_key_of_the_protocol_is_a_usage_error_naming_it(module):
    name = module("misspelt", '__conformance__ = {"capabilites": {"variants": ["reentrant"]}}\n')
    with pytest.raises(BindingError, match=r"misspelt.__conformance__: unknown field 'capabilites'"):
        load_implementation(name)


def test_an_unknown_capability_is_a_usage_error(module):
    name = module("claims_too_much", '__conformance__ = {"capabilities": {"variants": ["sideways"]}}\n')
    with pytest.raises(BindingError, match=r"capabilities\['variants'\] names unknown \['sideways'\]"):
        load_implementation(name)


@pytest.mark.parametrize("attribute, key", [("CONFORMANCE_CAPABILITIES = {}", "capabilities"),
                                            ("CONFORMANCE_ID = 'x'", "id"),
                                            ("CONFORMANCE_FIXED_DRAWS = False", "fixed_draws"),
                                            ("conformance_notes = list", "notes")])
def test_an_attribute_the_protocol_replaced_is_refused_naming_its_key(module, attribute, key):
    name = module(f"old_{key}", attribute + "\n")
    with pytest.raises(BindingError, match=rf"now __conformance__\['{key}'\]"):
        load_implementation(name)


def test_a_module_without_the_api_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "no_api.py").write_text("checkpoint = print\n")
    with pytest.raises(BindingError, match="lacks checkpoint_sequential"):
        load_implementation("no_api")
