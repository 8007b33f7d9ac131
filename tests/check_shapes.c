/* check_shapes: AGATA's three asymmetric crystal shapes (A, B, C): their files, faces, volumes, point-in-crystal, segments and the triple-cluster arrays. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adf.h"
#include "array.h"
#include "basis.h"
#include "field.h"
#include "geometry.h"
#include "signals.h"
#include "testkit.h"
#include "tracker/tracker_model.h"
#include "tracker_geom.h"
#include "transport.h"

static const char *const SHAPE_FILE[3] = {
    "detector/geometry/agata_A.geo",
    "detector/geometry/agata_B.geo",
    "detector/geometry/agata_C.geo",
};
static det_crystal shape[3];
static det_fields fields_a; /* shape A on a 2 mm grid, solved once in main before Check forks the tests */
static char tmpdir[] = "/tmp/check_shapes.XXXXXX";

static double deg(double rad) { return rad * (180.0 / M_PI); }

/* Face k's tilt from the crystal axis (degrees) and its azimuth (degrees, of its outward normal). */
static void face_angles(const det_crystal *c, int k, double *tilt, double *azimuth)
{
    const double *s = c->side[k];
    *tilt = deg(asin(-s[2]));
    *azimuth = deg(atan2(s[1], s[0]));
}

/* ---- the files ---- */

START_TEST(corners_are_agatas)
{
    /* AGATA's asolid (detector/README.md cites it): a front and a back corner of each shape, digit for digit */
    static const double front0[3][2] = {{33.906177, 0}, {34.768773, 0}, {34.368758, 0}};
    static const double back3[3][2] = {{-47.398084, -4.559934}, {-48.660064, 3.028171}, {-47.639755, 1.903863}};
    for (int t = 0; t < 3; t++) {
        const det_crystal *c = &shape[t];
        ck_assert_int_eq(c->irregular, 1);
        ck_assert(c->length == 90 && c->radius == 40 && c->bore_radius == 5 && c->bore_depth == 13);
        ck_assert(c->corner[0][0][0] == front0[t][0] && c->corner[0][0][1] == front0[t][1]);
        ck_assert(c->corner[1][3][0] == back3[t][0] && c->corner[1][3][1] == back3[t][1]);
    }
}
END_TEST

START_TEST(faces_match_the_gdml_export)
{
    /* SToGS's GDML export of the same cluster (adrien-matta/nptool, ATC.gdml) cuts each shape with six boxes
       turned by these angles about x (the face's tilt from the axis), then about z (the face's outward normal
       lies 90 deg before that turn): an independent rendering of AGATA's numbers.  Faces 0 and 5 agree to 1e-4
       deg; SToGS's boxes of faces 1-4 are off by up to 0.053 deg in tilt (0.08 mm over the 90 mm), its own
       rounding: the asolid corners, which these files carry, are the source. */
    static const double tilt[3][6] = {
        {8.04603165558258, 8.01946026203027, 7.54230864648229, 7.99048604330323, 8.09125031991154, 8.08360229747002},
        {8.08360253624911, 8.44346690841947, 8.44036275897808, 7.53153834787729, 7.80350699881413, 8.31911024875542},
        {8.31911078720342, 7.97216016078935, 7.54902557465737, 7.71785462917642, 8.56842878950392, 8.0460316852568},
    };
    static const double turn[3][6] = {
        {121.336619578283, -175.032702323626, -113.21438429166, -61.9562931041735, -3.72391711865863,
         58.5643217844293},
        {123.932939528565, -178.204455592133, -116.197632940486, -62.196626630323, 1.8401129465674, 64.5273005253819},
        {116.946412681603, 177.801523119062, -121.588679545019, -63.2067467696093, 0.658323659648534,
         57.0974231474202},
    };
    for (int t = 0; t < 3; t++)
        for (int k = 0; k < DET_SECTORS; k++) {
            double our_tilt, our_az;
            face_angles(&shape[t], k, &our_tilt, &our_az);
            double daz = fabs(remainder(our_az - (turn[t][k] - 90), 360));
            ck_assert_msg(fabs(our_tilt - tilt[t][k]) < 0.06, "shape %d face %d: tilt %.4f, GDML %.4f", t, k,
                          our_tilt, tilt[t][k]);
            ck_assert_msg(daz < 0.05, "shape %d face %d: normal at %.3f deg, GDML %.3f", t, k, our_az, turn[t][k] - 90);
        }
}
END_TEST

