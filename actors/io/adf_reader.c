/* adf_reader.c: producer that reads ADF files and emits their frames, whole and in order. */
#define NARVAL_PRODUCER
#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kit.h"
#include "kit_crystals.h"

typedef struct reader_conf {
    kit_list files;
    int64_t repeat;
    int64_t max_frames;
    kit_list crystals;
    int64_t read_threads;
    bool read_ahead;
} reader_conf;

static const kit_key reader_keys[] = {
    { "File", KIT_LIST, offsetof(reader_conf, files), NULL,
      .help = "ADF files read in this order (several per line, or several File lines)" },
    { "Repeat", KIT_INT, offsetof(reader_conf, repeat), "1", KIT_RANGE(1, 1000000000),
      .help = "times the whole list is read (replay throughput tests)" },
    { "MaxFrames", KIT_INT, offsetof(reader_conf, max_frames), "0", KIT_MIN(0),
      .help = "end of data after this many frames (0: every frame)" },
    { "Crystals", KIT_LIST, offsetof(reader_conf, crystals), "all",
      .help = "all: every frame; ids and ranges (175, 0-2): only those crystals' data:crystal, data:psa and "
              "meta:sync frames (a crystal's producer: adf-split's files carry the meta:sync an event "
              "builder needs), other frames left out and counted at stop" },
    { "Threads", KIT_INT, offsetof(reader_conf, read_threads), "auto", KIT_RANGE(1, ADF_FILE_MAX_READ_THREADS),
      .word = "auto", .word_value = 0,
      .help = "threads that copy each block out of the page cache (1-64); auto: half the CPUs the process may "
              "run on, at least 4 and at most 8" },
    { "ReadAhead", KIT_BOOL, offsetof(reader_conf, read_ahead), "on",
      .help = "on: while the other actors work on a block, a thread reads the bytes of the next into a buffer "
              "of the reader's own (one more block of memory) and finds its frames, and the next call copies them "
              "from there; the frames emitted are the same (H200, replay_chain_wide: 5-8 % faster)" },
};

static unsigned check_conf(const char *directory_path);

static const kit_spec reader_spec = {
    "ADFReader", "producer",
    "reads ADF files and emits their frames, whole and in order, then one meta:eof; every run (each "
    "process_start) reads the files again from the beginning; the files' own meta:eof frames are not "
    "passed on",
    reader_keys, KIT_COUNT(reader_keys), sizeof(reader_conf), check_conf,
};

static reader_conf conf;
static kit_crystals selection;

typedef struct file_count {
    uint64_t frames, bytes;
} file_count;

typedef struct reader {
    kit_instance k;
    file_count *count;  /* per file of the list, summed over the passes of this run */
    adf_file *file;     /* the file being read; NULL between files */
    size_t current;     /* its index in conf.files */
    uint64_t opened;    /* files opened this run, counting every pass */
    uint64_t frames, bytes; /* emitted this run, meta:eof not included */
    uint64_t file_eofs; /* meta:eof frames of the files, left out */
    uint64_t others;    /* frames of crystals not selected (or of none), left out */
    uint64_t pass_kept; /* frames kept in the current pass over the list */
    adf_read_stats stats; /* the files' large reads, summed over the files closed this run */
    double keeping, telling; /* seconds in keep_frames and in the host's origin callback */
    unsigned long long *at; /* the file offset of each frame kept from one read, for the host */
    size_t cap_at;
    adf_key last;       /* key of the last frame emitted: the meta:eof's comes from it */
    bool done;          /* no data frame left this run */
    bool eof_sent;      /* the run's meta:eof went out: the next call ends the run */
} reader;

static unsigned close_file(reader *r)
{
    if (!r->file)
        return 0;
    adf_read_stats st;
    adf_file_read_stats(r->file, &st);
    r->stats.taken += st.taken;
    r->stats.missed += st.missed;
    r->stats.waited += st.waited;
    r->stats.copying += st.copying;
    r->stats.checking += st.checking;
    int rc = adf_file_close(r->file);
    r->file = NULL;
    if (rc != ADF_OK)
        return kit_fail(r->k.name, NARVAL_E_IO, "closing '%s': %s", conf.files.v[r->current],
                        strerror(errno));
    return 0;
}

/* Threads: auto takes half the CPUs (on the H200's 16 threads, 8 copy
 * 47 GB/s out of the page cache against 4's 25), at least the 4 the reader
 * always had and at most 8: in a pipelined chain the other actors' threads
 * want the rest. */
