"""The built-in measures: one list, registered in one place (:mod:`audit.measures.registry`).

Each entry is the measure's metadata as data (see
:class:`~audit.measures.contract.MeasureSpec`); the kernels live in
:mod:`~audit.measures.kernels` (Howard et al.), :mod:`~audit.measures.bias`
(Hutiri et al., Elobaid et al.), :mod:`~audit.measures.nist` (NISTIR 8429's
summaries), :mod:`~audit.measures.merg` (Linghu et al.'s MERG and MERA),
:mod:`~audit.measures.zeroerrors` (the zero-error-adjusted ratio measures),
:mod:`~audit.measures.crossgroup` (cross-group impostor FMRs, NISTIR 8280) and
:mod:`~audit.measures.scores` (score measures).  The rate kernels broadcast a
column of alphas, so they declare ``vectorised_alpha=True``.

Which measures take alpha: those that combine an FMR term and an FNMR term
(FDR, IR, GARBE, NRB, MERG, MERA, and ``ir_cp``/``merg_cp``); a measure of one
error rate (the ``_fmr``/``_fnmr`` measures, SER, NIST's summaries, the ratios
to a reference) checks alpha and ignores it: its share is ``"fmr"`` or
``"fnmr"``, so FFMC.1 fails it by construction.

Each measure records the term of ISO/IEC 19795-10 it corresponds to where the
correspondence is clear (:data:`audit.measures.contract.ISO_TERMS`): a measure of
the FMRs is a false-positive differential, of the FNMRs a false-negative one, a
measure combining both an aggregate equitability measure, a measure of score
distributions a comparison-score differential; where a measure merges the two
error types in another way (the EER) the term is left empty.
"""

from __future__ import annotations

import numpy as np

from audit.measures import crossgroup, kernels, nist, reference, zeroerrors
from audit.measures.bias import HUTIRI, nrb, nrb_fmr, nrb_fnmr, ser, std_fmr, std_fnmr
from audit.measures.contract import (
    ISO_AGGREGATE,
    ISO_FALSE_NEGATIVE,
    ISO_FALSE_POSITIVE,
    ISO_SCORE_DIFFERENTIAL,
    PairMeasure,
    RateMeasure,
    ScoreMeasure,
    TableMeasure,
)
from audit.measures.merg import LINGHU, mera, merg
from audit.measures.nist import NISTIR_8429
from audit.measures.scores import cei, dfi, sed_mean, sed_std, std_eer
from audit.tables.rates import RATE_COUNTS

HOWARD = "Howard, Laird et al., ICPR 2022 FairBio workshop"
ELOBAID = "Elobaid et al., Sum of Group Error Differences"
SOLANO = "Solano et al., Comprehensive Equity Index (CEI)"

HOWARD_MEASURES = (
    RateMeasure(
        vectorised_alpha=True,
        name="fdr",
        iso_term=ISO_AGGREGATE,
        label="FDR",
        function=kernels.fdr,
        higher_is_fairer=True,
        bounds=(0.0, 1.0),
        ideal=1.0,
        fmr_term="A: largest difference between two groups' FMR",
        fnmr_term="B: largest difference between two groups' FNMR",
        share="linear",
        citation=f"{HOWARD}, eq. 1-3 (de Freitas Pereira & Marcel 2021)",
        undefined="never undefined",
        properties=dict(
            bounded=True,
            permutation_invariant=True,
            scale_invariant=False,
            defined_at_zero=True,
            ideal_when_equal=True,
        ),
    ),
    RateMeasure(
        vectorised_alpha=True,
        name="ir",
        iso_term=ISO_AGGREGATE,
        label="IR",
        function=kernels.inequity_rate,
        higher_is_fairer=False,
        bounds=(1.0, None),
        ideal=1.0,
        fmr_term="A: max group FMR / min group FMR",
        fnmr_term="B: max group FNMR / min group FNMR",
        share="log",
        citation=f"{HOWARD}, eq. 4-6 (Grother, NIST 2021)",
        undefined="undefined when the minimum group FMR or FNMR is 0: NaN, flagged, warned",
        properties=dict(
            bounded=False,
            permutation_invariant=True,
            scale_invariant=True,
            defined_at_zero=False,
            ideal_when_equal=True,
        ),
    ),
    RateMeasure(
        vectorised_alpha=True,
        name="garbe",
        iso_term=ISO_AGGREGATE,
        label="GARBE",
        function=kernels.garbe,
        higher_is_fairer=False,
        bounds=(0.0, 1.0),
        ideal=0.0,
        fmr_term="A: Gini coefficient of the group FMRs (eq. 7)",
        fnmr_term="B: Gini coefficient of the group FNMRs (eq. 7)",
        share="linear",
        citation=f"{HOWARD}, eq. 7-9",
        undefined="a term is undefined when every group's rate is 0 (zero mean): set to 0, flagged, warned",
        properties=dict(
            bounded=True,
            permutation_invariant=True,
            scale_invariant=True,
            defined_at_zero=True,
            ideal_when_equal=True,
        ),
    ),
)

