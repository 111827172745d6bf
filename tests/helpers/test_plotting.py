"""Unit tests of helpers.plotting: static figures, and interactive figures (sliders with a
static fallback)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from helpers import data, plotting
from helpers.plotting import Choice, InteractiveFigure, Slider, interactive_figure

# Resolve the backend now: pyplot does it at the first figure, asking IPython for a shell,
# and a test below fakes that shell.
plt.switch_backend("Agg")


def make_draw(calls: list[dict]):
    def draw(**values):
        calls.append(values)
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.plot([0, 1], [0, values.get("scale", 1)])
        return fig

    return draw


def test_static_fallback_without_ipython_draws_defaults_once() -> None:
    calls: list[dict] = []
    assert interactive_figure(make_draw(calls), scale=Slider(2, 0, 5)) is None
    assert calls == [{"scale": 2}]
    plt.close("all")


def test_sliders_have_the_right_kind_range_and_counted_ids() -> None:
    figure = InteractiveFigure(
        make_draw([]),
        scale=Slider(2, 0, 5),
        width=Slider(0.5, 0.0, 1.0, 0.1, description="w"),
        temperature=Choice(1.0, [0.1, 1.0, 10.0]),
    )
    box = figure.build_widget()
    import ipywidgets

    scale, width, temperature, output = box.children
    assert isinstance(scale, ipywidgets.IntSlider) and (scale.min, scale.max) == (0, 5)
    assert isinstance(width, ipywidgets.FloatSlider) and width.description == "w"
    assert isinstance(temperature, ipywidgets.SelectionSlider)
    assert temperature.value == 1.0 and [v for _, v in temperature.options] == [0.1, 1.0, 10.0]
    assert isinstance(output, ipywidgets.Output)
    widgets = [box, box.layout, *box.children]
    widgets += [w.layout for w in box.children] + [w.style for w in box.children[:3]]
    ids = [w.model_id for w in widgets]
    assert all(i.startswith("self-attention-course-") for i in ids), ids
    assert len(set(ids)) == len(ids)


def figures_in(output) -> list[str]:
    """The PNGs (base64) an ``ipywidgets.Output`` holds, one per figure shown in it."""
    return [o["data"]["image/png"] for o in output.outputs if "image/png" in o.get("data", {})]


def test_moving_a_slider_replaces_the_figure_with_one_at_the_new_value() -> None:
    calls: list[dict] = []
    figure = InteractiveFigure(make_draw(calls), scale=Slider(2, 0, 5), t=Choice("a", ["a", "b"]))
    box = figure.build_widget()
    assert figures_in(figure.output) == []  # show() puts the first figure in
    box.children[0].value = 4
    first = figures_in(figure.output)
    box.children[1].value = "b"
    second = figures_in(figure.output)
    box.children[0].value = 0
    third = figures_in(figure.output)
    assert calls == [{"scale": 4, "t": "a"}, {"scale": 4, "t": "b"}, {"scale": 0, "t": "b"}]
    assert len(first) == len(second) == len(third) == 1, "one figure, replaced, never added"
    assert third[0] != first[0]
    assert plt.get_fignums() == []  # every drawn figure is closed: the kernel shows none


def test_without_ipywidgets_there_is_no_widget(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    assert InteractiveFigure(make_draw([]), scale=Slider(1, 0, 2)).build_widget() is None


def test_in_ipython_without_kernel_only_the_static_figure(monkeypatch) -> None:
    shown = []

    class Shell:  # an IPython terminal: no kernel attribute
        pass

    monkeypatch.setattr("IPython.get_ipython", lambda: Shell())
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append(obj))
    figure = InteractiveFigure(make_draw([]), scale=Slider(1, 0, 2))
    figure.show()
    assert len(shown) == 1 and isinstance(shown[0], matplotlib.figure.Figure)
    assert figure.widget is None


def test_in_a_kernel_one_output_shows_one_figure(monkeypatch) -> None:
    """One output, the same figure twice over: the static PNG (what nbval, the website and a
    viewer without a kernel show) and the widget (what JupyterLab shows instead): sliders
    and an output area holding that PNG, the only figure that moving a slider replaces."""
    shown = []

    class Shell:  # a kernel's shell, without IPython's display formatter
        kernel = object()

    monkeypatch.setattr("IPython.get_ipython", lambda: Shell())
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append((obj, kw)))
    calls: list[dict] = []
    figure = InteractiveFigure(make_draw(calls), scale=Slider(1, 0, 2))
    figure.show()
    assert len(shown) == 1, "the static figure and the widget are one output, not two"
    data, options = shown[0]
    assert options.get("raw") is True, "a mime bundle, published as it is"
    assert set(data) == {"image/png", "text/plain", plotting.WIDGET_VIEW}
    assert data[plotting.WIDGET_VIEW]["model_id"] == figure.widget.model_id
    assert data["text/plain"].startswith("<Figure size")  # what nbval compares
    *sliders, output = figure.widget.children
    assert output is figure.output and len(sliders) == 1
    assert figures_in(output) == [data["image/png"]], "the widget shows the same figure, once"
    sliders[0].value = 2
    assert len(shown) == 1, "a moved slider displays nothing new"
    (redrawn,) = figures_in(output)
    assert redrawn != data["image/png"]
    assert calls == [{"scale": 1}, {"scale": 2}]
    assert plt.get_fignums() == []


def test_figure_data_is_what_the_shell_would_display(monkeypatch) -> None:
    class Formatter:
        def format(self, obj):
            return {"image/png": "PNG", "text/plain": "<Figure>"}, {"image/png": {"width": 1}}

    class Shell:
        kernel = object()
        display_formatter = Formatter()

    monkeypatch.setattr("IPython.get_ipython", lambda: Shell())
    fig, _ = plt.subplots()
    data, metadata = plotting._figure_data(fig)
    assert data == {"image/png": "PNG", "text/plain": "<Figure>"}
    assert metadata == {"image/png": {"width": 1}}
    plt.close(fig)


def test_draw_may_return_axes() -> None:
    def draw(scale):
        _, ax = plt.subplots()
        return ax

    assert isinstance(InteractiveFigure(draw, scale=Slider(1, 0, 2)).figure(), plt.Figure)
    plt.close("all")


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: Slider(7, 0, 5), ValueError),
        (lambda: Slider(1, 0, 5, step=0), ValueError),
        (lambda: Choice(3, [1, 2]), ValueError),
        (lambda: InteractiveFigure(lambda: None), ValueError),
        (lambda: InteractiveFigure(lambda x: None, x=(0, 1)), TypeError),
        (lambda: InteractiveFigure(lambda x: None, x=Slider(0, 0, 1)).figure(), TypeError),
        (lambda: InteractiveFigure(lambda x: None, x=Slider(0, 0, 1)).figure(y=1), TypeError),
    ],
)
def test_mistakes_are_named(make, error) -> None:
    with pytest.raises(error):
        make()


def test_choice_labels() -> None:
    assert Choice(0.5, [0.5, 2.0]).labelled() == [("0.5", 0.5), ("2", 2.0)]
    assert Choice(1, {"one": 1, "two": 2}).labelled() == [("one", 1), ("two", 2)]
    assert Slider(1, 0, 3).integer and not Slider(1.0, 0, 3).integer
    assert "interactive_figure" in plotting.__all__


def test_progress_counts_without_time_and_yields_everything(capsys) -> None:
    from helpers.plotting import PROGRESS_FORMAT, progress

    assert "elapsed" not in PROGRESS_FORMAT and "rate" not in PROGRESS_FORMAT
    assert list(progress(range(5), "training")) == [0, 1, 2, 3, 4]
    assert "training" in capsys.readouterr().err  # outside Jupyter: tqdm's text bar


def test_widgets_made_inside_get_counted_ids() -> None:
    import ipywidgets

    from helpers.plotting import _counted_widget_ids

    with _counted_widget_ids():
        box = ipywidgets.HBox([ipywidgets.FloatProgress(), ipywidgets.HTML()])
    made = [box, box.layout, *box.children, *(c.layout for c in box.children)]
    assert all(w.model_id.startswith("self-attention-course-") for w in made)
    assert not ipywidgets.HTML().model_id.startswith("self-attention-course-")  # restored


# -- static figures


def test_plot_attention_labels_and_validates() -> None:
    weights = torch.softmax(torch.randn(3, 3), dim=-1)
    ax = plotting.plot_attention(weights, ["i", "saw", "a"], title="w")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["i", "saw", "a"]
    assert len(ax.texts) == 9  # annotated cells
    with pytest.raises(ValueError, match="2-D"):
        plotting.plot_attention(torch.ones(2, 2, 2))
    with pytest.raises(ValueError, match="labels"):
        plotting.plot_attention(torch.ones(2, 3), ["a"])
    plt.close("all")


def test_plot_mask_bars_and_frames() -> None:
    plotting.plot_mask(torch.ones(4, 4, dtype=torch.bool).tril())
    ax = plotting.plot_weight_bars(np.array([0.2, 0.8]), ["a", "b"])
    assert len(ax.patches) == 2
    ax = plotting.plot_frames(data.speech_like_signal(0.1), 16_000, 400, 160, num_frames=3)
    assert len(ax.patches) == 3
    with pytest.raises(ValueError):
        plotting.plot_weight_bars(np.ones((2, 2)))
    plt.close("all")


def test_plot_scaling_draws_time_and_memory() -> None:
    rows = [
        {"method": m, "n": n, "seconds": n**p * 1e-9, "peak_mib": float(n**p) / 1e6}
        for m, p in (("dense", 2), ("linear", 1))
        for n in (256, 512, 1024)
    ]
    rows.append({"method": "linear", "n": 2048, "seconds": 1e-3, "peak_mib": float("nan")})
    figure = plotting.plot_scaling(rows)
    time_ax, memory_ax = figure.axes
    assert [line.get_label() for line in time_ax.lines] == ["dense", "linear"]
    assert len(time_ax.lines[1].get_xdata()) == 4 and len(memory_ax.lines[1].get_xdata()) == 3
    assert time_ax.get_xscale() == "log" and memory_ax.get_yscale() == "log"
    plt.close(figure)


# -- in a real kernel, under ipywidgets 8 (the course's environment) and 7.7.1 (Colab's)

KERNEL_CELLS = [
    """import json
