/* check_detector: geometry, arrays and their files, fields, signals, the basis file and its import format. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "basis.h"
#include "field.h"
#include "geometry.h"
#include "signals.h"
#include "testkit.h"

/* The field tests use a 2 mm grid (under a second); the tolerances below are
 * stated for that grid.  Solved once in main, before Check forks the tests. */
static det_crystal crystal;
static det_fields fields;
static char tmpdir[] = "/tmp/check_detector.XXXXXX";

static void tmp_path(char *out, size_t len, const char *name) { snprintf(out, len, "%s/%s", tmpdir, name); }

/* ---- geometry ---- */

START_TEST(shipped_geometry_is_the_default)
{
    det_crystal c, d;
    char msg[300];
    ck_assert_int_eq(det_crystal_load(&c, "detector/geometry/agata.geo", msg, sizeof msg), 0);
    det_crystal_default(&d);
    ck_assert(fabs(c.hex_back - d.hex_back) < 1e-9);
    ck_assert(c.length == d.length && c.radius == d.radius && c.hex_front == d.hex_front && c.bias == d.bias);
    for (int r = 0; r < DET_RINGS; r++) ck_assert(c.ring[r] == d.ring[r]);
    char path[256];
    tmp_path(path, sizeof path, "saved.geo");
    ck_assert_int_eq(det_crystal_save(&c, path, msg, sizeof msg), 0);
    ck_assert_int_eq(det_crystal_load(&d, path, msg, sizeof msg), 0);
    ck_assert_int_eq(memcmp(&c, &d, sizeof c), 0);
}
END_TEST

START_TEST(geometry_file_errors_name_file_and_line)
{
    det_crystal c;
    char msg[300], path[256];
    tmp_path(path, sizeof path, "bad.geo");
    tk_write_text(path, "length 90\nradius 40\ncolour blue\n");
    ck_assert_int_eq(det_crystal_load(&c, path, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "bad.geo:3: unknown key 'colour'"));
    tk_write_text(path, "length 9O\n");
    ck_assert_int_eq(det_crystal_load(&c, path, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "bad.geo:1: length '9O' is not a number"));
    tk_write_text(path, "length 90\n");
    ck_assert_int_eq(det_crystal_load(&c, path, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "key 'radius' is missing"));
    tk_write_text(path, "ring_thickness 8 14 16\n");
    ck_assert_int_eq(det_crystal_load(&c, path, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "bad.geo:1: ring_thickness expects 6 numbers, got 3"));
}
END_TEST

START_TEST(point_in_crystal)
{
    const double in[][3] = {{0, 0, 5}, {20, 0, 45}, {29.9, 0, 0.5}, {0, 39.5, 89}, {0, 0, 12.9}};
    const double out[][3] = {{0, 0, 50}, {0, 0, -0.1}, {30.5, 0, 0.5}, {40.1, 0, 89}, {10, 0, 90.1}, {28, 28, 45}};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) ck_assert_int_eq(det_crystal_contains(&crystal, in[i]), 1);
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) ck_assert_int_eq(det_crystal_contains(&crystal, out[i]), 0);
}
END_TEST

START_TEST(segment_lookup_near_boundaries)
{
    /* sector boundaries at 30° + 60° k, ring boundaries at 8, 22, 38, 55, 76 mm */
    const double edges[] = {8, 22, 38, 55, 76};
    for (int s = 0; s < DET_SECTORS; s++) {
        double a = (30 + 60 * s) * M_PI / 180, eps = 1e-6;
        double before[3] = {20 * cos(a - eps), 20 * sin(a - eps), 30}, after[3] = {20 * cos(a + eps), 20 * sin(a + eps), 30};
        ck_assert_int_eq(det_crystal_segment(&crystal, before), 6 * s + 2);
        ck_assert_int_eq(det_crystal_segment(&crystal, after), 6 * ((s + 1) % 6) + 2);
    }
    for (int r = 0; r < 5; r++) {
        double below[3] = {20, 1, edges[r] - 1e-6}, above[3] = {20, 1, edges[r] + 1e-6};
        ck_assert_int_eq(det_crystal_segment(&crystal, below), r);
        ck_assert_int_eq(det_crystal_segment(&crystal, above), r + 1);
    }
    double bore_wall[3] = {5, 0, 50}, bore_bottom[3] = {1, 1, 13}, side[3] = {35, 0, 60};
    ck_assert_int_eq(det_surface_contact(&crystal, bore_wall), DET_CORE);
    ck_assert_int_eq(det_surface_contact(&crystal, bore_bottom), DET_CORE);
    ck_assert_int_eq(det_surface_contact(&crystal, side), 4);
    double p[3] = {12, 7, 33}, q[3], back[3];
    det_rotate_sectors(p, 1, q);
    ck_assert_int_eq(det_crystal_segment(&crystal, q), det_crystal_segment(&crystal, p) + 6);
    det_rotate_sectors(q, -7, back);
    det_rotate_sectors(back, 6, back);
    for (int i = 0; i < 3; i++) ck_assert(fabs(back[i] - p[i]) < 1e-12);
}
END_TEST

/* ---- arrays ---- */

static det_array load_array(const char *path)
{
    det_array a;
    char msg[300];
    ck_assert_msg(det_array_load(&a, path, msg, sizeof msg) == 0, "%s", msg);
    return a;
}

