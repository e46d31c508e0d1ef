/* l_seal.c: Lua binding of kr_seal (module "kreach.core.seal"): Landlock, the data (RLIMIT_DATA)
 * limit, the parent watch, and the path helpers the seal's policy (kreach.run.seal) needs.
 * Bindings layer. Expected failures return nil and a message. */
#define _GNU_SOURCE
#include "kr_lua.h"
#include "kr_seal.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

/* landlock_abi() -> ABI version (>= 1), or 0 and why Landlock is unavailable */
static int l_seal_landlock_abi(lua_State *L) {
    char why[256] = "";
    int abi = kr_seal_landlock_abi(why, sizeof why);
    lua_pushinteger(L, abi);
    if (abi >= 1) return 1;
    lua_pushstring(L, why);
    return 2;
}

/* The rules of argument 1 ({{path =, access = "read" | "write" | "device" | "exec"}, ...}),
 * in a userdata left on the stack. */
static kr_seal_rule *check_rules(lua_State *L, int *count) {
    luaL_checktype(L, 1, LUA_TTABLE);
    int n = (int)luaL_len(L, 1);
    kr_seal_rule *rules = lua_newuserdatauv(L, sizeof *rules * (size_t)(n > 0 ? n : 1), 0);
    for (int i = 0; i < n; i++) {
        luaL_argcheck(L, lua_geti(L, 1, i + 1) == LUA_TTABLE, 1, "each rule is a table");
        if (lua_getfield(L, -1, "path") != LUA_TSTRING) luaL_argerror(L, 1, "a rule needs a path");
        rules[i].path = lua_tostring(L, -1); /* anchored by the rule table, itself by arg 1 */
        lua_pop(L, 1);
        lua_getfield(L, -1, "access");
        const char *a = luaL_optstring(L, -1, "read");
        if (!strcmp(a, "read")) rules[i].access = KR_SEAL_READ;
        else if (!strcmp(a, "write")) rules[i].access = KR_SEAL_WRITE;
        else if (!strcmp(a, "device")) rules[i].access = KR_SEAL_DEVICE;
        else if (!strcmp(a, "exec")) rules[i].access = KR_SEAL_EXEC;
        else luaL_argerror(L, 1, lua_pushfstring(L, "unknown access '%s'", a));
        lua_pop(L, 2);
    }
    *count = n;
    return rules;
}

/* Applies kr_seal_ruleset or kr_seal_landlock (fn) to the rules of argument 1: its result (a
 * descriptor or the ABI) and the rules skipped | nil, message. */
static int with_rules(lua_State *L, int (*fn)(const kr_seal_rule *, int, int *, char *, size_t), int ok_min) {
    int n;
    kr_seal_rule *rules = check_rules(L, &n);
    char err[512];
    int skipped = 0;
    int r = fn(rules, n, &skipped, err, sizeof err);
    if (r < ok_min) {
        luaL_pushfail(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushinteger(L, r);
    lua_pushinteger(L, skipped);
    return 2;
}

/* ruleset(rules) -> descriptor, rules skipped | nil, message: the Landlock ruleset of the rules
 * (as landlock takes them), for a program started with it as its descriptor 3 (proc.spawn's
 * fd3) to apply to itself; close it with close_fd once the program runs */
static int l_seal_ruleset(lua_State *L) { return with_rules(L, kr_seal_ruleset, 0); }

/* close_fd(descriptor): closes a descriptor ruleset returned */
static int l_seal_close_fd(lua_State *L) {
    int fd = (int)luaL_checkinteger(L, 1);
    luaL_argcheck(L, fd > 2, 1, "not a ruleset's descriptor");
    close(fd);
    return 0;
}

/* landlock({{path =, access = "read" | "write" | "device" | "exec"}, ...}) -> ABI, rules skipped (their
 * path does not exist) | nil, message */
static int l_seal_landlock(lua_State *L) { return with_rules(L, kr_seal_landlock, 1); }

/* limit_memory(bytes) -> true | nil, message */
static int l_seal_limit_memory(lua_State *L) {
    lua_Integer b = luaL_checkinteger(L, 1);
    luaL_argcheck(L, b > 0, 1, "a positive number of bytes expected");
    char err[256];
    if (kr_seal_limit_memory((uint64_t)b, err, sizeof err) != 0) {
        luaL_pushfail(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* memory_limit() -> bytes, or nil when the data segment is unlimited */
static int l_seal_memory_limit(lua_State *L) {
    uint64_t b = kr_seal_memory_limit();
    if (b == 0 || b > (uint64_t)LUA_MAXINTEGER) luaL_pushfail(L);
    else lua_pushinteger(L, (lua_Integer)b);
    return 1;
}

static int l_seal_host_memory(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)kr_seal_host_memory());
    return 1;
}

/* watch_parent([fd = 0]) -> true | nil, message */
static int l_seal_watch_parent(lua_State *L) {
    int fd = (int)luaL_optinteger(L, 1, 0);
    char err[256];
    if (kr_seal_watch_parent(fd, err, sizeof err) != 0) {
        luaL_pushfail(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* realpath(path) -> canonical absolute path | nil, message */
static int l_seal_realpath(lua_State *L) {
    char out[PATH_MAX], err[PATH_MAX + 64];
    if (kr_seal_realpath(luaL_checkstring(L, 1), out, sizeof out, err, sizeof err) != 0) {
        luaL_pushfail(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushstring(L, out);
    return 1;
}

/* nvrtc_dir() -> the directory of the NVRTC library in use | nil */
static int l_seal_nvrtc_dir(lua_State *L) {
    char out[PATH_MAX];
    if (kr_seal_nvrtc_dir(out, sizeof out) != 0) luaL_pushfail(L);
    else lua_pushstring(L, out);
    return 1;
}

/* preload_nvrtc_builtins() -> true | nil, message */
static int l_seal_preload_nvrtc_builtins(lua_State *L) {
    char err[PATH_MAX + 128];
    if (kr_seal_preload_nvrtc_builtins(err, sizeof err) != 0) {
        luaL_pushfail(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* mkdtemp(template ending in XXXXXX) -> the new directory (mode 0700) | nil, message */
static int l_seal_mkdtemp(lua_State *L) {
    size_t n;
    const char *t = luaL_checklstring(L, 1, &n);
    luaL_argcheck(L, n >= 6 && n < PATH_MAX && !strcmp(t + n - 6, "XXXXXX"), 1,
                  "a template ending in XXXXXX expected");
    char buf[PATH_MAX], err[PATH_MAX + 64];
    memcpy(buf, t, n + 1);
    if (kr_seal_mkdtemp(buf, err, sizeof err) != 0) {
        luaL_pushfail(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushstring(L, buf);
    return 1;
}

int luaopen_kreach_seal(lua_State *L) {
    static const luaL_Reg fns[] = {
        {"landlock_abi", l_seal_landlock_abi}, {"landlock", l_seal_landlock},
        {"ruleset", l_seal_ruleset},           {"close_fd", l_seal_close_fd},
        {"limit_memory", l_seal_limit_memory}, {"memory_limit", l_seal_memory_limit},
        {"host_memory", l_seal_host_memory},   {"watch_parent", l_seal_watch_parent},
        {"realpath", l_seal_realpath},         {"nvrtc_dir", l_seal_nvrtc_dir},
        {"mkdtemp", l_seal_mkdtemp},           {"preload_nvrtc_builtins", l_seal_preload_nvrtc_builtins},
        {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