import ipywidgets
import matplotlib.pyplot as plt
from helpers.plotting import Choice, InteractiveFigure, Slider, progress
print(ipywidgets.__version__)""",
    # a slider figure: one output, the static figure and the widget
    """def draw(scale, t):
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, scale], label=t)
    return fig
sliders = InteractiveFigure(draw, scale=Slider(1, 0, 3), t=Choice("a", ["a", "b"]))
sliders.show()""",
    # a moved slider replaces the figure in the widget's output area, and closes it
    """before = sliders.output.outputs[0]["data"]["image/png"]
sliders.widget.children[0].value = 3
after = [o["data"]["image/png"] for o in sliders.output.outputs]
assert len(after) == 1 and after[0] != before, after
assert plt.get_fignums() == []
print(json.dumps([w.model_id for w in (sliders.widget, *sliders.widget.children)]))""",
    # a progress bar
    """for _ in progress(range(3), "training"):
    pass""",
    # a plain figure
    """fig, ax = plt.subplots(figsize=(2, 2))
ax.plot([0, 1])
plt.show()""",
]


def run_in_kernel(python, workdir, env):
    """Run :data:`KERNEL_CELLS` in a kernel of ``python``; the executed notebook."""
    import nbformat

    from support.studentview import ROOT, execute_on_kernelspec, write_kernelspec

    write_kernelspec(workdir / "kernels" / "widgets", python, {"PYTHONPATH": str(ROOT), **env})
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in KERNEL_CELLS]
    )
    # helpers from PYTHONPATH, not the working folder
    execute_on_kernelspec(notebook, [str(workdir / "kernels")], "widgets", workdir, timeout=120)
    return notebook


@pytest.mark.parametrize(
    "stack",
    [
        "ipywidgets 8 (the course's environment)",
        pytest.param("ipywidgets 7.7.1 (Colab's runtime)", marks=pytest.mark.xdist_group("colab")),
    ],
)
def test_sliders_progress_and_figures_in_a_kernel(stack, tmp_path, pytestconfig) -> None:
    """In a real kernel, under the course's ipywidgets 8 and under Colab's pinned runtime
    (ipywidgets 7.7.1, IPython 7.34.0, ipykernel 6.17.1: ``tests/support/colab_runtime.txt``,
    built once and cached, shared with the Colab test): the slider figure is one output with
    the static figure and the widget, a moved slider redraws it, the widgets have counted
    ids, the progress bar is a widget, a plain figure is an image, and nothing is written
    to stderr (a red box in a notebook) or raises."""
    from support.colab_image import colab_runtime, runtime_cache

    if "7.7.1" in stack:
        python, major = colab_runtime(runtime_cache(pytestconfig)), "7"
    else:
        python, major = Path(sys.executable), "8"
    done = run_in_kernel(python, tmp_path, {"IPYTHONDIR": str(tmp_path / "ipython")})
    outputs = [cell.outputs for cell in done.cells]
    problems = [
        (i, out)
        for i, cell in enumerate(outputs)
        for out in cell
        if out.output_type == "error" or out.get("name") == "stderr"
    ]
    assert not problems, problems
    version, sliders, moved, bar, figure = outputs
    assert version[0].text.startswith(f"{major}."), version
    view = plotting.WIDGET_VIEW
    (shown,) = sliders
    assert set(shown.data) == {"image/png", "text/plain", view}, shown.data
    assert shown.data[view]["version_major"] == 2
    ids = json.loads(moved[0].text)
    assert shown.data[view]["model_id"] == ids[0]
    assert all(i.startswith("self-attention-course-") for i in ids), ids
    bars = [out for out in bar if view in out.get("data", {})]
    assert len(bars) == 1 and "training" in bars[0].data["text/plain"], bar
    assert bars[0].data[view]["model_id"].startswith("self-attention-course-")
    assert [set(out.data) for out in figure] == [{"image/png", "text/plain"}], figure