START_TEST(shipped_arrays_do_not_overlap)
{
    const char *files[] = {"detector/arrays/agata180.txt", "detector/arrays/agata45.txt", "detector/arrays/triple.txt"};
    const int counts[] = {180, 45, 3};
    for (int f = 0; f < 3; f++) {
        det_array a = load_array(files[f]);
        ck_assert_int_eq(a.n, counts[f]);
        double gap;
        char msg[300];
        /* proved apart by at least 1 mm by a separating plane */
        ck_assert_msg(det_array_check_overlaps(&a, &crystal, 1.0, &gap, msg, sizeof msg) == 0, "%s: %s", files[f], msg);
        ck_assert(gap > 1.0);
        for (int i = 0; i < a.n; i++) {
            double o[3] = {0, 0, 0}, lab[3];
            det_to_lab(&a.crystal[i], o, lab);
            ck_assert(fabs(sqrt(lab[0] * lab[0] + lab[1] * lab[1] + lab[2] * lab[2]) - 235) < 1e-6);
        }
        det_array_free(&a);
    }
}
END_TEST

START_TEST(overlap_is_found)
{
    det_array a = load_array("detector/arrays/triple.txt");
    /* push crystal 1 half way towards crystal 0 */
    for (int i = 0; i < 3; i++) a.crystal[1].T[i] = 0.5 * (a.crystal[0].T[i] + a.crystal[1].T[i]);
    double gap;
    char msg[300];
    ck_assert_int_eq(det_array_check_overlaps(&a, &crystal, 0.0, &gap, msg, sizeof msg), 1);
    ck_assert_ptr_nonnull(strstr(msg, "overlap"));
    det_array_free(&a);
}
END_TEST

START_TEST(transforms_round_trip)
{
    det_array a = load_array("detector/arrays/agata180.txt");
    for (int i = 0; i < a.n; i++) {
        double p[3] = {3.0 * i / a.n - 1, 17, 45}, lab[3], back[3];
        det_to_lab(&a.crystal[i], p, lab);
        det_to_crystal(&a.crystal[i], lab, back);
        for (int k = 0; k < 3; k++) ck_assert(fabs(back[k] - p[k]) < 1e-9);
        /* the axis points away from the target */
        double axis[3] = {0, 0, 90}, end[3];
        det_to_lab(&a.crystal[i], axis, end);
        ck_assert(fabs(sqrt(end[0] * end[0] + end[1] * end[1] + end[2] * end[2]) - 325) < 1e-6);
    }
    det_array_free(&a);
}
END_TEST

START_TEST(lookup_table_round_trip)
{
    det_array a = load_array("detector/arrays/agata180.txt"), b;
    char msg[300], path[256], line[256];
    tmp_path(path, sizeof path, "CrystalPositionLookUpTable");
    ck_assert_int_eq(det_array_save_lut(&a, path, msg, sizeof msg), 0);
    FILE *f = fopen(path, "r");
    int id, type, k, lines = 0;
    double x, y, z, w;
    ck_assert(fgets(line, sizeof line, f) && sscanf(line, "%d %d %lf %lf %lf", &id, &type, &x, &y, &z) == 5);
    ck_assert_int_eq(id, a.crystal[0].id);
    for (int r = 0; r < 3; r++) {
        ck_assert(fgets(line, sizeof line, f) && sscanf(line, "%d %lf %lf %lf", &k, &x, &y, &w) == 4);
        ck_assert_int_eq(k, r);
    }
    while (fgets(line, sizeof line, f)) lines++;
    fclose(f);
    ck_assert_int_eq(lines + 4, 4 * 180);
    ck_assert_int_eq(det_array_load_lut(&b, path, msg, sizeof msg), 0);
    ck_assert_int_eq(b.n, a.n);
    for (int i = 0; i < a.n; i++) {
        ck_assert_int_eq(b.crystal[i].id, a.crystal[i].id);
        for (int r = 0; r < 3; r++) {
            ck_assert(fabs(b.crystal[i].T[r] - a.crystal[i].T[r]) < 1e-6);
            for (int c = 0; c < 3; c++) ck_assert(fabs(b.crystal[i].R[r][c] - a.crystal[i].R[r][c]) < 1e-8);
        }
    }
    det_array_free(&b);
    /* damaged tables are refused with the line */
    tk_write_text(path, "0 0 1 2 3\n0 1 0 0\n1 0 1 0\n");
    ck_assert_int_eq(det_array_load_lut(&b, path, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "rotation (row 3 of 3 missing)"));
    tk_write_text(path, "0 0 1 2 3\n0 1 0 0\n1 0 1 0\n2 0 0 -1\n");
    ck_assert_int_eq(det_array_load_lut(&b, path, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "reflection"));
    det_array_free(&a);
}
END_TEST

/* ---- fields ---- */

