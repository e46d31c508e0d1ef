/* l_tensor.c: Lua binding of kr_tensor (module "kreach.core.tensor").
 * Bindings layer. A tensor is a full userdata holding a kr_tensor; __gc, __close and :free()
 * share one idempotent release. Fields `shape` and `dtype` read like a table's. */
#include "kr_lua.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* to_table and from_table build one Lua value per element; past this, raw bytes are the tool */
#define TABLE_LIMIT ((int64_t)1 << 26)

kr_tensor *kr_lua_totensor(lua_State *L, int idx) {
    return luaL_testudata(L, idx, KR_TENSOR_MT);
}

kr_tensor *kr_lua_checktensor(lua_State *L, int idx) {
    kr_tensor *t = luaL_checkudata(L, idx, KR_TENSOR_MT);
    if (!kr_tensor_live(t)) luaL_argerror(L, idx, "tensor has been freed");
    return t;
}

kr_tensor *kr_lua_newtensor(lua_State *L) {
    kr_tensor *t = lua_newuserdatauv(L, sizeof *t, 0);
    memset(t, 0, sizeof *t);
    luaL_setmetatable(L, KR_TENSOR_MT);
    return t;
}

static void check(lua_State *L, kr_status s) {
    if (s != KR_OK) kr_lua_raise(L, kr_lua_ctx(L), s);
}

/* ---- Lua values to and from elements ---- */

static void set_elem(lua_State *L, int idx, void *buf, kr_dtype d, size_t i, const char *what) {
    int t = lua_type(L, idx);
    if (d == KR_BOOL) {
        if (t == LUA_TBOOLEAN) {
            kr_host_set_i64(buf, d, i, lua_toboolean(L, idx));
            return;
        }
        if (lua_isinteger(L, idx) && (lua_tointeger(L, idx) == 0 || lua_tointeger(L, idx) == 1)) {
            kr_host_set_i64(buf, d, i, lua_tointeger(L, idx));
            return;
        }
        luaL_error(L, "%s: a bool tensor takes true, false, 0 or 1, not %s", what,
                   luaL_tolstring(L, idx, NULL));
    }
    if (t != LUA_TNUMBER)
        luaL_error(L, "%s: number expected for a %s tensor, got %s", what, kr_dtype_name(d),
                   luaL_typename(L, idx));
    if (kr_dtype_is_float(d)) {
        kr_host_set(buf, d, i, lua_tonumber(L, idx));
        return;
    }
    lua_Integer v = 0;
    if (lua_isinteger(L, idx)) {
        v = lua_tointeger(L, idx);
    } else {
        lua_Number x = lua_tonumber(L, idx);
        if (!lua_numbertointeger(x, &v) || (lua_Number)v != x)
            luaL_error(L, "%s: %s is not an integer (the tensor is %s)", what,
                       luaL_tolstring(L, idx, NULL), kr_dtype_name(d));
    }
    int64_t mn, mx;
    kr_dtype_int_range(d, &mn, &mx);
    if (v < mn || v > mx)
        luaL_error(L, "%s: %I is out of range for %s [%I, %I]", what, (lua_Integer)v,
                   kr_dtype_name(d), (lua_Integer)mn, (lua_Integer)mx);
    kr_host_set_i64(buf, d, i, v);
}

static void push_elem(lua_State *L, const void *buf, kr_dtype d, size_t i) {
    if (d == KR_BOOL) lua_pushboolean(L, kr_host_get_i64(buf, d, i) != 0);
    else if (kr_dtype_is_float(d)) lua_pushnumber(L, kr_host_get(buf, d, i));
    else lua_pushinteger(L, kr_host_get_i64(buf, d, i));
}

/* ---- constructors ---- */

/* empty(shape, dtype="f32") */
static int l_tensor_empty(lua_State *L) {
    int64_t shape[KR_MAX_DIMS];
    int nd = kr_lua_checkshape(L, 1, shape);
    kr_dtype d = kr_lua_checkdtype(L, 2, KR_F32);
    kr_tensor *t = kr_lua_newtensor(L);
    check(L, kr_tensor_alloc(kr_lua_ctx(L), t, d, nd, shape));
    return 1;
}

/* open_ipc(handle_hex, offset, shape, dtype="f32") -> a tensor over another process's memory
 * (its CUDA IPC handle as 128 hex digits, offset bytes into that allocation) */
