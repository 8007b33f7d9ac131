/* check_tracker.c: tracker.so through the NARVAL ABI: hand-built Compton, photo and pair events, clusters, Doppler, truth input, errors, GPU equal to CPU; the ordering search shared out against every ordering. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adf.h"
#include "array.h"
#include "geometry.h"
#include "narval.h"
#include "testkit.h"
#include "tracker_fom.h"
#ifdef NARWHAL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define MEC2 510.99895

static char tmp[PATH_MAX];
static char conf_dir[PATH_MAX + 8];
static tk_actor tracker;
static det_array arr;
static det_crystal cry;

enum { CAP = 1 << 22 };
static uint8_t in[CAP], out[CAP];
static adf_writer w;

/* ---- setup ------------------------------------------------------------------ */

static void setup(void)
{
    char msg[256];
    tk_load_actor(&tracker, "tracker.so");
    tk_make_tmpdir(tmp, sizeof tmp, "check_tracker");
    snprintf(conf_dir, sizeof conf_dir, "%s/conf", tmp);
    ck_assert_int_eq(mkdir(conf_dir, 0700), 0);
    ck_assert_msg(det_array_load(&arr, "detector/arrays/agata180.txt", msg, sizeof msg) == 0, "%s", msg);
    ck_assert_msg(det_crystal_load(&cry, "detector/geometry/agata.geo", msg, sizeof msg) == 0, "%s", msg);
    adf_writer_init(&w, in, sizeof in);
}

static void teardown(void)
{
    det_array_free(&arr);
    dlclose(tracker.so);
    tk_remove_tree(tmp);
}

static unsigned configure(const char *text)
{
    tk_write_text(tk_path(conf_dir, "Tracker.conf"), text);
    unsigned code;
    tracker.config(conf_dir, &code);
    return code;
}

static void *begin(void)
{
    unsigned code;
    void *inst = tracker.reg(&code);
    ck_assert_uint_eq(code, 0);
    tracker.initialise(inst, &code);
    ck_assert_uint_eq(code, 0);
    tracker.start(inst, &code);
    ck_assert_uint_eq(code, 0);
    return inst;
}

static void end(void *inst)
{
    unsigned code;
    tracker.stop(inst, &code);
    ck_assert_uint_eq(code, 0);
    tracker.unload(inst, &code);
    ck_assert_uint_eq(code, 0);
}

/* Configures, runs the frames written so far through one instance, returns the output size. */
static unsigned run(const char *conf_text)
{
    ck_assert_uint_eq(configure(conf_text), 0);
    void *inst = begin();
    unsigned used = 0, code;
    tracker.filter(inst, in, (unsigned)w.used, out, sizeof out, &used, &code);
    ck_assert_uint_eq(code, 0);
    end(inst);
    return used;
}

/* ---- events built by hand ----------------------------------------------------- */

typedef struct hit {
    double local[3]; /* crystal frame of crystal index k */
    int k;
    double e;
} hit;

static void lab_of(const hit *h, double lab[3]) { det_to_lab(&arr.crystal[h->k], h->local, lab); }

/* Writes one event:data:psa: one data:psa member per crystal, hits in order.
 * The core energy of the crystal whose first hit is h[i] is core[i], or
 * without core the sum of its hits. */
static void put_event_core(uint32_t number, const hit *h, int n, const double *core)
{
    static adf_psa p;
    int done[64] = { 0 };
    ck_assert_int_eq(adf_begin(&w, ADF_ID_EVENT_DATA_PSA, number, 1000 + number), ADF_OK);
    for (int i = 0; i < n; i++) {
        if (done[i])
            continue;
        memset(&p, 0, sizeof p);
        p.crystal_id = (uint16_t)arr.crystal[h[i].k].id;
        for (int j = i; j < n; j++) {
            if (h[j].k != h[i].k)
                continue;
            ck_assert_msg(det_crystal_contains(&cry, h[j].local), "hit %d is not in the germanium", j);
            adf_psa_hit *o = &p.hit[p.n_hits++];
            o->crystal_id = (int16_t)p.crystal_id;
            o->x = (float)h[j].local[0];
            o->y = (float)h[j].local[1];
            o->z = (float)h[j].local[2];
            o->e = (float)h[j].e;
            p.e0 += o->e;
            done[j] = 1;
        }
        if (core)
            p.e0 = (float)core[i];
        ck_assert_int_eq(adf_psa_write(&w, number, 1000 + number, &p), ADF_OK);
    }
    ck_assert_int_eq(adf_end(&w), ADF_OK);
}

static void put_event(uint32_t number, const hit *h, int n) { put_event_core(number, h, n, NULL); }

static void normalise(double v[3])
{
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int i = 0; i < 3; i++)
        v[i] /= n;
}

/* d rotated by angle theta towards the unit direction `towards` (made orthogonal to d). */
static void turn(const double d[3], const double towards[3], double theta, double outv[3])
{
    double t[3], dot = d[0] * towards[0] + d[1] * towards[1] + d[2] * towards[2];
    for (int i = 0; i < 3; i++)
        t[i] = towards[i] - dot * d[i];
    normalise(t);
    for (int i = 0; i < 3; i++)
        outv[i] = cos(theta) * d[i] + sin(theta) * t[i];
}

static double compton_out(double e, double theta) { return e / (1 + e / MEC2 * (1 - cos(theta))); }

/* The direction (crystal frame of k) from the target to a local point. */
static void direction_from_target(int k, const double local[3], double d[3])
{
    double lab[3], origin[3] = { 0, 0, 0 }, o_local[3];
    det_to_lab(&arr.crystal[k], local, lab);
    det_to_crystal(&arr.crystal[k], origin, o_local);
    for (int i = 0; i < 3; i++)
        d[i] = local[i] - o_local[i];
    normalise(d);
}

/* A Compton chain in crystal k from `start`: n points, scattering angles
 * theta[0 .. n-2] turning towards the local directions tw[], steps mm apart;
 * the photon of energy e0 is absorbed at the last point. */
static void chain(int k, const double start[3], double e0, int n, const double *theta,
                  const double (*tw)[3], const double *step, hit *h)
{
    double d[3], e = e0;
    memcpy(h[0].local, start, sizeof h[0].local);
    direction_from_target(k, start, d);
    for (int i = 0; i < n; i++) {
        h[i].k = k;
        if (i == n - 1) {
            h[i].e = e;
            break;
        }
        double out_e = compton_out(e, theta[i]), nd[3];
        h[i].e = e - out_e;
        e = out_e;
        turn(d, tw[i], theta[i], nd);
        memcpy(d, nd, sizeof d);
        for (int j = 0; j < 3; j++)
            h[i + 1].local[j] = h[i].local[j] + step[i] * d[j];
    }
}

static int read_tracked(size_t n, adf_tracked *t, int max)
{
    adf_iter it;
    adf_frame f;
    int count = 0, rc;
    adf_iter_init(&it, out, n);
    while ((rc = adf_iter_next(&it, &f)) > 0) {
        if (f.key.id != ADF_ID_NW_TRACKED)
            continue;
        ck_assert_int_lt(count, max);
        ck_assert_int_eq(adf_tracked_read(&f, &t[count]), ADF_OK);
        count++;
    }
    ck_assert_int_eq(rc, 0);
    return count;
}

static void assert_at(float x, float y, float z, const hit *h)
{
    double lab[3];
    lab_of(h, lab);
    ck_assert_double_eq_tol(x, lab[0], 1e-3);
    ck_assert_double_eq_tol(y, lab[1], 1e-3);
    ck_assert_double_eq_tol(z, lab[2], 1e-3);
}

/* ---- the hand-built validation events -------------------------------------------- */

