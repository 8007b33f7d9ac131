/* monitor_http.c: the monitor's HTTP server, libmicrohttpd on its own thread: the page and the JSON endpoints (monitor.h). */
#include "monitor.h"
#include "emu.h"

#include <stdlib.h>

#ifdef NARWHAL_HAVE_MHD
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

struct emu_monitor {
    struct MHD_Daemon *daemon;
    emu_live *live;
};

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *type, char *text,
                                 enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    /* Every answer is the run as it is now. */
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result send_json(struct MHD_Connection *c, char *text)
{
    static char no_memory[] = "{\"error\":\"out of memory\"}\n";
    if (!text)
        return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "application/json", no_memory, MHD_RESPMEM_PERSISTENT);
    return send_text(c, MHD_HTTP_OK, "application/json", text, MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *message)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return MHD_NO;
    fprintf(out, "{\"error\":\"%s\"}\n", message);
    if (fclose(out) != 0) {
        free(text);
        return MHD_NO;
    }
    return send_text(c, status, "application/json", text, MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result spectrum(struct MHD_Connection *c, emu_live *l)
{
    const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "name");
    const char *actor = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "actor");
    const char *bins = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "bins");
    if (!name)
        return send_error(c, MHD_HTTP_BAD_REQUEST, "name=NAME is needed: /api/spectra lists the names");
    char *end = NULL;
    unsigned long max_bins = bins ? strtoul(bins, &end, 10) : 0;
    if (bins && (!*bins || *end || max_bins > 1u << 24))
        return send_error(c, MHD_HTTP_BAD_REQUEST, "bins=N takes a whole number up to 16777216");
    int found;
    char *text = emu_monitor_spectrum(l, name, actor, (unsigned)max_bins, &found);
    if (!text && !found)
        return send_error(c, MHD_HTTP_NOT_FOUND, "no such spectrum: /api/spectra lists them");
    return send_json(c, text);
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state)
{
    emu_monitor *m = cls;
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET");
    if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0)
        return send_text(c, MHD_HTTP_OK, "text/html; charset=utf-8", (char *)emu_monitor_page,
                         MHD_RESPMEM_PERSISTENT);
    if (strcmp(url, "/api/status") == 0)
        return send_json(c, emu_monitor_status(m->live));
    if (strcmp(url, "/api/actors") == 0)
        return send_json(c, emu_monitor_actors(m->live));
    if (strcmp(url, "/api/spectra") == 0)
        return send_json(c, emu_monitor_spectra(m->live));
    if (strcmp(url, "/api/spectrum") == 0)
        return spectrum(c, m->live);
    return send_error(c, MHD_HTTP_NOT_FOUND, "no such page: / and /api/{status,actors,spectra,spectrum}");
}

/* bind as a socket address (IPv4, else IPv6) with port. */
static int address(const char *bind, unsigned port, struct sockaddr_storage *sa, int *v6)
{
    struct sockaddr_in *in4 = (struct sockaddr_in *)sa;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
    memset(sa, 0, sizeof *sa);
    *v6 = 0;
    if (inet_pton(AF_INET, bind, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)port);
        return 0;
    }
    if (inet_pton(AF_INET6, bind, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        *v6 = 1;
        return 0;
    }
    return -1;
}

int emu_monitor_start(emu_monitor **out, emu_live *l, const char *bind, unsigned port, unsigned *bound, char *err,
                      size_t errlen)
{
    struct sockaddr_storage sa;
    int v6;
    *out = NULL;
    bind = bind ? bind : "127.0.0.1";
    if (port > 65535)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "--monitor %u: a port is 0 to 65535", port);
    if (address(bind, port, &sa, &v6) != 0)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "--monitor-bind %s: not an IPv4 or IPv6 address", bind);
    emu_monitor *m = calloc(1, sizeof *m);
    if (!m)
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "out of memory");
    m->live = l;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | (v6 ? MHD_USE_IPv6 : 0);
    errno = 0;
    m->daemon = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, answer, m, MHD_OPTION_SOCK_ADDR, &sa,
                                 MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
    if (!m->daemon) {
        int why = errno;
        free(m);
        return emu_fail(err, errlen, EMU_E_TOPOLOGY, "--monitor: cannot serve on %s port %u: %s", bind, port,
                        why ? strerror(why) : "libmicrohttpd refused");
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(m->daemon, MHD_DAEMON_INFO_BIND_PORT);
    *bound = info ? info->port : port;
    *out = m;
    return EMU_OK;
}

void emu_monitor_stop(emu_monitor *m)
{
    if (!m)
        return;
    MHD_stop_daemon(m->daemon);
    free(m);
}

#else

int emu_monitor_start(emu_monitor **m, emu_live *l, const char *bind, unsigned port, unsigned *bound, char *err,
                      size_t errlen)
{
    *m = NULL;
    return emu_fail(err, errlen, EMU_E_TOPOLOGY,
                    "--monitor needs libmicrohttpd, and this narwhal was built without it (install "
                    "libmicrohttpd-dev, then make again)");
}

void emu_monitor_stop(emu_monitor *m) { free(m); }

#endif
