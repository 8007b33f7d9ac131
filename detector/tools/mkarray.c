/* mkarray: builds the shipped arrays from a geodesic tiling, checks any array file, converts to and from AGATA's table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "geometry.h"

/*
 * The 4π array follows AGATA's construction: the Goldberg polyhedron GP(3,2),
 * whose 192 faces are 12 pentagons (left empty, two of them on the beam axis)
 * and 180 hexagons (one crystal each).  Its face centres are the vertices of
 * the class-III geodesic subdivision of an icosahedron with T = 3² + 3·2 + 2²
 * = 19; we build those, even them out by Laplacian smoothing on the sphere
 * (pentagon centres fixed), and put a crystal on each hexagon centre with its
 * flats turned towards its neighbours.
 */
enum { GP_H = 3, GP_K = 2, N_CELLS = 192, N_PENT = 12, N_HEX = 180, MAX_NB = 6 };
static const double FRONT_DISTANCE = 235.0; /* mm, target to front face */

typedef struct cell {
    double u[3];      /* unit vector to the centre */
    int nb[MAX_NB];   /* neighbours */
    int n_nb;
    int pent;
} cell;

static double dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void cross(const double *a, const double *b, double *o)
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}
static void normalize(double *v)
{
    double n = sqrt(dot(v, v));
    for (int i = 0; i < 3; i++) v[i] /= n;
}

/* Icosahedron turned so that vertex 0 lies on +z (a pentagon on the beam axis). */
static void icosahedron(double v[N_PENT][3])
{
    const double g = (1 + sqrt(5.0)) / 2;
    int n = 0;
    for (int a = -1; a <= 1; a += 2)
        for (int b = -1; b <= 1; b += 2) {
            double p[3][3] = {{0, a, b * g}, {a, b * g, 0}, {b * g, 0, a}};
            for (int k = 0; k < 3; k++) memcpy(v[n++], p[k], sizeof p[k]);
        }
    /* rotate about x so that (0, 1, g) goes to +z */
    double t = atan2(1, g);
    for (int i = 0; i < N_PENT; i++) {
        double y = v[i][1], z = v[i][2];
        v[i][1] = cos(t) * y - sin(t) * z;
        v[i][2] = sin(t) * y + cos(t) * z;
        normalize(v[i]);
    }
}

static int add_unique(cell *c, int n, const double p[3])
{
    for (int i = 0; i < n; i++) {
        double d[3] = {c[i].u[0] - p[0], c[i].u[1] - p[1], c[i].u[2] - p[2]};
        if (dot(d, d) < 1e-12) return n;
    }
    if (n < N_CELLS) memcpy(c[n].u, p, sizeof c[n].u);
    return n + 1;
}

/* Lattice points of one face's big triangle, mapped onto the sphere. */
static int subdivide_face(cell *c, int n, const double *A, const double *B, const double *C)
{
    const double ux = 1, uy = 0, vx = 0.5, vy = sqrt(3.0) / 2;
    double p1[2] = {GP_H * ux + GP_K * vx, GP_H * uy + GP_K * vy};
    double p2[2] = {-GP_K * ux + (GP_H + GP_K) * vx, -GP_K * uy + (GP_H + GP_K) * vy};
    double det = p1[0] * p2[1] - p1[1] * p2[0];
    for (int a = -GP_H - GP_K; a <= GP_H + GP_K; a++)
        for (int b = 0; b <= GP_H + GP_K; b++) {
            double x = a * ux + b * vx, y = a * uy + b * vy;
            double l1 = (x * p2[1] - y * p2[0]) / det, l2 = (p1[0] * y - p1[1] * x) / det, l0 = 1 - l1 - l2;
            if (l0 < -1e-9 || l1 < -1e-9 || l2 < -1e-9) continue;
            double p[3];
            for (int i = 0; i < 3; i++) p[i] = l0 * A[i] + l1 * B[i] + l2 * C[i];
            normalize(p);
            n = add_unique(c, n, p);
        }
    return n;
}