START_TEST(weighting_potentials_bounded_and_sum_to_one)
{
    const det_grid *g = &fields.grid;
    long inside = 0;
    for (long n = 0; n < (long)g->nx * g->ny * g->nz; n++) {
        double p[3] = {g->x0 + (n % g->nx) * g->h, g->y0 + (n / g->nx % g->ny) * g->h, g->z0 + n / ((long)g->nx * g->ny) * g->h};
        if (!det_crystal_contains(&crystal, p)) continue;
        inside++;
        for (int s = 1; s <= DET_SLOT_CORE; s++) {
            float v = fields.phi[n * DET_SLOTS + s];
            ck_assert_msg(v >= -1e-4f && v <= 1 + 1e-4f, "slot %d = %g at (%g, %g, %g)", s, v, p[0], p[1], p[2]);
        }
    }
    ck_assert(inside > 40000);
    srand(7);
    for (int t = 0; t < 3000; t++) {
        double p[3] = {-40 + 80.0 * rand() / RAND_MAX, -40 + 80.0 * rand() / RAND_MAX, 90.0 * rand() / RAND_MAX};
        if (!det_crystal_contains(&crystal, p)) continue;
        float w[DET_CHANNELS];
        det_fields_weighting(&fields, p, w);
        double sum = 0;
        for (int k = 0; k < DET_CHANNELS; k++) sum += w[k];
        ck_assert_msg(fabs(sum - 1) < 1e-4, "sum %g at (%g, %g, %g)", sum, p[0], p[1], p[2]);
    }
}
END_TEST

START_TEST(weighting_potential_is_one_on_its_contact)
{
    /* On the middle of each segment's side face, and on the bore wall.  The
     * value there is interpolated across the 2 mm surface cell, whose outer
     * corners are extrapolated: within 0.05 of the contact's value. */
    double mid[DET_RINGS] = {4, 15, 30, 46.5, 65.5, 83};
    for (int s = 0; s < DET_SECTORS; s++)
        for (int r = 0; r < DET_RINGS; r++) {
            double a = s * M_PI / 3, rad = det_outline_radius(&crystal, mid[r], a) - 1e-6;
            double p[3] = {rad * cos(a), rad * sin(a), mid[r]};
            float w[DET_CHANNELS];
            det_fields_weighting(&fields, p, w);
            int seg = 6 * s + r;
            ck_assert_msg(fabs(w[seg] - 1) < 0.05, "segment %d reads %g on its own contact", seg, w[seg]);
            for (int k = 0; k < DET_CHANNELS; k++)
                if (k != seg) ck_assert_msg(fabs(w[k]) < 0.05, "channel %d reads %g on segment %d", k, w[k], seg);
        }
    double bore[3] = {0, 5.000001, 50};
    float w[DET_CHANNELS];
    det_fields_weighting(&fields, bore, w);
    ck_assert(fabs(w[DET_CORE] - 1) < 0.05);
}
END_TEST

START_TEST(depletion_is_reported)
{
    ck_assert_int_eq(fields.report.undepleted_nodes, 0);
    ck_assert(fields.report.v_max <= crystal.bias && fields.report.v_min >= 0);
    for (int s = 0; s < DET_SLOTS; s++) ck_assert(fields.report.residual[s] < 1e-4);
    det_crystal heavy = crystal;
    heavy.impurity_front = heavy.impurity_back = 2.0; /* 2e10 / cm^3 needs about 8 kV */
    det_fields f;
    char msg[200];
    ck_assert_int_eq(det_fields_solve(&f, &heavy, 4, 1e-5, msg, sizeof msg), 0);
    ck_assert(f.report.undepleted_nodes > 0);
    ck_assert(f.report.v_max > heavy.bias);
    det_fields_free(&f);
}
END_TEST

/* ---- signals ---- */

static void signal_at(const double p[3], float *out, det_drift_info *info)
{
    det_signal_config cfg;
    det_signal_config_default(&cfg);
    ck_assert_int_eq(det_signal_compute(&fields, &cfg, p, out, info), 0);
}

START_TEST(deep_point_collects_on_its_segment)
{
    double mid[DET_RINGS] = {4, 15, 30, 46.5, 65.5, 83};
    float out[DET_CHANNELS * 100];
    for (int seg = 0; seg < DET_SEGMENTS; seg++) {
        double a = (seg / 6) * M_PI / 3 + 0.1, r = 25;
        double p[3] = {r * cos(a), r * sin(a), mid[seg % 6]};
        det_drift_info info;
        signal_at(p, out, &info);
        ck_assert_int_eq(info.hole_contact, seg);
        ck_assert_int_eq(info.electron_contact, DET_CORE);
        for (int k = 0; k < DET_CHANNELS; k++) {
            double want = k == seg ? 1 : k == DET_CORE ? -1 : 0, got = out[k * 100 + 99];
            ck_assert_msg(fabs(got - want) < 1e-3, "point in segment %d: channel %d ends at %g", seg, k, got);
        }
        for (int s = 0; s < 5; s++) ck_assert(out[DET_CORE * 100 + s] == 0); /* the baseline */
    }
}
END_TEST