_RATIO_PROPERTIES = dict(
    bounded=False,
    permutation_invariant=True,
    scale_invariant=True,
    defined_at_zero=False,
    ideal_when_equal=True,
)
_STD_PROPERTIES = dict(
    bounded=True,
    permutation_invariant=True,
    scale_invariant=False,
    defined_at_zero=True,
    ideal_when_equal=True,
)
_NRB_UNDEFINED = "undefined when a group's {rate} is 0 (log of 0): NaN, flagged, warned"

BIAS_MEASURES = (
    RateMeasure(
        vectorised_alpha=True,
        name="nrb",
        iso_term=ISO_AGGREGATE,
        label="NRB",
        function=nrb,
        higher_is_fairer=False,
        bounds=(0.0, None),
        ideal=0.0,
        fmr_term="A: NRB of the group FMRs (eq. 2)",
        fnmr_term="B: NRB of the group FNMRs (eq. 2)",
        share="linear",
        citation=f"{HUTIRI}, eq. 2, combined as alpha*A + (1-alpha)*B",
        undefined=_NRB_UNDEFINED.format(rate="FMR or FNMR"),
        properties=_RATIO_PROPERTIES,
    ),
    RateMeasure(
        vectorised_alpha=True,
        name="nrb_fmr",
        iso_term=ISO_FALSE_POSITIVE,
        label="NRB(FMR)",
        function=nrb_fmr,
        higher_is_fairer=False,
        bounds=(0.0, None),
        ideal=0.0,
        fmr_term="A: NRB of the group FMRs (eq. 2)",
        fnmr_term="none: the measure ignores FNMR",
        share="fmr",
        citation=f"{HUTIRI}, eq. 2",
        undefined=_NRB_UNDEFINED.format(rate="FMR"),
        properties=_RATIO_PROPERTIES,
    ),
    RateMeasure(
        vectorised_alpha=True,
        name="nrb_fnmr",
        iso_term=ISO_FALSE_NEGATIVE,
        label="NRB(FNMR)",
        function=nrb_fnmr,
        higher_is_fairer=False,
        bounds=(0.0, None),
        ideal=0.0,
        fmr_term="none: the measure ignores FMR",
        fnmr_term="B: NRB of the group FNMRs (eq. 2)",
        share="fnmr",
        citation=f"{HUTIRI}, eq. 2",
        undefined=_NRB_UNDEFINED.format(rate="FNMR"),
        properties=_RATIO_PROPERTIES,
    ),
    RateMeasure(
        vectorised_alpha=True,
        name="std_fmr",
        iso_term=ISO_FALSE_POSITIVE,
        label="STD(FMR)",
        function=std_fmr,
        higher_is_fairer=False,
        bounds=(0.0, 0.5),
        ideal=0.0,
        fmr_term="A: population standard deviation of the group FMRs",
        fnmr_term="none: the measure ignores FNMR",
        share="fmr",
        citation=f"{ELOBAID}, Table I and eq. 21",
        undefined="never undefined",
        properties=_STD_PROPERTIES,
    ),
    RateMeasure(
        vectorised_alpha=True,
        name="std_fnmr",
        iso_term=ISO_FALSE_NEGATIVE,
        label="STD(FNMR)",
        function=std_fnmr,
        higher_is_fairer=False,
        bounds=(0.0, 0.5),
        ideal=0.0,
        fmr_term="none: the measure ignores FMR",
        fnmr_term="B: population standard deviation of the group FNMRs",
        share="fnmr",
        citation=f"{ELOBAID}, Table I and eq. 21",
        undefined="never undefined",
        properties=_STD_PROPERTIES,
    ),
    RateMeasure(
        vectorised_alpha=True,
        name="ser",
        iso_term=ISO_FALSE_POSITIVE,
        label="SER",
        function=ser,
        higher_is_fairer=False,
        bounds=(1.0, None),
        ideal=1.0,
        fmr_term="A: max group FMR / min group FMR",
        fnmr_term="none: the measure ignores FNMR",
        share="fmr",
        citation=f"{ELOBAID}, Table I (Villalobos et al., their ref. [20])",
        undefined="undefined when the minimum group FMR is 0: NaN, flagged, warned",
        properties=_RATIO_PROPERTIES,
    ),
)


