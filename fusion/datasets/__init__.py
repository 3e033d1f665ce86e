"""Loaders for the five UCI data sets of the paper's benchmark (Wang & Liu 2020, Sec. 5.2).

Benchmark infrastructure, not part of any fusion method (no method imports it). Each loader
returns the features as a :class:`pandas.DataFrame` (categorical columns with the
``category`` dtype and listed in :attr:`Dataset.categorical`) and the binary label as 0/1
integers, positive as the paper defines it:

========== ============================== ==========================================
name       file                           positive class (label 1)
========== ============================== ==========================================
adult      ``adult.csv.gz``               ``income == ">50K"``
census     ``census_income_kdd.csv.gz``   ``income == "50000+."`` (income > 50K)
covertype  ``covtype.csv.gz``             ``Cover_Type == 2`` (Lodgepole Pine)
dota2      ``dota2.csv.gz``               ``team_won == 1`` (first column)
susy       ``susy.csv.gz``                ``label == 1`` (signal; first column)
========== ============================== ==========================================

``load("covertype", target="multiclass")`` returns the seven cover types instead
(``Cover_Type``, the original codes 1..7); the other data sets have only the binary label.

The files are gzip CSVs with a header line, the UCI columns in UCI order, train rows before
test rows (the format of the project's shared copies). A local copy is looked for, in order,
in the ``data_home`` argument, the directory named by the environment variable
``FUSION_DATA_DIR`` and the cache directory ``~/.cache/fusion`` (``$XDG_CACHE_HOME/fusion``
when that is set). When none has the file, :func:`download` fetches the original files from
the UCI archive, converts them to this format, checks the SHA-256 of the result against the
known copy and stores it in ``data_home`` or the cache directory.

SUSY is also read from the original UCI ``SUSY.csv.gz`` / ``SUSY.csv`` (5,000,000 rows, no
header, label first), which takes precedence over ``susy.csv.gz`` in the same directory;
``download("susy")`` fetches that full file (about 880 MB).

Census's ``instance_weight`` column is the survey's sampling weight, not a feature: it is
dropped from ``X`` and kept in :attr:`Dataset.sample_weight`.

Modules: ``_registry`` (what is known about each set), ``_convert`` (UCI originals -> shared
format), ``_download`` (fetching), ``_locate`` (search order), ``_load`` (reading, loaders).
"""

from ._convert import adult_from_uci, census_from_uci, covtype_from_uci, dota2_from_uci
from ._download import download
from ._errors import DatasetDownloadError, DatasetNotFoundError
from ._load import (
    Dataset,
    load,
    load_adult,
    load_census,
    load_covertype,
    load_dota2,
    load_susy,
    read_frame,
)
from ._locate import find_local_copy, get_data_home
from ._registry import DATASETS, TARGETS

__all__ = [
    "DATASETS",
    "TARGETS",
    "Dataset",
    "DatasetNotFoundError",
    "DatasetDownloadError",
    "load",
    "load_adult",
    "load_census",
    "load_covertype",
    "load_dota2",
    "load_susy",
    "download",
    "get_data_home",
    "find_local_copy",
    "read_frame",
    "adult_from_uci",
    "census_from_uci",
    "covtype_from_uci",
    "dota2_from_uci",
]