START_TEST(corner_files_round_trip_and_errors)
{
    char msg[300], path[300];
    det_crystal back;
    snprintf(path, sizeof path, "%s/saved.geo", tmpdir);
    ck_assert_int_eq(det_crystal_save(&shape[1], path, msg, sizeof msg), 0);
    ck_assert_int_eq(det_crystal_load(&back, path, msg, sizeof msg), 0);
    ck_assert(det_crystal_same_shape(&back, &shape[1], 0));
    ck_assert_int_eq(memcmp(back.side, shape[1].side, sizeof back.side), 0);
    ck_assert(!det_crystal_same_shape(&back, &shape[2], 1e-3));

    char text[4096];
    ck_assert(tk_read_text(path, text, sizeof text));
    char *line = strstr(text, "hex_corners_back");
    ck_assert_ptr_nonnull(line);
    FILE *f = fopen(path, "w");
    fprintf(f, "%.*shex_apothem_front 30\n%s", (int)(line - text), text, line);
    fclose(f);
    ck_assert_int_eq(det_crystal_load(&back, path, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "the hexagon is given twice"));

    det_crystal bent = shape[0];
    double front[DET_SECTORS][2], rear[DET_SECTORS][2];
    memcpy(front, bent.corner[0], sizeof front);
    memcpy(rear, bent.corner[1], sizeof rear);
    rear[2][0] -= 0.1; /* face 1's fourth corner leaves its plane */
    det_crystal_set_corners(&bent, front, rear);
    ck_assert_int_eq(det_crystal_validate_shape(&bent, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "side face 1 is not flat"));
    memcpy(rear, shape[0].corner[1], sizeof rear);
    double swap[2];
    memcpy(swap, front[1], sizeof swap); /* corners out of order: no longer convex counter-clockwise */
    memcpy(front[1], front[2], sizeof swap);
    memcpy(front[2], swap, sizeof swap);
    det_crystal_set_corners(&bent, front, rear);
    ck_assert_int_eq(det_crystal_validate_shape(&bent, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "front corners are not a convex hexagon"));
}
END_TEST

/* ---- volumes ---- */

/* Germanium volume (cm^3) by the midpoints of an h mm grid. */
static double volume(const det_crystal *c, double h)
{
    long n = 0;
    for (double z = h / 2; z < c->length; z += h)
        for (double y = -c->radius + h / 2; y < c->radius; y += h)
            for (double x = -c->radius + h / 2; x < c->radius; x += h) n += det_crystal_contains(c, (double[3]){x, y, z});
    return n * h * h * h / 1000;
}

START_TEST(volumes)
{
    /* Reference: the same midpoint rule on a 0.1 mm grid (378.585, 384.800, 380.913 cm^3; the regular hexagon
       380.690): about 2.0 kg of germanium each at 5.323 g/cm^3.  The 1 mm grid agrees to 0.3 %. */
    static const double reference[3] = {378.585, 384.800, 380.913};
    for (int t = 0; t < 3; t++) {
        double v = volume(&shape[t], 1.0);
        ck_assert_msg(fabs(v / reference[t] - 1) < 3e-3, "shape %d: %.3f cm3, reference %.3f", t, v, reference[t]);
    }
    ck_assert(fabs(volume(&shape[0], 1.0) - volume(&shape[1], 1.0)) > 4); /* the shapes differ, A < B */
}
END_TEST

/* ---- point in crystal and segments ---- */

START_TEST(points_either_side_of_every_face)
{
    for (int t = 0; t < 3; t++) {
        const det_crystal *c = &shape[t];
        for (int k = 0; k < DET_SECTORS; k++)
            for (double z = 5; z < 90; z += 40) {
                /* the face's middle at depth z, then 0.01 mm either side along its normal */
                const double *a = c->corner[0][k], *b = c->corner[0][(k + 1) % DET_SECTORS];
                const double *A = c->corner[1][k], *B = c->corner[1][(k + 1) % DET_SECTORS];
                double u = z / c->length, m[3] = {0.5 * ((1 - u) * (a[0] + b[0]) + u * (A[0] + B[0])),
                                                  0.5 * ((1 - u) * (a[1] + b[1]) + u * (A[1] + B[1])), z};
                double in[3], out[3];
                for (int i = 0; i < 3; i++) {
                    in[i] = m[i] - 0.01 * c->side[k][i];
                    out[i] = m[i] + 0.01 * c->side[k][i];
                }
                if (hypot(m[0], m[1]) > c->radius - 0.02) continue; /* the cylinder cuts this face here */
                ck_assert_msg(det_crystal_contains(c, in), "shape %d face %d z %g: inside point refused", t, k, z);
                ck_assert_msg(!det_crystal_contains(c, out), "shape %d face %d z %g: outside point taken", t, k, z);
                ck_assert_int_eq(det_crystal_sector(c, in), k); /* a face belongs to its sector */
            }
        ck_assert(!det_crystal_contains(c, (double[3]){0, 0, 50}));   /* the bore */
        ck_assert(det_crystal_contains(c, (double[3]){0, 0, 12.9}));  /* in front of it */
        ck_assert(!det_crystal_contains(c, (double[3]){0, 0, 90.01})); /* behind the back face */
        ck_assert(!det_crystal_contains(c, (double[3]){0, 35, 1}));   /* outside the hexagon, inside the cylinder */
    }
}
END_TEST

