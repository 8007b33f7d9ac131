/* tracker_geom.h: the length of germanium a photon crosses between two points, through the array's crystals or a spherical shell. */
#ifndef NARWHAL_TRACKER_GEOM_H
#define NARWHAL_TRACKER_GEOM_H

#include "tracker_types.h"

/*
 * Array model (the default): the segment is clipped against every crystal
 * whose bounding sphere it meets (found through the bounding spheres of
 * groups of neighbouring crystals first).  A crystal is the intersection of its
 * tapered hexagonal prism (six flats, front and back faces) with the outer
 * cylinder, minus the central bore (detector/geometry.h); all of these are
 * planes and cylinders, so the chord is found exactly: an interval of the
 * segment parameter t in [0, 1] for the convex part, less the interval inside
 * the bore.  Gaps between crystals and the space outside them count as
 * nothing.  Shell model: the array is taken as a germanium shell between two
 * spheres about the target (forward tracking's classic approximation).
 */

GPUd() static inline float tr_dot3(float ax, float ay, float az, float bx, float by, float bz)
{
    return TR_ADD(TR_ADD(TR_MUL(ax, bx), TR_MUL(ay, by)), TR_MUL(az, bz));
}

GPUd() static inline float tr_dot3_pts(const tr_point *a, const tr_point *b)
{
    return tr_dot3(a->x, a->y, a->z, b->x, b->y, b->z);
}

/* Narrows [*t0, *t1] to where p + t q <= c; 0 when nothing is left. */
GPUd() static inline int tr_clip_half(float p, float q, float c, float *t0, float *t1)
{
    if (q == 0.0f)
        return p <= c && *t0 <= *t1;
    float t = TR_DIV(TR_SUB(c, p), q);
    if (q > 0.0f) {
        if (t < *t1)
            *t1 = t;
    } else if (t > *t0) {
        *t0 = t;
    }
    return *t0 <= *t1;
}

/* Where A t^2 + B t + C <= 0 (A >= 0): [*u0, *u1], or 0 when nowhere.  The
 * roots are taken in the form that avoids cancellation. */
GPUd() static inline int tr_quad_below(float A, float B, float C, float *u0, float *u1)
{
    if (A == 0.0f) {
        if (C > 0.0f)
            return 0;
        *u0 = -3.0e38f;
        *u1 = 3.0e38f;
        return 1;
    }
    float disc = TR_SUB(TR_MUL(B, B), TR_MUL(4.0f, TR_MUL(A, C)));
    if (disc < 0.0f)
        return 0;
    float s = TR_SQRT(disc);
    float q = B >= 0.0f ? TR_MUL(-0.5f, TR_ADD(B, s)) : TR_MUL(-0.5f, TR_SUB(B, s));
    if (q == 0.0f) { /* B = 0 and C = 0: the segment touches the axis */
        *u0 = 0.0f;
        *u1 = 0.0f;
        return 1;
    }
    float r0 = TR_DIV(q, A), r1 = TR_DIV(C, q);
    *u0 = r0 < r1 ? r0 : r1;
    *u1 = r0 < r1 ? r1 : r0;
    return 1;
}

