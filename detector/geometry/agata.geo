# Narwhal's default crystal: an AGATA-type 36-fold segmented, closed-end coaxial n-type HPGe crystal.
# Lengths in mm, crystal frame (detector/README.md): z from the front face (0) to the back face.
length              90
radius              40          # outer cylinder: the round back face is 80 mm across
hex_apothem_front   30          # centre-to-flat distance of the hexagon at the front face
hex_apothem_back    41.48936170212766  # at the back face: 30 * (235 + 90) / 235, the flats point at the target
bore_radius         5           # central contact bore, 10 mm across
bore_depth          13          # the bore ends 13 mm from the front face
ring_thickness      8 14 16 17 21 14   # front to back (GRETINA's values; AGATA's are similar)
bias                5000        # V on the core; the segments are grounded
impurity_front      0.5         # net donors, 1e10 / cm^3, at the front face
impurity_back       1.0         # at the back face; linear in between
preamp_rise_ns      20          # 10-90 % rise time of the charge preamplifier
lattice_phi110      45          # degrees: azimuth of the germanium lattice's [110] axis ([001] along the crystal axis,
                                # [100] at azimuth 0, the flat of sector A); it orients the anisotropic drift
anisotropic_drift   1           # 1: Bruyneel et al. 2006's anisotropic mobilities; 0: isotropic, Mihailescu's <100> law
