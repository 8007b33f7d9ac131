/* fuzz_dump.c: libFuzzer target: `narwhal dump` (emu_dump) on a file holding the mutated input. */
#include <string.h>

#include "dump.h"
#include "emu.h"
#include "common.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_make_dir("dump");
    devnull = fopen("/dev/null", "w");
    FZ_CHECK(devnull != NULL);
    return 0;
}

/* Every file dumps or ends with one line naming it; never anything else. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[1024] = "";
    const char *path = fz_input_file(data, size);
    unsigned long long max = size > 0 && data[0] < 4 ? data[0] : 0; /* sometimes only the first frames */
    int rc = emu_dump(path, max, devnull, err, sizeof err);
    if (rc != EMU_OK)
        FZ_CHECK(rc == EMU_E_RUN && strncmp(err, path, strlen(path)) == 0 && !strchr(err, '\n'));
    return 0;
}