REFUSED = "a group without mated or within-group non-mated comparisons is refused"


def _sum_share(fmr_term, fnmr_term, alpha):
    """Share of the FMR term in ``A + B`` (SED has no alpha; it weighs both equally)."""
    a = np.asarray(fmr_term, dtype="float64")
    b = np.asarray(fnmr_term, dtype="float64")
    with np.errstate(invalid="ignore", divide="ignore"):
        return a / (a + b)


def _mean_share(fmr_term, fnmr_term, alpha):
    """Share of the impostor term in CEI's equal-weight mean of the two unfairness terms."""
    a = 1.0 - np.asarray(fmr_term, dtype="float64")
    b = 1.0 - np.asarray(fnmr_term, dtype="float64")
    with np.errstate(invalid="ignore", divide="ignore"):
        return a / (a + b)


def _no_share(fmr_term, fnmr_term, alpha):
    """No FMR/FNMR decomposition: NaN."""
    return np.full(np.shape(np.asarray(fmr_term)), np.nan)


# The score measures' properties, in the meaning of
# audit.measures.contract.PROPERTY_MEANINGS["scores"] (scale invariance: under a strictly
# increasing map of the scores; "at zero": a group whose scores are perfectly separated).
# Every one relabels its groups freely (a mean, a standard deviation or a sum over groups)
# and is at its ideal when every group has the same scores.
_STD_EER_PROPERTIES = dict(
    # each EER lies in [0, 1], and a population standard deviation of numbers in [0, 1]
    # is at most 0.5 (half of them at 0, half at 1), the declared bound
    bounded=True,
    permutation_invariant=True,
    # an EER reads only which scores lie above which (FMR and FNMR at every observed
    # score as the threshold), and an increasing map keeps that order
    scale_invariant=True,
    # a perfectly separated group has EER 0, an ordinary number
    defined_at_zero=True,
    ideal_when_equal=True,
)
_SED_PROPERTIES = dict(
    # eq. 8 divides a group's FMR by the global FMR, which counts the cross-group
    # non-mated comparisons too: many of them below the threshold drive the global FMR
    # towards 0 while a group's FMR stays, and delta FMR_g grows without limit
    bounded=False,
    permutation_invariant=True,
    # the threshold is the arithmetic mean of the groups' EER thresholds, in score units:
    # an increasing map that is not affine moves it against the scores, and the rates there
    scale_invariant=False,
    # a separated group's EER threshold may sit above every non-mated score of the other
    # groups: the mean threshold can then leave the global FMR at 0, and eq. 8 divides by 0
    defined_at_zero=False,
    # identical groups with both kinds of error at their EER threshold: every group's
    # rates equal the global ones (cross-group non-mated scores none, or copies of the
    # groups'), so every delta is 0
    ideal_when_equal=True,
)
_DISTRIBUTION_PROPERTIES = dict(
    # the divergences to the mean distribution sum to at most K log2 K (Solano et al.,
    # eq. 2 and 8), so the value lies in [0, 1]
    bounded=True,
    permutation_invariant=True,
    # equal-width bins over the algorithm's score range: an increasing map that is not
    # affine moves scores between bins, and the histograms with them
    scale_invariant=False,
    # every group has scores, so every histogram has mass and the mean distribution is
    # positive wherever a group's is: no division by 0, separated or not
    defined_at_zero=True,
    ideal_when_equal=True,
)