/* The fraction of the segment a + t d (crystal frame, t in [0, 1]) inside the germanium. */
GPUd() static inline float tr_crystal_fraction(const tr_shape *s, const float a[3], const float d[3])
{
    float t0 = 0.0f, t1 = 1.0f;
    if (!tr_clip_half(-a[2], -d[2], 0.0f, &t0, &t1) ||
        !tr_clip_half(a[2], d[2], s->length, &t0, &t1))
        return 0.0f;
    for (int k = 0; k < 6; k++) {
        float p = TR_SUB(TR_ADD(TR_MUL(s->side_cos[k], a[0]), TR_MUL(s->side_sin[k], a[1])),
                         TR_MUL(s->face_slope[k], a[2]));
        float q = TR_SUB(TR_ADD(TR_MUL(s->side_cos[k], d[0]), TR_MUL(s->side_sin[k], d[1])),
                         TR_MUL(s->face_slope[k], d[2]));
        if (!tr_clip_half(p, q, s->face_front[k], &t0, &t1))
            return 0.0f;
    }
    float A = TR_ADD(TR_MUL(d[0], d[0]), TR_MUL(d[1], d[1]));
    float B = TR_MUL(2.0f, TR_ADD(TR_MUL(a[0], d[0]), TR_MUL(a[1], d[1])));
    float C0 = TR_ADD(TR_MUL(a[0], a[0]), TR_MUL(a[1], a[1]));
    float u0, u1;
    if (!tr_quad_below(A, B, TR_SUB(C0, s->radius2), &u0, &u1))
        return 0.0f;
    if (u0 > t0)
        t0 = u0;
    if (u1 < t1)
        t1 = u1;
    if (t0 >= t1)
        return 0.0f;
    float inside = TR_SUB(t1, t0);
    /* the bore: inside its cylinder and behind its end */
    if (tr_quad_below(A, B, TR_SUB(C0, s->bore_radius2), &u0, &u1)) {
        float b0 = u0 > t0 ? u0 : t0, b1 = u1 < t1 ? u1 : t1;
        if (b0 < b1 && tr_clip_half(-a[2], -d[2], -s->bore_depth, &b0, &b1))
            inside = TR_SUB(inside, TR_SUB(b1, b0));
    }
    return inside > 0.0f ? inside : 0.0f;
}

/* The segment a -> a + d (lab) in crystal k's frame. */
GPUd() static inline void tr_to_crystal(const tr_crystal *k, const float a[3], const float d[3],
                                        float ca[3], float cd[3])
{
    float w0 = TR_SUB(a[0], k->t[0]), w1 = TR_SUB(a[1], k->t[1]), w2 = TR_SUB(a[2], k->t[2]);
    for (int i = 0; i < 3; i++) {
        const float *r = &k->rt[3 * i];
        ca[i] = tr_dot3(r[0], r[1], r[2], w0, w1, w2);
        cd[i] = tr_dot3(r[0], r[1], r[2], d[0], d[1], d[2]);
    }
}

/* Whether the segment a -> a + d comes within the sphere (centre, r2). */
GPUd() static inline int tr_near_sphere(const float centre[3], float r2, const float a[3], const float d[3],
                                        float dd)
{
    float w0 = TR_SUB(centre[0], a[0]), w1 = TR_SUB(centre[1], a[1]);
    float w2 = TR_SUB(centre[2], a[2]);
    float t = dd > 0.0f ? TR_DIV(tr_dot3(w0, w1, w2, d[0], d[1], d[2]), dd) : 0.0f;
    t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    float q0 = TR_SUB(TR_MUL(t, d[0]), w0), q1 = TR_SUB(TR_MUL(t, d[1]), w1);
    float q2 = TR_SUB(TR_MUL(t, d[2]), w2);
    return tr_dot3(q0, q1, q2, q0, q1, q2) <= r2;
}

/* Whether the segment a -> a + d may come within the sphere (centre, r2): its
 * squared distance times dd, without a division, against (r2 + r2 / 1024 +
 * 1 mm^2) dd.  The margin is far above the rounding of either test, so this
 * accepts every sphere tr_near_sphere accepts, and a few more: for a group of
 * crystals, whose sphere bounds its crystals' with room to spare, the crystals
 * it lets through fail their own test (the same set either way). */
GPUd() static inline int tr_may_near_sphere(const float centre[3], float r2, const float a[3], const float d[3],
                                            float dd)
{
    float w0 = TR_SUB(centre[0], a[0]), w1 = TR_SUB(centre[1], a[1]), w2 = TR_SUB(centre[2], a[2]);
    float wd = tr_dot3(w0, w1, w2, d[0], d[1], d[2]), ww = tr_dot3(w0, w1, w2, w0, w1, w2);
    float past = TR_ADD(TR_SUB(ww, TR_MUL(2.0f, wd)), dd); /* |w - d|^2: beyond the end */
    float scaled = wd <= 0.0f ? TR_MUL(ww, dd) : wd >= dd ? TR_MUL(past, dd) : TR_SUB(TR_MUL(ww, dd), TR_MUL(wd, wd));
    return scaled <= TR_MUL(TR_ADD(r2, TR_ADD(TR_MUL(r2, 1.0f / 1024.0f), 1.0f)), dd);
}

