"""Sphinx configuration of the course website (``make site``; see docs/website.md).

The sources are not here: ``instructor/site.py`` writes the student-view notebooks and the
landing page to ``_build/site/`` and runs Sphinx on them with this folder as the
configuration folder (``-c docs/site``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import jupyter_server_mathjax

from instructor import registry

course = registry.load()

project = course.title
html_title = course.title
author = "The self-attention course authors"
copyright = "2026 The self-attention course authors (MIT License)"

extensions = ["myst_nb"]
exclude_patterns = ["**.ipynb_checkpoints"]

# -- MyST-NB: stored outputs only, never executed --------------------------------------------
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
# The notebooks (like Jupyter) write $$...$$ inside a paragraph too.
myst_dmath_double_inline = True
# myst-parser would write a MathJax 3/4 configuration; the site runs MathJax 2 (below).
myst_update_mathjax = False

# -- Math without network: MathJax 2.7 from the jupyter-server-mathjax package -------------
# Copied to _static/mathjax after the build (copy_mathjax below); mathjax_path is relative
# to _static.
MATHJAX = Path(jupyter_server_mathjax.__file__).parent / "static"
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax2_config = {
    "tex2jax": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processEscapes": True,
        "processEnvironments": True,
    },
    "jax": ["input/TeX", "output/HTML-CSS"],
    # The package ships the STIX-Web web fonts only (no TeX fonts, no image fonts), so
    # neither look for other fonts (as Jupyter's own MathJax 2 configuration does).
    "HTML-CSS": {
        "availableFonts": [],
        "preferredFont": None,
        "webFont": "STIX-Web",
        "imageFont": None,
    },
    "showMathMenu": False,
    "messageStyle": "none",
}

# -- HTML -------------------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_static_path = ["_static"]
html_css_files = ["site.css"]
# site.js: the sidebar buttons work on a phone (see the file).
html_js_files = ["site.js"]
templates_path = ["_templates"]
# sphinx-book-theme's sidebar, its title inside a landmark (_templates/sidebar-title.html).
html_sidebars = {"**": ["sidebar-title.html", "search-button-field.html", "sbt-sidebar-nav.html"]}
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    # The launch button opens <folder>/<id>/<id>.ipynb of the repository on Colab, as the
    # page's badge does: the self-study edition (self_study/) when course.toml has
    # self_study = true, else notebooks/. The pages are <id>/<id>, so path_to_docs is that
    # folder.
    "repository_url": f"https://github.com/{course.repository}",
    "repository_branch": course.ref,
    "path_to_docs": "self_study" if course.self_study else "notebooks",
    "launch_buttons": {"colab_url": "https://colab.research.google.com"},
    # Offers _sources/<id>/<id>.ipynb, which instructor/site.py replaces by the student
    # notebook with its visible tests (site.downloadable_notebooks).
    "use_download_button": True,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "use_source_button": False,
    "use_edit_page_button": False,
    "use_issues_button": False,
    "home_page_in_toc": True,
    "show_toc_level": 2,
}


def copy_mathjax(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        shutil.copytree(MATHJAX, Path(app.outdir) / "_static" / "mathjax", dirs_exist_ok=True)


def setup(app) -> None:
    app.connect("build-finished", copy_mathjax)