SCORE_MEASURES = (
    ScoreMeasure(
        name="std_eer",
        label="STD of group EERs",
        function=std_eer,
        higher_is_fairer=False,
        bounds=(0.0, 0.5),
        ideal=0.0,
        fmr_term="none: the EER merges FMR and FNMR (NaN)",
        fnmr_term="none: the EER merges FMR and FNMR (NaN)",
        share=_no_share,
        citation=f"{ELOBAID}, eq. 19-21",
        undefined=f"never undefined ({REFUSED})",
        properties=_STD_EER_PROPERTIES,
    ),
    ScoreMeasure(
        name="sed_mean",
        iso_term=ISO_AGGREGATE,
        label="mean SED_G",
        function=sed_mean,
        higher_is_fairer=False,
        bounds=(0.0, None),
        ideal=0.0,
        fmr_term="A: mean over groups of |1 - FMR_g / FMR_global| at the mean EER threshold (eq. 8)",
        fnmr_term="B: mean over groups of |1 - FNMR_g / FNMR_global| (eq. 9)",
        share=_sum_share,
        citation=f"{ELOBAID}, eq. 8-11",
        undefined=(
            f"a global FMR or FNMR of 0 at the mean EER threshold: NaN, flagged, warned; {REFUSED}"
        ),
        properties=_SED_PROPERTIES,
    ),
    ScoreMeasure(
        name="sed_std",
        label="STD of SED_G",
        function=sed_std,
        higher_is_fairer=False,
        bounds=(0.0, None),
        ideal=0.0,
        fmr_term="std over groups of delta FMR_g (eq. 8); not a term of the value",
        fnmr_term="std over groups of delta FNMR_g (eq. 9); not a term of the value",
        share=_no_share,
        citation=f"{ELOBAID}, eq. 8-11",
        undefined=(
            f"a global FMR or FNMR of 0 at the mean EER threshold: NaN, flagged, warned; {REFUSED}"
        ),
        properties=_SED_PROPERTIES,
    ),
    ScoreMeasure(
        name="dfi",
        iso_term=ISO_SCORE_DIFFERENTIAL,
        label="DFI_N",
        function=dfi,
        higher_is_fairer=True,
        bounds=(0.0, 1.0),
        ideal=1.0,
        fmr_term="none: genuine and impostor scores are combined (NaN)",
        fnmr_term="none: genuine and impostor scores are combined (NaN)",
        share=_no_share,
        citation=f"{SOLANO}, eq. 1-2 (Kotwal & Marcel, ICPR 2022)",
        undefined=f"never undefined ({REFUSED})",
        properties=_DISTRIBUTION_PROPERTIES,
    ),
    ScoreMeasure(
        name="cei",
        iso_term=ISO_SCORE_DIFFERENTIAL,
        label="CEI",
        function=cei,
        higher_is_fairer=True,
        bounds=(0.0, 1.0),
        ideal=1.0,
        fmr_term="A: CEI of the impostor (non-mated) distributions",
        fnmr_term="B: CEI of the genuine (mated) distributions",
        share=_mean_share,
        citation=f"{SOLANO}, sec. 2.3, eq. 8",
        undefined=f"never undefined ({REFUSED})",
        properties=_DISTRIBUTION_PROPERTIES,
    ),
)


_PAIRS_ONLY = "none: the measure reads impostor FMRs only"
NISTIR = crossgroup.NISTIR_8280

