/* l_http.c: a thin Lua binding of libcurl's multi interface (module "kreach.core.http"), for
 * the language-model APIs `kreach generate` talks to (issue 19). Bindings layer, no GPU.
 *
 * libcurl is loaded with dlopen on first use ("libcurl.so.4", or $KREACH_LIBCURL), as cuDNN is:
 * kreach runs on a machine without it, and only an HTTP request then fails, naming the library.
 * The headers (Debian's libcurl4-openssl-dev) give the types and constants at build time.
 *
 *   local m = http.multi()                      -- a set of transfers in flight
 *   m:add{ id = 1, url = "...", method = "POST", headers = { "Content-Type: application/json" },
 *          body = "...", connect_timeout_ms = 10000, timeout_ms = 60000 }
 *   local done, running = m:poll(0.5)           -- waits up to 0.5 s for progress
 *   -- done: { { id =, status = 200, body =, headers = "raw response headers", error = nil |
 *   --          "curl's message", code = curl's code, total_s = } ... }
 *   m:close()
 *
 * Only http and https are spoken: a file:// or ftp:// URL fails as a transfer ("Protocol ...
 * not supported", code 1). Policy (retries, backoff, concurrency limits) is the Lua side's
 * (kreach.http). TLS and the standard proxy variables (http_proxy, https_proxy, no_proxy) are
 * libcurl's defaults. Neither the request's headers nor its body appear in anything this
 * returns. */
#include "kr_lua.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define KR_HTTP_MT "kreach.HttpMulti"
#define MAX_BODY_BYTES ((size_t)16 << 20) /* a response larger than this fails (a runaway server) */

/* ---- libcurl, loaded at run time ---- */

static struct {
    int tried;
    char why[512];
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    CURLMcode (*multi_cleanup)(CURLM *);
    const char *(*multi_strerror)(CURLMcode);
    char *(*version)(void);
} api;

/* Loads libcurl once; returns 1, or 0 with api.why set. */
static int load_curl(void) {
    if (api.tried) return api.why[0] == 0;
    api.tried = 1;
    const char *path = getenv("KREACH_LIBCURL");
    if (!path || !*path) path = "libcurl.so.4";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(api.why, sizeof api.why, "cannot load libcurl (%s): %s (install libcurl4, or set KREACH_LIBCURL)",
                 path, dlerror());
        return 0;
    }
#define SYM(field, name)                                                                           \
    do {                                                                                           \
        *(void **)&api.field = dlsym(h, name);                                                     \
        if (!api.field) {                                                                          \
            snprintf(api.why, sizeof api.why, "%s has no %s", path, name);                        \
            return 0;                                                                              \
        }                                                                                          \
    } while (0)
    SYM(global_init, "curl_global_init");
    SYM(easy_init, "curl_easy_init");
    SYM(easy_setopt, "curl_easy_setopt");
    SYM(easy_getinfo, "curl_easy_getinfo");
    SYM(easy_cleanup, "curl_easy_cleanup");
    SYM(easy_strerror, "curl_easy_strerror");
    SYM(slist_append, "curl_slist_append");
    SYM(slist_free_all, "curl_slist_free_all");
    SYM(multi_init, "curl_multi_init");
    SYM(multi_add_handle, "curl_multi_add_handle");
    SYM(multi_remove_handle, "curl_multi_remove_handle");
    SYM(multi_perform, "curl_multi_perform");
    SYM(multi_poll, "curl_multi_poll");
    SYM(multi_info_read, "curl_multi_info_read");
    SYM(multi_cleanup, "curl_multi_cleanup");
    SYM(multi_strerror, "curl_multi_strerror");
    SYM(version, "curl_version");
#undef SYM
    CURLcode rc = api.global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        snprintf(api.why, sizeof api.why, "curl_global_init: %s", api.easy_strerror(rc));
        return 0;
    }
    return 1;
}

static void need_curl(lua_State *L) {
    if (!load_curl()) luaL_error(L, "http: %s", api.why);
}

