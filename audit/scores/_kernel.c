/* The compiled loops of audit.scores.counting, built when audit is installed with a C
 * compiler (setup.py: an optional extension) and called through ctypes, which lets go
 * of the interpreter's lock for each call (audit/scores/_compiled.py binds them).
 *
 * Each loop computes, row by row, what the NumPy path of audit.scores.counting
 * computes with array operations, bit for bit.  The score column is float32 or
 * float64, the algorithm and group codes int8, int16 or int32 (the three of one type):
 * each loop is written once as a macro and instantiated for the six combinations,
 * chosen by a type number (score: 0 float32, 1 float64; codes: 0 int8, 1 int16,
 * 2 int32).
 *
 * A row's zone: the lookup table on the top lut_bits bits of the order key of its
 * score rounded to float32; where the entry holds bounds, one level finer (fine_bits
 * more, where the plan has finer tables), and a binary search of the float64 score
 * among the entry's bounds alone where that level holds one too (rounding never
 * reverses an order: the bounds of the entries below lie below the score, those of the
 * entries above, above it).
 * Places in the tables are computed as unsigned integers.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

/* The order key of a float32: unsigned, in the order of the floats; the two zeros
 * share a key (x + 0 is +0 for both). */
static inline uint32_t key32(float x)
{
    uint32_t k;
    x = x + 0.0f;
    memcpy(&k, &x, sizeof k);
    return k ^ ((UINT32_C(0) - (k >> 31)) | UINT32_C(0x80000000)); /* negatives: all bits */
}

static inline uint64_t key64(double x)
{
    uint64_t k;
    x = x + 0.0;
    memcpy(&k, &x, sizeof k);
    return k ^ ((UINT64_C(0) - (k >> 63)) | UINT64_C(0x8000000000000000));
}

/* Rows a loop finds the cells of before it counts them.  Each row adds one to the count
 * of its cell, a place that depends on a lookup in the plan's tables: counted as each
 * cell is found, a count read before the previous row's has been written to the same
 * place (the processor cannot yet tell that it is the same) is read again, and the
 * loop waits on it.  Found a block at a time into a small array, then counted from it,
 * every place is known when it is counted: a chunk is counted in about half the time
 * (4.4 against 8.7 ns a row, side by side on the rows of benchmarks/bench_scale.py). */
#define BLOCK 2048

/* What the plan says of the zones, as the loops read it. */
typedef struct {
    const int32_t *lut;
    int64_t lut_bits;
    int64_t fine_bits; /* 0: no finer tables */
    const int32_t *fine;
    const int64_t *entry_start; /* where the bounds of each entry holding some start */
    const double *bounds;
    const int64_t *bound_start;
    const int64_t *zone_start;
    const int32_t *ids;
    int64_t first_split;
    const uint64_t *split_low;
    const uint64_t *split_shift;
    int64_t slots;
    int64_t n_bits;
    int64_t first_keep;
} Zones;

/* The zone id of score x (its float32 rounding's key: key) of the plan's algorithm a.
 * A row of an entry holding bounds is read in the entry's finer table, where the plan
 * has them, and placed among the entry's bounds alone where that holds a bound too, or
 * where the plan has none: where many bounds cover the scores, as a DET curve's windows
 * do, nearly every row reads such an entry, and finer tables for them all would not stay
 * in the cache (_FINE_BYTES in zones.py). */
static inline int64_t zone_of(const Zones *p, uint64_t a, uint32_t key, double x)
{
    int64_t z = p->lut[(a << p->lut_bits) + (uint64_t)(key >> (32 - p->lut_bits))];
    if (z < 0) {
        uint64_t entry = (uint64_t)(-1 - z);
        if (p->fine_bits) {
            uint32_t finer = (uint32_t)(32 - p->lut_bits - p->fine_bits);
            uint32_t mask = (UINT32_C(1) << p->fine_bits) - 1;
            z = p->fine[(entry << p->fine_bits) + (uint64_t)((key >> finer) & mask)];
            if (z >= 0)
                return z;
        }
        /* the entry's bounds (at least one) at or below x, by halves without a branch
           to mispredict: b[0] <= x is known, or b is the first */
        const double *b = p->bounds + p->entry_start[entry];
        uint64_t n = (uint64_t)(p->entry_start[entry + 1] - p->entry_start[entry]);
        while (n > 1) {
            uint64_t half = n >> 1;
            b = b[half] <= x ? b + half : b;
            n -= half;
        }
        int64_t above = (int64_t)(b - p->bounds) + (b[0] <= x); /* the first bound above x */
        z = p->ids[p->zone_start[a] + above - p->bound_start[a]];
    }
    return z;
}