static int build_cells(cell *c)
{
    double v[N_PENT][3];
    icosahedron(v);
    int n = 0;
    for (int i = 0; i < N_PENT; i++) n = add_unique(c, n, v[i]);
    double e2 = 1e9; /* squared edge length */
    for (int j = 1; j < N_PENT; j++) {
        double d[3] = {v[0][0] - v[j][0], v[0][1] - v[j][1], v[0][2] - v[j][2]};
        if (dot(d, d) < e2) e2 = dot(d, d);
    }
    for (int i = 0; i < N_PENT; i++)
        for (int j = i + 1; j < N_PENT; j++)
            for (int k = j + 1; k < N_PENT; k++) {
                double dij[3], djk[3], dik[3];
                for (int m = 0; m < 3; m++) {
                    dij[m] = v[i][m] - v[j][m];
                    djk[m] = v[j][m] - v[k][m];
                    dik[m] = v[i][m] - v[k][m];
                }
                if (dot(dij, dij) > e2 * 1.01 || dot(djk, djk) > e2 * 1.01 || dot(dik, dik) > e2 * 1.01) continue;
                double ab[3], ac[3], nrm[3];
                for (int m = 0; m < 3; m++) {
                    ab[m] = v[j][m] - v[i][m];
                    ac[m] = v[k][m] - v[i][m];
                }
                cross(ab, ac, nrm);
                if (dot(nrm, v[i]) > 0) n = subdivide_face(c, n, v[i], v[j], v[k]);
                else n = subdivide_face(c, n, v[i], v[k], v[j]);
            }
    return n;
}

/* Each cell's neighbours: the 5 or 6 nearest centres. */
static void find_neighbours(cell *c)
{
    for (int i = 0; i < N_CELLS; i++) {
        c[i].n_nb = c[i].pent ? 5 : 6;
        double best[MAX_NB];
        for (int k = 0; k < MAX_NB; k++) best[k] = -2;
        for (int j = 0; j < N_CELLS; j++) {
            if (j == i) continue;
            double d = dot(c[i].u, c[j].u); /* larger = nearer */
            for (int k = 0; k < c[i].n_nb; k++)
                if (d > best[k]) {
                    for (int m = c[i].n_nb - 1; m > k; m--) {
                        best[m] = best[m - 1];
                        c[i].nb[m] = c[i].nb[m - 1];
                    }
                    best[k] = d;
                    c[i].nb[k] = j;
                    break;
                }
        }
    }
}

/* Evens out the crystal spacing: neighbouring hexagon centres nearer than
 * `spread` times the mean spacing push each other apart (springs that only
 * push); a pentagon's (empty) cell may shrink to `pent_share` of that. */
static void relax(cell *c, int iterations, double spread, double pent_share)
{
    double mean = 0;
    int pairs = 0;
    for (int i = 0; i < N_CELLS; i++)
        for (int k = 0; k < c[i].n_nb; k++) {
            mean += acos(dot(c[i].u, c[c[i].nb[k]].u));
            pairs++;
        }
    double target = spread * mean / pairs;
    double move[N_CELLS][3];
    for (int it = 0; it < iterations; it++) {
        memset(move, 0, sizeof move);
        for (int i = 0; i < N_CELLS; i++) {
            if (c[i].pent) continue;
            for (int k = 0; k < c[i].n_nb; k++) {
                const cell *o = &c[c[i].nb[k]];
                double want = o->pent ? pent_share * target : target;
                double d = acos(dot(c[i].u, o->u));
                if (d >= want) continue;
                double dir[3] = {c[i].u[0] - o->u[0], c[i].u[1] - o->u[1], c[i].u[2] - o->u[2]};
                normalize(dir);
                for (int m = 0; m < 3; m++) move[i][m] += 0.1 * (want - d) * dir[m];
            }
        }
        for (int i = 0; i < N_CELLS; i++) {
            for (int m = 0; m < 3; m++) c[i].u[m] += move[i][m];
            normalize(c[i].u);
        }
    }
}