START_TEST(three_point_compton_sequence_is_ordered)
{
    static const double start[3] = { 15, 10, 20 }, theta[2] = { 60 * M_PI / 180, 40 * M_PI / 180 },
                        step[2] = { 25, 15 };
    const double tw[2][3] = { { -1, 0, 0 }, { 0, 1, 0 } };
    hit h[3], shuffled[3];
    chain(0, start, 1332.5, 3, theta, tw, step, h);
    /* the frame lists them out of order: the tracker must find the order */
    shuffled[0] = h[2];
    shuffled[1] = h[0];
    shuffled[2] = h[1];
    put_event(1, shuffled, 3);
    adf_tracked t[2];
    ck_assert_int_eq(read_tracked(run(""), t, 2), 1);
    ck_assert_uint_eq(t[0].n_gammas, 1);
    const adf_gamma *g = &t[0].gamma[0];
    ck_assert_double_eq_tol(g->e, 1332.5, 1e-3);
    ck_assert_float_eq(g->e_dc, g->e);
    ck_assert_uint_eq(g->n_points, 3);
    ck_assert_uint_eq(g->n_crystals, 1);
    ck_assert_uint_eq(g->first_crystal, arr.crystal[0].id);
    ck_assert_uint_eq(g->flags, 0);
    assert_at(g->x1, g->y1, g->z1, &h[0]);
    assert_at(g->x2, g->y2, g->z2, &h[1]);
    ck_assert_msg(g->fom > 0.05 && g->fom <= 1, "fom %g", g->fom);
}
END_TEST

START_TEST(single_photoabsorption_needs_its_probability)
{
    hit low = { { 12, -8, 10 }, 0, 200 }, high = { { 12, -8, 10 }, 0, 1332.5 };
    put_event(1, &low, 1);
    put_event(2, &high, 1);
    adf_tracked t[2];
    ck_assert_int_eq(read_tracked(run(""), t, 2), 2);
    ck_assert_uint_eq(t[0].n_gammas, 1);
    ck_assert_uint_eq(t[0].gamma[0].flags, ADF_TRACKED_SINGLE);
    ck_assert_uint_eq(t[0].gamma[0].n_points, 1);
    ck_assert_double_eq_tol(t[0].gamma[0].e, 200, 1e-4);
    assert_at(t[0].gamma[0].x1, t[0].gamma[0].y1, t[0].gamma[0].z1, &low);
    assert_at(t[0].gamma[0].x2, t[0].gamma[0].y2, t[0].gamma[0].z2, &low);
    /* 200 keV, 10 mm of germanium: exp(-0.081 * 10) * 5.706 / 18.336 = 0.138 */
    ck_assert_double_eq_tol(t[0].gamma[0].fom, 0.138, 0.01);
    /* 1332 keV is absorbed in one interaction with probability < 0.01, above the default
     * MinSingleFom 0.0004 (sqrt(P) > 0.02): accepted; the earlier threshold 0.02 rejects it */
    ck_assert_uint_eq(t[1].n_gammas, 1);
    ck_assert_uint_eq(t[1].gamma[0].flags, ADF_TRACKED_SINGLE);
    ck_assert_double_eq_tol(t[1].gamma[0].e, 1332.5, 1e-3);
    ck_assert_msg(t[1].gamma[0].fom > 0.0004 && t[1].gamma[0].fom < 0.01, "fom %g", t[1].gamma[0].fom);
    ck_assert_int_eq(read_tracked(run("MinSingleFom 0.02\n"), t, 2), 2);
    ck_assert_uint_eq(t[0].n_gammas, 1);
    ck_assert_uint_eq(t[1].n_gammas, 0);
    ck_assert_uint_eq(t[1].status, 0);
}
END_TEST

START_TEST(single_points_must_be_isolated)
{
    /* two points 50 mm apart whose pair no cluster threshold accepts (MinClusterFom 1) */
    hit h[2] = { { { 12, -8, 10 }, 0, 200 }, { { 12, -8, 60 }, 0, 1000 } };
    put_event(1, h, 2);
    adf_tracked t[1];
    ck_assert_int_eq(read_tracked(run("MinClusterFom 1\n"), t, 1), 1);
    ck_assert_uint_eq(t[0].n_gammas, 0); /* each within SingleIsolation (60 mm) of the other */
    ck_assert_int_eq(read_tracked(run("MinClusterFom 1\nSingleIsolation 49.9\n"), t, 1), 1);
    ck_assert_uint_eq(t[0].n_gammas, 2);
    for (int g = 0; g < 2; g++) {
        ck_assert_uint_eq(t[0].gamma[g].flags, ADF_TRACKED_SINGLE);
        ck_assert_double_eq_tol(t[0].gamma[g].e, h[g].e, 1e-3);
    }
    ck_assert_int_eq(read_tracked(run("MinClusterFom 1\nSingleIsolation 50.1\n"), t, 1), 1);
    ck_assert_uint_eq(t[0].n_gammas, 0);
    ck_assert_uint_eq(configure("SingleIsolation -1\n"), NARVAL_E_CONFIG);
}
END_TEST

/* The selection of tracker_fom.h on hand-made candidates: points 0, 1, 2
 * 10 mm apart in a row (3 far away when asked), {0, 1} scoring 0.5 and
 * {0, 1, 2} 0.4 (or 0.01, under the threshold 0.05). */
static int select_three(float size_bonus, float fom3, bool far, int *taken_n)
{
    static uint32_t perms[TR_PERMS_TOTAL];
    tr_params p = { .log_min_cluster = logf(0.05f), .single_iso2 = 60.0f * 60.0f, .size_bonus = size_bonus };
    perms[tr_perm_first(2)] = 0u | 1u << 3;
    perms[tr_perm_first(3)] = 0u | 1u << 3 | 2u << 6;
    tr_point pts[3] = { { 100, 0, 200, 300 }, { 110, 0, 200, 300 }, { far ? 400 : 120, 0, 200, 300 } };
    tr_cand c[2] = { { 2, 0, { 0, 1, TR_NONE, TR_NONE, TR_NONE, TR_NONE, TR_NONE } },
                     { 3, 0, { 0, 1, 2, TR_NONE, TR_NONE, TR_NONE, TR_NONE } } };
    tr_score sc[2] = { { logf(0.5f), 0, TR_HYP_COMPTON, 0 }, { logf(fom3), 0, TR_HYP_COMPTON, 0 } };
    uint16_t order[2];
    float key[2];
    uint8_t used[3] = { 0, 0, 0 };
    tr_gamma g[3];
    int n = tr_select_clusters(&p, perms, pts, tr_size_bonus(&p, 3), c, sc, 2, order, key, used, g, 0);
    *taken_n = n ? g[0].n : 0;
    return n;
}

START_TEST(size_bonus_takes_the_whole_of_close_nested_clusters)
{
    int taken;
    ck_assert_int_eq(select_three(0, 0.4f, false, &taken), 1); /* by figure of merit alone: the pair */
    ck_assert_int_eq(taken, 2);
    ck_assert_int_eq(select_three(4, 0.4f, false, &taken), 1); /* 4/3 per extra close point: the three */
    ck_assert_int_eq(taken, 3);
    ck_assert_int_eq(select_three(4, 0.4f, true, &taken), 1); /* the third 290 mm away earns nothing */
    ck_assert_int_eq(taken, 2);
    ck_assert_int_eq(select_three(100, 0.01f, false, &taken), 1); /* never past the threshold */
    ck_assert_int_eq(taken, 2);
    ck_assert_uint_eq(configure("SizeBonus -1\n"), NARVAL_E_CONFIG);
    ck_assert_uint_eq(configure("Retrack maybe\n"), NARVAL_E_CONFIG);
}
END_TEST

START_TEST(retrack_clusters_the_free_points_under_their_event_indices)
{
    tr_point pts[5] = { { 1, 0, 0, 10 }, { 2, 0, 0, 20 }, { 3, 0, 0, 30 }, { 4, 0, 0, 40 }, { 5, 0, 0, 50 } };
    uint8_t used[5] = { 1, 0, 1, 0, 0 };
    tr_point sub[5];
    uint16_t map[5];
    ck_assert_int_eq(tr_leftovers(pts, 5, used, sub, map), 3);
    ck_assert_uint_eq(map[0], 1);
    ck_assert_uint_eq(map[1], 3);
    ck_assert_uint_eq(map[2], 4);
    ck_assert_float_eq(sub[1].e, 40);
    tr_cand c = { 2, 0, { 0, 2, TR_NONE, TR_NONE, TR_NONE, TR_NONE, TR_NONE } };
    tr_cands_remap(&c, 1, map);
    ck_assert_uint_eq(c.pt[0], 1);
    ck_assert_uint_eq(c.pt[1], 4);
    ck_assert_uint_eq(c.pt[2], TR_NONE);
}
END_TEST