START_TEST(segments_at_known_points)
{
    for (int t = 0; t < 3; t++) {
        const det_crystal *c = &shape[t];
        for (int k = 0; k < DET_SECTORS; k++) {
            /* 20 mm out along corner edge k at depth 50: a hair counter-clockwise is sector k, clockwise k - 1 */
            double u = 50 / c->length, x = (1 - u) * c->corner[0][k][0] + u * c->corner[1][k][0],
                   y = (1 - u) * c->corner[0][k][1] + u * c->corner[1][k][1], r = hypot(x, y);
            double cw[3] = {20 * x / r + 1e-6 * y / r, 20 * y / r - 1e-6 * x / r, 50};
            double ccw[3] = {20 * x / r - 1e-6 * y / r, 20 * y / r + 1e-6 * x / r, 50};
            ck_assert_int_eq(det_crystal_segment(c, ccw), 6 * k + 3);
            ck_assert_int_eq(det_crystal_segment(c, cw), 6 * ((k + 5) % 6) + 3);
            ck_assert(det_segment_distance(c, 6 * k + 3, ccw) == 0);
            ck_assert(fabs(det_segment_distance(c, 6 * k + 3, cw) - 1e-6) < 1e-9);
        }
        double front[3] = {10, 1, 7.9}, ring1[3] = {10, 1, 8.1}, back[3] = {10, 1, 89.9};
        ck_assert_int_eq(det_crystal_segment(c, front), 0);
        ck_assert_int_eq(det_crystal_segment(c, ring1), 1);
        ck_assert_int_eq(det_crystal_segment(c, back), 5);
        ck_assert_int_eq(det_crystal_sector(c, (double[3]){0, 0, 5}), 0);
    }
}
END_TEST

START_TEST(regular_hexagon_as_corners_is_the_same_crystal)
{
    det_crystal reg, cor;
    det_crystal_default(&reg);
    double corner[2][DET_SECTORS][2];
    det_regular_corners(&reg, corner);
    cor = reg;
    det_crystal_set_corners(&cor, corner[0], corner[1]);
    char msg[200];
    ck_assert_int_eq(det_crystal_validate(&cor, msg, sizeof msg), 0);
    unsigned seed = 7;
    int differ = 0;
    for (int i = 0; i < 20000; i++) {
        double p[3] = {(rand_r(&seed) / (double)RAND_MAX - 0.5) * 84, (rand_r(&seed) / (double)RAND_MAX - 0.5) * 84,
                       rand_r(&seed) / (double)RAND_MAX * 92 - 1};
        if (det_crystal_contains(&reg, p) != det_crystal_contains(&cor, p)) differ++;
        else if (det_crystal_contains(&reg, p) && det_crystal_segment(&reg, p) != det_crystal_segment(&cor, p)) differ++;
        double az = i * 0.01;
        ck_assert(fabs(det_outline_radius(&reg, p[2], az) - det_outline_radius(&cor, p[2], az)) < 1e-9);
    }
    ck_assert_int_eq(differ, 0);
    ck_assert(fabs(det_hex_apothem(&cor, 45) - det_hex_apothem(&reg, 45)) < 1e-9);
}
END_TEST

/* ---- AGATA's array of triple clusters ---- */

static det_array load_atc(const char *name)
{
    char path[200], msg[400];
    det_array a = {0};
    snprintf(path, sizeof path, "detector/arrays/%s", name);
    ck_assert_msg(det_array_load(&a, path, msg, sizeof msg) == 0, "%s", msg);
    return a;
}

START_TEST(atc_arrays_are_agatas_clusters)
{
    static const char *const files[] = {"agata180-atc.txt", "agata45-atc.txt", "triple-atc.txt"};
    static const int count[] = {180, 45, 3};
    for (int f = 0; f < 3; f++) {
        det_array a = load_atc(files[f]);
        ck_assert_int_eq(a.n, count[f]);
        ck_assert_int_eq(a.n_shapes, 3);
        for (int t = 0; t < 3; t++) ck_assert(det_crystal_same_shape(&a.shape[t], &shape[t], 0));
        for (int i = 0; i < a.n; i++) {
            const det_placement *p = &a.crystal[i];
            ck_assert_int_eq(p->type, p->id % 3); /* AGATA's ids: 3 * cluster + A, B, C */
            double front = sqrt(p->T[0] * p->T[0] + p->T[1] * p->T[1] + p->T[2] * p->T[2]);
            ck_assert_msg(fabs(front - 235.02) < 0.01, "crystal %d: front face %.3f mm from the target", p->id, front);
            /* the axis points away from the target, within 1 degree of the line through the front face */
            double cosang = (p->R[0][2] * p->T[0] + p->R[1][2] * p->T[1] + p->R[2][2] * p->T[2]) / front;
            ck_assert(cosang > cos(M_PI / 180));
            if (f == 1) ck_assert(p->T[2] < 0 && p->id < 45); /* the backward 1pi: AGATA's clusters 0..14 */
        }
        det_array_free(&a);
    }
}
END_TEST