/* Placement of a crystal on cell i: axis along u, flats turned towards the neighbours. */
static void place(const cell *c, int i, det_placement *p)
{
    const double *u = c[i].u;
    double ref[3] = {0, 0, 1}, e1[3], e2[3];
    if (fabs(u[2]) > 0.9) ref[0] = 1, ref[2] = 0;
    cross(ref, u, e1);
    normalize(e1);
    cross(u, e1, e2);
    double sx = 0, sy = 0; /* circular mean of 6 x the neighbour azimuths: hexagonal symmetry */
    for (int k = 0; k < c[i].n_nb; k++) {
        const double *w = c[c[i].nb[k]].u;
        double psi = atan2(dot(w, e2), dot(w, e1));
        sx += cos(6 * psi);
        sy += sin(6 * psi);
    }
    double alpha = atan2(sy, sx) / 6;
    double x[3], y[3];
    for (int m = 0; m < 3; m++) x[m] = cos(alpha) * e1[m] + sin(alpha) * e2[m];
    cross(u, x, y);
    for (int m = 0; m < 3; m++) {
        p->R[m][0] = x[m];
        p->R[m][1] = y[m];
        p->R[m][2] = u[m];
        p->T[m] = FRONT_DISTANCE * u[m];
    }
    p->type = 0;
}

/* Solid angle of the triangle (origin; a, b, c) (Van Oosterom and Strackee). */
static double triangle_solid_angle(const double *a, const double *b, const double *c)
{
    double bc[3];
    cross(b, c, bc);
    double la = sqrt(dot(a, a)), lb = sqrt(dot(b, b)), lc = sqrt(dot(c, c));
    double den = la * lb * lc + dot(a, b) * lc + dot(a, c) * lb + dot(b, c) * la;
    return 2 * atan2(fabs(dot(a, bc)), den);
}

/* Fraction of 4π that the front faces cover (each crystal's shape).  The side
 * faces of the shipped crystals run nearly radially from the target, so a ray
 * that misses the front face misses the crystal; the front face is the hexagon
 * cut by the cylinder, here its 72 sample points' polygon. */
static double coverage(const det_array *a, const det_crystal *g)
{
    enum { N = 72 };
    double rim[N][3];
    double total = 0;
    for (int i = 0; i < a->n; i++) {
        const det_crystal *c = det_array_shape(a, i, g);
        for (int k = 0; k < N; k++) {
            double phi = 2 * M_PI * k / N, r = det_outline_radius(c, 0, phi);
            rim[k][0] = r * cos(phi);
            rim[k][1] = r * sin(phi);
            rim[k][2] = 0;
        }
        double o[3] = {0, 0, 0}, centre[3], p[3], q[3];
        det_to_lab(&a->crystal[i], o, centre);
        for (int k = 0; k < N; k++) {
            det_to_lab(&a->crystal[i], rim[k], p);
            det_to_lab(&a->crystal[i], rim[(k + 1) % N], q);
            total += triangle_solid_angle(centre, p, q);
        }
    }
    return total / (4 * M_PI);
}

static int by_angle(const void *pa, const void *pb)
{
    const det_placement *a = pa, *b = pb;
    double ta = acos(a->R[2][2]), tb = acos(b->R[2][2]);
    if (fabs(ta - tb) > 1e-6) return ta < tb ? -1 : 1;
    double fa = atan2(a->R[1][2], a->R[0][2]), fb = atan2(b->R[1][2], b->R[0][2]);
    return fa < fb ? -1 : fa > fb;
}