START_TEST(crystal_position_lookup_table_is_an_array)
{
    static const double start[3] = { 15, 10, 20 }, theta[2] = { 60 * M_PI / 180, 40 * M_PI / 180 },
                        step[2] = { 25, 15 };
    const double tw[2][3] = { { -1, 0, 0 }, { 0, 1, 0 } };
    hit h[3];
    chain(0, start, 1332.5, 3, theta, tw, step, h);
    put_event(1, h, 3);
    adf_tracked t[1];
    ck_assert_int_eq(read_tracked(run("Array detector/arrays/CrystalPositionLookUpTable\n"), t, 1), 1);
    ck_assert_uint_eq(t[0].n_gammas, 1);
    ck_assert_uint_eq(t[0].gamma[0].n_points, 3);
    ck_assert_double_eq_tol(t[0].gamma[0].e, 1332.5, 1e-3);
    assert_at(t[0].gamma[0].x1, t[0].gamma[0].y1, t[0].gamma[0].z1, &h[0]);
    assert_at(t[0].gamma[0].x2, t[0].gamma[0].y2, t[0].gamma[0].z2, &h[1]);
}
END_TEST

START_TEST(pair_production_is_recognised)
{
    hit h[3] = { { { 10, 0, 40 }, 0, 4000 - 2 * MEC2 }, { { 10, 18, 40 }, 0, MEC2 }, { { 10, -18, 40 }, 0, MEC2 } };
    hit order[3] = { h[1], h[2], h[0] };
    put_event(7, order, 3);
    adf_tracked t[1];
    ck_assert_int_eq(read_tracked(run(""), t, 1), 1);
    ck_assert_uint_eq(t[0].n_gammas, 1);
    const adf_gamma *g = &t[0].gamma[0];
    ck_assert_uint_eq(g->flags, ADF_TRACKED_PAIR);
    ck_assert_uint_eq(g->n_points, 3);
    ck_assert_double_eq_tol(g->e, 4000, 1e-3);
    assert_at(g->x1, g->y1, g->z1, &h[0]);
    ck_assert_msg(g->fom > 0.05, "fom %g", g->fom);
}
END_TEST

/* The crystal whose axis is closest to 90 degrees from crystal 0's. */
static int crystal_at_right_angle(void)
{
    int best = -1;
    double best_c = 2;
    for (int k = 1; k < arr.n; k++) {
        double c = 0;
        for (int i = 0; i < 3; i++)
            c += arr.crystal[0].R[i][2] * arr.crystal[k].R[i][2];
        if (fabs(c) < best_c) {
            best_c = fabs(c);
            best = k;
        }
    }
    ck_assert_double_lt(best_c, 0.05);
    return best;
}

START_TEST(two_gammas_at_right_angles_form_two_clusters)
{
    static const double start[3] = { 12, 8, 20 }, theta[1] = { 70 * M_PI / 180 }, step[1] = { 20 };
    const double tw[1][3] = { { -1, 0, 0 } };
    hit h[4];
    int k = crystal_at_right_angle();
    chain(0, start, 661.7, 2, theta, tw, step, h);
    chain(k, start, 661.7, 2, theta, tw, step, h + 2);
    put_event(3, h, 4);
    adf_tracked t[1];
    ck_assert_int_eq(read_tracked(run(""), t, 1), 1);
    ck_assert_uint_eq(t[0].n_gammas, 2);
    int found[2] = { 0, 0 };
    for (int g = 0; g < 2; g++) {
        const adf_gamma *x = &t[0].gamma[g];
        ck_assert_double_eq_tol(x->e, 661.7, 1e-3);
        ck_assert_uint_eq(x->n_points, 2);
        ck_assert_uint_eq(x->n_crystals, 1);
        int which = x->first_crystal == arr.crystal[k].id;
        ck_assert(which || x->first_crystal == arr.crystal[0].id);
        found[which]++;
        assert_at(x->x1, x->y1, x->z1, &h[2 * which]);
        assert_at(x->x2, x->y2, x->z2, &h[2 * which + 1]);
    }
    ck_assert_int_eq(found[0], 1);
    ck_assert_int_eq(found[1], 1);
}
END_TEST

START_TEST(empty_events_give_empty_tracked_frames)
{
    adf_psa p = { .crystal_id = (uint16_t)arr.crystal[5].id };
    ck_assert_int_eq(adf_begin(&w, ADF_ID_EVENT_DATA_PSA, 11, 500), ADF_OK);
    ck_assert_int_eq(adf_psa_write(&w, 11, 500, &p), ADF_OK);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    ck_assert_int_eq(adf_begin(&w, ADF_ID_EVENT_DATA_PSA, 12, 600), ADF_OK);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    unsigned n = run("");
    adf_tracked t[2];
    ck_assert_int_eq(read_tracked(n, t, 2), 2);
    ck_assert_uint_eq(n, 2 * (ADF_KEY_SIZE + ADF_TRACKED_HEADER));
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(t[i].n_gammas, 0);
        ck_assert_uint_eq(t[i].status, 0);
    }
    adf_frame f;
    adf_iter it;
    adf_iter_init(&it, out, n);
    ck_assert_int_eq(adf_iter_next(&it, &f), 1);
    ck_assert_uint_eq(f.key.event, 11);
    ck_assert_uint_eq(f.key.timestamp, 500);
}
END_TEST

/* ---- contract ----------------------------------------------------------------- */

START_TEST(other_frames_pass_in_order_and_single_psa_frames_are_events)
{
    adf_eof eof = { 3, 99 };
    adf_psa p = { .crystal_id = (uint16_t)arr.crystal[0].id, .n_hits = 1 };
    p.hit[0] = (adf_psa_hit){ .x = 12, .y = -8, .z = 10, .e = 150 };
    ck_assert_int_eq(adf_eof_write(&w, 1, 10, &eof), ADF_OK);
    ck_assert_int_eq(adf_psa_write(&w, 2, 20, &p), ADF_OK);
    size_t eof_at = w.used;
    ck_assert_int_eq(adf_eof_write(&w, 3, 30, &eof), ADF_OK);
    unsigned n = run("");
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, out, n);
    uint32_t ids[3], events[3];
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(adf_iter_next(&it, &f), 1);
        ids[i] = f.key.id;
        events[i] = f.key.event;
    }
    ck_assert_int_eq(adf_iter_next(&it, &f), 0);
    ck_assert_uint_eq(ids[0], ADF_ID_META_EOF);
    ck_assert_uint_eq(ids[1], ADF_ID_NW_TRACKED);
    ck_assert_uint_eq(ids[2], ADF_ID_META_EOF);
    ck_assert_uint_eq(events[1], 2);
    ck_assert_int_eq(memcmp(out + n - (w.used - eof_at), in + eof_at, w.used - eof_at), 0);
}
END_TEST

