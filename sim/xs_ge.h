/* xs_ge.h: photon cross sections of germanium (photoelectric, Compton, pair) from cited parameterisations; header-only so tests use the same numbers. */
#ifndef NARWHAL_SIM_XS_GE_H
#define NARWHAL_SIM_XS_GE_H

#include <math.h>

/*
 * Units: energies in keV; mass attenuation coefficients in cm^2/g; linear
 * attenuation coefficients in 1/mm (what the transport uses).
 *
 * Germanium: Z = 32, A = 72.630 g/mol (IUPAC 2013 standard atomic weight),
 * density 5.323 g/cm^3 at room temperature (the crystal is cooled to 90 K,
 * which changes the density by about 0.2 %: ignored).
 *
 * Photoelectric absorption: the analytic fit of F. Biggs and R. Lighthill,
 * "Analytical approximations for X-ray cross sections III", Sandia report
 * SAND87-0070 (1988): in each energy interval
 *     mu/rho = a1/E + a2/E^2 + a3/E^3 + a4/E^4   (E in keV),
 * with their coefficients for Ge (Z = 32), intervals starting at the L1 edge
 * (1.413 keV), the K edge (11.104 keV), 100 keV and 500 keV.  At 1332 keV it
 * gives 4.0e-4 cm^2/g, 0.8 % of the total.
 *
 * Compton (incoherent) scattering: the Klein-Nishina cross section of a free
 * electron (O. Klein and Y. Nishina, Z. Phys. 52 (1929) 853), integrated over
 * angles, times Z electrons per atom.  Binding is neglected: it lowers the
 * real cross section by a few per cent below 100 keV and by less than 1 %
 * above 300 keV.  The same formula drives the angular sampling, so the two
 * are consistent by construction.
 *
 * Pair production (nucleus and electron fields): L. Urban's fit to the
 * tabulation of J. H. Hubbell, H. A. Gimm and I. Overbo, J. Phys. Chem. Ref.
 * Data 9 (1980) 1023, as given in the Geant4 Physics Reference Manual
 * ("Gamma conversion into an electron-positron pair", total cross section per
 * atom): sigma(Z, E) = (Z + 1) (F1(X) Z + F2(X) Z^2 + F3(X)) microbarn with
 * X = ln(E / m c^2) and F1..F3 fifth-degree polynomials; valid from 1.5 MeV,
 * below which it is scaled by ((E - 2mc^2) / (1.5 MeV - 2mc^2))^2 to vanish
 * at threshold (the manual's prescription).  About 5 % accuracy.
 *
 * Not modelled: coherent (Rayleigh) scattering, which turns photons by small
 * angles without depositing energy (about 1 % of interactions at 1 MeV, 7 %
 * at 100 keV), fluorescence and Doppler broadening of Compton lines.
 */

#define XS_GE_Z 32.0
#define XS_GE_A 72.630         /* g/mol */
#define XS_GE_DENSITY 5.323    /* g/cm^3 */
#define XS_ME_KEV 510.99895    /* electron rest energy */
#define XS_RE_CM 2.8179403262e-13
#define XS_AVOGADRO 6.02214076e23

/* Atoms per gram of germanium. */
#define XS_GE_ATOMS_PER_G (XS_AVOGADRO / XS_GE_A)

static inline double xs_ge_photo(double e)
{
    static const double edge[4] = {1.413, 11.104, 100.0, 500.0};
    static const double a[4][4] = {
        {-0.5940e2, 0.1646e4, 0.2621e5, -0.1507e5},
        {-0.2025e1, 0.1283e3, 0.4069e6, -0.1510e7},
        {0.6478e0, -0.2603e3, 0.4045e6, -0.5153e5},
        {0.2155e0, 0.2609e3, 0.2074e6, 0.2220e8},
    };
    int i = 3;
    while (i > 0 && e < edge[i])
        i--;
    double u = 1.0 / e;
    return u * (a[i][0] + u * (a[i][1] + u * (a[i][2] + u * a[i][3])));
}

/* Klein-Nishina cross section per electron, cm^2. */
static inline double xs_klein_nishina(double e)
{
    double k = e / XS_ME_KEV, k2 = 1 + 2 * k, l = log(k2);
    double bracket = (1 + k) / (k * k) * (2 * (1 + k) / k2 - l / k) + l / (2 * k) - (1 + 3 * k) / (k2 * k2);
    return 2 * M_PI * XS_RE_CM * XS_RE_CM * bracket;
}

static inline double xs_ge_compton(double e) { return xs_klein_nishina(e) * XS_GE_Z * XS_GE_ATOMS_PER_G; }

static inline double xs_ge_pair(double e)
{
    static const double a[6] = {8.7842e2, -1.9625e3, 1.2949e3, -2.0028e2, 1.2575e1, -2.8333e-1};
    static const double b[6] = {-1.0342e1, 1.7692e1, -8.2381, 1.3063, -9.0815e-2, 2.3586e-3};
    static const double c[6] = {-4.5263e2, 1.1161e3, -8.6749e2, 2.1773e2, -2.0467e1, 6.5372e-1};
    const double limit = 1500.0, z = XS_GE_Z;
    if (e <= 2 * XS_ME_KEV)
        return 0;
    double x = log((e < limit ? limit : e) / XS_ME_KEV), f1 = 0, f2 = 0, f3 = 0;
    for (int i = 5; i >= 0; i--) {
        f1 = f1 * x + a[i];
        f2 = f2 * x + b[i];
        f3 = f3 * x + c[i];
    }
    double microbarn = (z + 1) * (f1 * z + f2 * z * z + f3);
    if (e < limit) {
        double s = (e - 2 * XS_ME_KEV) / (limit - 2 * XS_ME_KEV);
        microbarn *= s * s;
    }
    return microbarn > 0 ? microbarn * 1e-30 * XS_GE_ATOMS_PER_G : 0;
}

/* Linear attenuation coefficients, 1/mm, of the three processes. */
typedef struct xs_mu {
    double photo, compton, pair, total;
} xs_mu;

static inline xs_mu xs_ge_mu(double e)
{
    const double per_mm = XS_GE_DENSITY * 0.1;
    xs_mu m;
    m.photo = xs_ge_photo(e) * per_mm;
    m.compton = xs_ge_compton(e) * per_mm;
    m.pair = xs_ge_pair(e) * per_mm;
    m.total = m.photo + m.compton + m.pair;
    return m;
}

#endif
