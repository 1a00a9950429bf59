"""One small adapter module per third-party implementation, selectable as ``--impl=<module name>``.

An adapter is itself an implementation module: it exposes ``checkpoint`` and
``checkpoint_sequential`` mapped onto the third-party API, and says what it is in its ``__conformance__``
(conformance/plugin/binding.py): its name, the capabilities it claims (conformance/data/capabilities.py).
"""