static unsigned read_threads(void)
{
    int half = omp_get_num_procs() / 2;
    if (conf.read_threads > 0)
        return (unsigned)conf.read_threads;
    return half < ADF_FILE_READ_THREADS ? ADF_FILE_READ_THREADS : half > 8 ? 8 : (unsigned)half;
}

/* Opens the next file of the sequence (the list, Repeat times), or marks the end of data. */
static unsigned open_next(reader *r)
{
    uint64_t total = (uint64_t)conf.files.n * (uint64_t)conf.repeat;
    bool pass_ends = r->opened > 0 && r->opened % conf.files.n == 0;
    if (pass_ends && r->pass_kept == 0 && r->opened < total) {
        /* files that gave nothing give nothing again: one call must not read them Repeat times */
        kit_log(r->k.name, KIT_WARN, "pass %llu over the files gave no frame to emit: the %llu passes left "
                "are skipped", (unsigned long long)(r->opened / conf.files.n),
                (unsigned long long)(total - r->opened) / conf.files.n);
        r->opened = total;
    }
    if (pass_ends)
        r->pass_kept = 0;
    if (r->opened == total) {
        r->done = true;
        return 0;
    }
    r->current = (size_t)(r->opened % conf.files.n);
    const char *path = conf.files.v[r->current];
    if (adf_file_open_read(&r->file, path) != ADF_OK)
        return kit_fail(r->k.name, NARVAL_E_IO, "cannot open '%s': %s", path, strerror(errno));
    adf_file_set_read_threads(r->file, read_threads()); /* in range: the key's */
    if (conf.read_ahead && adf_file_set_read_ahead(r->file, 1) != ADF_OK)
        kit_log(r->k.name, KIT_WARN, "%s: no memory to read ahead: read in each call", path);
    r->opened++;
    kit_log(r->k.name, KIT_DEBUG, "reading %s (pass %llu of %lld)", path,
            (unsigned long long)((r->opened - 1) / conf.files.n + 1), (long long)conf.repeat);
    return 0;
}

/* With a Crystals selection: whether the frame at p (whole, valid) is of a
 * selected crystal: data:crystal, data:psa and meta:sync carry its id first. */
static bool selected(const uint8_t *p, uint32_t length, uint32_t id)
{
    if (selection.all)
        return true;
    if ((id != ADF_ID_NW_CRYSTAL && id != ADF_ID_DATA_PSA && id != ADF_ID_META_SYNC) || length < ADF_KEY_SIZE + 2)
        return false;
    return kit_crystals_has(&selection, adf_get_u16(p + ADF_KEY_SIZE));
}

/* Keeps the data frames of a block that adf_file_read filled (so already
 * valid), moved to the front, and at most MaxFrames in the run: the files'
 * own meta:eof frames are left out, because the reader ends the data with
 * exactly one of its own, and so are the frames a Crystals selection does
 * not take.  Returns the bytes kept; *frames the frames kept. */
static size_t keep_frames(reader *r, uint8_t *buf, size_t got, uint64_t base, size_t *frames)
{
    uint64_t left = conf.max_frames ? (uint64_t)conf.max_frames - r->frames : UINT64_MAX;
    size_t at = 0, last = 0;
    *frames = 0;
    for (size_t off = 0; off < got && *frames < left;) {
        uint32_t length = adf_get_u32(buf + off), id = adf_get_u32(buf + off + 4);
        if (id == ADF_ID_META_EOF) {
            r->file_eofs++;
        } else if (!selected(buf + off, length, id)) {
            r->others++;
        } else {
            if (at != off)
                memmove(buf + at, buf + off, length);
            if (r->at)
                r->at[*frames] = base + off;
            last = at;
            at += length;
            (*frames)++;
        }
        off += length;
    }
    if (*frames == left)
        r->done = true;
    if (*frames)
        adf_key_decode(buf + last, &r->last);
    return at;
}

/* The frame at `offset` of the current file, whose key claims `length`
 * bytes: "PATH: the frame at byte X (NAME, event E) claims L bytes"; its key
 * and the two bytes after it (a crystal's id) are read again from the file
 * into head (adf_file keeps only its length): false when the key cannot be. */