/* Largest difference between the signals at p and at p turned by `turn` sectors, channels moved with it. */
static double turned_difference(const det_fields *f, const double p[3], int turn)
{
    float a[DET_CHANNELS * 100], b[DET_CHANNELS * 100];
    double q[3], worst = 0;
    det_signal_config cfg;
    det_signal_config_default(&cfg);
    det_rotate_sectors(p, turn, q);
    ck_assert_int_eq(det_signal_compute(f, &cfg, p, a, NULL), 0);
    ck_assert_int_eq(det_signal_compute(f, &cfg, q, b, NULL), 0);
    for (int k = 0; k < DET_CHANNELS; k++) {
        int moved = k == DET_CORE ? k : (k + 6 * turn) % DET_SEGMENTS;
        for (int s = 0; s < 100; s++) worst = fmax(worst, fabs(a[k * 100 + s] - b[moved * 100 + s]));
    }
    return worst;
}

START_TEST(turns_move_signals_by_sectors)
{
    /* Isotropic drift: a 60° turn is a symmetry of the crystal but not of the Cartesian
     * grid: on the 2 mm grid the signals agree within 0.05 of the full charge (0.031 seen).
     * Anisotropic drift: a half turn is a symmetry of the crystal, the grid and the lattice
     * ([001] along the axis): the signals move three sectors to the solver's tolerance; a
     * 60° turn is not one of the lattice, and the signals differ by more than the grid's 0.05. */
    const double pts[][3] = {{22, 4, 30}, {15, -6, 60}, {30, 3, 84}, {12, 2, 5}};
    det_fields isotropic = fields, lattice = fields; /* the shipped geometry drifts anisotropically */
    isotropic.crystal.anisotropic = 0;
    lattice.crystal.anisotropic = 1;
    double sixty = 0;
    for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) {
        for (int turn = 1; turn < DET_SECTORS; turn++) {
            double d = turned_difference(&isotropic, pts[i], turn);
            ck_assert_msg(d < 0.05, "isotropic, point %zu turned %d: %g", i, turn, d);
        }
        double d = turned_difference(&lattice, pts[i], 3);
        ck_assert_msg(d < 0.002, "anisotropic, point %zu: %g", i, d);
        sixty = fmax(sixty, turned_difference(&lattice, pts[i], 1));
    }
    ck_assert_msg(sixty > 0.06, "anisotropic, 60 degrees: %g", sixty);
}
END_TEST

START_TEST(drift_speeds)
{
    /* along <100> at 1000 V/cm, Bruyneel 2006's parameters (signals.c): holes 0.0939 mm/ns, electrons 0.1133 */
    ck_assert(fabs(det_drift_speed(1, 0, 100) - 0.09391) < 0.0001);
    ck_assert(fabs(det_drift_speed(0, 0, 100) - 0.11326) < 0.0001);
    ck_assert(det_drift_speed(1, 0, 1) < det_drift_speed(1, 0, 10));
    ck_assert(det_drift_speed(0, 0, 0) == 0);
    /* isotropic (Mihailescu 2000, <100>): about 0.1 mm/ns at 1000 V/cm, along the field */
    const double field[3] = {60, 80, 0};
    double v[3];
    det_crystal isotropic = crystal; /* the shipped geometry drifts anisotropically */
    isotropic.anisotropic = 0;
    det_drift_velocity(&isotropic, 0, field, v);
    ck_assert(fabs(hypot(v[0], v[1]) - 0.097) < 0.003 && v[2] == 0 && fabs(v[0] * 80 - v[1] * 60) < 1e-12 && v[0] < 0);
    det_drift_velocity(&isotropic, 1, field, v);
    ck_assert(fabs(hypot(v[0], v[1]) - 0.086) < 0.003 && v[0] > 0);
}
END_TEST

/* Drift time (ns) over 10 mm in a uniform field of 100 V/mm along direction d, and the velocity's angle to it. */
static double drift_time(const det_crystal *c, int hole, const double d[3], double *angle_deg)
{
    double n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), e[3], v[3];
    for (int k = 0; k < 3; k++) e[k] = 100 * d[k] / n;
    det_drift_velocity(c, hole, e, v);
    double speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    double along = (v[0] * e[0] + v[1] * e[1] + v[2] * e[2]) / (100 * speed);
    *angle_deg = acos(fmin(1, fabs(along))) * 180 / M_PI;
    return 10 / speed;
}

START_TEST(drift_times_along_the_lattice_axes)
{
    /* Bruyneel et al. 2006 at 1000 V/cm: holes 0.09391 mm/ns along <100>, 0.07294 along <111>;
     * electrons 0.11326 and 0.08787.  Over 10 mm: holes 106.5 and 137.1 ns, electrons 88.3 and
     * 113.8 ns; along those axes (and <110>) the drift follows the field, elsewhere it does not. */
    det_crystal c = crystal; /* lattice_phi110 45: [100] along x */
    c.anisotropic = 1;
    const double x100[3] = {1, 0, 0}, z100[3] = {0, 0, 1}, d111[3] = {1, 1, 1}, d1m11[3] = {-1, 1, -1},
                 d110[3] = {1, 1, 0}, between[3] = {2, 1, 0.5};
    double angle;
    ck_assert(fabs(drift_time(&c, 1, x100, &angle) - 106.48) < 0.1 && angle < 1e-6);
    ck_assert(fabs(drift_time(&c, 1, z100, &angle) - 106.48) < 0.1 && angle < 1e-6);
    ck_assert_msg(fabs(drift_time(&c, 1, d111, &angle) - 137.10) < 0.2 && angle < 0.01, "%g", angle);
    ck_assert(fabs(drift_time(&c, 1, d1m11, &angle) - 137.10) < 0.2 && angle < 0.01);
    ck_assert(fabs(drift_time(&c, 0, x100, &angle) - 88.29) < 0.1 && angle < 1e-6);
    ck_assert_msg(fabs(drift_time(&c, 0, d111, &angle) - 113.80) < 0.2 && angle < 0.01, "%g %g",
                  drift_time(&c, 0, d111, &angle), angle);
    drift_time(&c, 1, d110, &angle);
    ck_assert(angle < 0.01);
    drift_time(&c, 1, between, &angle);
    ck_assert_msg(angle > 1, "holes %g degrees off the field", angle);
    drift_time(&c, 0, between, &angle);
    ck_assert_msg(angle > 1, "electrons %g degrees off the field", angle);
    /* the lattice turned: with [110] at azimuth 0, [100] lies at -45 degrees */
    c.phi110 = 0;
    const double turned100[3] = {1, -1, 0};
    ck_assert(fabs(drift_time(&c, 1, turned100, &angle) - 106.48) < 0.1 && angle < 1e-4);
    ck_assert(fabs(drift_time(&c, 1, x100, &angle) - 106.48) > 5);
}
END_TEST

