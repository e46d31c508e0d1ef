/* l_host.c: Lua binding of the host device's kernel entry points (module "kreach.core.host"):
 * opening a shared library built for the CPU under kreach's CUDA emulation and calling its
 * entry points (kr_host.h). Bindings layer. A library that does not load is an outcome (nil,
 * why); a bad call raises, and so does an entry that fails (KR_ERR_LAUNCH, its own words). */
#include "kr_lua.h"
#include "kr_host.h"

#define KR_HOSTLIB_MT "kreach.HostLibrary"

typedef struct {
    void *lib; /* NULL once closed */
} hostlib;

/* __gc, __close and :close() */
static int l_hostlib_close(lua_State *L) {
    hostlib *h = luaL_checkudata(L, 1, KR_HOSTLIB_MT);
    kr_host_close(h->lib);
    h->lib = NULL;
    return 0;
}

static int l_hostlib_tostring(lua_State *L) {
    hostlib *h = luaL_checkudata(L, 1, KR_HOSTLIB_MT);
    lua_pushfstring(L, h->lib ? "kreach.HostLibrary (%p)" : "kreach.HostLibrary (closed)", h->lib);
    return 1;
}

/* handle:call(symbol, name, grid, block, shared, args...) -> nothing. name (nil: the symbol) is
 * the kernel's name in messages. Each argument: a kreach tensor (its data pointer and dtype,
 * which the trampoline checks against the parameter), an integer, a float, or a boolean. Runs
 * the entry on this thread; returns when the kernel has finished. */
static int l_hostlib_call(lua_State *L) {
    hostlib *h = luaL_checkudata(L, 1, KR_HOSTLIB_MT);
    if (!h->lib) return luaL_argerror(L, 1, "the host library has been closed");
    const char *symbol = luaL_checkstring(L, 2);
    const char *name = luaL_optstring(L, 3, symbol);
    unsigned grid[3], block[3];
    kr_lua_checkdim3(L, 4, "grid", grid);
    kr_lua_checkdim3(L, 5, "block", block);
    lua_Integer shared = luaL_optinteger(L, 6, 0);
    if (shared < 0) return luaL_argerror(L, 6, "shared memory bytes must not be negative");
    const int first = 7;
    int top = lua_gettop(L);
    int nargs = top >= first ? top - first + 1 : 0;
    /* a userdata, so that an argument error below leaks nothing */
    kr_harg *args = lua_newuserdatauv(L, sizeof(kr_harg) * (size_t)(nargs ? nargs : 1), 0);
    for (int i = 0; i < nargs; i++) {
        int idx = first + i;
        kr_harg *a = &args[i];
        a->kind = KR_HARG_INTEGER;
        a->i = 0;
        a->d = 0;
        a->p = NULL;
        a->dtype = NULL;
        switch (lua_type(L, idx)) {
        case LUA_TNUMBER:
            if (lua_isinteger(L, idx)) {
                a->i = (int64_t)lua_tointeger(L, idx);
            } else {
                a->kind = KR_HARG_FLOAT;
                a->d = (double)lua_tonumber(L, idx);
            }
            break;
        case LUA_TBOOLEAN:
            a->kind = KR_HARG_BOOLEAN;
            a->i = lua_toboolean(L, idx) ? 1 : 0;
            break;
        default: {
            kr_tensor *t = kr_lua_totensor(L, idx);
            if (!t)
                return luaL_error(L, "kernel '%s' argument %d: a tensor, number or boolean "
                                  "expected, got %s", name, i + 1, luaL_typename(L, idx));
            if (!kr_tensor_live(t))
                return luaL_error(L, "kernel '%s' argument %d: the tensor has been freed", name,
                                  i + 1);
            a->kind = KR_HARG_POINTER;
            a->p = kr_tensor_data(t);
            a->dtype = kr_dtype_name(t->dtype);
            break;
        }
        }
    }
    kr_context *ctx = kr_lua_ctx(L);
    kr_status s = kr_host_call(ctx, h->lib, symbol, name, grid, block, (size_t)shared, args, nargs);
    if (s != KR_OK) return kr_lua_raise(L, ctx, s);
    return 0;
}

/* open(path) -> a library handle, or nil and why (dlerror's words) */
static int l_host_open(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    hostlib *h = lua_newuserdatauv(L, sizeof *h, 0); /* made before the resource it owns */
    h->lib = NULL;
    luaL_setmetatable(L, KR_HOSTLIB_MT);
    kr_context *ctx = kr_lua_ctx(L);
    if (kr_host_open(ctx, path, &h->lib) != KR_OK) return kr_lua_fail(L, ctx);
    return 1;
}

/* is_host() -> whether this state's context is the host device (KREACH_DEVICE=host) */
static int l_host_is_host(lua_State *L) {
    lua_pushboolean(L, kr_context_is_host(kr_lua_ctx(L)));
    return 1;
}

int luaopen_kreach_host(lua_State *L) {
    static const luaL_Reg methods[] = {{"call", l_hostlib_call}, {"close", l_hostlib_close},
                                       {NULL, NULL}};
    static const luaL_Reg fns[] = {{"open", l_host_open}, {"is_host", l_host_is_host},
                                   {NULL, NULL}};
    kr_lua_newclass(L, KR_HOSTLIB_MT, methods, l_hostlib_close, l_hostlib_tostring);
    luaL_newlib(L, fns);
    return 1;
}