static int by_id(const void *pa, const void *pb)
{
    const det_placement *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

static int nearest_axis(const void *pa, const void *pb)
{
    const det_placement *a = pa, *b = pb;
    return a->R[2][2] < b->R[2][2] ? -1 : a->R[2][2] > b->R[2][2];
}

static int report(const char *name, const det_array *a, const det_crystal *g)
{
    char msg[512];
    double min_gap;
    int rc = det_array_check_overlaps(a, g, 0.0, &min_gap, msg, sizeof msg);
    printf("%-28s %4d crystals, %5.1f %% of 4pi, smallest proven gap %.2f mm: %s\n", name, a->n,
           100 * coverage(a, g), min_gap, rc == 0 ? "no overlaps" : msg);
    return rc;
}

static int write_array(const det_array *a, const char *dir, const char *file, const det_crystal *g)
{
    char path[1024], msg[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (det_array_save(a, path, msg, sizeof msg)) {
        fprintf(stderr, "mkarray: %s\n", msg);
        return -1;
    }
    return report(path, a, g) ? -1 : 0;
}

/* Builds the 180-crystal array and its subsets into dir. */
static int generate(const det_crystal *g, const char *dir)
{
    cell c[N_CELLS];
    memset(c, 0, sizeof c);
    int n = build_cells(c);
    if (n != N_CELLS) {
        fprintf(stderr, "mkarray: the geodesic construction gave %d cells, expected %d\n", n, N_CELLS);
        return -1;
    }
    for (int i = 0; i < N_PENT; i++) c[i].pent = 1;
    find_neighbours(c);
    relax(c, 2000, 1.2, 0.9);
    find_neighbours(c);

    det_placement all[N_HEX];
    int m = 0;
    for (int i = N_PENT; i < N_CELLS; i++) place(c, i, &all[m++]);
    qsort(all, N_HEX, sizeof all[0], by_angle);
    for (int i = 0; i < N_HEX; i++) all[i].id = i;
    det_array full = {.n = N_HEX, .crystal = all};
    char msg[512];
    snprintf(msg, sizeof msg, "%s/CrystalPositionLookUpTable", dir);
    char err[512];
    if (write_array(&full, dir, "agata180.txt", g) || det_array_save_lut(&full, msg, err, sizeof err)) return -1;

    /* 1π: the 45 crystals nearest the backward direction (-z), ids kept. */
    det_placement sorted[N_HEX];
    memcpy(sorted, all, sizeof all);
    qsort(sorted, N_HEX, sizeof sorted[0], nearest_axis);
    det_placement quarter[N_HEX / 4];
    memcpy(quarter, sorted, sizeof quarter);
    qsort(quarter, N_HEX / 4, sizeof quarter[0], by_angle);
    det_array q = {.n = N_HEX / 4, .crystal = quarter};
    if (write_array(&q, dir, "agata45.txt", g)) return -1;

    /* A triple cluster: the backward-most crystal and two neighbours adjacent to each other. */
    det_placement triple[3] = {sorted[0]};
    int got = 1;
    double axis0[3] = {sorted[0].R[0][2], sorted[0].R[1][2], sorted[0].R[2][2]};
    for (int i = 1; i < N_HEX && got < 3; i++) {
        double ui[3] = {sorted[i].R[0][2], sorted[i].R[1][2], sorted[i].R[2][2]};
        if (acos(dot(ui, axis0)) > 0.35) continue; /* not a neighbour (spacing ≈ 0.27 rad) */
        if (got == 2) {
            double u1[3] = {triple[1].R[0][2], triple[1].R[1][2], triple[1].R[2][2]};
            if (acos(dot(ui, u1)) > 0.35) continue;
        }
        triple[got++] = sorted[i];
    }
    det_array t = {.n = got, .crystal = triple};
    return got == 3 ? write_array(&t, dir, "triple.txt", g) : -1;
}

/* ---- AGATA's own array: triple clusters of the shapes A, B, C ---- */

enum { AGATA_CLUSTERS = 60, AGATA_PER_CLUSTER = 3 };

/* The rows of a table file: up to max rows of exactly cols numbers ('#' lines skipped); the count, -1 on error. */
static int read_table(const char *path, int cols, int max, double (*row)[9])
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "mkarray: %s: cannot open\n", path);
        return -1;
    }
    char line[512];
    int n = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        double *v = row[n < max ? n : max - 1];
        int got = sscanf(line, "%lf %lf %lf %lf %lf %lf %lf %lf %lf", v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6,
                         v + 7, v + 8);
        if (line[strspn(line, " \t")] == '#' || got <= 0) continue;
        if (got != cols || n == max) {
            fprintf(stderr, "mkarray: %s:%d: expected %d numbers (and at most %d rows)\n", path, lineno, cols, max);
            fclose(f);
            return -1;
        }
        n++;
    }
    fclose(f);
    return n;
}