CROSS_GROUP_MEASURES = (
    PairMeasure(
        name="within_cross_ratio",
        iso_term=ISO_FALSE_POSITIVE,
        label="Within/cross FMR ratio",
        function=crossgroup.within_cross_ratio,
        higher_is_fairer=False,
        bounds=(1.0, None),
        ideal=1.0,
        fmr_term="A: max(W/C, C/W), W the mean within-group FMR, C the mean cross-group FMR",
        fnmr_term=_PAIRS_ONLY,
        citation=f"{NISTIR}: same-group against cross-group impostor FMR "
        "(the summary is ours: mean within-group over mean cross-group FMR, folded at 1)",
        undefined="undefined when the mean within-group or cross-group FMR is 0: NaN, "
        "flagged, warned",
        properties=dict(
            bounded=False,
            permutation_invariant=True,
            scale_invariant=True,
            defined_at_zero=True,
            ideal_when_equal=True,
        ),
    ),
    PairMeasure(
        name="fmr_asymmetry",
        iso_term=ISO_FALSE_POSITIVE,
        label="FMR asymmetry",
        function=crossgroup.fmr_asymmetry,
        higher_is_fairer=False,
        bounds=(1.0, None),
        ideal=1.0,
        fmr_term="A: largest FMR(a, b) / FMR(b, a) over the pairs of groups",
        fnmr_term=_PAIRS_ONLY,
        citation=f"{NISTIR}: cross-demographic FMR heat maps, not symmetric as enrolment "
        "and verification images differ (the summary is ours: largest FMR(a, b) / FMR(b, a))",
        undefined="undefined when a cross-group FMR is 0: NaN, flagged, warned",
        properties=dict(
            bounded=False,
            permutation_invariant=True,
            scale_invariant=True,
            defined_at_zero=False,
            ideal_when_equal=True,
        ),
    ),
    PairMeasure(
        name="cell_gini",
        iso_term=ISO_FALSE_POSITIVE,
        label="Gini of pair FMRs",
        function=crossgroup.cell_gini,
        higher_is_fairer=False,
        bounds=(0.0, 1.0),
        ideal=0.0,
        fmr_term="A: Gini coefficient (eq. 7) of the FMRs of every (enrolment, probe) pair",
        fnmr_term=_PAIRS_ONLY,
        citation=f"{HOWARD}, eq. 7 (GARBE's A), over every cell of the {NISTIR} "
        "cross-demographic FMR matrix",
        undefined="undefined when every pair's FMR is 0 (zero mean): set to 0, flagged, warned",
        properties=dict(
            bounded=True,
            permutation_invariant=True,
            scale_invariant=True,
            defined_at_zero=True,
            ideal_when_equal=True,
        ),
    ),
)


# ---------------------------------------------------------------- NISTIR 8429's summaries

_IGNORES = "none: the measure ignores {rate}"
_ISO_OF_RATE = {"fmr": ISO_FALSE_POSITIVE, "fnmr": ISO_FALSE_NEGATIVE}
_MAX_MEAN_PROPERTIES = dict(
    bounded=False,  # at most the number of groups: no bound holds whatever that number
    permutation_invariant=True,
    scale_invariant=True,
    defined_at_zero=True,
    ideal_when_equal=True,
)
_GINI_PROPERTIES = dict(
    bounded=True,
    permutation_invariant=True,
    scale_invariant=True,
    defined_at_zero=True,
    ideal_when_equal=True,
)


def _per_rate(
    name: str,
    label: str,
    functions: dict,
    *,
    bounds: tuple[float | None, float | None],
    ideal: float,
    term: str,
    citation: str,
    undefined: str,
    properties: dict,
    kind=RateMeasure,
    reads_counts: bool = False,
    **extra,
) -> tuple:
    """One single-rate measure per entry of ``functions`` (``{"fmr": f, "fnmr": g}``) from
    one description, in which ``{rate}`` reads FMR or FNMR and ``{count}`` the count
    column of that rate; a :class:`TableMeasure` of the zero-error-adjusted kind reads
    that count column."""
    out = []
    for rate, function in functions.items():
        words = {"rate": rate.upper(), "count": RATE_COUNTS[rate][0]}
        other = "FNMR" if rate == "fmr" else "FMR"
        own = term.format(**words)
        counts = {"counts": (RATE_COUNTS[rate][0],)} if reads_counts else {}
        out.append(
            kind(
                vectorised_alpha=True,
                name=name.format(rate=rate),
                label=label.format(**words),
                function=function,
                higher_is_fairer=False,
                bounds=bounds,
                ideal=ideal,
                fmr_term=own if rate == "fmr" else _IGNORES.format(rate=other),
                fnmr_term=own if rate == "fnmr" else _IGNORES.format(rate=other),
                share=rate,
                citation=citation.format(**words),
                undefined=undefined.format(**words),
                properties=properties,
                iso_term=_ISO_OF_RATE[rate],
                **counts,
                **extra,
            )
        )
    return tuple(out)