static int l_tensor_open_ipc(lua_State *L) {
    size_t len;
    const char *hex = luaL_checklstring(L, 1, &len);
    lua_Integer off = luaL_checkinteger(L, 2);
    luaL_argcheck(L, len == 128, 1, "a CUDA IPC handle is 128 hex digits");
    luaL_argcheck(L, off >= 0, 2, "the offset is negative");
    unsigned char h[64];
    for (int i = 0; i < 64; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) luaL_argerror(L, 1, "not hex digits");
        h[i] = (unsigned char)v;
    }
    int64_t shape[KR_MAX_DIMS];
    int nd = kr_lua_checkshape(L, 3, shape);
    kr_dtype d = kr_lua_checkdtype(L, 4, KR_F32);
    kr_tensor *t = kr_lua_newtensor(L);
    check(L, kr_tensor_open_ipc(kr_lua_ctx(L), t, h, (size_t)off, d, nd, shape));
    return 1;
}

/* check_empty(shape, dtype="f32") -> bytes: what empty() checks before it allocates (the same
 * argument checks and kr_tensor_check_alloc), without a GPU: a dry run's k:scratch uses it. */
static int l_tensor_check_empty(lua_State *L) {
    int64_t shape[KR_MAX_DIMS];
    int nd = kr_lua_checkshape(L, 1, shape);
    kr_dtype d = kr_lua_checkdtype(L, 2, KR_F32);
    size_t bytes = 0;
    kr_context *ctx = kr_lua_ctx(L);
    kr_status s = kr_tensor_check_alloc(ctx, d, nd, shape, &bytes);
    if (s != KR_OK) return kr_lua_raise(L, ctx, s);
    lua_pushinteger(L, (lua_Integer)bytes);
    return 1;
}

/* Host staging buffers are Lua userdata, so a raise part-way through frees them too. */
static void *scratch(lua_State *L, size_t n) { return lua_newuserdatauv(L, n ? n : 1, 0); }

static void copy_table_in(lua_State *L, kr_tensor *t, int tidx) {
    int64_t n = kr_tensor_numel(t);
    if (n > TABLE_LIMIT)
        luaL_error(L, "a %I-element tensor is too large to fill from a table (limit %I): use "
                      "raw bytes", (lua_Integer)n, (lua_Integer)TABLE_LIMIT);
    size_t es = kr_dtype_size(t->dtype);
    void *buf = scratch(L, (size_t)n * es);
    char what[64];
    for (int64_t i = 0; i < n; i++) {
        lua_geti(L, tidx, i + 1);
        snprintf(what, sizeof what, "element %lld", (long long)(i + 1));
        set_elem(L, -1, buf, t->dtype, (size_t)i, what);
        lua_pop(L, 1);
    }
    check(L, kr_tensor_from_host(kr_lua_ctx(L), t, 0, buf, (size_t)n * es));
    lua_pop(L, 1);
}

/* from_table(values [, {shape=, dtype=}]): a flat array in row-major order; the shape
 * defaults to {#values}. */
static int l_tensor_from_table(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    int64_t shape[KR_MAX_DIMS];
    int nd = 1;
    kr_dtype d = KR_F32;
    lua_Integer len = luaL_len(L, 1);
    shape[0] = len;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        static const char *const known[] = {"shape", "dtype", NULL};
        kr_lua_check_options(L, 2, "from_table", known);
        if (lua_getfield(L, 2, "shape") != LUA_TNIL) nd = kr_lua_checkshape(L, lua_gettop(L), shape);
        lua_pop(L, 1);
        lua_getfield(L, 2, "dtype");
        d = kr_lua_checkdtype(L, lua_gettop(L), KR_F32);
        lua_pop(L, 1);
    }
    int64_t n = kr_shape_numel(nd, shape);
    if (n != len)
        return luaL_error(L, "from_table: %I values for a shape of %I elements", len,
                          (lua_Integer)n);
    kr_tensor *t = kr_lua_newtensor(L);
    check(L, kr_tensor_alloc(kr_lua_ctx(L), t, d, nd, shape));
    copy_table_in(L, t, 1);
    return 1;
}