/* ---- a transfer ---- */

typedef struct xfer {
    CURL *e;
    struct curl_slist *hdrs;
    char *req_body;          /* our copy: libcurl reads it during the transfer */
    char *body, *head;       /* the response's body and raw headers */
    size_t body_n, body_cap, head_n, head_cap;
    int too_big;
    lua_Integer id;
    char errbuf[CURL_ERROR_SIZE];
    struct xfer *next;       /* the multi's list of transfers in flight */
} xfer;

typedef struct {
    CURLM *m;
    xfer *live;
} lmulti;

static int grow(char **p, size_t *n, size_t *cap, const char *data, size_t len) {
    if (*n + len + 1 > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *n + len + 1) c *= 2;
        char *q = realloc(*p, c);
        if (!q) return 0;
        *p = q;
        *cap = c;
    }
    memcpy(*p + *n, data, len);
    *n += len;
    (*p)[*n] = 0;
    return 1;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud) {
    xfer *x = ud;
    size_t len = size * nmemb;
    if (x->body_n + len > MAX_BODY_BYTES) {
        x->too_big = 1;
        return 0; /* libcurl stops with CURLE_WRITE_ERROR */
    }
    return grow(&x->body, &x->body_n, &x->body_cap, data, len) ? len : 0;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud) {
    xfer *x = ud;
    size_t len = size * nmemb;
    if (x->head_n + len > (1 << 20)) return 0;
    return grow(&x->head, &x->head_n, &x->head_cap, data, len) ? len : 0;
}

static void xfer_free(xfer *x) {
    if (!x) return;
    if (x->e) api.easy_cleanup(x->e);
    if (x->hdrs) api.slist_free_all(x->hdrs);
    free(x->req_body);
    free(x->body);
    free(x->head);
    free(x);
}

static lmulti *checkmulti(lua_State *L, int idx) {
    lmulti *u = luaL_checkudata(L, idx, KR_HTTP_MT);
    if (!u->m) luaL_argerror(L, idx, "the multi handle is closed");
    return u;
}

/* http.multi() -> a multi handle */
static int l_multi(lua_State *L) {
    need_curl(L);
    lmulti *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->m = NULL;
    u->live = NULL;
    luaL_setmetatable(L, KR_HTTP_MT);
    u->m = api.multi_init();
    if (!u->m) return luaL_error(L, "http: curl_multi_init failed");
    return 1;
}

static int l_multi_close(lua_State *L) {
    lmulti *u = luaL_checkudata(L, 1, KR_HTTP_MT);
    if (!u->m) return 0;
    for (xfer *x = u->live, *n; x; x = n) {
        n = x->next;
        api.multi_remove_handle(u->m, x->e);
        xfer_free(x);
    }
    u->live = NULL;
    api.multi_cleanup(u->m);
    u->m = NULL;
    return 0;
}

/* Limits a transfer to http and https, redirects included (kreach never follows one, but a
 * transfer must not reach file://, ftp:// and the rest of libcurl's protocols: a base URL comes
 * from the user's configuration). libcurl 7.85 and later take the names; an older library
 * loaded at run time takes the bits of the options they replaced (181 and 182, spelled as
 * numbers: the headers mark them deprecated). Returns 1, or 0 when neither is accepted. */
