/* mpi_none.c: the backend of a narwhal built without MPI: a session across ranks cannot start, and says so. */
#include "mpi_int.h"

const int emu_mpi_available = 0;

int emu_mpi_backend_start(emu_mpi *m, char *err, size_t errlen)
{
    int size = emu_mpi_launched();
    return emu_fail(err, errlen, EMU_E_TOPOLOGY,
                    "narwhal: this narwhal was built without MPI, so mpirun's %d processes cannot share a topology "
                    "(each would run it whole): install Open MPI (libopenmpi-dev, openmpi-bin) and rebuild (make), "
                    "or run narwhal run without mpirun",
                    size);
}

/* Never reached: no session starts without MPI. */
int emu_mpi_backend_end(emu_mpi *m) { return m->status; }
