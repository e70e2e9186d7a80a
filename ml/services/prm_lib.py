"""ml.prm's torch-backed functions behind one lazy handle."""

from __future__ import annotations

from typing import Any


class _LazyPRMLibrary:
    """ml.prm's torch-backed functions, imported on first use: processes that never train or
    score (web workers serving claims, the import command, the admin) do not load torch."""

    def __getattr__(self, name: str) -> Any:
        from ml.prm import acquisition, feature_rows, featurizers, model, selection, train

        for module in (feature_rows, featurizers, model, selection, train, acquisition):
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(name)


_lib = _LazyPRMLibrary()


lib = _LazyPRMLibrary()