_SUMMARY = f"{NISTIR_8429}: the FRTE 1:1 demographic-effects summary, over the cells, "

NIST_MEASURES = (
    *_per_rate(
        "nist_max_min_{rate}",
        "Max/Min {rate} (NIST)",
        {"fmr": nist.nist_max_min_fmr, "fnmr": nist.nist_max_min_fnmr},
        bounds=(1.0, None),
        ideal=1.0,
        term="A: max cell {rate} / min cell {rate}",
        citation=_SUMMARY + "Max/Min {rate} (the formula of SER and of IR's terms)",
        undefined="undefined when the smallest cell {rate} is 0: NaN, flagged, warned",
        properties=_RATIO_PROPERTIES,
    ),
    RateMeasure(
        vectorised_alpha=True,
        name="nist_max_minus_min_fnmr",
        label="Max-Min FNMR (NIST)",
        function=nist.nist_max_minus_min_fnmr,
        higher_is_fairer=False,
        bounds=(0.0, 1.0),
        ideal=0.0,
        fmr_term=_IGNORES.format(rate="FMR"),
        fnmr_term="B: max cell FNMR - min cell FNMR (FDR's term B)",
        share="fnmr",
        citation=_SUMMARY + "Max-Min FNMR (given for FNMR only)",
        undefined="never undefined",
        properties=_STD_PROPERTIES,
        iso_term=ISO_FALSE_NEGATIVE,
    ),
    *_per_rate(
        "nist_max_mean_{rate}",
        "Max/Mean {rate} (NIST)",
        {"fmr": nist.nist_max_mean_fmr, "fnmr": nist.nist_max_mean_fnmr},
        bounds=(1.0, None),
        ideal=1.0,
        term="A: max cell {rate} / arithmetic mean of the cells (at most the number of cells)",
        citation=_SUMMARY + "Max/Mean {rate}",
        undefined="undefined when every cell's {rate} is 0 (zero mean): set to 1 (all "
        "cells equal), flagged, warned",
        properties=_MAX_MEAN_PROPERTIES,
    ),
    *_per_rate(
        "nist_max_geomean_{rate}",
        "Max/GeoMean {rate} (NIST)",
        {"fmr": nist.nist_max_geomean_fmr, "fnmr": nist.nist_max_geomean_fnmr},
        bounds=(1.0, None),
        ideal=1.0,
        term="A: max cell {rate} / geometric mean of the cells",
        citation=_SUMMARY + "Max/GeoMean {rate}",
        undefined="undefined when a cell's {rate} is 0 (zero geometric mean): NaN, flagged, warned",
        properties=_RATIO_PROPERTIES,
    ),
    *_per_rate(
        "nist_log10_spread_{rate}",
        "Vary GeoMean {rate} (NIST)",
        {"fmr": nist.nist_log10_spread_fmr, "fnmr": nist.nist_log10_spread_fnmr},
        bounds=(0.0, None),
        ideal=0.0,
        term="A: mean over the cells of |log10({rate} / geometric mean)|, in decades",
        citation=_SUMMARY + '"Vary GeoMean" {rate}',
        undefined="undefined when a cell's {rate} is 0 (infinite logarithm): NaN, flagged, warned",
        properties=_RATIO_PROPERTIES,
    ),
    *_per_rate(
        "nist_gini_{rate}",
        "Gini {rate} (NIST)",
        {"fmr": nist.nist_gini_fmr, "fnmr": nist.nist_gini_fnmr},
        bounds=(0.0, 1.0),
        ideal=0.0,
        term="A: Gini coefficient of the cell {rate}s without GARBE's n/(n-1) factor "
        "(at most 1 - 1/n)",
        citation=_SUMMARY + '"Vary Gini" {rate}, read as the plain Gini coefficient '
        "(Howard et al. eq. 7 without n/(n-1))",
        undefined="undefined when every cell's {rate} is 0 (zero mean): set to 0 (all "
        "cells equal), flagged, warned",
        properties=_GINI_PROPERTIES,
    ),
)

