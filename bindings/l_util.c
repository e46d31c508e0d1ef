/* l_util.c: small host helpers the Lua library needs (module "kreach.core.util"): content
 * hashes (kr_hash), whether a descriptor is a terminal, the host name and process id, and a
 * worker's request to die with its parent. Bindings layer; no GPU. */
#define _POSIX_C_SOURCE 200809L
#include "kr_lua.h"
#include "kr_hash.h"

#include <errno.h>
#include <signal.h>
#include <time.h>
#include <sys/prctl.h>
#include <unistd.h>

/* hash(string) -> 32 hex digits (XXH3-128) */
static int l_util_hash(lua_State *L) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    char hex[33];
    kr_hash128_hex(s, n, hex);
    lua_pushstring(L, hex);
    return 1;
}

/* isatty(fd) -> whether the descriptor is a terminal (for progress bars) */
static int l_util_isatty(lua_State *L) {
    lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
    return 1;
}

/* hostname() -> this machine's name */
static int l_util_hostname(lua_State *L) {
    char buf[256];
    if (gethostname(buf, sizeof buf) != 0) return luaL_error(L, "gethostname failed");
    buf[sizeof buf - 1] = '\0';
    lua_pushstring(L, buf);
    return 1;
}

/* pid() -> this process's id */
static int l_util_pid(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)getpid());
    return 1;
}

/* die_with_parent() -> true, or false when the parent is already gone. A worker asks the
 * kernel to kill it when its parent dies, so that a harness killed with SIGKILL leaves no
 * worker running on the GPU (workers run in process groups of their own). */
static int l_util_die_with_parent(lua_State *L) {
    pid_t before = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return luaL_error(L, "prctl(PR_SET_PDEATHSIG) failed");
    lua_pushboolean(L, before != 1 && getppid() == before);
    return 1;
}

/* ---- the Lua heap's size, counted, with an optional cap ----
 * kreach's Lua state allocates through kr_heap_alloc (installed by kr_lua_count_heap right
 * after the state is made): it counts the bytes in use and refuses an allocation that would
 * pass the cap, which Lua reports as "not enough memory" (after an emergency collection). The
 * cap is off (0) unless a caller sets one around untrusted Lua code it must run in this
 * process: kreach.generate.extract loading a model's reply. */
static struct {
    lua_Alloc orig;
    void *orig_ud;
    size_t used, limit;
} kr_heap;

static void *kr_heap_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    (void)ud;
    size_t old = ptr ? osize : 0;
    if (nsize > old && kr_heap.limit && kr_heap.used + (nsize - old) > kr_heap.limit) return NULL;
    void *p = kr_heap.orig(kr_heap.orig_ud, ptr, osize, nsize);
    if (p || nsize == 0) kr_heap.used = kr_heap.used - old + nsize;
    return p;
}

void kr_lua_count_heap(lua_State *L) {
    kr_heap.orig = lua_getallocf(L, &kr_heap.orig_ud);
    kr_heap.used = (size_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB);
    kr_heap.limit = 0;
    lua_setallocf(L, kr_heap_alloc, NULL);
}

/* util.heap_used() -> bytes the Lua heap holds */
static int l_util_heap_used(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)kr_heap.used);
    return 1;
}

/* util.heap_limit(bytes | nil) -> the cap before (nil: none); nil or 0 removes the cap */
static int l_util_heap_limit(lua_State *L) {
    if (!kr_heap.orig) return luaL_error(L, "heap_limit: the heap is not counted in this state");
    size_t before = kr_heap.limit;
    lua_Integer n = luaL_optinteger(L, 1, 0);
    if (n < 0) return luaL_argerror(L, 1, "a non-negative number of bytes expected");
    kr_heap.limit = (size_t)n;
    if (before) lua_pushinteger(L, (lua_Integer)before);
    else lua_pushnil(L);
    return 1;
}

/* util.sleep(seconds): waits that long (a signal does not cut it short); for retry backoff */
static int l_util_sleep(lua_State *L) {
    lua_Number s = luaL_checknumber(L, 1);
    if (!(s >= 0) || s > 86400) return luaL_argerror(L, 1, "seconds between 0 and 86400 expected");
    struct timespec t = {(time_t)s, (long)((s - (lua_Number)(time_t)s) * 1e9)};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
    return 0;
}

int luaopen_kreach_util(lua_State *L) {
    static const luaL_Reg fns[] = {{"hash", l_util_hash}, {"isatty", l_util_isatty}, {"sleep", l_util_sleep},
                                   {"heap_used", l_util_heap_used}, {"heap_limit", l_util_heap_limit},
                                   {"hostname", l_util_hostname}, {"pid", l_util_pid},
                                   {"die_with_parent", l_util_die_with_parent},
                                   {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