/* ---- basis files ---- */

static void small_basis(det_basis *b, uint32_t n)
{
    memset(b, 0, sizeof *b);
    b->crystal = crystal;
    b->n_points = n;
    b->n_channels = DET_CHANNELS;
    b->n_samples = 100;
    b->pretrigger = 5;
    b->sample_ns = 10;
    b->grid_mm = 2;
    b->field_grid_mm = 2;
    b->step_ns = 1;
    b->crystal.anisotropic = 1;
    b->flags = DET_BASIS_ANISOTROPIC;
    ck_assert_int_eq(det_basis_alloc(b), 0);
    for (uint32_t i = 0; i < n; i++) {
        double a = i * 0.37, p[3] = {20 * cos(a), 20 * sin(a), 2 + 85.0 * i / n};
        det_drift_info info;
        for (int k = 0; k < 3; k++) b->pos[3 * i + k] = (float)p[k];
        signal_at(p, det_basis_point(b, i), &info);
        b->segment[i] = info.hole_contact;
    }
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

START_TEST(basis_round_trip)
{
    det_basis a, b;
    char msg[600], path[256];
    small_basis(&a, 40);
    tmp_path(path, sizeof path, "small.basis");
    ck_assert_msg(det_basis_save(&a, path, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_int_eq(file_size(path), 256 + 40 * (16 + 4 * 37 * 100) + 4);
    ck_assert_msg(det_basis_load(&b, path, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_int_eq(b.n_points, 40);
    ck_assert_int_eq(b.pretrigger, 5);
    ck_assert(b.sample_ns == 10 && b.grid_mm == 2 && b.field_grid_mm == 2);
    ck_assert_int_eq(memcmp(&a.crystal, &b.crystal, sizeof a.crystal), 0);
    ck_assert_int_eq(memcmp(a.pos, b.pos, 40 * 3 * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(a.segment, b.segment, 40 * sizeof(int32_t)), 0);
    ck_assert_int_eq(memcmp(a.signal, b.signal, 40 * 37 * 100 * sizeof(float)), 0);
    det_basis_free(&a);
    det_basis_free(&b);
}
END_TEST

/* Copies src to dst with the first `keep` bytes (or all) and bit `bit` of byte `at` flipped (at < 0: none). */
static void damaged_copy(const char *src, const char *dst, long keep, long at, int bit)
{
    long n = file_size(src);
    unsigned char *buf = malloc((size_t)n);
    FILE *f = fopen(src, "rb");
    ck_assert_int_eq(fread(buf, 1, (size_t)n, f), n);
    fclose(f);
    if (at >= 0) buf[at] ^= (unsigned char)(1u << bit);
    f = fopen(dst, "wb");
    fwrite(buf, 1, (size_t)(keep < 0 ? n : keep), f);
    fclose(f);
    free(buf);
}

START_TEST(damaged_basis_is_rejected)
{
    det_basis a, b;
    char msg[600], path[256], bad[256];
    small_basis(&a, 8);
    tmp_path(path, sizeof path, "tiny.basis");
    tmp_path(bad, sizeof bad, "damaged.basis");
    ck_assert_int_eq(det_basis_save(&a, path, msg, sizeof msg), 0);
    long n = file_size(path);
    damaged_copy(path, bad, n - 1, -1, 0);
    ck_assert_int_eq(det_basis_load(&b, bad, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "damaged.basis: size"));
    damaged_copy(path, bad, 100, -1, 0);
    ck_assert_int_eq(det_basis_load(&b, bad, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "too short"));
    /* a flipped bit anywhere in a record or the trailer: the checksum */
    const long spots[] = {256 + 3, 256 + 16 + 4 * 1234 + 2, n / 2, n - 1};
    for (int i = 0; i < 4; i++) {
        damaged_copy(path, bad, -1, spots[i], i + 3);
        ck_assert_int_eq(det_basis_load(&b, bad, msg, sizeof msg), -1);
        ck_assert_msg(strstr(msg, "damaged.basis: checksum mismatch") != NULL, "%s", msg);
    }
    damaged_copy(path, bad, -1, 0, 1);
    ck_assert_int_eq(det_basis_load(&b, bad, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "bad magic"));
    damaged_copy(path, bad, -1, 16, 0); /* the point count */
    ck_assert_int_eq(det_basis_load(&b, bad, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "points of 37 channels"));
    damaged_copy(path, bad, -1, 8, 1); /* the version */
    ck_assert_int_eq(det_basis_load(&b, bad, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "format version 3"));
    det_basis_free(&a);
}
END_TEST

START_TEST(invalid_points_are_rejected)
{
    det_basis a, b;
    char msg[600], path[256];
    small_basis(&a, 4);
    tmp_path(path, sizeof path, "outside.basis");
    a.pos[3 * 2 + 2] = 95; /* beyond the back face */
    ck_assert_int_eq(det_basis_save(&a, path, msg, sizeof msg), 0);
    ck_assert_int_eq(det_basis_load(&b, path, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "point 2 at"));
    a.pos[3 * 2 + 2] = 40;
    a.segment[1] = 36;
    ck_assert_int_eq(det_basis_save(&a, path, msg, sizeof msg), 0);
    ck_assert_int_eq(det_basis_load(&b, path, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "point 1: segment 36 is outside 0..35"));
    det_basis_free(&a);
}
END_TEST

/* Writes b's first n points in the import format, with extra header lines. */
static void write_import(const char *path, const det_basis *b, uint32_t n, const char *extra)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "narwhal-basis-import 1\n# from another simulator\npoints %u\nchannels 37\nsamples 100\nsampling_ns 10\n"
               "pretrigger 5\n%send\n", n, extra);
    for (uint32_t i = 0; i < n; i++) {
        fwrite(b->pos + 3 * i, sizeof(float), 3, f);
        fwrite(b->segment + i, sizeof(int32_t), 1, f);
        fwrite(det_basis_point(b, i), sizeof(float), 3700, f);
    }
    fclose(f);
}

static const det_import_options lenient = {0, 0};

START_TEST(import_format)
{
    det_basis a, b;
    det_import_report r;
    char msg[600], path[256];
    small_basis(&a, 6);
    tmp_path(path, sizeof path, "foreign.bin");
    write_import(path, &a, 6, "");
    ck_assert_msg(det_basis_import(&b, path, &crystal, &lenient, &r, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_int_eq(b.n_points, 6);
    ck_assert_int_eq(b.flags, DET_BASIS_IMPORTED);
    ck_assert_int_eq(memcmp(a.signal, b.signal, 6 * 3700 * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(a.segment, b.segment, 6 * sizeof(int32_t)), 0);
    ck_assert_str_eq(b.source, "foreign.bin"); /* no source line: the file's name */
    ck_assert(b.grid_mm == 0 && r.outside == 0 && r.records == 6); /* scattered points: no grid */
    ck_assert_ptr_nonnull(strstr(r.grid_note, "off the"));
    det_basis_free(&b);
    char bad[256];
    tmp_path(bad, sizeof bad, "short.bin");
    damaged_copy(path, bad, file_size(path) - 4, -1, 0);
    ck_assert_int_eq(det_basis_import(&b, bad, &crystal, &lenient, &r, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "short.bin: the binary part has"));
    tk_write_text(bad, "narwhal-basis-import 1\npoints 6\nchannels 37\nend\n");
    ck_assert_int_eq(det_basis_import(&b, bad, &crystal, &lenient, &r, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "line 4: 'end' before all of"));
    tk_write_text(bad, "narwhal-basis-import 1\nsource\nend\n");
    ck_assert_int_eq(det_basis_import(&b, bad, &crystal, &lenient, &r, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "line 2: 'source' wants a text"));
    det_basis_free(&a);
}
END_TEST

/* Points on a 3 mm grid offset from ours: spacing detected, or given and checked. */
static void grid_basis(det_basis *b, uint32_t n)
{
    small_basis(b, n);
    for (uint32_t i = 0; i < n; i++) {
        float p[3] = {16.5f + 3.0f * (float)(i % 4), -6.5f + 3.0f * (float)(i / 4 % 3), 30.5f + 3.0f * (float)(i / 12)};
        memcpy(b->pos + 3 * i, p, sizeof p);
    }
}

START_TEST(import_grid_outside_and_header)
{
    det_basis a, b, c;
    det_import_report r;
    char msg[600], path[256], saved[256];
    grid_basis(&a, 24);
    a.pos[3 * 5 + 2] = 95.5f; /* beyond the back face */
    a.pos[3 * 9 + 0] = NAN;
    tmp_path(path, sizeof path, "grid.bin");
    write_import(path, &a, 24, "source ADL 3.0, crystal A001 # a comment\npreamp_ns 35\nbias_v 4500\n");
    ck_assert_msg(det_basis_import(&b, path, &crystal, &lenient, &r, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_uint_eq(r.records, 24);
    ck_assert_uint_eq(r.outside, 2);
    ck_assert_uint_eq(r.outside_record[0], 5);
    ck_assert_uint_eq(r.outside_record[1], 9);
    ck_assert(r.outside_pos[0][2] == 95.5f);
    ck_assert_uint_eq(b.n_points, 22);
    ck_assert_int_eq(memcmp(det_basis_point(&b, 5), det_basis_point(&a, 6), 3700 * sizeof(float)), 0);
    ck_assert(b.grid_mm == 3 && r.grid_detected);
    ck_assert_str_eq(b.source, "ADL 3.0, crystal A001");
    /* the header describes the imported signals, not the geometry file's electrical figures */
    tmp_path(saved, sizeof saved, "grid.basis");
    ck_assert_int_eq(det_basis_save(&b, saved, msg, sizeof msg), 0);
    ck_assert_msg(det_basis_load(&c, saved, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_str_eq(c.source, "ADL 3.0, crystal A001");
    ck_assert(c.crystal.preamp_rise == 35 && c.crystal.bias == 4500 && c.crystal.impurity_front == 0);
    ck_assert(c.crystal.length == crystal.length && c.grid_mm == 3 && c.field_grid_mm == 0 && c.step_ns == 0);
    ck_assert_uint_eq(c.n_points, 22);
    det_basis_free(&c);
    det_basis_free(&b);
    /* --strict: an outside point is an error naming it */
    det_import_options strict = {0, 1};
    ck_assert_int_eq(det_basis_import(&b, path, &crystal, &strict, &r, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "point 5 at (19.5, -3.5, 95.5) mm is not inside the crystal"));
    /* a grid given that the points are not on */
    det_import_options wrong = {2, 0};
    ck_assert_int_eq(det_basis_import(&b, path, &crystal, &wrong, &r, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "off the 2 mm grid"));
    det_import_options right = {1.5, 0};
    ck_assert_int_eq(det_basis_import(&b, path, &crystal, &right, &r, msg, sizeof msg), 0);
    ck_assert(b.grid_mm == 1.5 && !r.grid_detected);
    det_basis_free(&b);
    det_basis_free(&a);
}
END_TEST

/* A label is suspect only when no segment near its point carries it. */
START_TEST(labels_far_from_their_segment)
{
    det_basis a;
    det_label_report r;
    const double on_axis_front[3] = {10, 0, 4}, deep[3] = {20, 0, 50};
    ck_assert(det_segment_distance(&crystal, 0, on_axis_front) == 0);
    ck_assert(fabs(det_segment_distance(&crystal, 1, on_axis_front) - 4) < 1e-12); /* ring 1 starts at z = 8 */
    ck_assert(fabs(det_segment_distance(&crystal, 6 + 3, deep) - 20 * sin(M_PI / 6)) < 1e-9); /* sector B, same ring */
    ck_assert(fabs(det_segment_distance(&crystal, 18 + 3, deep) - 20) < 1e-9);             /* sector D: across the axis */
    grid_basis(&a, 24);
    for (uint32_t i = 0; i < 24; i++) {
        double q[3] = {a.pos[3 * i], a.pos[3 * i + 1], a.pos[3 * i + 2]};
        a.segment[i] = det_crystal_segment(&crystal, q);
    }
    a.segment[3] = (a.segment[3] + 1) % DET_SEGMENTS; /* (25.5, -6.5, 30.5): the next ring, 7.5 mm off */
    a.segment[20] = (a.segment[20] + 18) % DET_SEGMENTS; /* (16.5, -0.5, 33.5): the opposite sector, 16.5 mm off */
    ck_assert_int_eq(det_basis_check_labels(&a, 15, &r), 0);
    ck_assert_uint_eq(r.other, 2);
    ck_assert_uint_eq(r.far, 1);
    ck_assert_uint_eq(r.far_point[0], 20);
    ck_assert_int_eq(det_basis_check_labels(&a, 5, &r), 0);
    ck_assert_uint_eq(r.far, 2);
    det_basis_free(&a);
}
END_TEST

/* tests/import-foreign.sh: the README's import of a foreign basis, run as a user would. */
START_TEST(foreign_import_end_to_end)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char dir[256], file[600], text[4096];
    tmp_path(dir, sizeof dir, "foreign");
    char *argv[] = {"/bin/sh", "tests/import-foreign.sh", dir, NULL};
    setenv("BUILD", build, 1);
    ck_assert_int_eq(tk_run_command(argv, "."), 0);
    snprintf(file, sizeof file, "%s/import.txt", dir);
    ck_assert(tk_read_text(file, text, sizeof text));
    ck_assert_msg(strstr(text, "3 points outside the crystal of detector/geometry/agata.geo left out") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "grid 6 mm (detected from the points)") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "imported from 'synthetic foreign basis (mkforeign)': preamplifier 35 ns, bias 4000 V") != NULL,
                  "%s", text);
    ck_assert_msg(strstr(text, "; 2 farther than 15 mm from it") != NULL, "%s", text);
    /* the generator and the adaptive PSA ran on it: about 200 crystals, each with its hits */
    static char log[1 << 16];
    snprintf(file, sizeof file, "%s/run.log", dir);
    ck_assert(tk_read_text(file, log, sizeof log));
    const char *line = strstr(log, "[PSA] ");
    unsigned frames = 0, hits = 0;
    while (line && sscanf(line, "[PSA] %u data:crystal frames: %u hits", &frames, &hits) != 2)
        line = strstr(line + 1, "[PSA] ");
    ck_assert_msg(frames > 100 && hits >= frames, "%u frames, %u hits: %s", frames, hits, log);
    ck_assert_msg(strstr(log, "ended at the end of the data") != NULL, "%s", log);
}
END_TEST

START_TEST(statistics_of_known_signals)
{
    det_basis b;
    small_basis(&b, 3);
    /* point 0: a linear core ramp 0 -> -1 over samples 10..20: 10-90 % = 8 samples = 80 ns;
     * point 1: a transient of 0.4 on a segment that was not hit */
    float *s0 = det_basis_point(&b, 0);
    for (int k = 0; k < 100; k++) s0[DET_CORE * 100 + k] = k < 10 ? 0 : k > 20 ? -1 : -(k - 10) / 10.0f;
    float *s1 = det_basis_point(&b, 1);
    int other = (b.segment[1] + 1) % DET_SEGMENTS;
    for (int k = 0; k < 100; k++) s1[other * 100 + k] = k == 30 ? -0.4f : 0;
    ck_assert(fabs(det_basis_core_rise(&b, 0) - 80) < 1e-3);
    det_basis_stats st;
    ck_assert_int_eq(det_basis_stats_compute(&b, &st), 0);
    ck_assert_int_eq(st.points, 3);
    ck_assert(fabs(st.rise_min - 80) < 1e-3);
    /* The largest |signal| on a segment that did not collect the charge: at
     * least point 1's 0.4, and short of the full charge 1.  By Shockley-Ramo
     * a segment's induced charge is q (phi_w(x_h) - phi_w(x_e)); its weighting
     * potential is 1 only on the segment itself, so only the segment that
     * collects the charge (and the core) reach the full charge, within the
     * solver's 1e-3 (deep_point_collects_on_its_segment): a statistic that
     * counted either would give 1 to that precision (0.9999998 seen). */
    ck_assert_double_ge(st.transient_max, 0.4f);
    ck_assert_double_lt(st.transient_max, 1 - 1e-3);
    uint32_t total = 0;
    for (int k = 0; k < DET_SEGMENTS; k++) total += st.per_segment[k];
    ck_assert_int_eq(total, 3);
    det_basis_free(&b);
}
END_TEST

START_TEST(crc32_check_value)
{
    ck_assert_uint_eq(det_crc32(0, "123456789", 9), 0xCBF43926u);
    ck_assert_uint_eq(det_crc32(det_crc32(0, "12345", 5), "6789", 4), 0xCBF43926u);
}
END_TEST

static Suite *detector_suite(void)
{
    Suite *s = suite_create("detector");
    TCase *geo = tcase_create("geometry");
    tcase_add_test(geo, shipped_geometry_is_the_default);
    tcase_add_test(geo, geometry_file_errors_name_file_and_line);
    tcase_add_test(geo, point_in_crystal);
    tcase_add_test(geo, segment_lookup_near_boundaries);
    suite_add_tcase(s, geo);
    TCase *arr = tcase_create("array");
    tcase_add_test(arr, shipped_arrays_do_not_overlap);
    tcase_add_test(arr, overlap_is_found);
    tcase_add_test(arr, transforms_round_trip);
    tcase_add_test(arr, lookup_table_round_trip);
    tcase_set_timeout(arr, 60);
    suite_add_tcase(s, arr);
    TCase *fld = tcase_create("fields and signals");
    tcase_add_test(fld, weighting_potentials_bounded_and_sum_to_one);
    tcase_add_test(fld, weighting_potential_is_one_on_its_contact);
    tcase_add_test(fld, depletion_is_reported);
    tcase_add_test(fld, deep_point_collects_on_its_segment);
    tcase_add_test(fld, turns_move_signals_by_sectors);
    tcase_add_test(fld, drift_speeds);
    tcase_add_test(fld, drift_times_along_the_lattice_axes);
    tcase_set_timeout(fld, 60);
    suite_add_tcase(s, fld);
    TCase *bas = tcase_create("basis");
    tcase_add_test(bas, basis_round_trip);
    tcase_add_test(bas, damaged_basis_is_rejected);
    tcase_add_test(bas, invalid_points_are_rejected);
    tcase_add_test(bas, import_format);
    tcase_add_test(bas, import_grid_outside_and_header);
    tcase_add_test(bas, labels_far_from_their_segment);
    tcase_add_test(bas, foreign_import_end_to_end);
    tcase_set_timeout(bas, 60);
    tcase_add_test(bas, statistics_of_known_signals);
    tcase_add_test(bas, crc32_check_value);
    suite_add_tcase(s, bas);
    return s;
}

int main(void)
{
    char msg[300];
    if (!mkdtemp(tmpdir)) return 1;
    if (det_crystal_load(&crystal, "detector/geometry/agata.geo", msg, sizeof msg) ||
        det_fields_solve(&fields, &crystal, 2, 1e-5, msg, sizeof msg)) {
        fprintf(stderr, "check_detector: %s\n", msg);
        return 1;
    }
    SRunner *sr = srunner_create(detector_suite());
    /* libgomp's thread pool does not survive fork(): run the tests in this process */
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    det_fields_free(&fields);
    if (tk_remove_tree(tmpdir)) fprintf(stderr, "check_detector: could not remove %s\n", tmpdir);
    return failed ? 1 : 0;
}
