#!/bin/sh
# ompi-tree.sh: Open MPI for a machine that has none: the Debian packages (apt-get download on a machine that has apt) unpacked into a folder, and the environment that makes mpirun, mpicc and libmpi work from there.
#   sh sample_runs/mpi/ompi-tree.sh DEBS_DIR PREFIX      unpacks every DEBS_DIR/*.deb into PREFIX (dpkg -x)
#   . PREFIX/env.sh                                      then: mpirun, mpicc on the PATH, libmpi found
# The packages (Debian 12, Open MPI 4.1.4; fetched here with
#   apt-get download openmpi-bin libopenmpi3 libopenmpi-dev openmpi-common libpmix2 libhwloc15 \
#       libevent-core-2.1-7 libevent-pthreads-2.1-7
# into .gpudeps-mpi/, git-ignored): mpirun, orted and the MCA components; libmpi, libopen-pal,
# libopen-rte; the headers, mpicc (opal_wrapper) and libmpi.so for building narwhal with MPI
# (the Makefile finds mpicc on the PATH when pkg-config has no ompi-c); PMIx, hwloc, libevent.
# Debian names mpirun and mpicc through alternatives, which dpkg -x does not make: PREFIX/bin
# holds the two links.  OPAL_PREFIX relocates Open MPI's own paths (components, help files,
# wrapper data).  PMIx keeps its compiled-in help path: one "help file ... pcompress" notice at
# start, harmless (tried with the system's Open MPI hidden: sample_runs/mpi/README.md).  The
# components for InfiniBand, libfabric, UCX and PSM2 find no library (not carried): not shown
# (show_load_errors=0), Open MPI uses shared memory and TCP.
set -eu
debs=${1:?usage: ompi-tree.sh DEBS_DIR PREFIX}
prefix=${2:?usage: ompi-tree.sh DEBS_DIR PREFIX}
mkdir -p "$prefix/bin"
prefix=$(cd "$prefix" && pwd)
for deb in "$debs"/*.deb; do dpkg -x "$deb" "$prefix"; done
ln -sf "$prefix/usr/bin/mpirun.openmpi" "$prefix/bin/mpirun"
ln -sf "$prefix/usr/bin/mpicc.openmpi" "$prefix/bin/mpicc"
lib=$prefix/usr/lib/x86_64-linux-gnu
cat > "$prefix/env.sh" <<ENV
export OPAL_PREFIX=$prefix/usr
export OMPI_MCA_mca_base_component_show_load_errors=0
export PATH=$prefix/bin:$prefix/usr/bin:\$PATH
export LD_LIBRARY_PATH=$lib:$lib/openmpi/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
ENV
echo "ompi-tree.sh: Open MPI in $prefix; now: . $prefix/env.sh"