START_TEST(atc_arrays_do_not_overlap)
{
    det_array a = load_atc("agata180-atc.txt");
    char msg[400];
    double gap;
    ck_assert_msg(det_array_check_overlaps(&a, NULL, 2.0, &gap, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_msg(gap > 2.5 && gap < 2.7, "smallest proven gap %.3f mm", gap); /* two capsules' walls apart */
    /* the same placements with one shape for all: the regular hexagon does not fit AGATA's clusters */
    det_crystal regular;
    det_crystal_default(&regular);
    int n_shapes = a.n_shapes;
    a.n_shapes = 0;
    ck_assert_int_eq(det_array_check_overlaps(&a, &regular, 0.0, &gap, msg, sizeof msg), 1);
    a.n_shapes = n_shapes;
    det_array_free(&a);
}
END_TEST

/* Face k of crystal i in the lab: unit normal n and offset d (n . x <= d inside), and its four corners' centre. */
static void lab_face(const det_array *a, int i, int k, double n[3], double *d, double mid[3])
{
    const det_placement *p = &a->crystal[i];
    const det_crystal *c = &a->shape[p->type];
    for (int r = 0; r < 3; r++) n[r] = p->R[r][0] * c->side[k][0] + p->R[r][1] * c->side[k][1] + p->R[r][2] * c->side[k][2];
    *d = c->side[k][3] + n[0] * p->T[0] + n[1] * p->T[1] + n[2] * p->T[2];
    double local[3] = {0, 0, 0};
    for (int e = 0; e < 2; e++)
        for (int m = 0; m < 2; m++) {
            local[0] += 0.25 * c->corner[e][(k + m) % DET_SECTORS][0];
            local[1] += 0.25 * c->corner[e][(k + m) % DET_SECTORS][1];
        }
    local[2] = 0.5 * c->length;
    det_to_lab(p, local, mid);
}

START_TEST(cluster_neighbours_face_each_other)
{
    /* In every cluster the three crystals touch pairwise along a flat face each (A's face 5 and B's face 0, A's 0
       and C's 5, B's 5 and C's 0): the two faces are parallel and 2.6 mm apart, twice the asolid's
       capS + capT + tol = 0.4 + 0.8 + 0.1 mm (crystal to capsule, capsule wall, tolerance). */
    det_array a = load_atc("agata180-atc.txt");
    for (int cl = 0; cl < 60; cl++)
        for (int u = 0; u < 3; u++)
            for (int v = u + 1; v < 3; v++) {
                int i = 3 * cl + u, j = 3 * cl + v, best_k = -1, best_m = -1;
                double best = -2, ni[3], nj[3], di, dj, mi[3], mj[3];
                for (int k = 0; k < DET_SECTORS; k++)
                    for (int m = 0; m < DET_SECTORS; m++) {
                        lab_face(&a, i, k, ni, &di, mi);
                        lab_face(&a, j, m, nj, &dj, mj);
                        double anti = -(ni[0] * nj[0] + ni[1] * nj[1] + ni[2] * nj[2]);
                        if (anti > best) best = anti, best_k = k, best_m = m;
                    }
                lab_face(&a, i, best_k, ni, &di, mi);
                lab_face(&a, j, best_m, nj, &dj, mj);
                double angle = deg(acos(fmin(best, 1)));
                double gap = ni[0] * mj[0] + ni[1] * mj[1] + ni[2] * mj[2] - di; /* j's face centre beyond i's face */
                ck_assert_msg(angle < 0.01, "cluster %d: crystals %d, %d: faces %d, %d at %.3f deg", cl, i, j, best_k,
                              best_m, angle);
                ck_assert_msg(fabs(gap - 2.6) < 0.01, "cluster %d: crystals %d, %d: faces %.3f mm apart", cl, i, j, gap);
            }
    det_array_free(&a);
}
END_TEST

START_TEST(shapes_line_errors)
{
    char path[300], msg[400];
    det_array a = {0};
    snprintf(path, sizeof path, "%s/bad.txt", tmpdir);
    tk_write_text(path, "narwhal-array 1\nshapes nowhere.geo\n0 0 0 0 235 1 0 0 0 1 0 0 0 1\n");
    ck_assert_int_eq(det_array_load(&a, path, msg, sizeof msg), -1);
    ck_assert_msg(strstr(msg, "bad.txt:2: shapes:") && strstr(msg, "nowhere.geo: cannot open"), "%s", msg);
    char line[600];
    snprintf(line, sizeof line, "narwhal-array 1\nshapes %s/detector/geometry/agata_A.geo\n"
                                "0 0 0 0 235 1 0 0 0 1 0 0 0 1\n7 1 0 0 435 1 0 0 0 1 0 0 0 1\n", getcwd((char[256]){0}, 256));
    tk_write_text(path, line);
    ck_assert_int_eq(det_array_load(&a, path, msg, sizeof msg), -1);
    ck_assert_msg(strstr(msg, "crystal 7 is of type 1, but the shapes line names 1 shapes"), "%s", msg);
}
END_TEST

/* ---- fields, signals and the basis of an irregular crystal ---- */

START_TEST(weighting_potentials_of_every_sector_sum_to_one)
{
    /* no mirror: sectors E and F come from their own solve, yet the 37 potentials still add up to 1 */
    ck_assert_ptr_nonnull(fields_a.phi_ef);
    unsigned seed = 11;
    int tried = 0;
    while (tried < 3000) {
        double p[3] = {(rand_r(&seed) / (double)RAND_MAX - 0.5) * 80, (rand_r(&seed) / (double)RAND_MAX - 0.5) * 80,
                       rand_r(&seed) / (double)RAND_MAX * 90};
        if (!det_crystal_contains(&shape[0], p)) continue;
        tried++;
        float w[DET_CHANNELS];
        det_fields_weighting(&fields_a, p, w);
        double sum = 0;
        for (int k = 0; k < DET_CHANNELS; k++) sum += w[k];
        ck_assert_msg(fabs(sum - 1) < 1e-4, "sum %g at (%g, %g, %g)", sum, p[0], p[1], p[2]);
    }
    for (int s = 0; s < DET_SLOTS; s++) ck_assert(fields_a.report.residual[s] < 1e-4);
}
END_TEST

START_TEST(weighting_potential_is_one_on_every_contact)
{
    /* the middle of each segment's face (2 mm grid: within 0.05, as check_detector's regular crystal) */
    const det_crystal *c = &shape[0];
    double mid[DET_RINGS] = {4, 15, 30, 46.5, 65.5, 83};
    for (int k = 0; k < DET_SECTORS; k++)
        for (int r = 0; r < DET_RINGS; r++) {
            double u = mid[r] / c->length, p[3] = {0, 0, mid[r]};
            for (int e = 0; e < 2; e++)
                for (int i = 0; i < 2; i++) p[i] += 0.5 * ((1 - u) * c->corner[0][(k + e) % 6][i] + u * c->corner[1][(k + e) % 6][i]);
            double az = atan2(p[1], p[0]), rad = det_outline_radius(c, mid[r], az) - 1e-6;
            p[0] = rad * cos(az);
            p[1] = rad * sin(az);
            float w[DET_CHANNELS];
            det_fields_weighting(&fields_a, p, w);
            int seg = 6 * k + r;
            ck_assert_int_eq(det_crystal_segment(c, p), seg);
            ck_assert_msg(fabs(w[seg] - 1) < 0.05, "segment %d reads %g on its own contact", seg, w[seg]);
        }
}
END_TEST

START_TEST(deep_points_collect_on_their_segments)
{
    const det_crystal *c = &shape[0];
    det_signal_config cfg;
    det_signal_config_default(&cfg);
    float out[DET_CHANNELS * 100];
    double mid[DET_RINGS] = {4, 15, 30, 46.5, 65.5, 83};
    for (int seg = 0; seg < DET_SEGMENTS; seg++) {
        /* 25 mm out along the bisector of the sector's corners */
        int k = seg / 6;
        double u = mid[seg % 6] / c->length, d[2];
        for (int i = 0; i < 2; i++) {
            double a = (1 - u) * c->corner[0][k][i] + u * c->corner[1][k][i];
            double b = (1 - u) * c->corner[0][(k + 1) % 6][i] + u * c->corner[1][(k + 1) % 6][i];
            d[i] = a / hypot((1 - u) * c->corner[0][k][0] + u * c->corner[1][k][0],
                             (1 - u) * c->corner[0][k][1] + u * c->corner[1][k][1]) +
                   b / hypot((1 - u) * c->corner[0][(k + 1) % 6][0] + u * c->corner[1][(k + 1) % 6][0],
                             (1 - u) * c->corner[0][(k + 1) % 6][1] + u * c->corner[1][(k + 1) % 6][1]);
        }
        double n = hypot(d[0], d[1]), p[3] = {25 * d[0] / n, 25 * d[1] / n, mid[seg % 6]};
        ck_assert_int_eq(det_crystal_segment(c, p), seg);
        det_drift_info info;
        ck_assert_int_eq(det_signal_compute(&fields_a, &cfg, p, out, &info), 0);
        ck_assert_int_eq(info.hole_contact, seg);
        ck_assert_int_eq(info.electron_contact, DET_CORE);
        ck_assert_msg(fabs(out[seg * 100 + 99] - 1) < 1e-3, "segment %d ends at %g", seg, out[seg * 100 + 99]);
    }
}
END_TEST

START_TEST(basis_carries_the_corners)
{
    det_basis a = {.crystal = shape[2], .n_points = 2, .n_channels = DET_CHANNELS, .n_samples = 10, .pretrigger = 2,
                   .sample_ns = 10, .grid_mm = 2, .field_grid_mm = 2, .step_ns = 1};
    ck_assert_int_eq(det_basis_alloc(&a), 0);
    for (uint32_t i = 0; i < a.n_points; i++) {
        a.pos[3 * i] = 10.0f + i, a.pos[3 * i + 1] = 1, a.pos[3 * i + 2] = 30;
        a.segment[i] = 2;
        for (int k = 0; k < DET_CHANNELS * 10; k++) det_basis_point(&a, i)[k] = 0.001f * k;
    }
    char path[300], msg[400];
    snprintf(path, sizeof path, "%s/c.basis", tmpdir);
    ck_assert_msg(det_basis_save(&a, path, msg, sizeof msg) == 0, "%s", msg);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    ck_assert_int_eq(ftell(f), 448 + 2 * (16 + 4 * 37 * 10) + 4); /* the corners follow the 256-byte header */
    fclose(f);
    det_basis b;
    ck_assert_msg(det_basis_load(&b, path, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_int_eq(b.crystal.irregular, 1);
    ck_assert(det_crystal_same_shape(&b.crystal, &shape[2], 0));
    ck_assert_int_eq(memcmp(b.crystal.side, shape[2].side, sizeof b.crystal.side), 0);
    ck_assert_int_eq(memcmp(a.signal, b.signal, 2 * 37 * 10 * sizeof(float)), 0);
    det_basis_free(&b);
    /* a corner moved: the checksum covers the corner block */
    f = fopen(path, "r+b");
    fseek(f, 256 + 8 * 5, SEEK_SET);
    fputc(0x42, f);
    fclose(f);
    ck_assert_int_eq(det_basis_load(&b, path, msg, sizeof msg), -1);
    ck_assert_msg(strstr(msg, "checksum mismatch") || strstr(msg, "geometry in the header"), "%s", msg);
    det_basis_free(&a);
}
END_TEST

/* ---- the generator's transport through the real shapes ---- */

/* AGATA's 180 crystals (each of its shape), the regular crystal (for comparison) and their transport world. */
static void atc_world(det_array *a, det_crystal *regular, sim_world *w)
{
    char msg[300];
    *a = load_atc("agata180-atc.txt");
    det_crystal_default(regular);
    ck_assert_msg(sim_world_init(w, a, regular, msg, sizeof msg) == 0, "%s", msg);
}

START_TEST(deposits_lie_in_their_crystals_shape)
{
    det_array a;
    det_crystal regular;
    sim_world w;
    atc_world(&a, &regular, &w);
    ck_assert_int_eq(w.n_shapes, 3);
    static sim_deposits dep;
    sim_rng r;
    sim_rng_seed(&r, 5, 0, 1);
    long per_type[3] = {0}, outside_regular = 0, total = 0;
    for (int g = 0; g < 4000; g++) {
        double o[3] = {0, 0, 0}, d[3];
        sim_isotropic(&r, d);
        dep.n = 0;
        ck_assert_int_ge(sim_transport(&w, &r, 1332.492, o, d, 0, &dep), 0);
        for (int k = 0; k < dep.n; k++) {
            const sim_deposit *x = &dep.d[k];
            const det_crystal *c = sim_shape(&w, x->crystal);
            ck_assert_int_eq(c - w.shape, a.crystal[x->crystal].type);
            /* the deposit lies in its crystal's own shape (to the chord's rounding), labelled by that shape */
            double in[3] = {x->pos[0] * (1 - 1e-9), x->pos[1] * (1 - 1e-9), x->pos[2]};
            ck_assert_msg(det_crystal_contains(c, in) || det_crystal_contains(c, x->pos),
                          "deposit at (%g, %g, %g) of crystal %d (type %d) is outside its shape", x->pos[0], x->pos[1],
                          x->pos[2], a.crystal[x->crystal].id, a.crystal[x->crystal].type);
            ck_assert_int_eq(x->segment, det_crystal_segment(c, x->pos));
            per_type[a.crystal[x->crystal].type]++;
            outside_regular += !det_crystal_contains(&regular, x->pos);
            total++;
        }
    }
    for (int t = 0; t < 3; t++) ck_assert_msg(per_type[t] > total / 5, "type %d: %ld of %ld deposits", t, per_type[t], total);
    ck_assert(outside_regular > 0); /* where the real shapes reach beyond the regular hexagon */
    sim_world_free(&w);
    det_array_free(&a);
}
END_TEST

START_TEST(chords_match_the_shape)
{
    /* rays from the target through each crystal of a cluster: the chord's ends are where contains() changes */
    det_array a = load_atc("triple-atc.txt");
    sim_world w;
    char msg[300];
    ck_assert_msg(sim_world_init(&w, &a, NULL, msg, sizeof msg) == 0, "%s", msg);
    sim_rng r;
    sim_rng_seed(&r, 9, 0, 1);
    int checked = 0;
    for (int ray = 0; ray < 3000; ray++) {
        double o[3] = {0, 0, 0}, d[3];
        sim_isotropic(&r, d);
        if (d[2] > -0.9) continue; /* the triple sits around -z */
        for (int i = 0; i < w.n; i++) {
            double t[2][2];
            int n = sim_chord(&w, i, o, d, t);
            for (int j = 0; j < n; j++)
                for (int e = 0; e < 2; e++) {
                    double step = e ? 1e-6 : -1e-6, lab_in[3], lab_out[3], in[3], out[3];
                    for (int k = 0; k < 3; k++) {
                        lab_in[k] = (t[j][e] - step) * d[k];
                        lab_out[k] = (t[j][e] + step) * d[k];
                    }
                    det_to_crystal(&a.crystal[i], lab_in, in);
                    det_to_crystal(&a.crystal[i], lab_out, out);
                    ck_assert(det_crystal_contains(sim_shape(&w, i), in));
                    ck_assert(!det_crystal_contains(sim_shape(&w, i), out));
                    checked++;
                }
        }
    }
    ck_assert_int_gt(checked, 50);
    sim_world_free(&w);
    det_array_free(&a);
}
END_TEST

/* ---- the generator actor on AGATA's array ---- */

/* A small basis of shape t on a 6 mm grid: every point labelled by its geometric segment, whose channel
   rises to 1 while the core falls to -1. */
static void write_shape_basis(const char *path, const det_crystal *c)
{
    enum { SAMPLES = 40, PRE = 5 };
    det_basis b = {.crystal = *c, .n_channels = DET_CHANNELS, .n_samples = SAMPLES, .pretrigger = PRE,
                   .sample_ns = 10, .grid_mm = 6};
    for (int pass = 0; pass < 2; pass++) {
        uint32_t n = 0;
        for (int k = 0; k * 6 + 3 < c->length; k++)
            for (int j = -7; j <= 7; j++)
                for (int i = -7; i <= 7; i++) {
                    double p[3] = {i * 6.0, j * 6.0, k * 6.0 + 3};
                    if (!det_crystal_contains(c, p)) continue;
                    if (pass) {
                        for (int a = 0; a < 3; a++) b.pos[3 * n + a] = (float)p[a];
                        b.segment[n] = det_crystal_segment(c, p);
                        float *sig = det_basis_point(&b, n);
                        memset(sig, 0, sizeof(float) * DET_CHANNELS * SAMPLES);
                        for (int t = PRE; t < SAMPLES; t++) {
                            float rise = t - PRE >= 10 ? 1 : (t - PRE) / 10.0f;
                            sig[b.segment[n] * SAMPLES + t] = rise;
                            sig[DET_CORE * SAMPLES + t] = -rise;
                        }
                    }
                    n++;
                }
        if (!pass) {
            b.n_points = n;
            ck_assert_int_eq(det_basis_alloc(&b), 0);
        }
    }
    char msg[400];
    ck_assert_msg(det_basis_save(&b, path, msg, sizeof msg) == 0, "%s", msg);
    det_basis_free(&b);
}

/* Configures and initialises the generator with this Generator.conf; process_initialise's code, its log in log. */
static unsigned generator_with(tk_actor *gen, const char *text, void **g, char *log, size_t len)
{
    char dir[400], path[460];
    snprintf(dir, sizeof dir, "%s/conf", tmpdir);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/Generator.conf", dir);
    tk_write_text(path, text);
    unsigned e;
    snprintf(path, sizeof path, "%s/stderr.txt", tmpdir);
    int saved = tk_capture_begin(path);
    gen->config(dir, &e);
    if (e == 0) *g = gen->reg(&e);
    if (e == 0) gen->initialise(*g, &e);
    tk_capture_end(saved, path, log, len);
    return e;
}

START_TEST(generator_takes_one_basis_per_shape)
{
    tk_actor gen;
    tk_load_actor(&gen, "generator.so");
    char basis[3][300], text[PATH_MAX + 2400], log[8192], array[PATH_MAX];
    ck_assert_ptr_nonnull(realpath("detector/arrays/agata180-atc.txt", array));
    for (int t = 0; t < 3; t++) {
        snprintf(basis[t], sizeof basis[t], "%s/%c.basis", tmpdir, 'A' + t);
        write_shape_basis(basis[t], &shape[t]);
    }
    const char *common = "Array %s\nSource 60Co\nEvents 300\nSamples 40\nThreads 1\nOutput crystal truth\n";
    void *g = NULL;
    unsigned e;
    /* one basis per shape, in the array's order: frames of crystals of all three shapes */
    snprintf(text, sizeof text, common, array);
    snprintf(text + strlen(text), sizeof text - strlen(text), "Bases %s %s %s\n", basis[0], basis[1], basis[2]);
    ck_assert_msg(generator_with(&gen, text, &g, log, sizeof log) == 0, "%s", log);
    gen.start(g, &e);
    ck_assert_uint_eq(e, 0);
    static uint8_t buf[1 << 22];
    int per_type[3] = {0};
    for (;;) {
        unsigned used = 0;
        gen.produce(g, buf, sizeof buf, &used, &e);
        ck_assert_uint_eq(e, 0);
        if (!used) break;
        adf_iter it;
        adf_frame f;
        adf_iter_init(&it, buf, used);
        while (adf_iter_next(&it, &f) == 1)
            if (f.key.id == ADF_ID_NW_CRYSTAL) per_type[adf_get_u16(f.data + ADF_KEY_SIZE) % 3]++;
    }
    gen.stop(g, &e);
    gen.unload(g, &e);
    for (int t = 0; t < 3; t++) ck_assert_msg(per_type[t] > 20, "shape %d: %d frames", t, per_type[t]);
    /* a basis in the wrong shape's place is refused at initialise */
    snprintf(text, sizeof text, common, array);
    snprintf(text + strlen(text), sizeof text - strlen(text), "Bases %s %s %s\n", basis[1], basis[0], basis[2]);
    ck_assert_uint_eq(generator_with(&gen, text, &g, log, sizeof log), NARVAL_E_IO);
    ck_assert_msg(strstr(log, "another crystal shape than the array's"), "%s", log);
    gen.unload(g, &e);
    /* an array that names its shapes needs Bases; two for three shapes is refused too */
    snprintf(text, sizeof text, common, array);
    ck_assert_uint_eq(generator_with(&gen, text, &g, log, sizeof log), NARVAL_E_CONFIG);
    ck_assert_msg(strstr(log, "key 'Bases': the array") && strstr(log, "names 3 shapes, Bases 0"), "%s", log);
    gen.unload(g, &e);
    snprintf(text + strlen(text), sizeof text - strlen(text), "Bases %s %s\n", basis[0], basis[1]);
    ck_assert_uint_eq(generator_with(&gen, text, &g, log, sizeof log), NARVAL_E_CONFIG);
    ck_assert_msg(strstr(log, "names 3 shapes, Bases 2"), "%s", log);
    gen.unload(g, &e);
    dlclose(gen.so);
}
END_TEST

/* ---- the tracker's germanium paths ---- */

/* Germanium (mm) on the segment from the origin to lab point b, exactly: the transport's chords, clipped. */
static double chord_germanium(const sim_world *w, const double b[3])
{
    double o[3] = {0, 0, 0}, len = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]), d[3] = {b[0] / len, b[1] / len, b[2] / len};
    double total = 0;
    for (int i = 0; i < w->n; i++) {
        double t[2][2];
        int n = sim_chord(w, i, o, d, t);
        for (int j = 0; j < n; j++) total += fmax(0, fmin(t[j][1], len) - fmax(t[j][0], 0));
    }
    return total;
}

START_TEST(tracker_paths_cross_the_real_shapes)
{
    /* the path model takes each crystal's own shape from an array that names them: its germanium along a line
       from the target agrees with the transport's exact chords (float rounding), where one regular shape for
       every crystal does not */
    det_array a;
    det_crystal regular;
    sim_world w;
    char msg[300];
    atc_world(&a, &regular, &w);
    tracker_model_conf cf = {.pos_a = 0.5, .pos_b = 1, .energy_sigma = 1, .theta_scale = 0.8, .min_cluster = 0.02,
                             .min_single = 0.05, .single_isolation = 40, .path_model = TR_PATH_ARRAY};
    static tr_model shaped, plain;
    ck_assert_msg(tracker_model_build(&shaped, &a, &regular, &cf, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_int_eq(shaped.params.n_shapes, 3);
    int n_shapes = a.n_shapes;
    a.n_shapes = 0;
    ck_assert_msg(tracker_model_build(&plain, &a, &regular, &cf, msg, sizeof msg) == 0, "%s", msg);
    a.n_shapes = n_shapes;
    sim_rng r;
    sim_rng_seed(&r, 3, 0, 1);
    double worst = 0, plain_worst = 0;
    for (int ray = 0; ray < 2000; ray++) {
        double d[3], b[3];
        sim_isotropic(&r, d);
        for (int k = 0; k < 3; k++) b[k] = 330 * d[k]; /* through the whole array */
        float fa[3] = {0, 0, 0}, fb[3] = {(float)b[0], (float)b[1], (float)b[2]};
        double exact = chord_germanium(&w, b);
        worst = fmax(worst, fabs(tr_ge_path(&shaped.params, &shaped.geo, fa, fb) - exact));
        plain_worst = fmax(plain_worst, fabs(tr_ge_path(&plain.params, &plain.geo, fa, fb) - exact));
    }
    ck_assert_msg(worst < 0.01, "the shaped model's germanium differs from the chords by %.4f mm", worst);
    ck_assert_msg(plain_worst > 1, "one regular shape for all: %.3f mm at most", plain_worst);
    sim_world_free(&w);
    det_array_free(&a);
}
END_TEST

static Suite *shapes_suite(void)
{
    Suite *s = suite_create("shapes");
    TCase *geo = tcase_create("geometry");
    tcase_add_test(geo, corners_are_agatas);
    tcase_add_test(geo, faces_match_the_gdml_export);
    tcase_add_test(geo, corner_files_round_trip_and_errors);
    tcase_add_test(geo, volumes);
    tcase_add_test(geo, points_either_side_of_every_face);
    tcase_add_test(geo, segments_at_known_points);
    tcase_add_test(geo, regular_hexagon_as_corners_is_the_same_crystal);
    suite_add_tcase(s, geo);
    TCase *arr = tcase_create("array");
    tcase_set_timeout(arr, 60);
    tcase_add_test(arr, atc_arrays_are_agatas_clusters);
    tcase_add_test(arr, atc_arrays_do_not_overlap);
    tcase_add_test(arr, cluster_neighbours_face_each_other);
    tcase_add_test(arr, shapes_line_errors);
    suite_add_tcase(s, arr);
    TCase *fld = tcase_create("fields");
    tcase_set_timeout(fld, 60);
    tcase_add_test(fld, weighting_potentials_of_every_sector_sum_to_one);
    tcase_add_test(fld, weighting_potential_is_one_on_every_contact);
    tcase_add_test(fld, deep_points_collect_on_their_segments);
    tcase_add_test(fld, basis_carries_the_corners);
    suite_add_tcase(s, fld);
    TCase *sim = tcase_create("transport");
    tcase_add_test(sim, deposits_lie_in_their_crystals_shape);
    tcase_add_test(sim, chords_match_the_shape);
    tcase_add_test(sim, generator_takes_one_basis_per_shape);
    tcase_add_test(sim, tracker_paths_cross_the_real_shapes);
    tcase_set_timeout(sim, 60);
    suite_add_tcase(s, sim);
    return s;
}

int main(void)
{
    char msg[300];
    for (int t = 0; t < 3; t++)
        if (det_crystal_load(&shape[t], SHAPE_FILE[t], msg, sizeof msg)) {
            fprintf(stderr, "check_shapes: %s (run from the repository root)\n", msg);
            return 1;
        }
    if (!mkdtemp(tmpdir)) return 1;
    if (det_fields_solve(&fields_a, &shape[0], 2.0, 1e-5, msg, sizeof msg)) {
        fprintf(stderr, "check_shapes: %s\n", msg);
        return 1;
    }
    SRunner *sr = srunner_create(shapes_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    tk_remove_tree(tmpdir);
    det_fields_free(&fields_a);
    return failed ? 1 : 0;
}