/* AGATA's rotation from Euler angles in degrees: Rz(phi) Ry(theta) Rz(psi) (Farnea's aclust/aeuler files). */
static void euler(double psi, double theta, double phi, double R[3][3])
{
    double d = M_PI / 180, a[3] = {psi * d, theta * d, phi * d};
    double c0 = cos(a[0]), s0 = sin(a[0]), c1 = cos(a[1]), s1 = sin(a[1]), c2 = cos(a[2]), s2 = sin(a[2]);
    double z2[3][3] = {{c2, -s2, 0}, {s2, c2, 0}, {0, 0, 1}}, y1[3][3] = {{c1, 0, s1}, {0, 1, 0}, {-s1, 0, c1}};
    double z0[3][3] = {{c0, -s0, 0}, {s0, c0, 0}, {0, 0, 1}}, t[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) t[i][j] = z2[i][0] * y1[0][j] + z2[i][1] * y1[1][j] + z2[i][2] * y1[2][j];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R[i][j] = t[i][0] * z0[0][j] + t[i][1] * z0[1][j] + t[i][2] * z0[2][j];
}

static int by_z(const void *pa, const void *pb)
{
    const double *a = pa, *b = pb; /* rows of the aeuler table: z at 7 */
    return a[7] < b[7] ? -1 : a[7] > b[7];
}

static int write_agata(det_placement *all, int n, const char *dir, const char *file)
{
    static const char *const shapes[] = {"../geometry/agata_A.geo", "../geometry/agata_B.geo",
                                         "../geometry/agata_C.geo"};
    det_array a = {.n = n, .crystal = all};
    char msg[512];
    if (det_array_set_shapes(&a, shapes, 3, dir, msg, sizeof msg)) {
        fprintf(stderr, "mkarray: %s\n", msg);
        return -1;
    }
    int rc = write_array(&a, dir, file, &a.shape[0]);
    free(a.shape);
    free(a.shape_path);
    return rc;
}

/* The 180 crystals of AGATA's clusters (ids 3 * cluster + order, type = shape), the 45 of the 15 clusters nearest
   the backward direction (-z), the triple cluster 0, and the 180's CrystalPositionLookUpTable, into dir. */