_REFERENCE_PROPERTIES = dict(
    bounded=False,
    permutation_invariant=False,  # which groups are the numerator and the reference matters
    scale_invariant=True,
    defined_at_zero=False,
    ideal_when_equal=True,
)
_REFERENCE = dict(
    bounds=(1.0, None),
    ideal=1.0,
    term="A: geomean of the numerator cells' {rate} / geomean of the reference cells' "
    "{rate}, as NIST publishes it; the value folds it at 1, max(r, 1/r)",
    kind=TableMeasure,
    resolve=reference.resolve_ratio,
)
_REFERENCE_CITATION = (
    "{source}: the {rate} ratios of one demographic to a reference (Female/Male, "
    "E. Africa/E. Europe, 65+/20-35), each side the geometric mean over its cells; "
    "folded at 1 here"
)

REFERENCE_MEASURES = _per_rate(
    "ratio_{rate}",
    "{rate} ratio",
    {"fmr": reference.ratio_fmr, "fnmr": reference.ratio_fnmr},
    citation=_REFERENCE_CITATION.replace("{source}", NISTIR_8429),
    undefined="undefined when a cell's {rate} on either side is 0: NaN, flagged, warned",
    properties=_REFERENCE_PROPERTIES,
    **_REFERENCE,
)

LINGHU_MEASURES = (
    RateMeasure(
        vectorised_alpha=True,
        name="merg",
        label="MERG (WERM)",
        function=merg,
        higher_is_fairer=False,
        bounds=(1.0, None),
        ideal=1.0,
        fmr_term="A: max group FMR / geometric mean of the group FMRs",
        fnmr_term="B: max group FNMR / geometric mean of the group FNMRs",
        share="log",
        citation=f"{LINGHU}: MERG = A^alpha B^(1-alpha) (compute_merg), published as WERM "
        "(evaluation/WERM/utils.py compute_werm_geo); alpha weights the FMR term here, as "
        "in IR (the FNMR term there), and no epsilon is added",
        undefined="undefined when a group's FMR or FNMR is 0 (zero geometric mean): NaN, "
        "flagged, warned",
        properties=_RATIO_PROPERTIES,
        iso_term=ISO_AGGREGATE,
    ),
    RateMeasure(
        vectorised_alpha=True,
        name="mera",
        label="MERA",
        function=mera,
        higher_is_fairer=False,
        bounds=(1.0, None),
        ideal=1.0,
        fmr_term="A: max group FMR / arithmetic mean of the group FMRs",
        fnmr_term="B: max group FNMR / arithmetic mean of the group FNMRs",
        share="log",
        citation=f"{LINGHU}: MERA = A^alpha B^(1-alpha) (compute_mera); alpha weights the "
        "FMR term here, as in IR",
        undefined="a term is undefined when every group's rate is 0 (zero mean): set to 1, "
        "flagged, warned",
        properties=_MAX_MEAN_PROPERTIES,
        iso_term=ISO_AGGREGATE,
    ),
)

# ------------------------------------------------------ the zero-error-adjusted ratio measures

