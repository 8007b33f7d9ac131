# AGATA's crystal shape A ("ARed" in AGATA's Geant4 description): a 36-fold segmented, closed-end coaxial n-type HPGe
# crystal, 90 mm long, 80 mm across at the back, its front an asymmetric tapered hexagon (Akkoyun et al., NIM A 668
# (2012) 26).  The corners are AGATA's asolid file, shape 0 (via SToGS: stezow/stogs,
# DetectorFactory/SemiConductors/Ge/Builders/agata_capsule.geo, commit 0da3fc10d4a2), in AGATA's crystal frame
# (detector/README.md); every other key as in agata.geo.  Lengths in mm, z from the front face (0) to the back face.
length              90
radius              40          # AGATA's cylinder: 40 mm radius, 90 mm long
hex_corners_front   33.906177 -0.000000 15.358631 30.461479 -20.780862 27.320467 -33.865099 -3.186191 -20.861304 -27.597830 15.586726 -29.970097
hex_corners_back    48.844467 -0.070710 22.153453 43.765160 -28.562085 39.357292 -47.398084 -4.559934 -28.566730 -39.911479 22.461366 -43.232708
bore_radius         5           # central contact bore, 10 mm across
bore_depth          13          # the bore ends 13 mm from the front face
ring_thickness      8 14 16 17 21 14   # front to back (GRETINA's values; AGATA's are similar)
bias                5000        # V on the core; the segments are grounded
impurity_front      0.5         # net donors, 1e10 / cm^3, at the front face
impurity_back       1.0         # at the back face; linear in between
preamp_rise_ns      20          # 10-90 % rise time of the charge preamplifier
lattice_phi110      45          # degrees: azimuth of the germanium lattice's [110] axis ([001] along the crystal axis,
                                # [100] at azimuth 0); it orients the anisotropic drift
anisotropic_drift   1           # 1: Bruyneel et al. 2006's anisotropic mobilities; 0: isotropic, Mihailescu's <100> law