static int generate_agata(const char *euler_file, const char *cluster_file, const char *dir)
{
    double cl[AGATA_CLUSTERS][9], cr[AGATA_PER_CLUSTER][9];
    if (read_table(euler_file, 8, AGATA_CLUSTERS, cl) != AGATA_CLUSTERS ||
        read_table(cluster_file, 9, AGATA_PER_CLUSTER, cr) != AGATA_PER_CLUSTER) {
        fprintf(stderr, "mkarray: expected %d clusters of %d crystals\n", AGATA_CLUSTERS, AGATA_PER_CLUSTER);
        return -1;
    }
    enum { N = AGATA_CLUSTERS * AGATA_PER_CLUSTER };
    det_placement all[N], quarter[N / 4];
    for (int c = 0; c < AGATA_CLUSTERS; c++) {
        double Rc[3][3];
        euler(cl[c][2], cl[c][3], cl[c][4], Rc);
        for (int k = 0; k < AGATA_PER_CLUSTER; k++) {
            det_placement *p = &all[AGATA_PER_CLUSTER * (int)cl[c][0] + (int)cr[k][2]];
            double Rk[3][3];
            euler(cr[k][3], cr[k][4], cr[k][5], Rk);
            p->id = AGATA_PER_CLUSTER * (int)cl[c][0] + (int)cr[k][2];
            p->type = (int)cr[k][1];
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 3; j++) p->R[i][j] = Rc[i][0] * Rk[0][j] + Rc[i][1] * Rk[1][j] + Rc[i][2] * Rk[2][j];
                p->T[i] = Rc[i][0] * cr[k][6] + Rc[i][1] * cr[k][7] + Rc[i][2] * cr[k][8] + cl[c][5 + i];
            }
        }
    }
    char lut[1024], err[512];
    snprintf(lut, sizeof lut, "%s/CrystalPositionLookUpTable-atc", dir);
    det_array full = {.n = N, .crystal = all};
    if (write_agata(all, N, dir, "agata180-atc.txt") || det_array_save_lut(&full, lut, err, sizeof err)) return -1;
    qsort(cl, AGATA_CLUSTERS, sizeof cl[0], by_z);
    int m = 0;
    for (int c = 0; c < AGATA_CLUSTERS / 4; c++)
        for (int k = 0; k < AGATA_PER_CLUSTER; k++) quarter[m++] = all[AGATA_PER_CLUSTER * (int)cl[c][0] + k];
    qsort(quarter, N / 4, sizeof quarter[0], by_id);
    return write_agata(quarter, N / 4, dir, "agata45-atc.txt") || write_agata(all, 3, dir, "triple-atc.txt") ? -1 : 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: mkarray [--geometry GEO] --out DIR        build the shipped arrays into DIR\n"
                    "       mkarray --agata AEULER ACLUST --out DIR   AGATA's triple clusters (shapes A, B, C) into DIR\n"
                    "       mkarray [--geometry GEO] --check FILE     overlaps and coverage of an array file\n"
                    "       mkarray --to-lut FILE OUT | --from-lut LUT OUT   convert to/from CrystalPositionLookUpTable\n");
}

int main(int argc, char **argv)
{
    det_crystal g;
    det_crystal_default(&g);
    char msg[512];
    const char *geo = "detector/geometry/agata.geo";
    int i = 1;
    if (i + 4 < argc && !strcmp(argv[i], "--agata") && !strcmp(argv[i + 3], "--out"))
        return generate_agata(argv[i + 1], argv[i + 2], argv[i + 4]) ? 1 : 0;
    if (i + 1 < argc && !strcmp(argv[i], "--geometry")) geo = argv[i + 1], i += 2;
    if (det_crystal_load(&g, geo, msg, sizeof msg)) {
        fprintf(stderr, "mkarray: %s\n", msg);
        return 1;
    }
    if (i + 1 < argc && !strcmp(argv[i], "--out")) return generate(&g, argv[i + 1]) ? 1 : 0;
    if (i + 1 < argc && !strcmp(argv[i], "--check")) {
        det_array a;
        if (det_array_load_any(&a, argv[i + 1], msg, sizeof msg)) {
            fprintf(stderr, "mkarray: %s\n", msg);
            return 1;
        }
        int rc = report(argv[i + 1], &a, &g);
        det_array_free(&a);
        return rc ? 1 : 0;
    }
    int to = i + 2 < argc && !strcmp(argv[i], "--to-lut"), from = i + 2 < argc && !strcmp(argv[i], "--from-lut");
    if (to || from) {
        det_array a;
        int rc = to ? det_array_load(&a, argv[i + 1], msg, sizeof msg) : det_array_load_lut(&a, argv[i + 1], msg, sizeof msg);
        if (!rc) {
            rc = to ? det_array_save_lut(&a, argv[i + 2], msg, sizeof msg) : det_array_save(&a, argv[i + 2], msg, sizeof msg);
            det_array_free(&a);
        }
        if (rc) fprintf(stderr, "mkarray: %s\n", msg);
        return rc ? 1 : 0;
    }
    usage();
    return 2;
}