static int only_http(CURL *e) {
    if (api.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK &&
        api.easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") == CURLE_OK)
        return 1;
    long bits = CURLPROTO_HTTP | CURLPROTO_HTTPS;
    return api.easy_setopt(e, (CURLoption)(CURLOPTTYPE_LONG + 181), bits) == CURLE_OK &&
           api.easy_setopt(e, (CURLoption)(CURLOPTTYPE_LONG + 182), bits) == CURLE_OK;
}

#define SETOPT(opt, val)                                                                           \
    do {                                                                                           \
        CURLcode rc_ = api.easy_setopt(x->e, opt, val);                                            \
        if (rc_ != CURLE_OK) {                                                                     \
            const char *msg_ = api.easy_strerror(rc_);                                             \
            xfer_free(x);                                                                          \
            return luaL_error(L, "http: %s: %s", #opt, msg_);                                      \
        }                                                                                          \
    } while (0)

/* m:add{id =, url =, method = "GET" | "POST", headers = {"K: V", ...}, body =,
 * connect_timeout_ms =, timeout_ms =} */
static int l_multi_add(lua_State *L) {
    lmulti *u = checkmulti(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const known[] = {"id", "url", "method", "headers", "body", "connect_timeout_ms",
                                        "timeout_ms", NULL};
    kr_lua_check_options(L, 2, "http request", known);
    lua_Integer id = kr_lua_optint_field(L, 2, "id", 0);
    const char *url = kr_lua_optstr_field(L, 2, "url", NULL);
    if (!url) return luaL_error(L, "http request: url is required");
    const char *method = kr_lua_optstr_field(L, 2, "method", "GET");
    if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0)
        return luaL_error(L, "http request: method '%s' (GET or POST)", method);
    lua_Integer cto = kr_lua_optint_field(L, 2, "connect_timeout_ms", 10000);
    lua_Integer to = kr_lua_optint_field(L, 2, "timeout_ms", 60000);
    if (cto < 1 || to < 1) return luaL_error(L, "http request: timeouts are positive milliseconds");
    size_t blen = 0;
    const char *body = NULL;
    lua_getfield(L, 2, "body");
    if (!lua_isnil(L, -1)) body = luaL_checklstring(L, -1, &blen);

    xfer *x = calloc(1, sizeof *x);
    if (!x) return luaL_error(L, "http: out of memory");
    x->id = id;
    x->e = api.easy_init();
    if (!x->e) {
        free(x);
        return luaL_error(L, "http: curl_easy_init failed");
    }
    lua_getfield(L, 2, "headers");
    if (!lua_isnil(L, -1)) {
        luaL_checktype(L, -1, LUA_TTABLE);
        lua_Integer n = luaL_len(L, -1);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_geti(L, -1, i);
            const char *h = lua_tostring(L, -1);
            if (!h || lua_type(L, -1) != LUA_TSTRING) {
                xfer_free(x);
                return luaL_error(L, "http request: headers[%d] is not a string", (int)i);
            }
            struct curl_slist *s = api.slist_append(x->hdrs, h);
            if (!s) {
                xfer_free(x);
                return luaL_error(L, "http: out of memory");
            }
            x->hdrs = s;
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    SETOPT(CURLOPT_URL, url);
    SETOPT(CURLOPT_PRIVATE, (void *)x);
    SETOPT(CURLOPT_ERRORBUFFER, x->errbuf);
    SETOPT(CURLOPT_WRITEFUNCTION, on_body);
    SETOPT(CURLOPT_WRITEDATA, (void *)x);
    SETOPT(CURLOPT_HEADERFUNCTION, on_header);
    SETOPT(CURLOPT_HEADERDATA, (void *)x);
    SETOPT(CURLOPT_CONNECTTIMEOUT_MS, (long)cto);
    SETOPT(CURLOPT_TIMEOUT_MS, (long)to);
    SETOPT(CURLOPT_NOSIGNAL, 1L);
    SETOPT(CURLOPT_FOLLOWLOCATION, 0L);
    if (!only_http(x->e)) {
        xfer_free(x);
        return luaL_error(L, "http: this libcurl (%s) cannot be limited to http and https", api.version());
    }
    if (x->hdrs) SETOPT(CURLOPT_HTTPHEADER, x->hdrs);
    if (strcmp(method, "POST") == 0) {
        x->req_body = malloc(blen + 1);
        if (!x->req_body) {
            xfer_free(x);
            return luaL_error(L, "http: out of memory");
        }
        if (blen) memcpy(x->req_body, body, blen);
        x->req_body[blen] = 0;
        SETOPT(CURLOPT_POST, 1L);
        SETOPT(CURLOPT_POSTFIELDS, x->req_body);
        SETOPT(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
    }
    CURLMcode mc = api.multi_add_handle(u->m, x->e);
    if (mc != CURLM_OK) {
        xfer_free(x);
        return luaL_error(L, "http: curl_multi_add_handle: %s", api.multi_strerror(mc));
    }
    x->next = u->live;
    u->live = x;
    return 0;
}

static void unlink_xfer(lmulti *u, xfer *x) {
    for (xfer **p = &u->live; *p; p = &(*p)->next) {
        if (*p == x) {
            *p = x->next;
            return;
        }
    }
}

/* m:poll(timeout_s) -> { finished transfers }, how many still run */
static int l_multi_poll(lua_State *L) {
    lmulti *u = checkmulti(L, 1);
    lua_Number t = luaL_optnumber(L, 2, 0);
    if (!(t >= 0)) return luaL_argerror(L, 2, "a non-negative number of seconds expected");
    int running = 0;
    CURLMcode mc = api.multi_perform(u->m, &running);
    if (mc == CURLM_OK && running > 0 && t > 0) {
        mc = api.multi_poll(u->m, NULL, 0, (int)(t * 1000 + 0.5), NULL);
        if (mc == CURLM_OK) mc = api.multi_perform(u->m, &running);
    }
    if (mc != CURLM_OK) return luaL_error(L, "http: %s", api.multi_strerror(mc));
    lua_newtable(L);
    int k = 0, left;
    CURLMsg *msg;
    while ((msg = api.multi_info_read(u->m, &left))) {
        if (msg->msg != CURLMSG_DONE) continue;
        xfer *x = NULL;
        api.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        CURLcode rc = msg->data.result;
        long status = 0;
        double total = 0;
        api.easy_getinfo(x->e, CURLINFO_RESPONSE_CODE, &status);
        api.easy_getinfo(x->e, CURLINFO_TOTAL_TIME, &total);
        lua_createtable(L, 0, 7);
        lua_pushinteger(L, x->id);
        lua_setfield(L, -2, "id");
        lua_pushinteger(L, status);
        lua_setfield(L, -2, "status");
        lua_pushlstring(L, x->body ? x->body : "", x->body_n);
        lua_setfield(L, -2, "body");
        lua_pushlstring(L, x->head ? x->head : "", x->head_n);
        lua_setfield(L, -2, "headers");
        lua_pushnumber(L, total);
        lua_setfield(L, -2, "total_s");
        lua_pushinteger(L, rc);
        lua_setfield(L, -2, "code");
        if (rc != CURLE_OK) {
            if (x->too_big)
                lua_pushfstring(L, "the response is larger than %d MiB", (int)(MAX_BODY_BYTES >> 20));
            else
                lua_pushstring(L, x->errbuf[0] ? x->errbuf : api.easy_strerror(rc));
            lua_setfield(L, -2, "error");
            lua_pushboolean(L, rc == CURLE_OPERATION_TIMEDOUT);
            lua_setfield(L, -2, "timed_out");
        }
        lua_seti(L, -2, ++k);
        api.multi_remove_handle(u->m, x->e);
        unlink_xfer(u, x);
        xfer_free(x);
    }
    lua_pushinteger(L, running);
    return 2;
}

/* http.available() -> true, or false and why (libcurl could not be loaded) */
static int l_available(lua_State *L) {
    if (load_curl()) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushboolean(L, 0);
    lua_pushstring(L, api.why);
    return 2;
}

/* http.version() -> libcurl's version string */
static int l_version(lua_State *L) {
    need_curl(L);
    lua_pushstring(L, api.version());
    return 1;
}

int luaopen_kreach_http(lua_State *L) {
    static const luaL_Reg methods[] = {{"add", l_multi_add}, {"poll", l_multi_poll}, {"close", l_multi_close},
                                       {NULL, NULL}};
    kr_lua_newclass(L, KR_HTTP_MT, methods, l_multi_close, NULL);
    static const luaL_Reg fns[] = {
        {"multi", l_multi}, {"available", l_available}, {"version", l_version}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
