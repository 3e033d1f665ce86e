"""Sphinx configuration of the fusion documentation (build: docs/build.sh)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # the gallery runs headless

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import fusion  # noqa: E402

project = "fusion"
author = "fusion developers"
copyright = "fusion developers"  # noqa: A001 (Sphinx's name)
release = fusion.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build"]
html_static_path = ["_static"]
html_theme = "pydata_sphinx_theme"
html_title = f"fusion {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False

# -- API reference ---------------------------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"  # numpydoc renders the types written in the docstrings
# The class pages list their methods through the autosummary template, not numpydoc.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- Gallery ---------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "doc_module": ("fusion",),
    "backreferences_dir": "generated/backrefs",
    "reference_url": {"fusion": None},
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "default_thumb_file": None,
    "min_reported_time": 1,
}


# -- Docstring hooks -------------------------------------------------------------------------
_TYPE_LINE = re.compile(r"^(\s*\*\*[^*]+\*\* : )(.*)$")
_ATTRIBUTE_NAME = re.compile(r"\b([A-Za-z]\w*?)_(?=[\s,)\]+*/]|$)")


def _escape_attribute_names_in_types(app, what, name, obj, options, lines):
    """In a rendered parameter type such as ``ndarray of shape (n_bins_ + 1,)``, a name
    ending in an underscore is a fitted attribute, not a reStructuredText link target."""
    for i, line in enumerate(lines):
        match = _TYPE_LINE.match(line)
        if match:
            lines[i] = match.group(1) + _ATTRIBUTE_NAME.sub(r"\1\\_", match.group(2))


def _skip_scikit_learn_members(app, what, name, obj, skip, options):
    """Class pages list fusion's own methods; the scikit-learn plumbing every estimator
    inherits (get_params, set_*_request, metadata routing, set_output, score) is documented
    by scikit-learn."""
    module = getattr(obj, "__module__", None) or ""
    if module.startswith("sklearn") or re.fullmatch(r"set_\w+_request", name):
        return True
    return None


def setup(app):
    # After numpydoc (priority 500) has rendered the sections.
    app.connect("autodoc-process-docstring", _escape_attribute_names_in_types, priority=600)
    app.connect("autodoc-skip-member", _skip_scikit_learn_members)
