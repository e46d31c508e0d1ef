/* l_proc.c: Lua binding of kr_proc (module "kreach.core.proc"): worker processes.
 * Bindings layer. A worker is a userdata; __gc and __close kill and reap it. */
#define _GNU_SOURCE
#include "kr_lua.h"
#include "kr_proc.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>

#define KR_PROC_MT "kreach.Proc"

typedef struct { kr_proc *p; } lproc;

static lproc *checkproc(lua_State *L, int idx) {
    lproc *u = luaL_checkudata(L, idx, KR_PROC_MT);
    if (!u->p) luaL_argerror(L, idx, "worker has been freed");
    return u;
}

/* A NULL-terminated array of the strings of the list at idx (anchored by that table, which
 * the caller keeps on the stack); pushes the array's userdata. */
static const char **string_list(lua_State *L, int idx, const char *what) {
    int n = (int)luaL_len(L, idx);
    const char **v = lua_newuserdatauv(L, sizeof(char *) * (size_t)(n + 1), 0);
    for (int i = 0; i < n; i++) {
        if (lua_geti(L, idx, i + 1) != LUA_TSTRING) {
            luaL_error(L, "bad argument to 'spawn' (%s[%d] is not a string)", what, i + 1);
            return NULL;
        }
        v[i] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    v[n] = NULL;
    return v;
}

/* spawn({"prog", "arg", ...}, {env = {"K=V", ...}, watch = false, max_line = bytes,
 * pass_stderr = false, fd3 = descriptor (given to the program as its descriptor 3),
 * reaper = path}) -> worker, or nil and a message. With pass_stderr the worker writes to
 * this process's standard error as it goes (w:stderr() is then empty). Without env the worker
 * gets this process's environment; with watch its standard input is a pipe that closes when
 * this process dies or frees it. With reaper (the kreach executable, kreach.core.executable())
 * the worker runs under kr_proc_reaper_main: what it starts ends with it, even in a session of
 * its own. */
static int l_proc_spawn(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    if (luaL_len(L, 1) < 1) return luaL_argerror(L, 1, "argv needs at least the program");
    kr_proc_opts o = {0};
    if (!lua_isnoneornil(L, 2)) {
        static const char *const known[] = {"env", "watch", "max_line", "pass_stderr", "fd3", "reaper", NULL};
        luaL_checktype(L, 2, LUA_TTABLE);
        kr_lua_check_options(L, 2, "spawn", known);
        o.watch = kr_lua_optbool_field(L, 2, "watch", 0);
        o.pass_stderr = kr_lua_optbool_field(L, 2, "pass_stderr", 0);
        if (lua_getfield(L, 2, "fd3") != LUA_TNIL) {
            o.fd3 = (int)luaL_checkinteger(L, -1);
            luaL_argcheck(L, o.fd3 > 2, 2, "fd3 must be a descriptor above 2");
        }
        lua_pop(L, 1);
        /* the string stays anchored by the options table, which stays on the stack */
        if (lua_getfield(L, 2, "reaper") != LUA_TNIL) {
            o.reaper = luaL_checkstring(L, -1);
            luaL_argcheck(L, o.reaper[0] == '/', 2, "reaper must be an absolute path");
        }
        lua_pop(L, 1);
        lua_Integer ml = kr_lua_optint_field(L, 2, "max_line", 0);
        if (ml < 0) return luaL_argerror(L, 2, "max_line must be positive");
        o.max_line = (size_t)ml;
        if (lua_getfield(L, 2, "env") == LUA_TTABLE) {
            o.envp = string_list(L, lua_gettop(L), "env");
        } else if (!lua_isnil(L, -1)) {
            return luaL_argerror(L, 2, "env must be a list of \"NAME=value\" strings");
        }
    }
    o.argv = string_list(L, 1, "argv");
    lproc *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->p = NULL;
    luaL_setmetatable(L, KR_PROC_MT);
    char err[512];
    u->p = kr_proc_start(&o, err, sizeof err);
    if (!u->p) {
        luaL_pushfail(L);
        lua_pushstring(L, err);
        return 2;
    }
    return 1;
}

/* w:read_line([timeout_s]) -> line | nil, "timeout" | nil, "eof" | nil, "too long" */
static int l_proc_read_line(lua_State *L) {
    lproc *u = checkproc(L, 1);
    lua_Number t = luaL_optnumber(L, 2, -1);
    int ms = t < 0 ? -1 : (int)fmin(t * 1000.0, 2147483647.0);
    const char *line;
    size_t len;
    int r = kr_proc_read_line(u->p, ms, &line, &len);
    if (r == 1) {
        lua_pushlstring(L, line, len);
        return 1;
    }
    luaL_pushfail(L);
    lua_pushstring(L, r == 0 ? "eof" : r == -2 ? "too long" : "timeout");
    return 2;
}

/* w:write(s) -> true, or fail and why: to the worker's standard input (spawned with watch) */
static int l_proc_write(lua_State *L) {
    lproc *u = checkproc(L, 1);
    size_t len;
    const char *s = luaL_checklstring(L, 2, &len);
    if (kr_proc_write(u->p, s, len) != 0) {
        luaL_pushfail(L);
        lua_pushstring(L, errno == EPIPE ? "the worker is gone" : strerror(errno));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int l_proc_kill(lua_State *L) {
    kr_proc_kill(checkproc(L, 1)->p);
    return 0;
}

/* w:wait() -> "exited", code | "signaled", signal number, signal name */
static int l_proc_wait(lua_State *L) {
    int code = 0;
    kr_proc_state s = kr_proc_wait(checkproc(L, 1)->p, &code);
    if (s == KR_PROC_SIGNALED) {
        lua_pushliteral(L, "signaled");
        lua_pushinteger(L, code);
        const char *name = sigabbrev_np(code);
        lua_pushfstring(L, "SIG%s", name ? name : "?");
        return 3;
    }
    lua_pushliteral(L, "exited");
    lua_pushinteger(L, code);
    return 2;
}

static int l_proc_stderr(lua_State *L) {
    size_t n;
    const char *s = kr_proc_stderr(checkproc(L, 1)->p, &n);
    lua_pushlstring(L, s, n);
    return 1;
}

static int l_proc_pid(lua_State *L) {
    lua_pushinteger(L, kr_proc_pid(checkproc(L, 1)->p));
    return 1;
}

static int l_proc_free(lua_State *L) {
    lproc *u = luaL_checkudata(L, 1, KR_PROC_MT);
    kr_proc_free(u->p);
    u->p = NULL;
    return 0;
}

int luaopen_kreach_proc(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"read_line", l_proc_read_line}, {"write", l_proc_write}, {"kill", l_proc_kill}, {"wait", l_proc_wait},
        {"stderr", l_proc_stderr},       {"pid", l_proc_pid},   {"free", l_proc_free},
        {NULL, NULL}};
    kr_lua_newclass(L, KR_PROC_MT, methods, l_proc_free, NULL);
    static const luaL_Reg fns[] = {{"spawn", l_proc_spawn}, {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_pushinteger(L, (lua_Integer)KR_PROC_MAX_LINE);
    lua_setfield(L, -2, "MAX_LINE");
    return 1;
}
