/* l_cudnn.c: Lua binding of kr_cudnn (module "kreach.core.cudnn"): loading cuDNN from a path,
 * and convolutions through it. Bindings layer. A library that does not load is an outcome
 * (nil, why: kreach.cudnn tries the next place); a bad convolution call raises. */
#define _GNU_SOURCE /* PATH_MAX */
#include "kr_lua.h"
#include "kr_cudnn.h"

#include <limits.h>
#include <string.h>

/* load([path]) -> true, or nil and why. Without a path, dlopen searches for libcudnn.so.9. */
static int l_cudnn_load(lua_State *L) {
    const char *path = luaL_optstring(L, 1, NULL);
    kr_context *ctx = kr_lua_ctx(L);
    if (kr_cudnn_load(ctx, path) != KR_OK) return kr_lua_fail(L, ctx);
    lua_pushboolean(L, 1);
    return 1;
}

/* version() -> the loaded cuDNN's version (91900 for 9.19.0), or nil when none is loaded */
static int l_cudnn_version(lua_State *L) {
    int v = kr_cudnn_version();
    if (v) lua_pushinteger(L, v);
    else lua_pushnil(L);
    return 1;
}

/* path() -> the loaded library's real path, or nil */
static int l_cudnn_path(lua_State *L) {
    char buf[PATH_MAX];
    if (kr_cudnn_path(buf, sizeof buf) == 0) lua_pushstring(L, buf);
    else lua_pushnil(L);
    return 1;
}

/* preload() -> true, or nil and why: cuDNN's sub-libraries (and the handle, when the device
 * is open) loaded now, before a worker seals itself */
static int l_cudnn_preload(lua_State *L) {
    kr_context *ctx = kr_lua_ctx(L);
    if (kr_cudnn_preload(ctx) != KR_OK) return kr_lua_fail(L, ctx);
    lua_pushboolean(L, 1);
    return 1;
}