static bool name_frame(const reader *r, uint64_t offset, size_t length, uint8_t head[ADF_KEY_SIZE + 2], char *out,
                       size_t len)
{
    const char *path = conf.files.v[r->current];
    adf_key k = { 0 };
    FILE *fp = fopen(path, "rb");
    memset(head, 0, ADF_KEY_SIZE + 2);
    bool read = fp && fseeko(fp, (off_t)offset, SEEK_SET) == 0 && fread(head, 1, ADF_KEY_SIZE + 2, fp) >= ADF_KEY_SIZE;
    if (fp)
        fclose(fp);
    if (read)
        adf_key_decode(head, &k);
    char id[32];
    snprintf(id, sizeof id, "key id 0x%08x", (unsigned)k.id);
    snprintf(out, len, "%s: the frame at byte %llu (%s, event %u) claims %zu bytes", path,
             (unsigned long long)offset, adf_id_name(k.id) ? adf_id_name(k.id) : id, (unsigned)k.event, length);
    return read;
}

/* The next frame, one the reader leaves out (keep_frames), read into a buffer of its own and counted there. */
static unsigned skip_frame(reader *r, size_t length, const char *what)
{
    char msg[512];
    size_t got = 0, frames = 0;
    uint64_t at = adf_file_offset(r->file);
    uint8_t *frame = malloc(length);
    if (!frame)
        return kit_fail(r->k.name, NARVAL_E_NOMEM, "%s: no memory to read it past", what);
    int rc = adf_file_read(r->file, frame, length, &got, &frames);
    if (rc == ADF_OK && frames == 1)
        keep_frames(r, frame, got, at, &frames);
    free(frame);
    if (rc != ADF_OK) {
        adf_file_describe(r->file, rc, msg, sizeof msg);
        return kit_fail(r->k.name, kit_adf_code(rc), "%s", msg);
    }
    kit_log(r->k.name, KIT_DEBUG, "%s, more than the block has: left out without it", what);
    return 0;
}

/* A frame larger than the empty block: one that claims more bytes than its
 * file has left is a corrupt length (NARVAL_E_INPUT); one the reader leaves
 * out anyway (a file's meta:eof, a crystal not selected) is read past, so
 * that the block's size never has to hold it (0: the block reads on); any
 * other needs a larger buffer (NARVAL_E_OUTPUT_SIZE, *used its size). */
static unsigned frame_too_big(reader *r, unsigned cap, unsigned *used)
{
    char what[PATH_MAX + 160];
    uint8_t head[ADF_KEY_SIZE + 2];
    struct stat st;
    uint64_t at = adf_file_offset(r->file);
    size_t length = adf_file_next_length(r->file);
    bool known = name_frame(r, at, length, head, what, sizeof what);
    if (stat(conf.files.v[r->current], &st) == 0 && (uint64_t)st.st_size - at < length)
        return kit_fail(r->k.name, NARVAL_E_INPUT, "%s, but the file has %llu bytes from there: an impossible "
                        "length (a corrupt key)", what, (unsigned long long)((uint64_t)st.st_size - at));
    if (length > UINT32_MAX)
        return kit_fail(r->k.name, NARVAL_E_INPUT, "%s, more than a NARVAL buffer can hold", what);
    uint32_t id = adf_get_u32(head + 4);
    if (known && (id == ADF_ID_META_EOF || !selected(head, (uint32_t)length, id)))
        return skip_frame(r, length, what);
    *used = (unsigned)length;
    kit_log(r->k.name, KIT_DEBUG, "%s, the buffer has %u", what, cap);
    return NARVAL_E_OUTPUT_SIZE;
}

/* Room for the file offsets of the frames one read may keep (a frame is at
 * least a key), when a host wants them. */
static unsigned offsets_room(reader *r, unsigned cap)
{
    size_t need = cap / ADF_KEY_SIZE + 1;
    if (!kit_host() || !kit_host()->origin || need <= r->cap_at)
        return 0;
    unsigned long long *at = realloc(r->at, need * sizeof *at);
    if (!at)
        return kit_fail(r->k.name, NARVAL_E_NOMEM, "no memory for the offsets of %zu frames", need);
    r->at = at;
    r->cap_at = need;
    return 0;
}

/* Appends to the block what the current file has that fits (opening the
 * next file first when needed).  *full: nothing more fits, or a problem of
 * the file waits for the next call (the frames before it go out first). */
