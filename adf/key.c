/* key.c: the 20-byte ADF key, key ids and their names (AGATA's and Narwhal's), floats in frames, status sentences. */
#include "adf.h"

#include <string.h>

static const struct {
    uint32_t id;
    const char *name;
} id_names[] = {
    {ADF_ID_DATA_PSA, "data:psa"},
    {ADF_ID_EVENT_DATA_PSA, "event:data:psa"},
    {ADF_ID_META_EOF, "meta:eof"},
    {ADF_ID_META_SYNC, "meta:sync"},
    {ADF_ID_AGATA_CRYSTAL, "data:crystal"},
    {ADF_ID_AGATA_CCRYSTAL, "data:ccrystal"},
    {ADF_ID_DATA_EB, "data:eb"},
    {ADF_ID_DATA_MERGER, "data:merger"},
    {ADF_ID_AGATA_TRACKED, "data:tracked"},
    {ADF_ID_DATA_RANC0, "data:ranc0"},
    {ADF_ID_DATA_RANC1, "data:ranc1"},
    {ADF_ID_DATA_RANC2, "data:ranc2"},
    {ADF_ID_EVENT_DATA, "event:data"},
    {ADF_ID_EVENT_DATA_CRYSTAL, "event:data:crystal"},
    {ADF_ID_EVENT_DATA_TRACKED, "event:data:tracked"},
    {ADF_ID_CONF_GLOBAL, "conf:global"},
    {ADF_ID_CONF_CRYSTAL, "conf:crystal"},
    {ADF_ID_CONF_PSA, "conf:psa"},
    {ADF_ID_CONF_EB, "conf:eb"},
    {ADF_ID_CONF_MERGER, "conf:merger"},
    {ADF_ID_CONF_TRACKED, "conf:tracked"},
    {ADF_ID_CONF_RANC0, "conf:ranc0"},
    {ADF_ID_CONF_RANC1, "conf:ranc1"},
    {ADF_ID_CONF_RANC2, "conf:ranc2"},
    {ADF_ID_META_VERTEX, "meta:vertex"},
    {ADF_ID_NW_TRUTH, "narwhal:truth"},
    {ADF_ID_NW_CRYSTAL, "narwhal:crystal"},
    {ADF_ID_NW_TRACKED, "narwhal:tracked"},
};
#define N_ID_NAMES (sizeof id_names / sizeof id_names[0])

const char *adf_id_name(uint32_t id)
{
    for (size_t i = 0; i < N_ID_NAMES; i++)
        if (id_names[i].id == id)
            return id_names[i].name;
    return NULL;
}

uint32_t adf_id_from_name(const char *name)
{
    if (!name)
        return 0;
    for (size_t i = 0; i < N_ID_NAMES; i++)
        if (strcmp(id_names[i].name, name) == 0)
            return id_names[i].id;
    return 0;
}

void adf_put_f32(uint8_t *p, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    adf_put_u32(p, bits);
}

void adf_key_encode(uint8_t dst[ADF_KEY_SIZE], const adf_key *key)
{
    adf_put_u32(dst, key->length);
    adf_put_u32(dst + 4, key->id);
    adf_put_u32(dst + 8, key->event);
    adf_put_u64(dst + 12, key->timestamp);
}

void adf_key_decode(const uint8_t src[ADF_KEY_SIZE], adf_key *key)
{
    key->length = adf_get_u32(src);
    key->id = adf_get_u32(src + 4);
    key->event = adf_get_u32(src + 8);
    key->timestamp = adf_get_u64(src + 12);
}

const char *adf_strerror(int status)
{
    switch (status) {
    case ADF_OK: return "success";
    case ADF_E_ARG: return "invalid argument";
    case ADF_E_SHORT: return "frame length below the 20-byte key";
    case ADF_E_PAST_END: return "frame runs past the end of the buffer";
    case ADF_E_SUB_OVERRUN: return "sub-frame runs past the end of its composite parent";
    case ADF_E_TOO_DEEP: return "composite frames nested too deep";
    case ADF_E_NOSPACE: return "frame does not fit in the buffer";
    case ADF_E_NESTING: return "frame nesting error (end without begin, or children of a non-composite)";
    case ADF_E_WRONG_ID: return "frame is not of the expected type";
    case ADF_E_PAYLOAD: return "payload size or contents inconsistent";
    case ADF_E_IO: return "input/output error";
    case ADF_E_TRUNCATED: return "file ends inside a frame";
    case ADF_E_TOO_BIG: return "frame larger than the whole buffer";
    case ADF_E_NOMEM: return "out of memory";
    case ADF_E_LIMIT: return "count exceeds a documented limit";
    default: return "unknown libadf status";
    }
}