/* The segment of a row whose groups map to g_map[c1] and g_map[c2]: the group (mated),
 * G + the group (within-group non-mated) or 2G (cross-group non-mated). */
static inline int64_t segment_of(const int64_t *g_map, int64_t n_groups, int64_t c1, int64_t c2,
                                 uint8_t mated)
{
    int64_t g1 = g_map[c1];
    if (mated)
        return g1;
    return g_map[c2] == g1 ? n_groups + g1 : 2 * n_groups;
}

/* The sub-zone count of a row of SPLIT slot `slot`. */
static inline void count_split(const Zones *p, int64_t slot, double x, int64_t segment,
                               int64_t width, int64_t *split)
{
    uint64_t step = (key64(x) - p->split_low[slot]) >> p->split_shift[slot];
    split[(((uint64_t)slot << p->n_bits) + step) * (uint64_t)width + (uint64_t)segment] += 1;
}

/* One row of zones_known, the variables of its loops in scope (n_codes and width as
 * uint64_t): its cell, and its place, zone and segment marked where its zone is SPLIT or
 * KEEP. */
#define KNOWN_ROW(i, n_codes, width)                                                       \
    do {                                                                                   \
        uint64_t code_ = ((uint64_t)group_1[i] * (n_codes) + (uint64_t)group_2[i]) << 1;   \
        uint64_t segment_ = (uint64_t)table[code_ + mated[i]];                             \
        uint64_t a_ = (uint64_t)a_plan[(uint64_t)algorithm[i]];                            \
        int64_t z_ = zone_of(p, a_, key32((float)score[i]), (double)score[i]);             \
        cell[(i) - start] = (uint32_t)((uint64_t)z_ * (width) + segment_);                 \
        if (z_ >= p->first_split) {                                                        \
            kept_at[marked] = (int32_t)(i);                                                \
            kept_zone[marked] = (int32_t)z_;                                               \
            kept_segment[marked] = (int32_t)segment_;                                      \
            marked++;                                                                      \
        }                                                                                  \
    } while (0)

/* The rows zones_known marked: those of SPLIT zones counted in their sub-zones, those of
 * KEEP zones moved to the front of kept_*, in the order of the rows, ``kept`` of them. */
#define KEEP_MARKED(kept)                                                                  \
    for (int64_t j = 0; j < marked; j++) {                                                 \
        int64_t z_ = kept_zone[j];                                                         \
        if (z_ < p->first_keep) { /* a SPLIT zone: its sub-zone */                         \
            count_split(p, z_ - p->first_split, (double)score[kept_at[j]],                 \
                        kept_segment[j], width, split);                                    \
        } else {                                                                           \
            kept_at[kept] = kept_at[j];                                                    \
            kept_zone[kept] = kept_zone[j];                                                \
            kept_segment[kept] = kept_segment[j];                                          \
            kept++;                                                                        \
        }                                                                                  \
    }

/* zones_known: every algorithm of the chunk in the plan, a table of segments.  Counts
 * each row; the places, zones and segments of the rows of KEEP zones in kept_*, in the
 * order of the rows; returns how many are kept.  A first loop finds and counts, and
 * marks the rows of SPLIT and KEEP zones; a second counts the marked rows of SPLIT
 * zones in their sub-zones. */
#define ZONES_KNOWN(NAME, S, C)                                                            \
    static int64_t NAME(const Zones *plan, int64_t n, const S *score, const C *algorithm,  \
                        const C *group_1, const C *group_2, const uint8_t *mated,          \
                        const int64_t *a_plan, const int16_t *table, int64_t n_codes,      \
                        int64_t width, int64_t *counts, int64_t *split, int32_t *kept_at,  \
                        int32_t *kept_zone, int32_t *kept_segment)                         \
    {                                                                                      \
        const Zones local = *plan, *p = &local; /* in registers, not read after a count */ \
        uint64_t codes = (uint64_t)n_codes, columns = (uint64_t)width;                     \
        int64_t marked = 0, kept = 0;                                                      \
        uint32_t cell[BLOCK];                                                              \
        for (int64_t start = 0; start < n; start += BLOCK) {                               \
            int64_t stop = n - start < BLOCK ? n : start + BLOCK;                          \
            for (int64_t i = start; i < stop; i++)                                         \
                KNOWN_ROW(i, codes, columns);                                              \
            for (int64_t j = 0; j < stop - start; j++)                                     \
                counts[cell[j]] += 1;                                                      \
        }                                                                                  \
        KEEP_MARKED(kept);                                                                 \
        return kept;                                                                       \
    }

