/* tracker_types.h: data layouts, limits and exact-rounding arithmetic shared by the CPU and GPU tracking paths. */
#ifndef NARWHAL_TRACKER_TYPES_H
#define NARWHAL_TRACKER_TYPES_H

#include <stdint.h>

#include "gpud.h"

#ifdef __cplusplus
#define TR_ALIGN(n) alignas(n)
#else
#define TR_ALIGN(n) _Alignas(n)
#endif

/*
 * Bit-for-bit equality of the two paths
 * -------------------------------------
 * gcc in ISO C mode never fuses a*b+c; nvcc does unless told not to.  Every
 * sum or difference of products in the tracking arithmetic goes through
 * TR_MUL/TR_ADD/TR_SUB (the _rn intrinsics are never contracted), divisions
 * and square roots are the IEEE-rounded ones on both sides, and no libm
 * function is called inside the shared code: logarithms and exponentials are
 * taken on the host, into tables (tracker_tables.c).  So the CPU and the GPU
 * compute the same floats, and choose the same tracks.
 */
#ifdef __CUDA_ARCH__
#define TR_MUL(a, b) __fmul_rn((a), (b))
#define TR_ADD(a, b) __fadd_rn((a), (b))
#define TR_SUB(a, b) __fsub_rn((a), (b))
#define TR_DIV(a, b) __fdiv_rn((a), (b))
#define TR_SQRT(a) __fsqrt_rn(a)
#else
#include <math.h>
#define TR_MUL(a, b) ((float)(a) * (float)(b))
#define TR_ADD(a, b) ((float)(a) + (float)(b))
#define TR_SUB(a, b) ((float)(a) - (float)(b))
#define TR_DIV(a, b) ((float)(a) / (float)(b))
#define TR_SQRT(a) sqrtf(a)
#endif

enum {
    TR_MAX_POINTS = 256,     /* points of one event; more: the event is flagged, not tracked */
    TR_MAX_CLUSTER = 7,      /* points of a scored cluster (7! = 5040 orderings) */
    TR_PERMS_TOTAL = 5913,   /* 1! + 2! + ... + 7!: entries of the permutation tables */
    TR_MAX_STEPS = 64,       /* cone-angle steps: 0.05 rad up to pi, plus alpha_max */
    TR_MAX_CRYSTALS = 512,   /* crystals the path model holds (GPU constant memory) */
    TR_TABLE_N = 10241,      /* physics table entries: 0 .. 20480 keV */
};
#define TR_TABLE_STEP_KEV 2.0f
#define TR_MEC2_KEV 510.99895f
#define TR_ALPHA_STEP 0.05 /* rad, the clustering step of forward tracking */
#define TR_NONE 0xFFFFu /* no point: unused slots of a cluster or gamma */
#define TR_LOG_FLOOR (-1000.0f) /* log of an impossible process (pair below threshold) */

/* One interaction point, lab frame (origin at the target), mm and keV. */
typedef struct tr_point {
    TR_ALIGN(16) float x;
    float y, z, e;
} tr_point;
GPU_LAYOUT(sizeof(tr_point) == 16 && offsetof(tr_point, y) == 4 && offsetof(tr_point, z) == 8 &&
           offsetof(tr_point, e) == 12);

/* Germanium physics at energy i * TR_TABLE_STEP_KEV: total attenuation
 * (photoelectric + Compton + pair, 1/mm) and the natural logarithm of each
 * process's share of it. */
typedef struct tr_physics {
    TR_ALIGN(16) float mu;
    float log_compton, log_photo, log_pair;
} tr_physics;
GPU_LAYOUT(sizeof(tr_physics) == 16 && offsetof(tr_physics, log_compton) == 4 &&
           offsetof(tr_physics, log_photo) == 8 && offsetof(tr_physics, log_pair) == 12);

/* A crystal for the path model: lab = R c + T.  rt holds R transposed (row i
 * = column i of R), so that c = rt (lab - T); centre and r2 bound it; shape
 * indexes tr_params.shape (the array's crystal type when it names shapes). */