static unsigned read_frames(reader *r, uint8_t *out, unsigned cap, unsigned *used, bool *full)
{
    char msg[512];
    unsigned code;
    if (!r->file && ((code = open_next(r)) != 0 || r->done))
        return code;
    if ((code = offsets_room(r, cap)) != 0)
        return code;
    size_t got = 0, frames = 0;
    uint64_t base = adf_file_offset(r->file);
    int rc = adf_file_read(r->file, out + *used, cap - *used, &got, &frames);
    if (rc != ADF_OK && *used > 0) {
        *full = true;
        return 0;
    }
    if (rc == ADF_E_TOO_BIG)
        return frame_too_big(r, cap, used);
    if (rc != ADF_OK) {
        adf_file_describe(r->file, rc, msg, sizeof msg);
        return kit_fail(r->k.name, kit_adf_code(rc), "%s", msg);
    }
    if (got == 0)
        return close_file(r);
    bool next_waits = adf_file_next_length(r->file) > 0; /* the file's next frame did not fit */
    double t0 = omp_get_wtime();
    got = keep_frames(r, out + *used, got, base, &frames);
    double t1 = omp_get_wtime();
    if (frames && r->at)
        kit_host()->origin(kit_host()->ctx, conf.files.v[r->current], out + *used, got, r->at, frames);
    r->keeping += t1 - t0;
    r->telling += omp_get_wtime() - t1;
    r->pass_kept += frames;
    r->count[r->current].frames += frames;
    r->count[r->current].bytes += got;
    r->frames += frames;
    r->bytes += got;
    *used += (unsigned)got;
    *full = next_waits && *used > 0; /* a block of meta:eof frames only reads on */
    return r->done ? close_file(r) : 0;
}

/* The run's meta:eof, after the last data frame when it fits there, else
 * alone in the next block; its payload counts what came before it, its key
 * holds the event number after the last frame's and that frame's timestamp
 * (mkadf's convention, so that a recorded stream replays byte for byte). */
static unsigned append_eof(reader *r, uint8_t *out, unsigned cap, unsigned *used)
{
    adf_writer w;
    adf_eof e = { r->frames > UINT32_MAX ? UINT32_MAX : (uint32_t)r->frames, r->bytes };
    adf_writer_init(&w, out + *used, cap - *used);
    if (adf_eof_write(&w, r->frames ? r->last.event + 1 : 0, r->last.timestamp, &e) == ADF_OK) {
        *used += (unsigned)w.used;
        r->eof_sent = true;
        return 0;
    }
    if (*used > 0)
        return 0;
    *used = ADF_KEY_SIZE + ADF_EOF_PAYLOAD;
    kit_log(r->k.name, KIT_DEBUG, "meta:eof needs %u bytes, the buffer has %u", *used, cap);
    return NARVAL_E_OUTPUT_SIZE;
}

/* Fills the block across files, so that the meta:eof can follow the last
 * data frame in the same block; after the meta:eof, *used = 0 ends the run. */
static unsigned read_block(reader *r, uint8_t *out, unsigned cap, unsigned *used)
{
    unsigned code = 0;
    bool full = false;
    *used = 0;
    while (code == 0 && !full && !r->done)
        code = read_frames(r, out, cap, used, &full);
    if (code || !r->done || r->eof_sent)
        return code;
    return append_eof(r, out, cap, used);
}

/* Fails at initialise, not in the middle of a run, when a file cannot be
 * opened.  Runs again after every process_reset: the files are checked again. */
static unsigned reader_initialise(void *algo_data)
{
    reader *r = algo_data;
    for (size_t i = 0; i < conf.files.n; i++) {
        adf_file *f;
        if (adf_file_open_read(&f, conf.files.v[i]) != ADF_OK)
            return kit_fail(r->k.name, NARVAL_E_IO, "cannot open '%s': %s", conf.files.v[i],
                            strerror(errno));
        adf_file_close(f);
    }
    free(r->count);
    r->count = calloc(conf.files.n, sizeof *r->count);
    if (!r->count)
        return kit_fail(r->k.name, NARVAL_E_NOMEM, "no memory for %zu file counters",
                        conf.files.n);
    return 0;
}

/* Every run starts from the first frame of the first file. */
static unsigned reader_start(void *algo_data)
{
    reader *r = algo_data;
    unsigned code = close_file(r);
    memset(r->count, 0, conf.files.n * sizeof *r->count);
    r->opened = 0;
    r->frames = r->bytes = r->file_eofs = r->others = r->pass_kept = 0;
    r->stats = (adf_read_stats){ 0 };
    r->keeping = r->telling = 0;
    r->last = (adf_key){ 0 };
    r->done = r->eof_sent = false;
    return code ? code : open_next(r);
}