START_TEST(keep_input_passes_each_tracked_frame_before_its_gammas)
{
    static const double start[3] = { 15, 10, 20 }, theta[2] = { 60 * M_PI / 180, 40 * M_PI / 180 },
                        step[2] = { 25, 15 };
    const double tw[2][3] = { { -1, 0, 0 }, { 0, 1, 0 } };
    adf_eof eof = { 3, 99 };
    adf_psa p = { .crystal_id = (uint16_t)arr.crystal[0].id, .n_hits = 1 };
    p.hit[0] = (adf_psa_hit){ .x = 12, .y = -8, .z = 10, .e = 150 };
    hit h[3];
    chain(0, start, 1332.5, 3, theta, tw, step, h);
    size_t at[4];
    at[0] = w.used;
    put_event(7, h, 3);
    at[1] = w.used;
    ck_assert_int_eq(adf_eof_write(&w, 8, 80, &eof), ADF_OK);
    at[2] = w.used;
    ck_assert_int_eq(adf_psa_write(&w, 9, 90, &p), ADF_OK);
    at[3] = w.used;
    unsigned plain = run("");
    static uint8_t tracked_only[CAP];
    memcpy(tracked_only, out, plain);
    unsigned n = run("KeepInput true\n");
    ck_assert_uint_eq(n, plain + (unsigned)(at[1] - at[0]) + (unsigned)(at[3] - at[2]));
    /* order: event 7's input, its data:tracked, the eof, frame 9's input, its data:tracked */
    static const uint32_t ids[5] = { ADF_ID_EVENT_DATA_PSA, ADF_ID_NW_TRACKED, ADF_ID_META_EOF, ADF_ID_DATA_PSA,
                                     ADF_ID_NW_TRACKED };
    static const uint32_t events[5] = { 7, 7, 8, 9, 9 };
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, out, n);
    size_t tracked_at = 0;
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(adf_iter_next(&it, &f), 1);
        ck_assert_uint_eq(f.key.id, ids[i]);
        ck_assert_uint_eq(f.key.event, events[i]);
        if (f.key.id == ADF_ID_NW_TRACKED) {
            ck_assert_int_eq(memcmp(f.data, tracked_only + tracked_at, f.key.length), 0);
            tracked_at += f.key.length;
        } else if (f.key.id != ADF_ID_META_EOF) {
            size_t from = i == 0 ? at[0] : at[2];
            ck_assert_int_eq(memcmp(f.data, in + from, f.key.length), 0);
        } else {
            tracked_at += f.key.length;
        }
    }
    ck_assert_int_eq(adf_iter_next(&it, &f), 0);
    adf_tracked t[2];
    ck_assert_int_eq(read_tracked(n, t, 2), 2);
    ck_assert_uint_eq(t[0].n_gammas, 1);
    ck_assert_uint_eq(t[0].gamma[0].n_points, 3);
    ck_assert_uint_eq(configure("KeepInput maybe\n"), NARVAL_E_CONFIG);
}
END_TEST

START_TEST(output_too_small_is_retried_with_the_same_result)
{
    static const double start[3] = { 15, 10, 20 }, theta[2] = { 60 * M_PI / 180, 40 * M_PI / 180 },
                        step[2] = { 25, 15 };
    const double tw[2][3] = { { -1, 0, 0 }, { 0, 1, 0 } };
    hit h[3];
    chain(0, start, 1332.5, 3, theta, tw, step, h);
    for (uint32_t e = 0; e < 20; e++)
        put_event(e, h, 3);
    unsigned full = run("");
    static uint8_t first[CAP];
    memcpy(first, out, full);
    ck_assert_uint_eq(configure(""), 0);
    void *inst = begin();
    unsigned used = 0, code;
    tracker.filter(inst, in, (unsigned)w.used, out, 100, &used, &code);
    ck_assert_uint_eq(code, NARVAL_E_OUTPUT_SIZE);
    ck_assert_uint_eq(used, full);
    tracker.filter(inst, in, (unsigned)w.used, out, used, &used, &code);
    ck_assert_uint_eq(code, 0);
    ck_assert_uint_eq(used, full);
    ck_assert_int_eq(memcmp(out, first, full), 0);
    end(inst);
}
END_TEST

START_TEST(doppler_correction_uses_the_first_interaction)
{
    hit h = { { 12, -8, 10 }, 0, 200 };
    put_event(1, &h, 1);
    adf_tracked t[1];
    ck_assert_int_eq(read_tracked(run("Beta 0.1\nBeamDirection 0 0 2\n"), t, 1), 1);
    double lab[3];
    lab_of(&h, lab);
    double c = lab[2] / sqrt(lab[0] * lab[0] + lab[1] * lab[1] + lab[2] * lab[2]);
    ck_assert_double_eq_tol(t[0].beta, 0.1, 1e-7);
    ck_assert_double_eq_tol(t[0].gamma[0].e_dc, 200 * (1 - 0.1 * c) / sqrt(1 - 0.01), 1e-3);
}
END_TEST

START_TEST(truth_input_is_smeared_reproducibly)
{
    static adf_truth truth;
    static const double start[3] = { 15, 10, 20 }, theta[2] = { 60 * M_PI / 180, 40 * M_PI / 180 },
                        step[2] = { 25, 15 };
    const double tw[2][3] = { { -1, 0, 0 }, { 0, 1, 0 } };
    hit h[3];
    chain(0, start, 1332.5, 3, theta, tw, step, h);
    memset(&truth, 0, sizeof truth);
    truth.n_gammas = 1;
    truth.n_interactions = 3;
    truth.gamma[0] = (adf_truth_gamma){ 1332.5, 1332.5, { 0, 0, 1 }, ADF_TRUTH_ABSORBED, 3 };
    for (int i = 0; i < 3; i++) {
        double lab[3];
        lab_of(&h[i], lab);
        truth.hit[i] = (adf_truth_hit){ (uint16_t)arr.crystal[0].id, 0, i < 2 ? ADF_TRUTH_COMPTON : ADF_TRUTH_PHOTO,
                                        1, (float)h[i].e,
                                        { (float)h[i].local[0], (float)h[i].local[1], (float)h[i].local[2] },
                                        { (float)lab[0], (float)lab[1], (float)lab[2] }, 0, 0 };
    }
    ck_assert_int_eq(adf_truth_write(&w, 5, 50, &truth), ADF_OK);
    /* no smearing: the exact sequence, and the truth frame passed on before it */
    unsigned n = run("Input truth\nSmearFwhmA 0\nSmearFwhmB 0\n");
    adf_tracked t[1];
    ck_assert_int_eq(read_tracked(n, t, 1), 1);
    ck_assert_uint_eq(adf_get_u32(out + 4), ADF_ID_NW_TRUTH);
    ck_assert_uint_eq(t[0].n_gammas, 1);
    ck_assert_double_eq_tol(t[0].gamma[0].e, 1332.5, 1e-3);
    assert_at(t[0].gamma[0].x1, t[0].gamma[0].y1, t[0].gamma[0].z1, &h[0]);
    /* smeared: the same bytes twice, positions moved by millimetres */
    static uint8_t first[CAP];
    unsigned n1 = run("Input truth\nSeed 7\n");
    memcpy(first, out, n1);
    unsigned n2 = run("Input truth\nSeed 7\n");
    ck_assert_uint_eq(n1, n2);
    ck_assert_int_eq(memcmp(first, out, n1), 0);
    ck_assert_int_eq(read_tracked(n2, t, 1), 1);
    ck_assert_uint_ge(t[0].n_gammas, 1);
    double lab[3];
    lab_of(&h[0], lab);
    double moved = fabs(t[0].gamma[0].x1 - lab[0]) + fabs(t[0].gamma[0].y1 - lab[1]) +
                   fabs(t[0].gamma[0].z1 - lab[2]);
    ck_assert_msg(moved > 1e-3 && moved < 100, "moved %g mm", moved);
}
END_TEST

static unsigned run_expecting(const char *conf_text, unsigned want)
{
    ck_assert_uint_eq(configure(conf_text), 0);
    void *inst = begin();
    unsigned used = 0, code;
    tracker.filter(inst, in, (unsigned)w.used, out, sizeof out, &used, &code);
    ck_assert_uint_eq(code, want);
    tracker.stop(inst, &code);
    tracker.unload(inst, &code);
    return used;
}

/* The bad-frame policy (kit.h): frames the tracker cannot use are rejected,
 * counted and named with their event and block offset, the good event after
 * them is tracked; with MaxBadFrames 0 the first one stops the run.  An
 * absurd but finite position gave a NaN figure of merit before it was a bad
 * frame. */
