/* l_context.c: Lua binding of kr_context (module "kreach.core"): device properties, versions,
 * synchronisation; plus the helpers every binding file shares (kr_lua.h).
 * Bindings layer. The state's one context lives in the registry as a userdata whose __gc
 * drops the state's reference. */
#define _POSIX_C_SOURCE 200809L
#include "kr_lua.h"
#include "kr_cublas.h"
#include "kr_embedded.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lfs.h>
#include <lua-cjson.h>
int luaopen_cjson_safe(lua_State *L); /* not in the Debian header */
#include <lualib.h>

static const char CTX_KEY[] = "kreach.context";

static int ctx_gc(lua_State *L) {
    kr_context **p = lua_touserdata(L, 1);
    if (*p) kr_context_release(*p);
    *p = NULL;
    return 0;
}

kr_context *kr_lua_ctx(lua_State *L) {
    if (lua_getfield(L, LUA_REGISTRYINDEX, CTX_KEY) == LUA_TUSERDATA) {
        kr_context *ctx = *(kr_context **)lua_touserdata(L, -1);
        lua_pop(L, 1);
        return ctx;
    }
    lua_pop(L, 1);
    kr_context **p = lua_newuserdatauv(L, sizeof *p, 0);
    *p = NULL;
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, ctx_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    *p = kr_context_new(-1);
    if (!*p) luaL_error(L, "out of host memory creating the kreach context");
    lua_setfield(L, LUA_REGISTRYINDEX, CTX_KEY);
    return *p;
}

int kr_lua_raise(lua_State *L, kr_context *ctx, kr_status s) {
    if (s == KR_ERR_NODEVICE) return luaL_error(L, "no CUDA device: %s", kr_context_errmsg(ctx));
    return luaL_error(L, "%s", kr_context_errmsg(ctx));
}

int kr_lua_fail(lua_State *L, kr_context *ctx) {
    luaL_pushfail(L);
    if (kr_context_status(ctx) == KR_ERR_NODEVICE)
        lua_pushfstring(L, "no CUDA device: %s", kr_context_errmsg(ctx));
    else
        lua_pushstring(L, kr_context_errmsg(ctx));
    return 2;
}

void kr_lua_require_device(lua_State *L) {
    kr_context *ctx = kr_lua_ctx(L);
    kr_status s = kr_context_require(ctx);
    if (s != KR_OK) kr_lua_raise(L, ctx, s);
}

kr_dtype kr_lua_checkdtype(lua_State *L, int idx, int def) {
    if (def >= 0 && lua_isnoneornil(L, idx)) return (kr_dtype)def;
    const char *name = luaL_checkstring(L, idx);
    kr_dtype d;
    if (kr_dtype_parse(name, &d) != 0)
        luaL_argerror(L, idx, lua_pushfstring(L, "unknown dtype '%s' (f64, f32, f16, bf16, i64, "
                                                 "i32, i16, i8, u8, bool)", name));
    return d;
}

int kr_lua_checkshape(lua_State *L, int idx, int64_t *shape) {
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_Integer n = luaL_len(L, idx);
    if (n > KR_MAX_DIMS)
        luaL_argerror(L, idx, lua_pushfstring(L, "%d dimensions (at most %d)", (int)n,
                                              KR_MAX_DIMS));
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, idx, i);
        int ok;
        lua_Integer v = lua_tointegerx(L, -1, &ok);
        if (!ok || v < 0)
            luaL_argerror(L, idx, lua_pushfstring(L, "size %d of the shape is not a "
                                                     "non-negative integer", (int)i));
        shape[i - 1] = v;
        lua_pop(L, 1);
    }
    return (int)n;
}

