"""instructor.colab: the badge and set-up cells, from the registry."""

from __future__ import annotations

import pytest

from instructor import colab, registry


def test_badge_and_setup_cell() -> None:
    course = registry.load()
    badge = colab.badge_markdown("01_vector_sets")
    assert badge.startswith("[![Open In Colab]")
    assert badge.endswith(
        f"/github/{course.repository}/blob/{course.branch}/notebooks/01_vector_sets/01_vector_sets.ipynb)"
    )
    source = colab.colab_setup_source()
    assert 'if "google.colab" in sys.modules:' in source and "--no-deps" in source
    assert "torch-geometric" in colab.colab_setup_source(("torch-geometric",))


def test_setup_cell_is_a_no_op_outside_colab() -> None:
    from IPython.core.inputtransformer2 import TransformerManager

    python = TransformerManager().transform_cell(colab.colab_setup_source(("x",)))
    namespace: dict = {"get_ipython": lambda: pytest.fail("installed outside Colab")}
    exec(compile(python, "<setup>", "exec"), namespace)