START_TEST(bad_frames_are_rejected_counted_and_named)
{
    static const char *const why[] = {
        "event 1 (data:psa of crystal 4000) at byte 0 of the input block: crystal id 4000 is not in the array",
        "event 2 (data:psa of crystal %d) at byte %zu of the input block: crystal %d: a hit with a position or "
        "energy that is not a number",
        "event 3 (data:psa of crystal %d) at byte %zu of the input block: crystal %d: a hit at (1e+30, 1, 1) mm of "
        "100 keV, beyond 1000 mm of its crystal's origin or 1e+06 keV",
        "event 4 (data:psa of crystal %d) at byte %zu of the input block: crystal %d: a hit at (10, 1, 1) mm of "
        "1e+30 keV",
        "event 5 (event:data:psa) at byte %zu of the input block: member at offset %zu of event:data:psa is "
        "meta:eof, not data:psa",
    };
    size_t at[5];
    int id = arr.crystal[0].id;
    adf_psa p = { .crystal_id = 4000, .n_hits = 1 };
    p.hit[0] = (adf_psa_hit){ .x = 1, .y = 1, .z = 1, .e = 100 };
    const float x[] = { 1, NAN, 1e30f, 10 }, e[] = { 100, 100, 100, 1e30f };
    for (int k = 0; k < 4; k++) {
        at[k] = w.used;
        p.crystal_id = (uint16_t)(k ? id : 4000);
        p.hit[0].x = x[k];
        p.hit[0].e = e[k];
        ck_assert_int_eq(adf_psa_write(&w, (uint32_t)k + 1, 1, &p), ADF_OK);
    }
    at[4] = w.used;
    adf_eof eof = { 1, 2 };
    ck_assert_int_eq(adf_begin(&w, ADF_ID_EVENT_DATA_PSA, 5, 1), ADF_OK);
    ck_assert_int_eq(adf_eof_write(&w, 5, 1, &eof), ADF_OK);
    ck_assert_int_eq(adf_end(&w), ADF_OK);
    hit good = { { 12, 8, 20 }, 0, 662 };
    put_event(6, &good, 1);

    char log[16384], line[512];
    const char *path = tk_path(tmp, "stderr.txt");
    int saved = tk_capture_begin(path);
    unsigned n = run("");
    tk_capture_end(saved, path, log, sizeof log);
    adf_tracked t[4];
    ck_assert_int_eq(read_tracked(n, t, 4), 1); /* event 6 only */
    ck_assert_uint_eq(t[0].n_gammas, 1);
    ck_assert(isfinite(t[0].gamma[0].fom));
    for (int k = 0; k < 5; k++) {
        if (k == 0)
            snprintf(line, sizeof line, "%s", why[0]);
        else if (k < 4)
            snprintf(line, sizeof line, why[k], id, at[k], id);
        else
            snprintf(line, sizeof line, why[k], at[k], at[k] + ADF_KEY_SIZE);
        ck_assert_msg(strstr(log, line) != NULL, "the log lacks\n%s\nit is\n%s", line, log);
    }
    ck_assert_msg(strstr(log, "[Tracker] warning: 5 bad frames rejected in this run (MaxBadFrames 100)") != NULL,
                  "%s", log);
    ck_assert_uint_eq(run_expecting("MaxBadFrames 0\n", NARVAL_E_INPUT), 0);
}
END_TEST

/* A block of many events decoded and written by several threads (Threads
 * 4): the bytes of one thread's run, each bad frame left out in its place,
 * KeepInput's frames each before its own data:tracked. */
START_TEST(threads_decode_a_block_as_one_thread_does)
{
    static const double start[3] = { 15, 10, 20 }, theta[2] = { 60 * M_PI / 180, 40 * M_PI / 180 },
                        step[2] = { 25, 15 };
    const double tw[2][3] = { { -1, 0, 0 }, { 0, 1, 0 } };
    static uint8_t single[CAP];
    hit h[3];
    adf_psa bad = { .crystal_id = (uint16_t)arr.crystal[0].id, .n_hits = 1 };
    bad.hit[0] = (adf_psa_hit){ .x = NAN, .y = 1, .z = 1, .e = 100 };
    unsigned good = 0;
    for (uint32_t e = 1; e <= 3000; e++) { /* more than 4096 items: the output is written in parallel too */
        if (e % 97 == 0) {
            ck_assert_int_eq(adf_psa_write(&w, e, e, &bad), ADF_OK);
            continue;
        }
        int n = 1 + (int)(e % 3);
        chain(0, start, 300.0 + e % 1000, n, theta, tw, step, h);
        put_event(e, h, n);
        good++;
    }
    unsigned one = run("KeepInput true\nThreads 1\n");
    memcpy(single, out, one);
    unsigned four = run("KeepInput true\nThreads 4\n");
    ck_assert_uint_eq(four, one);
    ck_assert_int_eq(memcmp(out, single, one), 0);
    adf_iter it;
    adf_frame f;
    unsigned tracked = 0, kept = 0;
    uint32_t last = 0;
    adf_iter_init(&it, out, four);
    while (adf_iter_next(&it, &f) > 0) {
        ck_assert_uint_ne(f.key.event % 97, 0);
        if (f.key.id == ADF_ID_NW_TRACKED) {
            ck_assert_uint_eq(f.key.event, last);
            tracked++;
        } else {
            ck_assert_uint_eq(f.key.id, ADF_ID_EVENT_DATA_PSA);
            ck_assert_uint_gt(f.key.event, last);
            last = f.key.event;
            kept++;
        }
    }
    ck_assert_uint_eq(tracked, good);
    ck_assert_uint_eq(kept, good);
    ck_assert_uint_eq(configure("Threads 0\n"), NARVAL_E_CONFIG);
}
END_TEST

/* A first block that is empty (the emulator's end-of-data call before any
 * data), then one of bad frames only: nothing written, no error, and a
 * NULL output of size 0 is never touched. */
START_TEST(empty_and_all_bad_first_blocks_write_nothing)
{
    adf_psa bad = { .crystal_id = (uint16_t)arr.crystal[0].id, .n_hits = 1 };
    bad.hit[0] = (adf_psa_hit){ .x = NAN, .y = 1, .z = 1, .e = 100 };
    ck_assert_int_eq(adf_psa_write(&w, 1, 1, &bad), ADF_OK);
    ck_assert_uint_eq(configure(""), 0);
    void *inst = begin();
    unsigned used = 1, code = 1;
    tracker.filter(inst, in, 0, NULL, 0, &used, &code);
    ck_assert_uint_eq(code, 0);
    ck_assert_uint_eq(used, 0);
    tracker.filter(inst, in, (unsigned)w.used, NULL, 0, &used, &code);
    ck_assert_uint_eq(code, 0);
    ck_assert_uint_eq(used, 0);
    end(inst);
}
END_TEST

START_TEST(configuration_errors)
{
    ck_assert_uint_eq(configure("Device fast\n"), NARVAL_E_CONFIG);
    ck_assert_uint_eq(configure("PathModel sphere\n"), NARVAL_E_CONFIG);
    ck_assert_uint_eq(configure("BeamDirection 0 0\n"), NARVAL_E_CONFIG);
    ck_assert_uint_eq(configure("BeamDirection 0 0 0\n"), NARVAL_E_CONFIG);
    ck_assert_uint_eq(configure("MinClusterFom 1.5\n"), NARVAL_E_CONFIG);
    ck_assert_uint_eq(configure("PathModel shell\nShellInner 300\nShellOuter 200\n"), NARVAL_E_CONFIG);
    /* a missing file is found by process_config (and so by validate), and nothing registers after it */
    ck_assert_uint_eq(configure("Array /nonexistent/array.txt\n"), NARVAL_E_CONFIG);
    unsigned code;
    ck_assert_ptr_null(tracker.reg(&code));
    ck_assert_uint_eq(code, NARVAL_E_STATE);
    ck_assert_uint_eq(configure("Geometry detector\n"), NARVAL_E_CONFIG);
}
END_TEST

