"""One small adapter module per third-party implementation, selectable as ``--impl=<module name>``.

An adapter is itself an implementation module: it exposes ``checkpoint`` and
``checkpoint_sequential`` mapped onto the third-party API, and declares
``CONFORMANCE_CAPABILITIES`` (see conformance/capabilities.py).
"""
