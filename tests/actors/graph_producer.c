/* graph_producer.c: test producer for graph topologies: frames tagged with its instance number, then one meta:eof. */
#define NARVAL_PRODUCER
#include "graph.h"

GR_ACTOR(P)

const char *process_describe(void)
{
    return "graph_producer (producer): test actor; frames tagged with its instance number, logged to $GRAPH_LOG\n";
}

/* This block's frames, then the meta:eof once the run's frames are out
 * and it fits; NARVAL_E_OUTPUT_SIZE when not even one frame fits. */
static unsigned fill(gr_instance *in, adf_writer *w, unsigned total, unsigned *used)
{
    unsigned per_block = gr_env("GRAPH_PER_BLOCK", 2), tag = (unsigned)strtoul(in->who + 1, NULL, 10);
    unsigned count = total - in->next_seq < per_block ? total - in->next_seq : per_block;
    for (unsigned i = 0; i < count; i++) {
        unsigned seq = in->next_seq;
        adf_begin(w, GR_FRAME_ID, seq, 1000ull * seq);
        adf_put_le32(w, tag);
        if (adf_end(w) != ADF_OK)
            break;
        in->next_seq++;
    }
    if (in->next_seq == total && !in->eof_sent) {
        adf_eof e = {.frames = total, .bytes = (uint64_t)total * GR_FRAME_SIZE};
        in->eof_sent = adf_eof_write(w, total, 1000ull * total, &e) == ADF_OK;
    }
    *used = (unsigned)w->used;
    if (w->used == 0 && (count > 0 || !in->eof_sent)) {
        *used = count ? GR_FRAME_SIZE * count : ADF_KEY_SIZE + ADF_EOF_PAYLOAD;
        return NARVAL_E_OUTPUT_SIZE;
    }
    return NARVAL_OK;
}

void process_block(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    gr_instance *in = algo_data;
    adf_writer w;
    *used_size_of_output_buffer = 0;
    adf_writer_init(&w, output_buffer, size_of_output_buffer);
    *error_code = fill(in, &w, gr_frames(in->who), used_size_of_output_buffer);
    if (*error_code == NARVAL_OK)
        *error_code = gr_block(in, output_buffer, *used_size_of_output_buffer);
}