/* The index of the lowest set bit of x (x != 0). */
GPUd() static inline int tr_lowest_bit(uint32_t x)
{
#ifdef __CUDA_ARCH__
    return __ffs((int)x) - 1;
#else
    return __builtin_ctz(x);
#endif
}

/* Length (mm) of the chord of a + t d, t in [0, 1], inside the sphere |x|^2 <= r2. */
GPUd() static inline float tr_sphere_fraction(const float a[3], const float d[3], float dd, float r2)
{
    float u0, u1;
    float B = TR_MUL(2.0f, tr_dot3(a[0], a[1], a[2], d[0], d[1], d[2]));
    float C = TR_SUB(tr_dot3(a[0], a[1], a[2], a[0], a[1], a[2]), r2);
    if (!tr_quad_below(dd, B, C, &u0, &u1))
        return 0.0f;
    u0 = u0 < 0.0f ? 0.0f : u0;
    u1 = u1 > 1.0f ? 1.0f : u1;
    return u1 > u0 ? TR_SUB(u1, u0) : 0.0f;
}

/* frac plus the fractions of the segment a -> a + d in the crystals of group
 * gr (at most 32), in their order: their tests without a branch, then the
 * crystals near clipped. */
GPUd() static inline float tr_group_fraction(const tr_params *p, const tr_geo *geo, const tr_group *gr, const float a[3],
                                             const float d[3], float dd, float frac)
{
    uint32_t near = 0;
    for (int k = 0; k < gr->count; k++) {
        const tr_crystal *c = &geo->crystal[gr->first + k];
        near |= (uint32_t)tr_near_sphere(c->centre, p->shape[c->shape].bound2, a, d, dd) << k;
    }
    for (; near; near &= near - 1) {
        float ca[3], cd[3];
        const tr_crystal *c = &geo->crystal[gr->first + tr_lowest_bit(near)];
        tr_to_crystal(c, a, d, ca, cd);
        frac = TR_ADD(frac, tr_crystal_fraction(&p->shape[c->shape], ca, cd));
    }
    return frac;
}

/* Germanium crossed from point a to point b, mm.  The result depends on the
 * order of a and b only in its last bits: callers pass the pair in a fixed
 * order (source first, then increasing point index). */
GPUd() static inline float tr_ge_path(const tr_params *p, const tr_geo *geo, const float a[3],
                                      const float b[3])
{
    float d[3] = { TR_SUB(b[0], a[0]), TR_SUB(b[1], a[1]), TR_SUB(b[2], a[2]) };
    float dd = tr_dot3(d[0], d[1], d[2], d[0], d[1], d[2]);
    if (dd == 0.0f)
        return 0.0f;
    float frac = 0.0f;
    if (p->path_model == TR_PATH_SHELL) {
        frac = TR_SUB(tr_sphere_fraction(a, d, dd, p->shell_out2),
                      tr_sphere_fraction(a, d, dd, p->shell_in2));
    } else {
        /* the groups tested 32 at a time without a branch, then those near taken in order */
        for (int g0 = 0; g0 < geo->n_groups; g0 += 32) {
            int end = geo->n_groups - g0 < 32 ? geo->n_groups : g0 + 32;
            uint32_t near = 0;
            for (int g = g0; g < end; g++)
                near |= (uint32_t)tr_may_near_sphere(geo->group[g].centre, geo->group[g].r2, a, d, dd) << (g - g0);
            for (; near; near &= near - 1)
                frac = tr_group_fraction(p, geo, &geo->group[g0 + tr_lowest_bit(near)], a, d, dd, frac);
        }
    }
    return TR_MUL(frac > 0.0f ? frac : 0.0f, TR_SQRT(dd));
}

#endif