START_TEST(shell_model_tracks_the_sequence_too)
{
    static const double start[3] = { 15, 10, 20 }, theta[2] = { 60 * M_PI / 180, 40 * M_PI / 180 },
                        step[2] = { 25, 15 };
    const double tw[2][3] = { { -1, 0, 0 }, { 0, 1, 0 } };
    hit h[3];
    chain(0, start, 1332.5, 3, theta, tw, step, h);
    put_event(1, h, 3);
    adf_tracked t[1];
    ck_assert_int_eq(read_tracked(run("PathModel shell\n"), t, 1), 1);
    ck_assert_uint_eq(t[0].n_gammas, 1);
    assert_at(t[0].gamma[0].x1, t[0].gamma[0].y1, t[0].gamma[0].z1, &h[0]);
    assert_at(t[0].gamma[0].x2, t[0].gamma[0].y2, t[0].gamma[0].z2, &h[1]);
}
END_TEST

/* ---- GPU equal to CPU ------------------------------------------------------------ */

static uint64_t lcg = 12345;
static double uniform(void)
{
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(lcg >> 11) * 0x1.0p-53;
}

/* Events of up to `mult` gammas: random short chains of 1 to 7 points in random crystals. */
static void put_random_events(int events, int mult)
{
    for (int e = 0; e < events; e++) {
        hit h[64];
        int n = 0, gammas = 1 + (int)(uniform() * mult);
        for (int g = 0; g < gammas && n < 56; g++) {
            int k = (int)(uniform() * arr.n), points = 1 + (int)(uniform() * 7);
            for (int i = 0; i < points; i++) {
                hit *x = &h[n];
                do {
                    x->local[0] = (uniform() - 0.5) * 70;
                    x->local[1] = (uniform() - 0.5) * 70;
                    x->local[2] = uniform() * 90;
                } while (!det_crystal_contains(&cry, x->local));
                x->k = k;
                x->e = 20 + uniform() * 600;
                n++;
            }
        }
        double core[64];
        for (int i = 0; i < n; i++) { /* cores off their hits' sums: the scaled floats must agree too */
            core[i] = 0;
            for (int j = 0; j < n; j++)
                core[i] += h[j].k == h[i].k ? h[j].e : 0;
            core[i] *= 0.8 + 0.5 * uniform();
        }
        put_event_core((uint32_t)e, h, n, core);
    }
}

static void run_device(const char *conf_text, uint8_t *dst, unsigned *n)
{
    *n = run(conf_text);
    memcpy(dst, out, *n);
}

/* True when a CUDA device is usable; else false with why. */
static bool gpu_present(char *why, size_t len)
{
    snprintf(why, len, "built without CUDA");
#ifdef NARWHAL_HAVE_CUDA
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaSuccess && count > 0)
        return true;
    snprintf(why, len, "%s", err == cudaSuccess ? "no CUDA device" : cudaGetErrorString(err));
#endif
    return false;
}

START_TEST(gpu_tracks_equal_cpu_tracks)
{
    static uint8_t cpu[CAP], gpu[CAP];
    unsigned n_cpu, n_gpu;
    char why[160];
    put_random_events(3000, 8);
    run_device("Device cpu\n", cpu, &n_cpu);
    adf_tracked t;
    adf_iter it;
    adf_frame f;
    int frames = 0, gammas = 0;
    adf_iter_init(&it, cpu, n_cpu);
    while (adf_iter_next(&it, &f) > 0) {
        ck_assert_int_eq(adf_tracked_read(&f, &t), ADF_OK);
        frames++;
        gammas += t.n_gammas;
    }
    ck_assert_int_eq(frames, 3000);
    ck_assert_int_gt(gammas, 3000);
    if (!gpu_present(why, sizeof why))
        TK_SKIP("GPU equal to CPU not tested: %s", why);
    const char *modes[2] = { "Device gpu\nClustering gpu\n", "Device gpu\nClustering cpu\n" };
    for (int m = 0; m < 2; m++) {
        run_device(modes[m], gpu, &n_gpu);
        ck_assert_uint_eq(n_gpu, n_cpu);
        ck_assert_msg(memcmp(cpu, gpu, n_cpu) == 0, "GPU output (%s) differs from the CPU's", modes[m]);
    }
}
END_TEST

START_TEST(gpu_forced_without_gpu_fails_at_initialise)
{
    char why[160];
    if (gpu_present(why, sizeof why))
        TK_SKIP("a GPU is present: the refusal of Device gpu is not tested");
    ck_assert_uint_eq(configure("Device gpu\n"), 0);
    unsigned code;
    void *inst = tracker.reg(&code);
    ck_assert_uint_eq(code, 0);
    tracker.initialise(inst, &code);
    ck_assert_uint_eq(code, NARVAL_E_DEVICE);
    tracker.unload(inst, &code);
    ck_assert_uint_eq(code, 0);
}
END_TEST


/* ---- core scaling ------------------------------------------------------------------ */

/* Runs the frames written so far like run(), the actor's log (stderr) kept in log. */
static unsigned run_logged(const char *conf_text, char *log, size_t len)
{
    const char *path = tk_path(tmp, "stderr");
    int saved = tk_capture_begin(path);
    unsigned used = run(conf_text);
    tk_capture_end(saved, path, log, len);
    return used;
}

/* (The runs below keep the figure of merit's earlier EnergySigma 1 and AngularUncertainty 1.2, under
 * which the two crystals' points of one event stay two single gammas.)
 * One crystal's hit of 160 keV under core energies that scale it (by 1.25, and
 * by the bounds 2 and 0.5 themselves) or must leave it (0, NaN, infinite,
 * negative, 2.0625, 0.49375); then two crystals of one event, each scaled by
 * its own core; then the three-point sequence with every energy 10 % low
 * under the true core, which scaling makes exact again. */
#define EARLIER_FOM "EnergySigma 1\nAngularUncertainty 1.2\n"
static const double core_single[] = { 200, 320, 80, 0, NAN, INFINITY, -50, 330, 79 };
enum { N_SINGLE = sizeof core_single / sizeof core_single[0] };

static void put_core_events(hit *chain3)
{
    static const double start[3] = { 15, 10, 20 }, theta[2] = { 60 * M_PI / 180, 40 * M_PI / 180 },
                        step[2] = { 25, 15 };
    const double tw[2][3] = { { -1, 0, 0 }, { 0, 1, 0 } };
    hit one = { { 12, -8, 10 }, 0, 160 };
    for (int i = 0; i < N_SINGLE; i++)
        put_event_core((uint32_t)i, &one, 1, &core_single[i]);
    hit two[2] = { { { 12, -8, 10 }, 0, 160 }, { { 12, -8, 10 }, arr.n / 2, 120 } };
    double core_two[2] = { 200, 180 };
    put_event_core(N_SINGLE, two, 2, core_two);
    chain(0, start, 1332.5, 3, theta, tw, step, chain3);
    hit low[3];
    for (int i = 0; i < 3; i++) {
        low[i] = chain3[i];
        low[i].e *= 0.9;
    }
    double core3[3] = { 1332.5, 0, 0 };
    put_event_core(N_SINGLE + 1, low, 3, core3);
}

static void assert_gammas(const adf_tracked *t, float a, float b)
{
    ck_assert_uint_eq(t->n_gammas, 2);
    float lo = fminf(t->gamma[0].e, t->gamma[1].e), hi = fmaxf(t->gamma[0].e, t->gamma[1].e);
    ck_assert_float_eq(lo, fminf(a, b));
    ck_assert_float_eq(hi, fmaxf(a, b));
}