/* zones: any chunk (algorithms the plan does not know: a_new >= 0, their one zone;
 * groups mapped by g_map when n_codes is 0, else read from the table).  Counts each
 * row; the places and zones of the kept rows in kept_*; returns how many are kept. */
#define ZONES(NAME, S, C)                                                                  \
    static int64_t NAME(const Zones *plan, int64_t n, const S *score, const C *algorithm,  \
                        const C *group_1, const C *group_2, const uint8_t *mated,          \
                        const int64_t *a_plan, const int64_t *a_new, const int64_t *g_map, \
                        int64_t n_groups, const int16_t *table, int64_t n_codes,           \
                        int64_t plan_zones, int64_t keep_new, int64_t width,               \
                        int64_t *counts, int64_t *split, int32_t *kept_at,                 \
                        int32_t *kept_zone)                                                \
    {                                                                                      \
        const Zones local = *plan, *p = &local;                                            \
        int64_t kept = 0;                                                                  \
        uint32_t cell[BLOCK];                                                              \
        for (int64_t start = 0; start < n; start += BLOCK) {                               \
            int64_t stop = n - start < BLOCK ? n : start + BLOCK;                          \
            for (int64_t i = start; i < stop; i++) {                                       \
                int64_t segment;                                                           \
                if (n_codes) {                                                             \
                    segment = table[(((int64_t)group_1[i] * n_codes + group_2[i]) << 1)    \
                                    + mated[i]];                                           \
                } else {                                                                   \
                    segment = segment_of(g_map, n_groups, group_1[i], group_2[i], mated[i]); \
                }                                                                          \
                int64_t z = a_new[algorithm[i]];                                           \
                if (z < 0) { /* an algorithm of the plan: its zone */                      \
                    uint64_t a = (uint64_t)a_plan[algorithm[i]];                           \
                    z = zone_of(p, a, key32((float)score[i]), (double)score[i]);           \
                    int64_t slot = z - p->first_split;                                     \
                    if (slot >= 0 && slot < p->slots)                                      \
                        count_split(p, slot, (double)score[i], segment, width, split);     \
                }                                                                          \
                cell[i - start] = (uint32_t)(z * width + segment);                         \
                if (z >= p->first_keep && (z < plan_zones || keep_new)) {                  \
                    kept_at[kept] = (int32_t)i;                                            \
                    kept_zone[kept] = (int32_t)z;                                          \
                    kept++;                                                                \
                }                                                                          \
            }                                                                              \
            for (int64_t j = 0; j < stop - start; j++)                                     \
                counts[cell[j]] += 1;                                                      \
        }                                                                                  \
        return kept;                                                                       \
    }

/* kept_rows: the score and the segment of each kept row (at places rows). */
#define KEPT_ROWS(NAME, S, C)                                                              \
    static void NAME(int64_t n, const S *score, const C *group_1, const C *group_2,        \
                     const uint8_t *mated, const int64_t *g_map, int64_t n_groups,         \
                     const int32_t *rows, S *out_score, int32_t *out_segment)              \
    {                                                                                      \
        for (int64_t j = 0; j < n; j++) {                                                  \
            int64_t i = rows[j];                                                           \
            out_score[j] = score[i];                                                       \
            out_segment[j] = (int32_t)segment_of(g_map, n_groups, group_1[i], group_2[i],  \
                                                 mated[i]);                                \
        }                                                                                  \
    }