/* A per-spatial-dimension option: an integer (every dimension) or a list of nsp integers. */
static void dims_field(lua_State *L, int idx, const char *name, int nsp, int *out) {
    int t = lua_getfield(L, idx, name);
    if (t == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    if (t == LUA_TNUMBER) {
        int ok;
        lua_Integer v = lua_tointegerx(L, -1, &ok);
        if (!ok || v < INT_MIN || v > INT_MAX)
            luaL_error(L, "bad option '%s' (integer expected, got number)", name);
        for (int i = 0; i < nsp; i++) out[i] = (int)v;
    } else if (t == LUA_TTABLE) {
        if (luaL_len(L, -1) != nsp)
            luaL_error(L, "bad option '%s' (%d integers expected, one per spatial dimension, got "
                       "%d)", name, nsp, (int)luaL_len(L, -1));
        for (int i = 0; i < nsp; i++) {
            lua_geti(L, -1, i + 1);
            int ok;
            lua_Integer v = lua_tointegerx(L, -1, &ok);
            if (!ok || v < INT_MIN || v > INT_MAX)
                luaL_error(L, "bad option '%s' (entry %d is not an integer)", name, i + 1);
            out[i] = (int)v;
            lua_pop(L, 1);
        }
    } else {
        luaL_error(L, "bad option '%s' (integer or list expected, got %s)", name,
                   luaL_typename(L, -1));
    }
    lua_pop(L, 1);
}

/* conv(x, w, y [, {transposed=, stride=, padding=, dilation=, groups=, output_padding=,
 * bias=, select=}]) -> algorithm name, workspace bytes, algorithm number, math type, cached
 * y = conv(x, w) (+ bias), or conv_transpose with transposed = true, queued on the harness
 * stream. stride, padding, dilation and output_padding are an integer or one per spatial
 * dimension. select: "pytorch" (the default: PyTorch eager's engine, benchmark off) or
 * "fastest" (the fastest engine timed, as with benchmark on). */
static int l_cudnn_conv(lua_State *L) {
    static const char *const known[] = {"transposed", "stride", "padding", "dilation", "groups",
                                        "output_padding", "bias", "select", NULL};
    kr_tensor *x = kr_lua_checktensor(L, 1);
    kr_tensor *w = kr_lua_checktensor(L, 2);
    kr_tensor *y = kr_lua_checktensor(L, 3);
    kr_cudnn_conv_desc d = KR_CUDNN_CONV_DESC_DEFAULT;
    kr_tensor *bias = NULL;
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        kr_lua_check_options(L, 4, "conv", known);
        int nsp = x->ndim >= 3 && x->ndim <= 5 ? x->ndim - 2 : 1;
        d.transposed = kr_lua_optbool_field(L, 4, "transposed", 0);
        lua_Integer g = kr_lua_optint_field(L, 4, "groups", 1);
        if (g < 1 || g > INT_MAX) return luaL_error(L, "bad option 'groups' (at least 1)");
        d.groups = (int)g;
        dims_field(L, 4, "stride", nsp, d.stride);
        dims_field(L, 4, "padding", nsp, d.padding);
        dims_field(L, 4, "dilation", nsp, d.dilation);
        dims_field(L, 4, "output_padding", nsp, d.output_padding);
        if (lua_getfield(L, 4, "bias") != LUA_TNIL) {
            bias = kr_lua_totensor(L, -1);
            if (!bias) return luaL_error(L, "bad option 'bias' (tensor expected, got %s)",
                                         luaL_typename(L, -1));
            bias = kr_lua_checktensor(L, lua_gettop(L));
        }
        lua_pop(L, 1); /* the bias stays referenced by the options table */
        if (lua_getfield(L, 4, "select") != LUA_TNIL) {
            static const char *const sel[] = {"pytorch", "fastest", NULL};
            const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
            int i = 0;
            while (v && sel[i] && strcmp(sel[i], v) != 0) i++;
            if (!v || !sel[i])
                return luaL_error(L, "bad option 'select' ('pytorch' or 'fastest' expected, got %s)",
                                  v ? v : luaL_typename(L, -1));
            d.select = i == 0 ? KR_CUDNN_SELECT_PYTORCH : KR_CUDNN_SELECT_FASTEST;
        }
        lua_pop(L, 1);
    }
    kr_context *ctx = kr_lua_ctx(L);
    kr_cudnn_conv_info info;
    kr_status s = kr_cudnn_conv(ctx, &d, x, w, y, bias, &info);
    if (s != KR_OK) return kr_lua_raise(L, ctx, s);
    if (!info.algo_name) { /* an empty output: nothing ran */
        lua_pushnil(L);
        lua_pushinteger(L, 0);
        return 2;
    }
    lua_pushstring(L, info.algo_name);
    lua_pushinteger(L, (lua_Integer)info.workspace_bytes);
    lua_pushinteger(L, info.algo);
    lua_pushstring(L, info.math_name);
    lua_pushboolean(L, info.cached);
    return 5;
}

/* stats() -> {heuristic_queries =, plan_hits =, plans =, workspace_bytes =} of this context */
static int l_cudnn_stats(lua_State *L) {
    kr_cudnn_stats st;
    kr_cudnn_get_stats(kr_lua_ctx(L), &st);
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, (lua_Integer)st.heuristic_queries);
    lua_setfield(L, -2, "heuristic_queries");
    lua_pushinteger(L, (lua_Integer)st.plan_hits);
    lua_setfield(L, -2, "plan_hits");
    lua_pushinteger(L, st.plans);
    lua_setfield(L, -2, "plans");
    lua_pushinteger(L, (lua_Integer)st.workspace_bytes);
    lua_setfield(L, -2, "workspace_bytes");
    return 1;
}

int luaopen_kreach_cudnn(lua_State *L) {
    static const luaL_Reg fns[] = {{"load", l_cudnn_load},       {"version", l_cudnn_version},
                                   {"path", l_cudnn_path},       {"preload", l_cudnn_preload},
                                   {"conv", l_cudnn_conv},       {"stats", l_cudnn_stats},
                                   {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