/* from_bytes(string, shape, dtype): the bytes of a row-major array, as to_bytes gives them. */
static int l_tensor_from_bytes(lua_State *L) {
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    int64_t shape[KR_MAX_DIMS];
    int nd = kr_lua_checkshape(L, 2, shape);
    kr_dtype d = kr_lua_checkdtype(L, 3, -1);
    int64_t n = kr_shape_numel(nd, shape);
    if (n < 0 || (uint64_t)n * kr_dtype_size(d) != len)
        return luaL_error(L, "from_bytes: %I bytes for %I elements of %s (%I bytes)",
                          (lua_Integer)len, (lua_Integer)n, kr_dtype_name(d),
                          (lua_Integer)(n * (int64_t)kr_dtype_size(d)));
    kr_tensor *t = kr_lua_newtensor(L);
    kr_context *ctx = kr_lua_ctx(L);
    check(L, kr_tensor_alloc(ctx, t, d, nd, shape));
    check(L, kr_tensor_from_host(ctx, t, 0, s, len));
    return 1;
}

/* ---- metadata ---- */

static int l_tensor_numel(lua_State *L) {
    lua_pushinteger(L, kr_tensor_numel(kr_lua_checktensor(L, 1)));
    return 1;
}

static int l_tensor_nbytes(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)kr_tensor_nbytes(kr_lua_checktensor(L, 1)));
    return 1;
}

static int l_tensor_dim(lua_State *L) {
    lua_pushinteger(L, kr_lua_checktensor(L, 1)->ndim);
    return 1;
}

/* size(i): 1-based; negative counts from the end. size() returns the shape table. */
static int l_tensor_size(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    if (lua_isnoneornil(L, 2)) {
        kr_lua_pushshape(L, t->ndim, t->shape);
        return 1;
    }
    lua_Integer i = luaL_checkinteger(L, 2);
    if (i < 0) i += t->ndim + 1;
    if (i < 1 || i > t->ndim)
        return luaL_argerror(L, 2, lua_pushfstring(L, "dimension %I out of range (the tensor "
                                                      "has %d)", luaL_checkinteger(L, 2), t->ndim));
    lua_pushinteger(L, t->shape[i - 1]);
    return 1;
}

static int l_tensor_data_ptr(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)(uintptr_t)kr_tensor_data(kr_lua_checktensor(L, 1)));
    return 1;
}

/* t:ipc_handle() -> the CUDA IPC handle of t's allocation (128 hex digits), t's byte offset
 * in it */
static int l_tensor_ipc_handle(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    unsigned char h[64];
    size_t off = 0;
    check(L, kr_tensor_ipc_handle(kr_lua_ctx(L), t, h, &off));
    char hex[129];
    for (int i = 0; i < 64; i++) snprintf(hex + 2 * i, 3, "%02x", h[i]);
    lua_pushstring(L, hex);
    lua_pushinteger(L, (lua_Integer)off);
    return 2;
}

static int l_tensor_is_live(lua_State *L) {
    kr_tensor *t = luaL_checkudata(L, 1, KR_TENSOR_MT);
    lua_pushboolean(L, kr_tensor_live(t));
    return 1;
}

static int l_tensor_free(lua_State *L) {
    kr_tensor_release(luaL_checkudata(L, 1, KR_TENSOR_MT));
    return 0;
}

static int l_tensor_tostring(lua_State *L) {
    kr_tensor *t = luaL_checkudata(L, 1, KR_TENSOR_MT);
    if (!kr_tensor_live(t)) {
        lua_pushstring(L, "kreach.Tensor (freed)");
        return 1;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "kreach.Tensor(");
    luaL_addstring(&b, kr_dtype_name(t->dtype));
    luaL_addstring(&b, ", {");
    for (int i = 0; i < t->ndim; i++) {
        lua_pushfstring(L, i ? ", %I" : "%I", (lua_Integer)t->shape[i]);
        luaL_addvalue(&b);
    }
    luaL_addstring(&b, "})");
    luaL_pushresult(&b);
    return 1;
}

/* ---- transfers ---- */