#define INSTANCES(M, NAME)                                                                 \
    M(NAME##_f4_i1, float, int8_t)                                                         \
    M(NAME##_f4_i2, float, int16_t)                                                        \
    M(NAME##_f4_i4, float, int32_t)                                                        \
    M(NAME##_f8_i1, double, int8_t)                                                        \
    M(NAME##_f8_i2, double, int16_t)                                                       \
    M(NAME##_f8_i4, double, int32_t)

INSTANCES(ZONES_KNOWN, zones_known)
INSTANCES(ZONES, zones)
INSTANCES(KEPT_ROWS, kept_rows)

/* zones_known eight rows at a time, with AVX2 (x86-64 processors since 2013; chosen
 * where the processor running it has them): the same zones, cells and marks as the
 * loop above, bit for bit.  The loop above takes about 40 instructions a row; here
 * eight rows share theirs.  Where the chunk has at most 16 codes of algorithms and of
 * groups, a row's algorithm and groups are looked up in registers (one or two
 * permutations of eight) and its segment computed from its groups, as
 * _segment_table in counting.py has it; with more codes they are gathered from the
 * tables, which costs more (a gather costs about as much as the rest of a row's work
 * on processors guarded against Gather Data Sampling).  The zone is gathered from the
 * lookup table; a row whose entry holds bounds (a score near one) is placed by
 * zone_of, as above.  Side by side on chunks of benchmarks/bench_scale.py (1,048,576
 * rows, 2 algorithms, 8 groups): 2.7 ms a chunk against 3.7 a row at a time, and 3.3
 * with every table gathered. */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_EIGHT 1
/* the most group codes of a table of segments (_TABLE_GROUPS in counting.py) */
#define EIGHT_CODES 64
/* the most codes looked up in registers */
#define FEW_CODES 16

#define LOAD8_f4(score, i) _mm256_loadu_ps((score) + (i))
#define LOAD8_f8(score, i)                                                                 \
    _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd((score) + (i) + 4)),                   \
                    _mm256_cvtpd_ps(_mm256_loadu_pd((score) + (i))))

/* eight codes as int32 */
__attribute__((target("avx2"))) static inline __m256i codes8_i1(const int8_t *codes)
{
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)codes));
}

__attribute__((target("avx2"))) static inline __m256i codes8_i2(const int16_t *codes)
{
    return _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)codes));
}

__attribute__((target("avx2"))) static inline __m256i codes8_i4(const int32_t *codes)
{
    return _mm256_loadu_si256((const __m256i *)codes);
}

/* values[c] of eight codes c < 16, values in two registers (codes 0-7, 8-15) */
__attribute__((target("avx2"))) static inline __m256i lookup16(__m256i low, __m256i high,
                                                               __m256i c)
{
    __m256i upper = _mm256_cmpgt_epi32(c, _mm256_set1_epi32(7));
    return _mm256_blendv_epi8(_mm256_permutevar8x32_epi32(low, c),
                              _mm256_permutevar8x32_epi32(high, c), upper);
}

