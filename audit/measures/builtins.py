"""The built-in measures: one list, registered in one place (:mod:`audit.measures.registry`).

Each entry is the measure's metadata as data (see
:class:`~audit.measures.contract.MeasureSpec`); the kernels live in
:mod:`~audit.measures.kernels` (Howard et al.), :mod:`~audit.measures.bias`
(Hutiri et al., Elobaid et al.), :mod:`~audit.measures.crossgroup`
(cross-group impostor FMRs, NISTIR 8280) and :mod:`~audit.measures.scores`
(score measures).  The rate kernels broadcast a column of alphas, so they declare
``vectorised_alpha=True``.
"""

from __future__ import annotations

import numpy as np

from audit.measures import crossgroup, kernels
from audit.measures.bias import HUTIRI, nrb, nrb_fmr, nrb_fnmr, ser, std_fmr, std_fnmr
from audit.measures.contract import PairMeasure, RateMeasure, ScoreMeasure
from audit.measures.scores import cei, dfi, sed_mean, sed_std, std_eer

HOWARD = "Howard, Laird et al., ICPR 2022 FairBio workshop"
ELOBAID = "Elobaid et al., Sum of Group Error Differences"
SOLANO = "Solano et al., Comprehensive Equity Index (CEI)"

HOWARD_MEASURES = (
    RateMeasure(
        vectorised_alpha=True,
        name="fdr",
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


#: Every built-in measure, in registration order.
BUILTINS = HOWARD_MEASURES + BIAS_MEASURES + SCORE_MEASURES + CROSS_GROUP_MEASURES