_CP_PROPERTIES = dict(
    bounded=False,
    permutation_invariant=True,  # the groups with their counts
    scale_invariant=False,  # a zero's bound does not scale with the other rates
    defined_at_zero=True,
    ideal_when_equal=True,
)
_CP = (
    f"{LINGHU}: a zero rate replaced by its one-sided Clopper-Pearson upper bound at "
    "a = 0.05 (upper_bound_error_rate; here wherever the rate enters), applied to "
)
_CP_UNDEFINED = (
    "never undefined: a zero {rate} is replaced by the Clopper-Pearson upper bound of 0 "
    "errors in its {count} comparisons; a table without {count} is refused"
)
_CP_BOTH = (
    "never undefined: a zero rate is replaced by the Clopper-Pearson upper bound of 0 errors "
    "in its n_nonmated (FMR) or n_mated (FNMR) comparisons; a table without both is refused"
)
_CP_ONE = dict(
    bounds=(1.0, None),
    ideal=1.0,
    undefined=_CP_UNDEFINED,
    kind=TableMeasure,
    reads_counts=True,
)

ZERO_ADJUSTED_MEASURES = (
    *_per_rate(
        "nist_max_min_{rate}_cp",
        "Max/Min {rate} (NIST, CP)",
        {"fmr": zeroerrors.nist_max_min_fmr_cp, "fnmr": zeroerrors.nist_max_min_fnmr_cp},
        term="A: max cell {rate} / min cell {rate}, a zero replaced by its bound",
        citation=_CP + "NIST's Max/Min {rate} (" + NISTIR_8429 + ")",
        properties=_CP_PROPERTIES,
        **_CP_ONE,
    ),
    *_per_rate(
        "nist_max_geomean_{rate}_cp",
        "Max/GeoMean {rate} (NIST, CP)",
        {
            "fmr": zeroerrors.nist_max_geomean_fmr_cp,
            "fnmr": zeroerrors.nist_max_geomean_fnmr_cp,
        },
        term="A: max cell {rate} / geometric mean of the cells, a zero replaced by its bound",
        citation=_CP + "NIST's Max/GeoMean {rate} (" + NISTIR_8429 + ")",
        properties=_CP_PROPERTIES,
        **_CP_ONE,
    ),
    *_per_rate(
        "ratio_{rate}_cp",
        "{rate} ratio (CP)",
        {"fmr": zeroerrors.ratio_fmr_cp, "fnmr": zeroerrors.ratio_fnmr_cp},
        citation=_CP + _REFERENCE_CITATION.replace("{source}", NISTIR_8429),
        undefined=_CP_UNDEFINED,
        properties={**_CP_PROPERTIES, "permutation_invariant": False},
        reads_counts=True,
        **_REFERENCE,
    ),
    TableMeasure(
        vectorised_alpha=True,
        name="merg_cp",
        label="MERG (WERM, CP)",
        function=zeroerrors.merg_cp,
        higher_is_fairer=False,
        bounds=(1.0, None),
        ideal=1.0,
        fmr_term="A: max group FMR / geometric mean of the group FMRs, a zero replaced by "
        "its bound",
        fnmr_term="B: max group FNMR / geometric mean of the group FNMRs, a zero replaced by "
        "its bound",
        share="log",
        citation=_CP + "MERG (compute_merg_adjusted, whose maximum is the raw rate's)",
        undefined=_CP_BOTH,
        properties=_CP_PROPERTIES,
        iso_term=ISO_AGGREGATE,
        counts=("n_mated", "n_nonmated"),
    ),
    TableMeasure(
        vectorised_alpha=True,
        name="ir_cp",
        label="IR (CP)",
        function=zeroerrors.ir_cp,
        higher_is_fairer=False,
        bounds=(1.0, None),
        ideal=1.0,
        fmr_term="A: max group FMR / min group FMR, a zero replaced by its bound",
        fnmr_term="B: max group FNMR / min group FNMR, a zero replaced by its bound",
        share="log",
        citation=_CP + f"the Inequity Rate ({HOWARD}, eq. 4-6)",
        undefined=_CP_BOTH,
        properties=_CP_PROPERTIES,
        iso_term=ISO_AGGREGATE,
        counts=("n_mated", "n_nonmated"),
    ),
)


#: Every built-in measure, in registration order.
BUILTINS = (
    HOWARD_MEASURES
    + BIAS_MEASURES
    + NIST_MEASURES
    + REFERENCE_MEASURES
    + LINGHU_MEASURES
    + ZERO_ADJUSTED_MEASURES
    + SCORE_MEASURES
    + CROSS_GROUP_MEASURES
)