#define ZONES_KNOWN_EIGHT(NAME, S, C, LOAD8, CODES8)                                       \
    __attribute__((target("avx2"))) static int64_t NAME(                                   \
        const Zones *plan, int64_t n, const S *score, const C *algorithm,                  \
        const C *group_1, const C *group_2, const uint8_t *mated,                          \
        const int64_t *a_plan, int64_t a_codes, const int16_t *table, int64_t n_codes,     \
        int64_t width, int64_t *counts, int64_t *split, int32_t *kept_at,                  \
        int32_t *kept_zone, int32_t *kept_segment)                                         \
    {                                                                                      \
        const Zones local = *plan, *p = &local;                                            \
        int64_t marked = 0;                                                                \
        uint32_t cell[BLOCK];                                                              \
        /* the tables: the first entry of each algorithm's lookup table, and the group     \
           of each group code, for a few codes; the segments widened, for many */          \
        int32_t base[FEW_CODES] = {0}, group[FEW_CODES] = {0};                             \
        int32_t segments[2 * EIGHT_CODES * EIGHT_CODES];                                   \
        int few = a_codes <= FEW_CODES && n_codes <= FEW_CODES;                            \
        for (int64_t c = 0; c < a_codes && c < FEW_CODES; c++)                             \
            base[c] = (int32_t)(a_plan[c] << p->lut_bits);                                 \
        for (int64_t c = 0; c < n_codes && c < FEW_CODES; c++)                             \
            group[c] = table[((c * n_codes + c) << 1) + 1]; /* a mated row's: its group */ \
        if (!few)                                                                          \
            for (int64_t c = 0; c < 2 * n_codes * n_codes; c++)                            \
                segments[c] = table[c];                                                    \
        const __m256i base_low = _mm256_loadu_si256((const __m256i *)base);                \
        const __m256i base_high = _mm256_loadu_si256((const __m256i *)(base + 8));         \
        const __m256i group_low = _mm256_loadu_si256((const __m256i *)group);              \
        const __m256i group_high = _mm256_loadu_si256((const __m256i *)(group + 8));       \
        const __m256i groups = _mm256_set1_epi32((int)((width - 1) / 2));                  \
        const __m256i cross = _mm256_set1_epi32((int)(width - 1));                         \
        const __m256i high = _mm256_set1_epi32((int)0x80000000);                           \
        const __m128i top = _mm_cvtsi32_si128((int)(32 - p->lut_bits));                    \
        const __m128i up = _mm_cvtsi32_si128((int)p->lut_bits);                            \
        const __m256i codes = _mm256_set1_epi32((int)n_codes);                             \
        const __m256i columns = _mm256_set1_epi32((int)width);                             \
        const __m256i before_split = _mm256_set1_epi32((int)(p->first_split - 1));         \
        for (int64_t start = 0; start < n; start += BLOCK) {                               \
            int64_t stop = n - start < BLOCK ? n : start + BLOCK, i = start;               \
            for (; i + 8 <= stop; i += 8) {                                                \
                __m256i k = _mm256_castps_si256(                                           \
                    _mm256_add_ps(LOAD8(score, i), _mm256_setzero_ps()));                  \
                k = _mm256_xor_si256(k, _mm256_or_si256(_mm256_srai_epi32(k, 31), high));  \
                __m256i a = CODES8(algorithm + i), g1 = CODES8(group_1 + i);               \
                __m256i g2 = CODES8(group_2 + i);                                          \
                __m256i m = _mm256_cvtepu8_epi32(                                          \
                    _mm_loadl_epi64((const __m128i *)(mated + i)));                        \
                __m256i entry, segment;                                                    \
                if (few) {                                                                 \
                    entry = lookup16(base_low, base_high, a);                              \
                    g1 = lookup16(group_low, group_high, g1);                              \
                    g2 = lookup16(group_low, group_high, g2);                              \
                    /* mated: the group; else within the group, or across groups */        \
                    segment = _mm256_blendv_epi8(cross, _mm256_add_epi32(groups, g1),      \
                                                 _mm256_cmpeq_epi32(g1, g2));              \
                    segment = _mm256_blendv_epi8(                                          \
                        segment, g1, _mm256_cmpgt_epi32(m, _mm256_setzero_si256()));       \
                } else {                                                                   \
                    /* the low half of each int64 of a_plan: the algorithm, < 2**31 */     \
                    entry = _mm256_sll_epi32(                                              \
                        _mm256_i32gather_epi32((const int *)a_plan, a, 8), up);            \
                    __m256i code = _mm256_add_epi32(_mm256_mullo_epi32(g1, codes), g2);    \
                    code = _mm256_add_epi32(_mm256_slli_epi32(code, 1), m);                \
                    segment = _mm256_i32gather_epi32(segments, code, 4);                   \
                }                                                                          \
                entry = _mm256_add_epi32(entry, _mm256_srl_epi32(k, top));                 \
                __m256i z = _mm256_i32gather_epi32(p->lut, entry, 4);                      \
                int held = _mm256_movemask_ps(_mm256_castsi256_ps(z));                     \
                int32_t zs[8];                                                             \
                if (held) { /* entries holding bounds: zone_of places these rows */        \
                    _mm256_storeu_si256((__m256i *)zs, z);                                 \
                    for (; held; held &= held - 1) {                                       \
                        int l = __builtin_ctz((unsigned)held);                             \
                        uint64_t r = (uint64_t)a_plan[(uint64_t)algorithm[i + l]];         \
                        zs[l] = (int32_t)zone_of(p, r, key32((float)score[i + l]),         \
                                                 (double)score[i + l]);                    \
                    }                                                                      \
                    z = _mm256_loadu_si256((const __m256i *)zs);                           \
                }                                                                          \
                _mm256_storeu_si256(                                                       \
                    (__m256i *)(cell + (i - start)),                                       \
                    _mm256_add_epi32(_mm256_mullo_epi32(z, columns), segment));            \
                int mark = _mm256_movemask_ps(                                             \
                    _mm256_castsi256_ps(_mm256_cmpgt_epi32(z, before_split)));             \
                if (mark) { /* rows of SPLIT and KEEP zones */                             \
                    int32_t ss[8];                                                         \
                    _mm256_storeu_si256((__m256i *)zs, z);                                 \
                    _mm256_storeu_si256((__m256i *)ss, segment);                           \
                    for (; mark; mark &= mark - 1) {                                       \
                        int l = __builtin_ctz((unsigned)mark);                             \
                        kept_at[marked] = (int32_t)(i + l);                                \
                        kept_zone[marked] = zs[l];                                         \
                        kept_segment[marked] = ss[l];                                      \
                        marked++;                                                          \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
            for (; i < stop; i++) /* the chunk's last rows, one at a time */               \
                KNOWN_ROW(i, (uint64_t)n_codes, (uint64_t)width);                          \
            for (int64_t j = 0; j < stop - start; j++)                                     \
                counts[cell[j]] += 1;                                                      \
        }                                                                                  \
        int64_t kept = 0;                                                                  \
        KEEP_MARKED(kept);                                                                 \
        return kept;                                                                       \
    }

ZONES_KNOWN_EIGHT(zones_known_eight_f4_i1, float, int8_t, LOAD8_f4, codes8_i1)
ZONES_KNOWN_EIGHT(zones_known_eight_f4_i2, float, int16_t, LOAD8_f4, codes8_i2)
ZONES_KNOWN_EIGHT(zones_known_eight_f4_i4, float, int32_t, LOAD8_f4, codes8_i4)
ZONES_KNOWN_EIGHT(zones_known_eight_f8_i1, double, int8_t, LOAD8_f8, codes8_i1)
ZONES_KNOWN_EIGHT(zones_known_eight_f8_i2, double, int16_t, LOAD8_f8, codes8_i2)
ZONES_KNOWN_EIGHT(zones_known_eight_f8_i4, double, int32_t, LOAD8_f8, codes8_i4)

/* Whether the eight-row loops run: the processor has AVX2, and they are not turned off
 * (audit_eight_rows). */
static int eight_on = -1;

static int eight(void)
{
    if (eight_on < 0) {
        __builtin_cpu_init();
        eight_on = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return eight_on;
}

#endif

/* The instance of the types: score_type 0 float32, 1 float64; code_type 0 int8,
 * 1 int16, 2 int32.  Returns -1 for types with no instance. */
#define DISPATCH(NAME, ...)                                                                \
    switch (score_type * 3 + code_type) {                                                  \
    case 0: return NAME##_f4_i1(__VA_ARGS__);                                              \
    case 1: return NAME##_f4_i2(__VA_ARGS__);                                              \
    case 2: return NAME##_f4_i4(__VA_ARGS__);                                              \
    case 3: return NAME##_f8_i1(__VA_ARGS__);                                              \
    case 4: return NAME##_f8_i2(__VA_ARGS__);                                              \
    case 5: return NAME##_f8_i4(__VA_ARGS__);                                              \
    default: return -1;                                                                    \
    }

EXPORT int64_t audit_zones_known(
    int64_t score_type, int64_t code_type, const Zones *plan, int64_t n, const void *score,
    const void *algorithm, const void *group_1, const void *group_2, const uint8_t *mated,
    const int64_t *a_plan, int64_t a_codes, const int16_t *table, int64_t n_codes,
    int64_t width, int64_t *counts, int64_t *split, int32_t *kept_at, int32_t *kept_zone,
    int32_t *kept_segment)
{
#ifdef HAVE_EIGHT
    if (n_codes <= EIGHT_CODES && eight()) {
        DISPATCH(zones_known_eight, plan, n, score, algorithm, group_1, group_2, mated,
                 a_plan, a_codes, table, n_codes, width, counts, split, kept_at, kept_zone,
                 kept_segment)
    }
#else
    (void)a_codes;
#endif
    DISPATCH(zones_known, plan, n, score, algorithm, group_1, group_2, mated, a_plan, table,
             n_codes, width, counts, split, kept_at, kept_zone, kept_segment)
}

EXPORT int64_t audit_zones(
    int64_t score_type, int64_t code_type, const Zones *plan, int64_t n, const void *score,
    const void *algorithm, const void *group_1, const void *group_2, const uint8_t *mated,
    const int64_t *a_plan, const int64_t *a_new, const int64_t *g_map, int64_t n_groups,
    const int16_t *table, int64_t n_codes, int64_t plan_zones, int64_t keep_new,
    int64_t width, int64_t *counts, int64_t *split, int32_t *kept_at, int32_t *kept_zone)
{
    DISPATCH(zones, plan, n, score, algorithm, group_1, group_2, mated, a_plan, a_new, g_map,
             n_groups, table, n_codes, plan_zones, keep_new, width, counts, split, kept_at,
             kept_zone)
}

EXPORT int64_t audit_kept_rows(
    int64_t score_type, int64_t code_type, int64_t n, const void *score, const void *group_1,
    const void *group_2, const uint8_t *mated, const int64_t *g_map, int64_t n_groups,
    const int32_t *rows, void *out_score, int32_t *out_segment)
{
    switch (score_type * 3 + code_type) {
    case 0: kept_rows_f4_i1(n, score, group_1, group_2, mated, g_map, n_groups, rows, out_score, out_segment); return 0;
    case 1: kept_rows_f4_i2(n, score, group_1, group_2, mated, g_map, n_groups, rows, out_score, out_segment); return 0;
    case 2: kept_rows_f4_i4(n, score, group_1, group_2, mated, g_map, n_groups, rows, out_score, out_segment); return 0;
    case 3: kept_rows_f8_i1(n, score, group_1, group_2, mated, g_map, n_groups, rows, out_score, out_segment); return 0;
    case 4: kept_rows_f8_i2(n, score, group_1, group_2, mated, g_map, n_groups, rows, out_score, out_segment); return 0;
    case 5: kept_rows_f8_i4(n, score, group_1, group_2, mated, g_map, n_groups, rows, out_score, out_segment); return 0;
    default: return -1;
    }
}

/* scatter: each score to the next place of its cell (at: where each cell starts). */
EXPORT int64_t audit_scatter(int64_t score_type, int64_t n, const int64_t *cell,
                             const void *score, int64_t *at, double *out)
{
    if (score_type == 0) {
        const float *s = score;
        for (int64_t i = 0; i < n; i++)
            out[at[(uint64_t)cell[i]]++] = (double)s[i];
    } else if (score_type == 1) {
        const double *s = score;
        for (int64_t i = 0; i < n; i++)
            out[at[(uint64_t)cell[i]]++] = s[i];
    } else {
        return -1;
    }
    return 0;
}

/* least_at_or_above: the least of the (finite) values at least t, or +inf when none
 * is: a scan without a branch to mispredict. */
EXPORT double audit_least_at_or_above(int64_t n, const double *values, double t)
{
    double least = INFINITY;
    for (int64_t i = 0; i < n; i++) {
        double v = values[i];
        double w = v >= t ? v : INFINITY;
        least = w < least ? w : least;
    }
    return least;
}

/* The version of the loops' interface: their names, arguments and the Zones struct.
 * Raised with every change to them; audit/scores/_compiled.py refuses a library of
 * another version before calling anything (a library built from older source, as an
 * editable install keeps until it is installed again, would read its arguments wrong). */
#define AUDIT_KERNEL_ABI 4

EXPORT int64_t audit_kernel_abi(void) { return AUDIT_KERNEL_ABI; }

/* Whether zones_known counts eight rows at a time (on: 1 to, where the processor can,
 * 0 not to, -1 to leave it as it is); returns what it does now.  The loop a row at a
 * time is the one to compare with. */
EXPORT int64_t audit_eight_rows(int64_t on)
{
#ifdef HAVE_EIGHT
    if (on >= 0) {
        eight_on = -1;
        if (on && eight())
            return 1;
        eight_on = 0;
        return 0;
    }
    return eight();
#else
    (void)on;
    return 0;
#endif
}

/* The bytes of the plan's fields, which the binding checks too (a change to Zones with
 * the version left as it was). */
EXPORT int64_t audit_zones_size(void) { return (int64_t)sizeof(Zones); }

/* An importable module (its path is what ctypes loads), with nothing in it. */
static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernel",
    "The compiled counting loops of audit.scores.counting (bound by ctypes in "
    "audit.scores._compiled).",
    0, NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module); }