typedef struct tr_crystal {
    float rt[9];
    float t[3];
    float centre[3];
    int32_t shape;
} tr_crystal;
GPU_LAYOUT(sizeof(tr_crystal) == 64 && offsetof(tr_crystal, t) == 36 &&
           offsetof(tr_crystal, centre) == 48 && offsetof(tr_crystal, shape) == 60);

/* A crystal shape (detector/geometry.h), in floats, for the path model: face k
 * is side_cos[k] x + side_sin[k] y - face_slope[k] z <= face_front[k] (all six
 * alike for a regular hexagon; AGATA's shapes A, B, C each face its own). */
enum { TR_MAX_SHAPES = 8 };
typedef struct tr_shape {
    float length, radius2;
    float bore_radius2, bore_depth, bound2;      /* bound2: squared radius of the bounding sphere */
    float face_front[6], face_slope[6];          /* each face's distance from the axis at z = 0, and its growth */
    float side_cos[6], side_sin[6];              /* outward normals of the six flats, in the xy plane */
} tr_shape;
GPU_LAYOUT(sizeof(tr_shape) == 116 && offsetof(tr_shape, radius2) == 4 &&
           offsetof(tr_shape, bore_radius2) == 8 && offsetof(tr_shape, bore_depth) == 12 &&
           offsetof(tr_shape, bound2) == 16 && offsetof(tr_shape, face_front) == 20 &&
           offsetof(tr_shape, face_slope) == 44 && offsetof(tr_shape, side_cos) == 68 &&
           offsetof(tr_shape, side_sin) == 92);

enum tr_path_model { TR_PATH_ARRAY = 0, TR_PATH_SHELL = 1 };

/* Everything the scoring needs besides the points: one copy on the host,
 * one in GPU constant memory.  Logarithms are precomputed (see above). */
typedef struct tr_params {
    float pos_a, pos_b;          /* position sigma(e) = pos_a + pos_b sqrt(100 keV / e), mm */
    float sigma_e2;              /* variance of one point's energy, keV^2 */
    float theta_scale2;          /* (angular uncertainty parameter)^2 */
    float log_min_cluster;       /* ln of the cluster threshold */
    float log_min_single;        /* ln of the single-point threshold */
    float single_iso2;           /* a single point's isolation: squared distance to every other point, mm^2 */
    int path_model;              /* tr_path_model */
    float shell_in2, shell_out2; /* shell model radii squared, mm^2 */
    float cos_step[TR_MAX_STEPS];            /* cos(0.05 k) at index k - 1 */
    float cos_alpha_max[TR_MAX_POINTS + 1];  /* cos(alpha_max(N)), N = 0 .. TR_MAX_POINTS */
    uint8_t steps_below[TR_MAX_POINTS + 1];  /* 0.05 rad steps strictly below alpha_max(N) */
    tr_shape shape[TR_MAX_SHAPES]; /* the crystals' shapes (tr_crystal.shape); n_shapes used */
    float size_bonus;            /* clusters of an event of N points are taken in order of ln FoM + size_bonus k / N */
    int retrack;                 /* 1: the points left free are clustered and scored once more */
    int n_shapes;
} tr_params;
GPU_LAYOUT(sizeof(tr_params) == 2524 && offsetof(tr_params, pos_b) == 4 &&
           offsetof(tr_params, sigma_e2) == 8 && offsetof(tr_params, theta_scale2) == 12 &&
           offsetof(tr_params, log_min_cluster) == 16 && offsetof(tr_params, log_min_single) == 20 &&
           offsetof(tr_params, single_iso2) == 24 && offsetof(tr_params, path_model) == 28 &&
           offsetof(tr_params, shell_in2) == 32 && offsetof(tr_params, shell_out2) == 36 &&
           offsetof(tr_params, cos_step) == 40 && offsetof(tr_params, cos_alpha_max) == 296 &&
           offsetof(tr_params, steps_below) == 1324 && offsetof(tr_params, shape) == 1584 &&
           offsetof(tr_params, size_bonus) == 2512 && offsetof(tr_params, retrack) == 2516 &&
           offsetof(tr_params, n_shapes) == 2520);

/* Crystals in groups of neighbours, each group with its own bounding sphere,
 * so that a path tests a few groups and then only their crystals. */