START_TEST(core_scaling_brings_each_crystal_to_its_core_energy)
{
    static const float expect[N_SINGLE] = { 200, 320, 80, 160, 160, 160, 160, 160, 160 };
    static char log[16384];
    hit c3[3];
    put_core_events(c3);
    adf_tracked t[N_SINGLE + 2];
    int n = read_tracked(run_logged(EARLIER_FOM "MinSingleFom 1e-30\n", log, sizeof log), t, N_SINGLE + 2);
    ck_assert_int_eq(n, N_SINGLE + 2);
    for (int i = 0; i < N_SINGLE; i++) {
        ck_assert_uint_eq(t[i].n_gammas, 1);
        ck_assert_msg(t[i].gamma[0].e == expect[i], "core %g: gamma of %.6f keV, not %g", core_single[i],
                      t[i].gamma[0].e, expect[i]);
    }
    assert_gammas(&t[N_SINGLE], 200, 180);
    const adf_gamma *g = &t[N_SINGLE + 1].gamma[0];
    ck_assert_uint_eq(t[N_SINGLE + 1].n_gammas, 1);
    ck_assert_uint_eq(g->n_points, 3);
    ck_assert_double_eq_tol(g->e, 1332.5, 1e-3);
    assert_at(g->x1, g->y1, g->z1, &c3[0]);
    assert_at(g->x2, g->y2, g->z2, &c3[1]);
    ck_assert_msg(strstr(log, "core scaling: 6 crystals scaled to their core energy, 0 already summed to it, "
                              "6 left unscaled") != NULL, "log:\n%s", log);
}
END_TEST

START_TEST(core_scaling_off_leaves_the_hits)
{
    static char log[16384];
    hit c3[3];
    put_core_events(c3);
    adf_tracked t[N_SINGLE + 2];
    int n = read_tracked(run_logged(EARLIER_FOM "MinSingleFom 1e-30\nCoreScale false\n", log, sizeof log), t,
                         N_SINGLE + 2);
    ck_assert_int_eq(n, N_SINGLE + 2);
    for (int i = 0; i < N_SINGLE; i++)
        ck_assert_float_eq(t[i].gamma[0].e, 160);
    assert_gammas(&t[N_SINGLE], 160, 120);
    float sum = 0;
    for (unsigned k = 0; k < t[N_SINGLE + 1].n_gammas; k++)
        sum += t[N_SINGLE + 1].gamma[k].e;
    ck_assert_double_eq_tol(sum, 0.9 * 1332.5, 1e-3);
    ck_assert_ptr_null(strstr(log, "core scaling"));
}
END_TEST

START_TEST(hits_that_sum_to_the_core_are_left_as_they_are)
{
    static char log[16384];
    hit h[3] = { { { 12, -8, 10 }, 0, 100.1 }, { { 12, -8, 30 }, 0, 200.2 }, { { 14, -6, 50 }, 0, 300.3 } };
    put_event(1, h, 3); /* e0: the float sum of the three, not 600.6 */
    read_tracked(run_logged("", log, sizeof log), (adf_tracked[2]){ 0 }, 2);
    ck_assert_msg(strstr(log, "core scaling: 0 crystals scaled to their core energy, 1 already summed to it, "
                              "0 left unscaled") != NULL, "log:\n%s", log);
}
END_TEST

/* ---- ge2adf ------------------------------------------------------------------------ */

