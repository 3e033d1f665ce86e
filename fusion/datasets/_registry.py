"""What the loaders know about each data set: file, columns, label, checksums, sources.

Pure data; the fetch functions that rebuild a file from the UCI originals are looked up by
name in :mod:`fusion.datasets._download`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ADULT_COLUMNS",
    "CENSUS_COLUMNS",
    "COVTYPE_COLUMNS",
    "COVTYPE_TERRAIN",
    "COVTYPE_WILDERNESS",
    "COVTYPE_SOIL",
    "DOTA2_COLUMNS",
    "SUSY_COLUMNS",
    "Spec",
    "SPECS",
    "DATASETS",
    "TARGETS",
    "spec",
    "check_target",
]

UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"

# Column names of the shared-format files (the README of the shared copies explains them).

ADULT_COLUMNS = (
    "age,workclass,fnlwgt,education,education_num,marital_status,occupation,relationship,race,"
    "sex,capital_gain,capital_loss,hours_per_week,native_country,income"
).split(",")

CENSUS_COLUMNS = (
    "age,class_of_worker,detailed_industry_recode,detailed_occupation_recode,education,"
    "wage_per_hour,enroll_in_edu_inst_last_wk,marital_stat,major_industry_code,"
    "major_occupation_code,race,hispanic_origin,sex,member_of_a_labor_union,"
    "reason_for_unemployment,full_or_part_time_employment_stat,capital_gains,capital_losses,"
    "dividends_from_stocks,tax_filer_stat,region_of_previous_residence,"
    "state_of_previous_residence,detailed_household_and_family_stat,"
    "detailed_household_summary_in_household,instance_weight,migration_code_change_in_msa,"
    "migration_code_change_in_reg,migration_code_move_within_reg,live_in_this_house_1_year_ago,"
    "migration_prev_res_in_sunbelt,num_persons_worked_for_employer,family_members_under_18,"
    "country_of_birth_father,country_of_birth_mother,country_of_birth_self,citizenship,"
    "own_business_or_self_employed,fill_inc_questionnaire_for_veterans_admin,veterans_benefits,"
    "weeks_worked_in_year,year,income"
).split(",")

# The census-income.names file marks these as continuous; every other attribute is nominal,
# including the integer-coded recodes, own_business_or_self_employed, veterans_benefits, year.
CENSUS_CONTINUOUS = (
    "age",
    "wage_per_hour",
    "capital_gains",
    "capital_losses",
    "dividends_from_stocks",
    "instance_weight",
    "num_persons_worked_for_employer",
    "weeks_worked_in_year",
)

COVTYPE_TERRAIN = (
    "Elevation",
    "Aspect",
    "Slope",
    "Horizontal_Distance_To_Hydrology",
    "Vertical_Distance_To_Hydrology",
    "Horizontal_Distance_To_Roadways",
    "Hillshade_9am",
    "Hillshade_Noon",
    "Hillshade_3pm",
    "Horizontal_Distance_To_Fire_Points",
)
COVTYPE_WILDERNESS = tuple(f"Wilderness_Area{i}" for i in range(1, 5))
COVTYPE_SOIL = tuple(f"Soil_Type{i}" for i in range(1, 41))
COVTYPE_COLUMNS = [*COVTYPE_TERRAIN, *COVTYPE_WILDERNESS, *COVTYPE_SOIL, "Cover_Type"]

DOTA2_COLUMNS = ["team_won", "cluster_id", "game_mode", "game_type"] + [
    f"hero_{i}" for i in range(1, 114)
]

SUSY_COLUMNS = (
    "label,lepton_1_pT,lepton_1_eta,lepton_1_phi,lepton_2_pT,lepton_2_eta,lepton_2_phi,"
    "missing_energy_magnitude,missing_energy_phi,MET_rel,axial_MET,M_R,M_TR_2,R,MT2,S_R,"
    "M_Delta_R,dPhi_r_b,cos_theta_r1"
).split(",")

#: Values of the ``target`` argument of :func:`fusion.datasets.load`.
TARGETS = ("binary", "multiclass")


@dataclass(frozen=True, kw_only=True)
class Spec:
    name: str
    filename: str
    columns: tuple[str, ...]
    label: str
    positive: str  # label text of the positive class, as pandas reads it
    negative: str
    positive_doc: str
    categorical: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    n_rows: int  # rows of the shared copy (documentation and messages only)
    file_sha256: str  # of the shared .csv.gz (depends on the gzip implementation)
    content_sha256: str | None  # of the uncompressed CSV text: what download() verifies
    urls: tuple[str, ...]
    original_names: tuple[str, ...] = ()  # files in UCI format (no header) also accepted
    # What the labels of target="multiclass" mean; None: the data have only a binary target.
    multiclass_doc: str | None = None


# One data set a row: name, file of the shared copy, its columns, the label column and the
# label texts of the positive and the negative class (as pandas reads them).
_FILES = (
    ("adult", "adult.csv.gz", ADULT_COLUMNS, "income", ">50K", "<=50K"),
    ("census", "census_income_kdd.csv.gz", CENSUS_COLUMNS, "income", "50000+.", "- 50000."),
    ("covertype", "covtype.csv.gz", COVTYPE_COLUMNS, "Cover_Type", "2", "1,3,4,5,6,7"),
    ("dota2", "dota2.csv.gz", DOTA2_COLUMNS, "team_won", "1", "-1"),
    ("susy", "susy.csv.gz", SUSY_COLUMNS, "label", "1", "0"),
)

# The rest of each data set's entry: what label 1 means, the columns read as categories or
# dropped from X, the rows of the shared copy, its SHA-256 checksums and the UCI sources.
_DETAILS: dict[str, dict] = {
    "adult": dict(
        positive_doc="income > 50K",
        categorical=(
            "workclass",
            "education",
            "marital_status",
            "occupation",
            "relationship",
            "race",
            "sex",
            "native_country",
        ),
        n_rows=48_842,
        file_sha256="52b9736a0ec775da41438aa0cf947a6abf2ad4bf27cfe740e0fdd32126347ca5",
        content_sha256="6f519c67ccd70e0c9d4f616b15d338aa6e44b336a20962f5010fb01bee0d12d4",
        urls=(f"{UCI}/adult/adult.data", f"{UCI}/adult/adult.test"),
    ),
    "census": dict(
        positive_doc="income > 50K (label text '50000+.')",
        categorical=tuple(
            c for c in CENSUS_COLUMNS if c not in CENSUS_CONTINUOUS and c != "income"
        ),
        drop=("instance_weight",),
        n_rows=299_285,
        file_sha256="caf011bf39d4caf2ba1b1db940fe186ca8d5a4de9b211c682eaa09772f510173",
        content_sha256="1ae9a2eb9b616d82c1d41fee92ebe46be9ff90040794ea1a5bf049a14245d66d",
        urls=(
            f"{UCI}/census-income-mld/census-income.data.gz",
            f"{UCI}/census-income-mld/census-income.test.gz",
        ),
    ),
    "covertype": dict(
        positive_doc="Cover_Type == 2 (Lodgepole Pine); all other cover types are negative",
        n_rows=581_012,
        file_sha256="3eb5d2425ee7ae8671442fe74865511dc8505e5576f84ea24ecedcd1c293f529",
        content_sha256="ea35ca6820fcbe0bdc6707e9ed31e11a9de84f07d88da73b511c737383c271a6",
        urls=(f"{UCI}/covtype/covtype.data.gz",),
        multiclass_doc=(
            "Cover_Type, the original codes 1..7: 1 Spruce/Fir, 2 Lodgepole Pine, "
            "3 Ponderosa Pine, 4 Cottonwood/Willow, 5 Aspen, 6 Douglas-fir, 7 Krummholz"
        ),
    ),
    "dota2": dict(
        positive_doc="team_won == 1 (first column)",
        categorical=("cluster_id", "game_mode", "game_type"),
        n_rows=102_944,
        file_sha256="6f58cc7a6bfd784ce58b8502f8fece6c2673303cd866764adbda95a34d9928d8",
        content_sha256="cceedeee31fe468bcfae63d63ebbb54cb954441651a171f36171dbda63de9b7a",
        urls=(f"{UCI}/00367/dota2Dataset.zip",),
    ),
    "susy": dict(
        positive_doc="label == 1 (signal; first column)",
        n_rows=10_000,
        file_sha256="c160949cddfc4a6009daa6ff694ff801e68467dae3d19a3d9fa5dd7c75b14eb1",
        # The shared copy is a 10,000-row sample; a download is the full UCI file, kept as is.
        content_sha256=None,
        urls=(f"{UCI}/00279/SUSY.csv.gz",),
        original_names=("SUSY.csv.gz", "SUSY.csv"),
    ),
}

SPECS: dict[str, Spec] = {
    name: Spec(
        name=name,
        filename=filename,
        columns=tuple(columns),
        label=label,
        positive=positive,
        negative=negative,
        **_DETAILS[name],
    )
    for name, filename, columns, label, positive, negative in _FILES
}

#: Names accepted by :func:`fusion.datasets.load`, in the order of the paper's Table 1.
DATASETS: tuple[str, ...] = tuple(SPECS)


def spec(name: str) -> Spec:
    """The registry entry of ``name``; a ``ValueError`` listing the known names otherwise."""
    try:
        return SPECS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown data set {name!r}; known: {list(DATASETS)}.") from None


def check_target(s: Spec, target: str) -> None:
    """Refuse a ``target`` the data set does not have, naming the sets that have it."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {list(TARGETS)}, got {target!r}.")
    if target == "multiclass" and s.multiclass_doc is None:
        having = [n for n, other in SPECS.items() if other.multiclass_doc is not None]
        raise ValueError(
            f"the {s.name} data have only a binary target; target='multiclass' is available "
            f"for: {having}."
        )