enum { TR_GROUP_SIZE = 6 };
typedef struct tr_group {
    float centre[3], r2;
    uint16_t first, count; /* its crystals: crystal[first .. first + count - 1] */
} tr_group;
GPU_LAYOUT(sizeof(tr_group) == 20 && offsetof(tr_group, r2) == 12 && offsetof(tr_group, first) == 16 &&
           offsetof(tr_group, count) == 18);

typedef struct tr_geo {
    int n_groups;
    tr_group group[TR_MAX_CRYSTALS];
    tr_crystal crystal[TR_MAX_CRYSTALS]; /* in group order */
} tr_geo;
GPU_LAYOUT(sizeof(tr_geo) == 43012 && offsetof(tr_geo, group) == 4 && offsetof(tr_geo, crystal) == 10244);

/* A candidate cluster: up to 7 point indices (within the event), increasing. */
typedef struct tr_cand {
    uint8_t n, pad;
    uint16_t pt[TR_MAX_CLUSTER];
} tr_cand;
GPU_LAYOUT(sizeof(tr_cand) == 16 && offsetof(tr_cand, pad) == 1 && offsetof(tr_cand, pt) == 2);

/* The best reading of a candidate: its ordering and figure of merit. */
enum { TR_HYP_COMPTON = 0, TR_HYP_PAIR = 1 };
typedef struct tr_score {
    float log_fom;               /* ln of the geometric-mean figure of merit */
    uint16_t perm;               /* index of the ordering in the table of its size */
    uint8_t hyp;                 /* TR_HYP_* */
    uint8_t pad;
} tr_score;
GPU_LAYOUT(sizeof(tr_score) == 8 && offsetof(tr_score, perm) == 4 && offsetof(tr_score, hyp) == 6 &&
           offsetof(tr_score, pad) == 7);

/* One accepted gamma ray: its points in interaction order. */
enum { TR_GAMMA_SINGLE = 1u, TR_GAMMA_PAIR = 2u };
typedef struct tr_gamma {
    float log_fom;
    uint8_t n, flags;
    uint16_t pt[TR_MAX_CLUSTER];
} tr_gamma;
GPU_LAYOUT(sizeof(tr_gamma) == 20 && offsetof(tr_gamma, n) == 4 && offsetof(tr_gamma, flags) == 5 &&
           offsetof(tr_gamma, pt) == 6);

/* What one event's tracking reports besides its gammas. */
typedef struct tr_event_info {
    uint16_t n_gammas;
    uint16_t n_cands;      /* candidates scored, both passes */
    uint16_t big_clusters; /* components over 7 points left unscored, both passes */
    uint16_t unused;       /* points in no accepted gamma */
} tr_event_info;
GPU_LAYOUT(sizeof(tr_event_info) == 8 && offsetof(tr_event_info, n_cands) == 2 &&
           offsetof(tr_event_info, big_clusters) == 4 && offsetof(tr_event_info, unused) == 6);

/* Everything the tracking reads besides the events, as the host builds it
 * (actors/tracker/tracker_model.c) and the GPU holds it resident. */
typedef struct tr_model {
    tr_params params;
    tr_geo geo;
    tr_physics physics[TR_TABLE_N];
    uint32_t perms[TR_PERMS_TOTAL];
} tr_model;
GPU_LAYOUT(sizeof(tr_model) == 233056 && offsetof(tr_model, geo) == 2524 &&
           offsetof(tr_model, physics) == 45536 && offsetof(tr_model, perms) == 209392);

/* A batch of events: event e owns points first[e] .. first[e + 1] - 1. */
typedef struct tr_batch {
    uint32_t n_events;
    const uint32_t *first;
    const tr_point *points;
} tr_batch;
GPU_LAYOUT(sizeof(tr_batch) == 24 && offsetof(tr_batch, first) == 8 && offsetof(tr_batch, points) == 16);

/* The result of a batch: event e's gammas at gammas[first[e] ...]. */
typedef struct tr_out {
    tr_gamma *gammas;
    tr_event_info *info;
} tr_out;
GPU_LAYOUT(sizeof(tr_out) == 16 && offsetof(tr_out, info) == 8);

#endif