/* to_table([first, count]): elements first..first+count-1 (1-based, row-major) as a flat array */
static int l_tensor_to_table(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    int64_t n = kr_tensor_numel(t);
    lua_Integer first = luaL_optinteger(L, 2, 1);
    lua_Integer count = luaL_optinteger(L, 3, n - first + 1);
    if (first < 1 || count < 0 || first - 1 > n || count > n - (first - 1))
        return luaL_error(L, "to_table: elements %I to %I are out of range (the tensor has %I)",
                          first, first + count - 1, (lua_Integer)n);
    if (count > TABLE_LIMIT)
        return luaL_error(L, "to_table: %I elements is too many for a table (limit %I): use "
                             "to_bytes, or ask for a range", count, (lua_Integer)TABLE_LIMIT);
    size_t es = kr_dtype_size(t->dtype);
    void *buf = scratch(L, (size_t)count * es);
    check(L, kr_tensor_to_host(kr_lua_ctx(L), t, (size_t)(first - 1) * es, buf,
                               (size_t)count * es));
    lua_createtable(L, (int)count, 0);
    for (lua_Integer i = 0; i < count; i++) {
        push_elem(L, buf, t->dtype, (size_t)i);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* item(): the single element of a one-element tensor */
static int l_tensor_item(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    if (kr_tensor_numel(t) != 1)
        return luaL_error(L, "item: the tensor has %I elements, not 1", (lua_Integer)kr_tensor_numel(t));
    unsigned char buf[8];
    check(L, kr_tensor_to_host(kr_lua_ctx(L), t, 0, buf, kr_dtype_size(t->dtype)));
    push_elem(L, buf, t->dtype, 0);
    return 1;
}

/* to_bytes([offset, n]): raw bytes (0-based byte offset) as a string */
static int l_tensor_to_bytes(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    lua_Integer nb = (lua_Integer)kr_tensor_nbytes(t);
    lua_Integer off = luaL_optinteger(L, 2, 0);
    lua_Integer n = luaL_optinteger(L, 3, nb - off);
    if (off < 0 || n < 0 || off > nb || n > nb - off)
        return luaL_error(L, "to_bytes: bytes %I to %I are out of range (the tensor has %I)",
                          off, off + n, nb);
    luaL_Buffer b;
    char *p = luaL_buffinitsize(L, &b, (size_t)n);
    check(L, kr_tensor_to_host(kr_lua_ctx(L), t, (size_t)off, p, (size_t)n));
    luaL_pushresultsize(&b, (size_t)n);
    return 1;
}

/* copy_from(src [, offset]): src is a tensor (converted to this dtype), a table of numbers
 * (every element), or a string of raw bytes written at byte `offset` (default 0). */
static int l_tensor_copy_from(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    kr_context *ctx = kr_lua_ctx(L);
    kr_tensor *src = kr_lua_totensor(L, 2);
    if (src) {
        if (!kr_tensor_live(src)) return luaL_argerror(L, 2, "tensor has been freed");
        check(L, kr_tensor_copy(ctx, t, src));
    } else if (lua_type(L, 2) == LUA_TTABLE) {
        lua_Integer len = luaL_len(L, 2);
        if (len != kr_tensor_numel(t))
            return luaL_error(L, "copy_from: %I values for a tensor of %I elements", len,
                              (lua_Integer)kr_tensor_numel(t));
        copy_table_in(L, t, 2);
    } else if (lua_type(L, 2) == LUA_TSTRING) {
        size_t len;
        const char *s = lua_tolstring(L, 2, &len);
        lua_Integer off = luaL_optinteger(L, 3, 0);
        if (off < 0) return luaL_argerror(L, 3, "negative offset");
        check(L, kr_tensor_from_host(ctx, t, (size_t)off, s, len));
    } else {
        return luaL_typeerror(L, 2, "tensor, table or string");
    }
    lua_settop(L, 1);
    return 1;
}

/* ---- device operations (asynchronous, on the harness stream) ---- */

static int l_tensor_fill(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    unsigned char pat[8];
    set_elem(L, 2, pat, t->dtype, 0, "fill");
    kr_context *ctx = kr_lua_ctx(L);
    if (kr_dtype_is_float(t->dtype)) check(L, kr_tensor_fill(ctx, t, kr_host_get(pat, t->dtype, 0)));
    else check(L, kr_tensor_fill_i64(ctx, t, kr_host_get_i64(pat, t->dtype, 0)));
    lua_settop(L, 1);
    return 1;
}

static uint64_t check_seed(lua_State *L, int idx) {
    if (!lua_isinteger(L, idx))
        luaL_argerror(L, idx, "an integer seed is required (random fills never pick one)");
    return (uint64_t)lua_tointeger(L, idx);
}

/* uniform(lo, hi, seed) */
static int l_tensor_uniform(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    double lo = luaL_checknumber(L, 2), hi = luaL_checknumber(L, 3);
    check(L, kr_tensor_uniform(kr_lua_ctx(L), t, lo, hi, check_seed(L, 4)));
    lua_settop(L, 1);
    return 1;
}

/* normal(mean, std, seed) */
static int l_tensor_normal(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    double mean = luaL_checknumber(L, 2), std = luaL_checknumber(L, 3);
    check(L, kr_tensor_normal(kr_lua_ctx(L), t, mean, std, check_seed(L, 4)));
    lua_settop(L, 1);
    return 1;
}

/* randint(lo, hi, seed): integers in [lo, hi) */
static int l_tensor_randint(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    lua_Integer lo = luaL_checkinteger(L, 2), hi = luaL_checkinteger(L, 3);
    check(L, kr_tensor_randint(kr_lua_ctx(L), t, lo, hi, check_seed(L, 4)));
    lua_settop(L, 1);
    return 1;
}

static int l_tensor_poison(lua_State *L) {
    check(L, kr_tensor_poison(kr_lua_ctx(L), kr_lua_checktensor(L, 1)));
    lua_settop(L, 1);
    return 1;
}

static int l_tensor_count_poisoned(lua_State *L) {
    int64_t c = 0;
    check(L, kr_tensor_count_poisoned(kr_lua_ctx(L), kr_lua_checktensor(L, 1), &c));
    lua_pushinteger(L, c);
    return 1;
}

/* to(dtype): a new tensor with the elements converted */
static int l_tensor_to(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    kr_dtype d = kr_lua_checkdtype(L, 2, -1);
    kr_context *ctx = kr_lua_ctx(L);
    kr_tensor *r = kr_lua_newtensor(L);
    check(L, kr_tensor_alloc(ctx, r, d, t->ndim, t->shape));
    check(L, kr_tensor_copy(ctx, r, t));
    return 1;
}

static int l_tensor_clone(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    kr_context *ctx = kr_lua_ctx(L);
    kr_tensor *r = kr_lua_newtensor(L);
    check(L, kr_tensor_alloc(ctx, r, t->dtype, t->ndim, t->shape));
    check(L, kr_tensor_copy(ctx, r, t));
    return 1;
}

/* ---- views ---- */

/* view(shape) or view(d1, d2, ...); one size may be -1 */
static int l_tensor_view(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    int64_t shape[KR_MAX_DIMS];
    int nd;
    if (lua_type(L, 2) == LUA_TTABLE) {
        luaL_checktype(L, 2, LUA_TTABLE);
        lua_Integer n = luaL_len(L, 2);
        if (n > KR_MAX_DIMS) return luaL_argerror(L, 2, "too many dimensions");
        for (lua_Integer i = 1; i <= n; i++) {
            lua_geti(L, 2, i);
            int ok;
            shape[i - 1] = lua_tointegerx(L, -1, &ok);
            if (!ok) return luaL_argerror(L, 2, "sizes must be integers");
            lua_pop(L, 1);
        }
        nd = (int)n;
    } else {
        nd = lua_gettop(L) - 1;
        if (nd > KR_MAX_DIMS) return luaL_error(L, "view: too many dimensions (%d)", nd);
        for (int i = 0; i < nd; i++) shape[i] = luaL_checkinteger(L, i + 2);
    }
    kr_tensor *r = kr_lua_newtensor(L);
    check(L, kr_tensor_view(kr_lua_ctx(L), t, r, nd, shape));
    return 1;
}

static int l_tensor_flatten(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    int64_t n = kr_tensor_numel(t);
    kr_tensor *r = kr_lua_newtensor(L);
    check(L, kr_tensor_view(kr_lua_ctx(L), t, r, 1, &n));
    return 1;
}

/* narrow(dim, start, length): 1-based dim and start, like torch7 */
static int l_tensor_narrow(lua_State *L) {
    kr_tensor *t = kr_lua_checktensor(L, 1);
    lua_Integer dim = luaL_checkinteger(L, 2);
    lua_Integer start = luaL_checkinteger(L, 3);
    lua_Integer len = luaL_checkinteger(L, 4);
    kr_tensor *r = kr_lua_newtensor(L);
    check(L, kr_tensor_narrow(kr_lua_ctx(L), t, r, (int)dim - 1, start - 1, len));
    return 1;
}

static const luaL_Reg methods[] = {
    {"numel", l_tensor_numel},       {"nbytes", l_tensor_nbytes},
    {"dim", l_tensor_dim},           {"size", l_tensor_size},
    {"data_ptr", l_tensor_data_ptr}, {"is_live", l_tensor_is_live},
    {"ipc_handle", l_tensor_ipc_handle},
    {"free", l_tensor_free},         {"to_table", l_tensor_to_table},
    {"item", l_tensor_item},         {"to_bytes", l_tensor_to_bytes},
    {"copy_from", l_tensor_copy_from}, {"fill", l_tensor_fill},
    {"uniform", l_tensor_uniform},   {"normal", l_tensor_normal},
    {"randint", l_tensor_randint},   {"poison", l_tensor_poison},
    {"count_poisoned", l_tensor_count_poisoned}, {"to", l_tensor_to},
    {"clone", l_tensor_clone},       {"view", l_tensor_view},
    {"reshape", l_tensor_view},      {"flatten", l_tensor_flatten},
    {"narrow", l_tensor_narrow},     {NULL, NULL}};

/* t.shape and t.dtype are fields; everything else is a method. A freed tensor keeps answering
 * is_live and tostring, and raises for the rest. */
static int l_tensor_index(lua_State *L) {
    kr_tensor *t = luaL_checkudata(L, 1, KR_TENSOR_MT);
    const char *k = lua_tostring(L, 2);
    if (k && strcmp(k, "shape") == 0) {
        if (!kr_tensor_live(t)) return luaL_error(L, "tensor has been freed");
        kr_lua_pushshape(L, t->ndim, t->shape);
        return 1;
    }
    if (k && strcmp(k, "dtype") == 0) {
        if (!kr_tensor_live(t)) return luaL_error(L, "tensor has been freed");
        lua_pushstring(L, kr_dtype_name(t->dtype));
        return 1;
    }
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    return 1;
}

static int l_tensor_newindex(lua_State *L) {
    return luaL_error(L, "tensors have no assignable fields ('%s')", luaL_tolstring(L, 2, NULL));
}

static int l_tensor_is_tensor(lua_State *L) {
    lua_pushboolean(L, kr_lua_totensor(L, 1) != NULL);
    return 1;
}

/* dtypes() -> {"f64", ...}; dtype_size(name) -> bytes */
static int l_tensor_dtypes(lua_State *L) {
    lua_createtable(L, KR_NDTYPES, 0);
    for (int d = 0; d < KR_NDTYPES; d++) {
        lua_pushstring(L, kr_dtype_name((kr_dtype)d));
        lua_rawseti(L, -2, d + 1);
    }
    return 1;
}

static int l_tensor_dtype_size(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)kr_dtype_size(kr_lua_checkdtype(L, 1, -1)));
    return 1;
}

int luaopen_kreach_tensor(lua_State *L) {
    if (luaL_newmetatable(L, KR_TENSOR_MT)) {
        luaL_newlib(L, methods);
        lua_pushcclosure(L, l_tensor_index, 1);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, l_tensor_newindex);
        lua_setfield(L, -2, "__newindex");
        lua_pushcfunction(L, l_tensor_free);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, l_tensor_free);
        lua_setfield(L, -2, "__close");
        lua_pushcfunction(L, l_tensor_tostring);
        lua_setfield(L, -2, "__tostring");
        lua_pushstring(L, KR_TENSOR_MT);
        lua_setfield(L, -2, "__name");
        /* harness objects' metatables stay out of reach of scripts */
        lua_pushboolean(L, 0);
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
    static const luaL_Reg fns[] = {
        {"empty", l_tensor_empty},       {"from_table", l_tensor_from_table},
        {"from_bytes", l_tensor_from_bytes}, {"is_tensor", l_tensor_is_tensor},
        {"dtypes", l_tensor_dtypes},     {"dtype_size", l_tensor_dtype_size},
        {"check_empty", l_tensor_check_empty}, {"open_ipc", l_tensor_open_ipc},
        {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