/* Runs build/bin/ge2adf with args (NULL-terminated); its stderr goes into err. */
static int ge2adf(const char *const *args, char *err, size_t len)
{
    const char *argv[16] = { tk_path(tk_build(), "bin/ge2adf") };
    const char *errpath = tk_path(tmp, "ge2adf.err");
    int n = 1;
    for (int i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    int saved = tk_capture_begin(errpath);
    int status = tk_run_command((char *const *)argv, ".");
    tk_capture_end(saved, errpath, err, len);
    return status;
}

/* The ADF file at path into out; its size. */
static size_t slurp_adf(const char *path)
{
    size_t n;
    uint8_t *buf = tk_read_file(path, &n);
    ck_assert_uint_le(n, sizeof out);
    memcpy(out, buf, n);
    free(buf);
    return n;
}

/* The GammaEvents file: event 7 (1332.5 keV in crystal 0, 661.7 keV in crystal k),
 * event 9 (a gamma that missed), event 10 (500 keV in crystal 0). */
static void write_gev(const char *path, const hit *h, int k)
{
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    double lab[4][3];
    for (int i = 0; i < 4; i++)
        lab_of(&h[i], lab[i]);
    fprintf(fp, "NARWHAL GammaEvents 1\nGENERATOR check_tracker\nSUMMARY 235 325 180 179 36\n$\n");
    fprintf(fp, "-1 1332.5 0 0 1 7\n%d 300.0 %.5f %.5f %.5f 5\n%d 1032.5 %.5f %.5f %.5f 6\n", arr.crystal[0].id,
            lab[0][0], lab[0][1], lab[0][2], arr.crystal[0].id, lab[1][0], lab[1][1], lab[1][2]);
    fprintf(fp, "-1 661.7 1 0 0 7\n%d 661.7 %.5f %.5f %.5f 12\n", arr.crystal[k].id, lab[2][0], lab[2][1], lab[2][2]);
    fprintf(fp, "-1 1000 0 1 0 9\n-1 500 0 1 0 10\n%d 500 %.5f %.5f %.5f 3\n", arr.crystal[0].id, lab[3][0],
            lab[3][1], lab[3][2]);
    fclose(fp);
}

static void assert_hit(const adf_psa_hit *x, const hit *h, float e, int segment)
{
    ck_assert_double_eq_tol(x->x, h->local[0], 1e-3);
    ck_assert_double_eq_tol(x->y, h->local[1], 1e-3);
    ck_assert_double_eq_tol(x->z, h->local[2], 1e-3);
    ck_assert_float_eq(x->e, e);
    ck_assert_int_eq(x->segment, segment);
}

START_TEST(ge2adf_reads_gammaevents_into_event_psa_frames)
{
    int k = crystal_at_right_angle();
    hit h[4] = { { { 12, 8, 20 }, 0, 300 }, { { -5, 9, 30 }, 0, 1032.5 }, { { 12, 8, 20 }, k, 661.7 },
                 { { 10, -10, 50 }, 0, 500 } };
    char gev[PATH_MAX + 16], adf[PATH_MAX + 16], err[2048];
    snprintf(gev, sizeof gev, "%s/ev.gev", tmp);
    snprintf(adf, sizeof adf, "%s/ev.adf", tmp);
    write_gev(gev, h, k);
    const char *plain[] = { gev, adf, NULL };
    ck_assert_msg(ge2adf(plain, err, sizeof err) == 0, "%s", err);
    size_t n = slurp_adf(adf);
    adf_iter it, sub;
    adf_frame f, m;
    adf_psa p;
    uint32_t events[3] = { 7, 9, 10 };
    int members[3] = { 2, 0, 1 };
    adf_iter_init(&it, out, n);
    for (int e = 0; e < 3; e++) {
        ck_assert_int_eq(adf_iter_next(&it, &f), 1);
        ck_assert_uint_eq(f.key.id, ADF_ID_EVENT_DATA_PSA);
        ck_assert_uint_eq(f.key.event, events[e]);
        ck_assert_uint_eq(f.key.timestamp, 2000u * (unsigned)e);
        ck_assert_int_eq(adf_iter_sub(&sub, &f), ADF_OK);
        int count = 0;
        while (adf_iter_next(&sub, &m) > 0) {
            ck_assert_int_eq(adf_psa_read(&m, &p), ADF_OK);
            if (e == 0 && count == 0) {
                ck_assert_uint_eq(p.crystal_id, arr.crystal[0].id);
                ck_assert_uint_eq(p.n_hits, 2);
                ck_assert_float_eq(p.e0, 1332.5f);
                assert_hit(&p.hit[0], &h[0], 300, 5);
                assert_hit(&p.hit[1], &h[1], 1032.5f, 6);
            } else if (e == 0) {
                ck_assert_uint_eq(p.crystal_id, arr.crystal[k].id);
                assert_hit(&p.hit[0], &h[2], 661.7f, 12);
            } else {
                assert_hit(&p.hit[0], &h[3], 500, 3);
            }
            count++;
        }
        ck_assert_int_eq(count, members[e]);
    }
    ck_assert_int_eq(adf_iter_next(&it, &f), 0);

    /* truth before each event, members unbuilt: truth, psa, psa, truth, truth, psa */
    const char *unbuilt[] = { "--truth", "--unbuilt", gev, adf, NULL };
    ck_assert_msg(ge2adf(unbuilt, err, sizeof err) == 0, "%s", err);
    n = slurp_adf(adf);
    static const uint32_t ids[6] = { ADF_ID_NW_TRUTH, ADF_ID_DATA_PSA, ADF_ID_DATA_PSA, ADF_ID_NW_TRUTH,
                                     ADF_ID_NW_TRUTH, ADF_ID_DATA_PSA };
    adf_iter_init(&it, out, n);
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(adf_iter_next(&it, &f), 1);
        ck_assert_uint_eq(f.key.id, ids[i]);
    }
    ck_assert_int_eq(adf_iter_next(&it, &f), 0);

    /* smeared: the same bytes for the same seed, positions moved */
    static uint8_t first[CAP];
    const char *smear[] = { "--smear", "2.7", "6.2", "--seed", "3", gev, adf, NULL };
    ck_assert_msg(ge2adf(smear, err, sizeof err) == 0, "%s", err);
    size_t n1 = slurp_adf(adf);
    memcpy(first, out, n1);
    ck_assert_msg(ge2adf(smear, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(slurp_adf(adf), n1);
    ck_assert_int_eq(memcmp(first, out, n1), 0);
    adf_iter_init(&it, out, n1);
    ck_assert_int_eq(adf_iter_next(&it, &f), 1);
    ck_assert_int_eq(adf_iter_sub(&sub, &f), ADF_OK);
    ck_assert_int_eq(adf_iter_next(&sub, &m), 1);
    ck_assert_int_eq(adf_psa_read(&m, &p), ADF_OK);
    ck_assert_double_gt(fabs(p.hit[0].x - h[0].local[0]) + fabs(p.hit[0].y - h[0].local[1]), 1e-3);

    /* a bad line is named */
    FILE *fp = fopen(gev, "a");
    fputs("-1 500 0 1 0 11\n0 abc 1 2 3 4\n", fp);
    fclose(fp);
    ck_assert_int_eq(ge2adf(plain, err, sizeof err), 1);
    ck_assert_msg(strstr(err, "ev.gev:14") != NULL, "%s", err);
}
END_TEST

/* ---- the pruned search, shared out ------------------------------------------------ */

/* The ordering of rank r (lexicographic) of 0 .. n-1, packed as the permutation tables are. */
static uint32_t ordering_of_rank(int n, int r)
{
    int left[TR_MAX_CLUSTER];
    uint32_t packed = 0;
    for (int i = 0; i < n; i++)
        left[i] = i;
    for (int k = 0; k < n; k++) {
        int f = tr_factorial(n - 1 - k), at = r / f;
        r %= f;
        packed |= (uint32_t)left[at] << (3 * k);
        for (int i = at; i < n - 1 - k; i++)
            left[i] = left[i + 1];
    }
    return packed;
}

/* Random clusters of 1 to 7 points (within 60 mm, 20-700 keV, random paths) and a table whose
 * attenuation and shares vary with energy: the best ordering found by scoring every ordering against
 * tr_search's with the orderings shared out over 1, 2, 3, 5 and 8 searchers, reduced as the GPU
 * reduces its lanes, each alone and sharing a bound (here the later searchers start from the earlier's:
 * the most a bound can cut); a prefix owned by no searcher, or an ordering cut wrongly, changes the answer. */
START_TEST(search_shared_out_equals_every_ordering)
{
    static tr_physics tab[TR_TABLE_N];
    static const int strides[] = { 1, 2, 3, 5, 8 };
    for (int i = 0; i < TR_TABLE_N; i++) {
        float e = 2.0f * (float)i + 10.0f;
        tab[i] = (tr_physics){ 0.002f + 3.0f / e, -0.05f - 20.0f / e, -0.5f - 3e-3f * e, TR_LOG_FLOOR };
    }
    tr_params p = { .pos_a = 2.7f, .pos_b = 6.2f, .sigma_e2 = 9.0f, .theta_scale2 = 0.36f };
    for (int trial = 0; trial < 350; trial++) {
        tr_clu c;
        int n = 1 + trial % TR_MAX_CLUSTER;
        tr_clu_begin(&c, n);
        for (int i = 1; i <= n; i++) {
            tr_point pt = { (float)(200 + 60 * uniform()), (float)(60 * uniform()), (float)(60 * uniform()),
                            (float)(20 + 680 * uniform()) };
            tr_clu_point(&p, &c, i, &pt);
        }
        tr_clu_energy(&c);
        for (int i = 0; i <= n; i++)
            for (int j = i + 1; j <= n; j++)
                c.path[i][j] = c.path[j][i] = (float)(90 * uniform());
        float best = -3.0e38f;
        int best_rank = 0;
        for (int r = 0; r < tr_factorial(n); r++) {
            float sum = tr_order_sum(&p, tab, &c, ordering_of_rank(n, r));
            if (tr_sum_better(sum, r, best, best_rank)) {
                best = sum;
                best_rank = r;
            }
        }
        for (size_t k = 0; k < 2 * sizeof strides / sizeof strides[0]; k++) {
            int stride = strides[k / 2], shared = k % 2;
            float got = -3.0e38f, bound = -3.0e38f;
            int rank = 0x7fffffff;
            for (int lane = 0; lane < stride; lane++) {
                float sum;
                int r;
                tr_search(&p, tab, &c, lane, stride, shared ? &bound : NULL, &sum, &r);
                if (tr_sum_better(sum, r, got, rank)) {
                    got = sum;
                    rank = r;
                }
            }
            ck_assert_msg(memcmp(&got, &best, sizeof got) == 0 && rank == best_rank,
                          "trial %d, %d points, %d searchers%s: %a at rank %d, every ordering gives %a at rank %d",
                          trial, n, stride, shared ? " sharing a bound" : "", got, rank, best, best_rank);
        }
    }
}
END_TEST

static Suite *tracker_suite(void)
{
    Suite *s = suite_create("tracker");
    TCase *tc = tcase_create("validation");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, three_point_compton_sequence_is_ordered);
    tcase_add_test(tc, single_photoabsorption_needs_its_probability);
    tcase_add_test(tc, single_points_must_be_isolated);
    tcase_add_test(tc, crystal_position_lookup_table_is_an_array);
    tcase_add_test(tc, pair_production_is_recognised);
    tcase_add_test(tc, two_gammas_at_right_angles_form_two_clusters);
    tcase_add_test(tc, size_bonus_takes_the_whole_of_close_nested_clusters);
    tcase_add_test(tc, retrack_clusters_the_free_points_under_their_event_indices);
    tcase_add_test(tc, empty_events_give_empty_tracked_frames);
    tcase_add_test(tc, shell_model_tracks_the_sequence_too);
    suite_add_tcase(s, tc);

    tc = tcase_create("search");
    tcase_add_test(tc, search_shared_out_equals_every_ordering);
    suite_add_tcase(s, tc);

    tc = tcase_create("contract");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, other_frames_pass_in_order_and_single_psa_frames_are_events);
    tcase_add_test(tc, keep_input_passes_each_tracked_frame_before_its_gammas);
    tcase_add_test(tc, output_too_small_is_retried_with_the_same_result);
    tcase_add_test(tc, doppler_correction_uses_the_first_interaction);
    tcase_add_test(tc, truth_input_is_smeared_reproducibly);
    tcase_add_test(tc, bad_frames_are_rejected_counted_and_named);
    tcase_add_test(tc, threads_decode_a_block_as_one_thread_does);
    tcase_add_test(tc, empty_and_all_bad_first_blocks_write_nothing);
    tcase_add_test(tc, configuration_errors);
    tcase_add_test(tc, gpu_forced_without_gpu_fails_at_initialise);
    tcase_add_test(tc, core_scaling_brings_each_crystal_to_its_core_energy);
    tcase_add_test(tc, core_scaling_off_leaves_the_hits);
    tcase_add_test(tc, hits_that_sum_to_the_core_are_left_as_they_are);
    tcase_add_test(tc, ge2adf_reads_gammaevents_into_event_psa_frames);
    suite_add_tcase(s, tc);

    tc = tcase_create("gpu");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, gpu_tracks_equal_cpu_tracks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tk_run_suite(tracker_suite()); }