void kr_lua_pushshape(lua_State *L, int ndim, const int64_t *shape) {
    lua_createtable(L, ndim, 0);
    for (int i = 0; i < ndim; i++) {
        lua_pushinteger(L, shape[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

static void bad_option(lua_State *L, const char *name, const char *want) {
    luaL_error(L, "bad option '%s' (%s expected, got %s)", name, want, luaL_typename(L, -1));
}

lua_Integer kr_lua_optint_field(lua_State *L, int idx, const char *name, lua_Integer def) {
    if (lua_getfield(L, idx, name) == LUA_TNIL) { lua_pop(L, 1); return def; }
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok || lua_type(L, -1) != LUA_TNUMBER) bad_option(L, name, "integer");
    lua_pop(L, 1);
    return v;
}

lua_Number kr_lua_optnum_field(lua_State *L, int idx, const char *name, lua_Number def) {
    if (lua_getfield(L, idx, name) == LUA_TNIL) { lua_pop(L, 1); return def; }
    if (lua_type(L, -1) != LUA_TNUMBER) bad_option(L, name, "number");
    lua_Number v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return v;
}

/* The string stays reachable through the options table, which the caller keeps on the stack. */
const char *kr_lua_optstr_field(lua_State *L, int idx, const char *name, const char *def) {
    if (lua_getfield(L, idx, name) == LUA_TNIL) { lua_pop(L, 1); return def; }
    if (lua_type(L, -1) != LUA_TSTRING) bad_option(L, name, "string");
    const char *v = lua_tostring(L, -1);
    lua_pop(L, 1);
    return v;
}

int kr_lua_optbool_field(lua_State *L, int idx, const char *name, int def) {
    if (lua_getfield(L, idx, name) == LUA_TNIL) { lua_pop(L, 1); return def; }
    if (lua_type(L, -1) != LUA_TBOOLEAN) bad_option(L, name, "boolean");
    int v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

void kr_lua_checkdim3(lua_State *L, int idx, const char *name, unsigned out[3]) {
    idx = lua_absindex(L, idx);
    out[0] = out[1] = out[2] = 1;
    if (lua_type(L, idx) == LUA_TNUMBER) {
        lua_Integer v = 0;
        if (!lua_isinteger(L, idx) || (v = lua_tointeger(L, idx)) < 1 || v > 0xFFFFFFFFll)
            luaL_error(L, "launch '%s' must be a positive integer, got %s", name,
                       luaL_tolstring(L, idx, NULL));
        out[0] = (unsigned)v;
    } else if (lua_type(L, idx) == LUA_TTABLE) {
        lua_Integer n = luaL_len(L, idx);
        if (n < 1 || n > 3) luaL_error(L, "launch '%s' takes 1 to 3 sizes, got %d", name, (int)n);
        for (int i = 0; i < n; i++) {
            lua_geti(L, idx, i + 1);
            lua_Integer v = 0;
            if (!lua_isinteger(L, -1) || (v = lua_tointeger(L, -1)) < 1 || v > 0xFFFFFFFFll)
                luaL_error(L, "launch '%s' size %d must be a positive integer, got %s", name,
                           i + 1, luaL_tolstring(L, -1, NULL));
            out[i] = (unsigned)v;
            lua_pop(L, 1);
        }
    } else {
        luaL_error(L, "launch '%s' must be a number or {x, y, z}, got %s", name,
                   luaL_typename(L, idx));
    }
}

void kr_lua_check_options(lua_State *L, int idx, const char *what, const char *const *known) {
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        int ok = 0;
        if (lua_type(L, -1) == LUA_TSTRING)
            for (const char *const *k = known; *k && !ok; k++) ok = strcmp(*k, lua_tostring(L, -1)) == 0;
        if (!ok) {
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            for (const char *const *k = known; *k; k++) {
                luaL_addstring(&b, *k);
                if (k[1]) luaL_addstring(&b, ", ");
            }
            luaL_pushresult(&b);
            luaL_error(L, "unknown option '%s' for %s (known: %s)",
                       lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : luaL_typename(L, -2),
                       what, lua_tostring(L, -1));
        }
    }
}

void kr_lua_newclass(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction free,
                     lua_CFunction tostring) {
    if (luaL_newmetatable(L, name)) {
        if (methods) {
            lua_newtable(L);
            luaL_setfuncs(L, methods, 0);
            lua_setfield(L, -2, "__index");
        }
        lua_pushcfunction(L, free);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, free);
        lua_setfield(L, -2, "__close");
        if (tostring) {
            lua_pushcfunction(L, tostring);
            lua_setfield(L, -2, "__tostring");
        }
        lua_pushboolean(L, 0);
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
}

/* ---- kreach.core ---- */

static void setint(lua_State *L, const char *k, lua_Integer v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

static void setstr(lua_State *L, const char *k, const char *v) {
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

/* device() -> table of properties; raises "no CUDA device: ..." without one. `host` is true
 * on the host device (KREACH_DEVICE=host), whose properties are the CPU emulation's. */
static int l_core_device(lua_State *L) {
    kr_context *ctx = kr_lua_ctx(L);
    kr_device_info d;
    kr_status s = kr_context_device(ctx, &d);
    if (s != KR_OK) return kr_lua_raise(L, ctx, s);
    lua_createtable(L, 0, 25);
    setint(L, "ordinal", d.ordinal);
    lua_pushboolean(L, kr_context_is_host(ctx)); /* KREACH_DEVICE=host: the CPU emulation */
    lua_setfield(L, -2, "host");
    setstr(L, "name", d.name);
    setstr(L, "pci_bus_id", d.pci_bus_id);
    setstr(L, "uuid", d.uuid);
    lua_pushfstring(L, "%d.%d", d.cc_major, d.cc_minor);
    lua_setfield(L, -2, "compute_capability");
    lua_pushfstring(L, "sm_%d%d", d.cc_major, d.cc_minor);
    lua_setfield(L, -2, "arch");
    setint(L, "sm_count", d.sm_count);
    setint(L, "warp_size", d.warp_size);
    setint(L, "max_threads_per_block", d.max_threads_per_block);
    setint(L, "max_threads_per_sm", d.max_threads_per_sm);
    setint(L, "shared_per_block_bytes", (lua_Integer)d.shared_per_block);
    setint(L, "shared_per_block_optin_bytes", (lua_Integer)d.shared_per_block_optin);
    setint(L, "shared_per_sm_bytes", (lua_Integer)d.shared_per_sm);
    setint(L, "regs_per_block", d.regs_per_block);
    setint(L, "l2_bytes", (lua_Integer)d.l2_bytes);
    setint(L, "persisting_l2_max_bytes", (lua_Integer)d.persisting_l2_max_bytes);
    setint(L, "memory_bytes", (lua_Integer)d.total_mem_bytes);
    setint(L, "free_memory_bytes", (lua_Integer)d.free_mem_bytes);
    setint(L, "sm_clock_khz", d.sm_clock_khz);
    setint(L, "memory_clock_khz", d.mem_clock_khz);
    setint(L, "memory_bus_bits", d.mem_bus_width_bits);
    lua_pushboolean(L, d.ecc);
    lua_setfield(L, -2, "ecc");
    return 1;
}

/* versions() -> {driver=, runtime=, nvrtc=, cublas=}: strings like "13.0"; needs no GPU. */
static int l_core_versions(lua_State *L) {
    kr_versions v;
    kr_context_versions(kr_lua_ctx(L), &v);
    lua_createtable(L, 0, 4);
    if (v.driver) lua_pushfstring(L, "%d.%d", v.driver / 1000, (v.driver % 1000) / 10);
    else lua_pushboolean(L, 0);
    lua_setfield(L, -2, "driver");
    lua_pushfstring(L, "%d.%d", v.runtime / 1000, (v.runtime % 1000) / 10);
    lua_setfield(L, -2, "runtime");
    lua_pushfstring(L, "%d.%d", v.nvrtc_major, v.nvrtc_minor);
    lua_setfield(L, -2, "nvrtc");
    int cublas = kr_cublas_version(); /* kr_cublas's, not the context's: no cycle */
    if (cublas)
        lua_pushfstring(L, "%d.%d.%d", cublas / 10000, (cublas / 100) % 100, cublas % 100);
    else lua_pushboolean(L, 0);
    lua_setfield(L, -2, "cublas");
    return 1;
}

/* has_device() -> true | false, reason. Never raises. */
static int l_core_has_device(lua_State *L) {
    kr_context *ctx = kr_lua_ctx(L);
    kr_status s = kr_context_require(ctx);
    if (s == KR_OK) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushboolean(L, 0);
    lua_pushstring(L, kr_context_errmsg(ctx));
    return 2;
}

static int l_core_synchronize(lua_State *L) {
    kr_context *ctx = kr_lua_ctx(L);
    kr_status s = kr_context_sync(ctx);
    if (s != KR_OK) return kr_lua_raise(L, ctx, s);
    return 0;
}

/* broken() -> true, message when a sticky CUDA error has made the context unusable */
static int l_core_broken(lua_State *L) {
    kr_context *ctx = kr_lua_ctx(L);
    if (!kr_context_broken(ctx)) {
        lua_pushboolean(L, 0);
        return 1;
    }
    lua_pushboolean(L, 1);
    lua_pushstring(L, kr_context_errmsg(ctx));
    return 2;
}

/* device_state() -> "open", "untried" or "failed": whether opening the device was tried and
 * how it went (used by main.c's exit-status rule and by scripts that want to skip). */
static int l_core_device_state(lua_State *L) {
    int st = kr_context_state(kr_lua_ctx(L));
    lua_pushstring(L, st == 1 ? "open" : st == 0 ? "untried" : "failed");
    return 1;
}

/* executable() -> the path of the running kreach binary (for scripts that start workers) */
static int l_core_executable(lua_State *L) {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return luaL_error(L, "cannot read /proc/self/exe");
    lua_pushlstring(L, buf, (size_t)n);
    return 1;
}

/* now() -> seconds on a monotonic clock, for host-side timing */
static int l_core_now(lua_State *L) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
    return 1;
}

int luaopen_kreach_core(lua_State *L) {
    static const luaL_Reg fns[] = {
        {"device", l_core_device},       {"versions", l_core_versions},
        {"has_device", l_core_has_device}, {"synchronize", l_core_synchronize},
        {"broken", l_core_broken},       {"device_state", l_core_device_state},
        {"executable", l_core_executable}, {"now", l_core_now},
        {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_pushstring(L, KREACH_VERSION_STRING);
    lua_setfield(L, -2, "version");
    /* the source tree the build was configured from: a last place to find problems/ and the
     * model configurations in (kreach.home), for a build directory outside the tree */
#ifdef KREACH_SOURCE_DIR
    lua_pushstring(L, KREACH_SOURCE_DIR);
    lua_setfield(L, -2, "source_dir");
#endif
    return 1;
}

void kr_lua_openlibs(lua_State *L) {
    static const luaL_Reg mods[] = {
        {"kreach.core", luaopen_kreach_core},     {"kreach.core.tensor", luaopen_kreach_tensor},
        {"kreach.core.nvrtc", luaopen_kreach_nvrtc}, {"kreach.core.cublas", luaopen_kreach_cublas},
        {"kreach.core.event", luaopen_kreach_event}, {"kreach.core.proc", luaopen_kreach_proc},
        {"kreach.core.timing", luaopen_kreach_timing}, {"kreach.core.util", luaopen_kreach_util},
        {"kreach.core.sqlite", luaopen_kreach_sqlite}, {"kreach.core.fs", luaopen_kreach_fs},
        {"kreach.core.http", luaopen_kreach_http},
        {"kreach.core.seal", luaopen_kreach_seal},    {"kreach.core.cudnn", luaopen_kreach_cudnn},
        {"kreach.core.host", luaopen_kreach_host},
        {"lfs", luaopen_lfs},
        {"cjson", luaopen_cjson},                 {"cjson.safe", luaopen_cjson_safe},
        {NULL, NULL}};
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    for (const luaL_Reg *m = mods; m->name; m++) {
        lua_pushcfunction(L, m->func);
        lua_setfield(L, -2, m->name);
    }
    lua_pop(L, 1);
    /* the tensor metatable must exist before any binding makes a tensor */
    luaL_requiref(L, "kreach.core.tensor", luaopen_kreach_tensor, 0);
    lua_pop(L, 1);
}