static unsigned reader_stop(void *algo_data)
{
    reader *r = algo_data;
    unsigned code = close_file(r);
    for (size_t i = 0; i < conf.files.n; i++)
        kit_log(r->k.name, KIT_INFO, "%s: %llu frames, %llu bytes", conf.files.v[i],
                (unsigned long long)r->count[i].frames, (unsigned long long)r->count[i].bytes);
    kit_log(r->k.name, KIT_INFO, "emitted %llu frames (%llu bytes)%s", (unsigned long long)r->frames,
            (unsigned long long)r->bytes,
            r->eof_sent ? ", then meta:eof" : ", no meta:eof: the run was stopped before the end of the data");
    if (r->stats.copying > 0)
        kit_log(r->k.name, KIT_INFO, "large reads: %.3f s copying into the blocks, %.3f s checking their frames; "
                "%.3f s keeping the frames to emit, %.3f s telling the host where they came from",
                r->stats.copying, r->stats.checking, r->keeping, r->telling);
    if (r->stats.taken + r->stats.missed)
        kit_log(r->k.name, KIT_INFO, "ReadAhead: %llu large reads copied from the bytes read ahead, %llu read in "
                "the call (a file's end); %.3f s waited for a read ahead to finish", r->stats.taken,
                r->stats.missed, r->stats.waited);
    if (r->file_eofs)
        kit_log(r->k.name, KIT_INFO, "%llu meta:eof frames of the files not passed on",
                (unsigned long long)r->file_eofs);
    if (r->others) {
        char which[256];
        kit_crystals_describe(&selection, which, sizeof which);
        kit_log(r->k.name, KIT_INFO, "%llu frames not of crystals %s left out", (unsigned long long)r->others,
                which);
    }
    return code;
}

/* A reset in the middle of a run leaves a file open. */
static unsigned reader_reset(void *algo_data) { return close_file(algo_data); }

static void reader_release(void *algo_data)
{
    reader *r = algo_data;
    close_file(r);
    free(r->count);
    free(r->at);
}

/* The crystal selection, and every file readable, before any run (reader_spec's check). */
static unsigned check_conf(const char *directory_path)
{
    char msg[1536];
    char *path = kit_conf_path(directory_path, reader_spec.actor);
    if (!path)
        return kit_fail(reader_spec.actor, NARVAL_E_NOMEM, "out of memory");
    kit_crystals_free(&selection);
    unsigned code = kit_crystals_read(&conf.crystals, path, "Crystals", &selection, msg, sizeof msg);
    for (size_t i = 0; !code && i < conf.files.n; i++)
        code = kit_check_input(conf.files.v[i], "File", path, conf.files.line[i], msg, sizeof msg);
    free(path);
    return code ? kit_fail(reader_spec.actor, code, "%s", msg) : 0;
}

void process_config(const char *directory_path, unsigned int *error_code)
{
    *error_code = kit_config(&reader_spec, directory_path, &conf);
}

const char *process_describe(void) { return kit_describe(&reader_spec); }

void *process_register(unsigned int *error_code)
{
    return kit_register(sizeof(reader), error_code);
}

KIT_LIFECYCLE(reader_initialise, reader_start, reader_stop, reader_reset, reader_release)

void process_block(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    *used_size_of_output_buffer = 0;
    if ((*error_code = kit_enter(algo_data, KIT_BLOCK)) == 0)
        *error_code = read_block(algo_data, output_buffer, size_of_output_buffer,
                                 used_size_of_output_buffer);
}

/* Narwhal's live view (narval.h): with MaxFrames, the frames emitted of it;
 * else the bytes read of the files' sizes, Repeat times (stat'ed here: a
 * file is not expected to change under a run, and a few stats a block cost
 * nothing beside reading it). */
void process_progress(void *algo_data, unsigned long long *done, unsigned long long *total, const char **unit)
{
    const reader *r = algo_data;
    struct stat st;
    uint64_t list = 0, before = 0;
    uint64_t read_whole = r->file ? r->opened - 1 : r->opened; /* files read to their end */
    if (conf.max_frames) {
        *done = r->frames;
        *total = (unsigned long long)conf.max_frames;
        *unit = "frames";
        return;
    }
    for (size_t i = 0; i < conf.files.n; i++) {
        uint64_t size = stat(conf.files.v[i], &st) == 0 ? (uint64_t)st.st_size : 0;
        list += size;
        before += i < read_whole % conf.files.n ? size : 0;
    }
    *done = read_whole / conf.files.n * list + before + (r->file ? adf_file_offset(r->file) : 0);
    *total = list * (uint64_t)conf.repeat;
    *unit = "bytes";
}
